"""Where each page's first chart starts on a projector's 1280 × 720 window, and how many words stand above it.

Starts the app, opens every page of the sidebar in a 1280 × 720 tab (its normal view, the sidebar open as
a first visit has it), waits until it is drawn, and reads the top of the first Plotly chart in the main
area (in CSS pixels from the top of the window, the page scrolled to its top) and the words of the main
area's text above it. Target: every chapter's first chart starts within the first 720 px.

    python -m benchmarks.bench_first_screen [--size 1280x720]
"""

from __future__ import annotations

import argparse
import sys

from playwright.sync_api import sync_playwright

from tests.browser import harness

SCREEN_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const chart = main.querySelector('[data-testid="stPlotlyChart"]');
  if (!chart) return {top: null, words: null};
  const top = chart.getBoundingClientRect().top;
  let words = 0;
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!el || el.closest('[data-testid="stExpanderDetails"]') || el.closest('.katex-mathml')) continue;
    const box = el.getBoundingClientRect();
    if (box.height === 0 || box.bottom > top) continue;
    words += node.textContent.split(/\\s+/).filter(w => /\\w/.test(w)).length;
  }
  return {top: Math.round(top), words};
}"""


def measure(browser, url: str, path: str, width: int, height: int) -> tuple[int | None, int | None]:
    """(top of the first chart in px, words above it) of page ``path``."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url + path)
        harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
        found = page.evaluate(SCREEN_JS)
        return found["top"], found["words"]
    finally:
        context.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1280x720", help="window width x height in CSS px")
    args = parser.parse_args()
    width, height = map(int, args.size.split("x"))
    server = harness.start_streamlit("app.py")
    rows, late = [], []
    try:
        with sync_playwright() as p:
            browser = harness.launch_chromium(p)
            first = browser.new_page()
            first.goto(server.url)
            harness.wait_until_drawn(first, timeout=harness.FIRST_LOAD_TIMEOUT_S)
            for label, path in harness.nav_links(first):
                top, words = measure(browser, server.url, path, width, height)
                label = label.strip().splitlines()[-1]  # the text after the icon's name
                rows.append((label, top, words))
                if top is None or top >= height:
                    late.append(label)
            browser.close()
    finally:
        server.stop()
    print(f"{'page':32} {'first chart starts':>20} {'words above':>12}   (window {width} x {height})")
    for label, top, words in rows:
        where = "no chart" if top is None else f"{top:,} px"
        print(f"{label:32} {where:>20} {words if words is not None else '':>12}")
    print(f"pages whose first chart starts below the first screen: {', '.join(late) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
