"""What margins that already hold the axis labels buy: key press to repainted charts, in one run.

Streamlit's chart theme turns on Plotly's automargin. When a figure's margins are too small for its tick
labels and axis titles, Plotly draws it, measures the labels, grows the margins and draws it all again.
``kf.MARGIN`` gives every figure the margins automargin would pick, so it is not drawn again.

Starts ``benchmarks/margins_app.py`` twice, as built (``kf.MARGIN``) and with the margins the figures had
before (``KERNELVIZ_BENCH_MARGINS=automargin``), opens both in one Chromium, then presses the number of
points on each in turn (``--repeat`` times each; every press is a new n, as in ``bench_sliders.py``) and
prints the median time from key press to repainted charts, their ratio, and for each page how many charts
Plotly drew with grown margins (a margin drawn more than 4 px wider than asked for,
``GROWN_MARGINS_JS`` of the browser tests).

    python -m benchmarks.bench_margins [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import press_and_wait
from tests.browser import harness


def grown_charts(page) -> int:
    """How many charts Plotly drew with a margin grown by automargin (``harness.GROWN_MARGINS_JS``)."""
    grown = page.evaluate(harness.GROWN_MARGINS_JS)  # one "chart <i> <side>: …" per grown margin
    return len({entry.split()[1] for entry in grown})


def open_page(browser, server: harness.StreamlitServer):
    page = browser.new_context(viewport=harness.VIEWPORT).new_page()
    page.goto(server.url + "/")
    harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="counted presses per page")
    args = parser.parse_args()
    script = "benchmarks/margins_app.py"
    with sync_playwright() as p:
        new = harness.start_streamlit(script)
        old = harness.start_streamlit(script, env={"KERNELVIZ_BENCH_MARGINS": "automargin"})
        try:
            browser = harness.launch_chromium(p)
            pages = {"kf.MARGIN": open_page(browser, new), "grown by automargin": open_page(browser, old)}
            grown = {name: grown_charts(page) for name, page in pages.items()}
            ways = {name: ["ArrowRight"] for name in pages}
            times: dict[str, list[float]] = {name: [] for name in pages}
            for i in range(args.repeat + 1):
                for name, page in pages.items():
                    t = press_and_wait(page, harness.slider_by_label(page, "Number of points"), ways[name])
                    if i:  # the first press of each page is not counted
                        times[name].append(t)
            browser.close()
        finally:
            new.stop()
            old.stop()
    for name, ts in times.items():
        print(f"{name:<22} median {statistics.median(ts) * 1e3:6.0f} ms over {len(ts)} presses; "
              f"charts drawn with grown margins: {grown[name]} of 3")
    ratio = statistics.median(times["grown by automargin"]) / statistics.median(times["kf.MARGIN"])
    print(f"grown margins / kf.MARGIN: {ratio:.2f}x")


if __name__ == "__main__":
    main()
