"""The first visitor's slider while the warm-up still compiles, against a bare Streamlit page.

Starts the bare page (``benchmarks/bare_app.py``), then the app on an empty JAX compilation cache (a fresh
``KERNELVIZ_JAX_CACHE``), opens the overview and, once its first chart is drawn, ``--page`` through the
sidebar, as a first visitor would. Then presses its ``--slider`` and the bare page's slider in turn, each
until its charts have repainted, for ``--seconds``. The warm-up is over at the cache's last new file, once
no file has come for 8 s; each press counts as during the warm-up or after it, by when it ended. Prints
the median of the app's and of the bare page's presses in each stretch and their ratio (target: at most
1.5).

    python -m benchmarks.bench_warmup_sliders [--seconds 40] [--page "Masked training"]
        [--slider "Hold-out size"]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import FIRST_CHART_JS, press_and_wait, wait_for_warmup
from tests.browser import harness


def open_first_visit(browser, app: harness.StreamlitServer, chapter: str):
    """The overview until its first chart, then ``chapter`` through its sidebar link; returns the page."""
    page = browser.new_context(viewport=harness.VIEWPORT).new_page()
    page.goto(app.url + "/")
    page.wait_for_function(FIRST_CHART_JS, polling="raf", timeout=harness.FIRST_LOAD_TIMEOUT_S * 1e3)
    page.goto(app.url + harness.nav_path(page, chapter))
    harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S, settle=0.0)
    return page


def presses(app_page, bare_page, slider: str, seconds: float) -> list[tuple[float, float, float]]:
    """(end time, app s, bare s) for each pair of presses until ``seconds`` have passed."""
    out, app_way, bare_way = [], ["ArrowRight"], ["ArrowRight"]
    deadline = time.time() + seconds
    while time.time() < deadline:
        a = press_and_wait(app_page, harness.slider_by_label(app_page, slider), app_way)
        b = press_and_wait(bare_page, harness.slider_by_label(bare_page, "Width"), bare_way)
        out.append((time.time(), a, b))
    return out


def report(rows: list[tuple[float, float, float]], warm_done: float) -> None:
    for name, part in (("during the warm-up", [r for r in rows if r[0] <= warm_done]),
                       ("after the warm-up", [r for r in rows if r[0] > warm_done])):
        if not part:
            print(f"{name:<20} no presses")
            continue
        app, bare = statistics.median(r[1] for r in part), statistics.median(r[2] for r in part)
        print(f"{name:<20} app {app * 1e3:6.0f} ms, bare page {bare * 1e3:6.0f} ms, ratio {app / bare:4.2f}x "
              f"({len(part)} presses each; app worst {max(r[1] for r in part) * 1e3:.0f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="how long to keep pressing")
    parser.add_argument("--page", default="Masked training", help="sidebar label of the app page")
    parser.add_argument("--slider", default="Hold-out size", help="label of the slider to press")
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="kernelviz-jax-cache-")
    with sync_playwright() as p:
        bare = harness.start_streamlit("benchmarks/bare_app.py")
        app = None
        try:
            browser = harness.launch_chromium(p)
            bare_page = browser.new_context(viewport=harness.VIEWPORT).new_page()
            bare_page.goto(bare.url + "/")
            harness.wait_until_drawn(bare_page)
            t0 = time.time()
            app = harness.start_streamlit("app.py", env={"KERNELVIZ_JAX_CACHE": cache}, health_timeout=120)
            app_page = open_first_visit(browser, app, args.page)
            print(f"{args.page} drawn {time.time() - t0:.1f} s after the server started (empty cache)")
            rows = presses(app_page, bare_page, args.slider, args.seconds)
            wait_for_warmup(cache, timeout=120)
            errors = harness.exception_texts(app_page)
            browser.close()
        finally:
            bare.stop()
            if app is not None:
                app.stop()
    files = [f for f in Path(cache).rglob("*") if f.is_file()]
    warm_done = max((f.stat().st_mtime for f in files), default=t0)
    print(f"warm-up over {warm_done - t0:.1f} s after the server started ({len(files)} files in the cache)")
    report(rows, warm_done)
    if errors:
        print("exception boxes seen:", *errors, sep="\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
