"""Click to explain: a click on a chapter's fit to the repainted charts and formula panel, against a bare
Streamlit page, in one run.

Starts the app and the bare page (benchmarks/bare_app.py: one slider, two Plotly charts of the dashboard's
size), opens the chapter (1, 2, 3 or 4) at its own URL with a query selected (``kr.explain=true``, …) and
waits until the server is idle (its warm-up done). Then ``--repeat`` times, alternating with one key press
on the bare page's slider: a click on another data point of the fit, timed from the click to the repainted
page (chart data changed and Streamlit idle: the fit's marks, the heatmap's row and the panel's numbers all
hold the new x*). Prints both medians and their ratio (target: at most 1.5).

    python -m benchmarks.bench_explain [--chapter 1] [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import describe, press_and_wait
from kernelviz.app.ui.pages import CHAPTERS
from tests.browser import harness
from tests.browser.test_click_replay import POINT_JS
from tests.measure import wait_until_idle

TARGET_RATIO = 1.5
PREFIXES = {1: "kr.", 2: "masked.", 3: "mh.", 4: "attn."}  # each chapter's x* controls
FIRST_POINT = 20  # the data points clicked: every seventh from here, so each click picks a new x*
EVERY = 7


def click_and_wait(page, index: int, chart: str) -> float:
    """A click on data point ``index`` of the fit (``chart``: its key, dots as dashes); seconds until the
    page is repainted with its x*."""
    point = page.evaluate(POINT_JS, [index, chart])
    before = harness.page_state(page)["signature"]
    page.mouse.move(point["px"], point["py"])
    t = time.perf_counter()
    page.mouse.click(point["px"], point["py"])
    harness.wait_for_repaint(page, before)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--chapter", type=int, choices=sorted(PREFIXES), default=1)
    args = parser.parse_args()
    chapter, prefix = CHAPTERS[args.chapter - 1], PREFIXES[args.chapter]
    app, bare = harness.start_streamlit("app.py"), harness.start_streamlit("benchmarks/bare_app.py")
    clicks, presses = [], []
    try:
        with sync_playwright() as p:
            browser = harness.launch_chromium(p)
            page = browser.new_page(viewport=harness.VIEWPORT)
            page.goto(app.url + "/")  # not a deep link first: see tests/browser/test_links.py
            harness.wait_until_drawn(page)
            page.goto(f"{app.url}/{chapter.url}?{prefix}explain=true&{prefix}x=0")
            harness.wait_until_drawn(page)
            print(f"server idle (warm-up done) after {wait_until_idle(app.pid):.0f} s", flush=True)
            bare_page = browser.new_page(viewport=harness.VIEWPORT)
            bare_page.goto(bare.url)
            harness.wait_until_drawn(bare_page)
            thumb, direction = harness.slider_by_label(bare_page, "Width"), ["ArrowRight"]
            chart = f"{prefix}fit".replace(".", "-")
            click_and_wait(page, FIRST_POINT - EVERY, chart)  # not counted: a first rerun pays one-off work
            for k in range(args.repeat):
                clicks.append(click_and_wait(page, FIRST_POINT + k * EVERY, chart))
                presses.append(press_and_wait(bare_page, thumb, direction))
            if harness.exception_texts(page):
                sys.exit(f"the page shows an exception: {harness.exception_texts(page)}")
            browser.close()
    finally:
        app.stop()
        bare.stop()
    ratio = statistics.median(clicks) / statistics.median(presses)
    print(describe(f"{chapter.title}: click on the fit → repainted", clicks))
    print(describe("bare page, slider → repainted", presses))
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target)")


if __name__ == "__main__":
    main()
