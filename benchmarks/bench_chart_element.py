"""What a chart element that updates its chart in place would buy over Streamlit's ``st.plotly_chart``.

``st.plotly_chart`` gives each chart an element id that hashes its figure: a changed figure is a new element,
mounted afresh and drawn twice by Plotly, once as it mounts and again after mounting with its measured
width and a themed copy of the figure; and because that copy carries a new template object, Plotly.react
redraws it in full. The bare page (``benchmarks/bare_app.py``: one slider, two charts of the dashboard's
size) is opened twice in one run, once as it is and once at ``?element=inplace``, where a minimal element
(``benchmarks/inplace.js``, st.components.v2) keeps each chart's div and calls Plotly.react on it once per
changed figure. The two pages' sliders are pressed in turn (``bench_ab.taken_in_turn``); per press it prints
the Plotly draws, the milliseconds they hold the page's main thread, and key press → repainted charts (the
harness's test: every chart drawn, the data changed, Streamlit idle), medians with the in-place page's ratio
to Streamlit's.

The in-place element draws the figure with the template it was sent (Streamlit's, whose colours the
frontend would fill in): it costs Plotly the same, but is not themed. It has no modebar buttons of
Streamlit's (fullscreen), no clicks and no resizing: it measures the drawing, not a finished element.

    python -m benchmarks.bench_chart_element [--repeat 15] [--pin]
"""

from __future__ import annotations

import argparse
import os
import statistics

from playwright.sync_api import sync_playwright

from benchmarks.bench_ab import Presses, taken_in_turn
from benchmarks.bench_sessions import pin_apart
from benchmarks.bench_sliders import DRAWS_JS, take_draws
from tests.browser import harness


def open_page(browser, url: str):
    """The bare page at ``url``, drawn, with Plotly's drawing calls counted."""
    page = browser.new_context(viewport=harness.VIEWPORT).new_page()
    page.goto(url)
    harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
    page.evaluate(DRAWS_JS)
    take_draws(page, [], [])
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="counted presses per page")
    parser.add_argument("--pin", action="store_true",
                        help="the server on the first core, Chromium on the rest")
    args = parser.parse_args()
    if args.pin and (os.cpu_count() or 1) < 2:
        parser.error("--pin needs at least two cores")
    with sync_playwright() as p:
        server = harness.start_streamlit("benchmarks/bare_app.py")
        try:
            browser = harness.launch_chromium(p)
            if args.pin:
                print(pin_apart([server.pid]), flush=True)
            opened = {"st.plotly_chart": open_page(browser, server.url + "/"),
                      "in place": open_page(browser, server.url + "/?element=inplace")}
            pages = taken_in_turn(opened, "Width", args.repeat)
            browser.close()
        finally:
            server.stop()
    report(pages)


def report(pages: dict[str, Presses]) -> None:
    med = statistics.median
    print(f"\n{'element':<18} {'draws':>6} {'Plotly':>10} {'press':>10}")
    for name, r in pages.items():
        print(f"{name:<18} {med(r.draws):6.0f} {med(r.draw_s) * 1e3:8.0f}ms {med(r.seconds) * 1e3:8.0f}ms")
    st_, own = pages["st.plotly_chart"], pages["in place"]
    print(f"\nin place / st.plotly_chart: Plotly's main-thread time "
          f"{med(own.draw_s) / med(st_.draw_s):.2f}x, "
          f"key press → repainted {med(own.seconds) / med(st_.seconds):.2f}x "
          f"({len(st_.seconds)} presses each, taken in turn)")


if __name__ == "__main__":
    main()
