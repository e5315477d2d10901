"""How live is the dashboard: key press to repainted chart against a bare Streamlit page; cold and warm start.

In one run this script

1. starts the app with an empty JAX compilation cache (``KERNELVIZ_JAX_CACHE`` → a fresh temporary folder)
   and times server start → first chart drawn in Chromium, and → every chart of the page drawn (the cold
   start: every program compiles);
2. waits until the background warm-up has compiled every program into the cache, stops the server and
   starts it again on the filled cache (the warm start: compiled programs load from disk);
3. keeps that server, starts the bare page (benchmarks/bare_app.py: one slider, two Plotly charts of the
   dashboard's size) next to it, and measures N times, alternating between the two, the time from an
   ArrowRight on a slider to the repainted charts (chart data changed and Streamlit idle): the "Hold-out
   size" slider of the masked-training chapter (each press retrains ℓ and the seed spread) and the bare
   page's "Width" slider.

It prints the median and the worst of each, and the ratio of the medians (target: at most 1.5).

    python -m benchmarks.bench_repaint [--repeat 20] [--page "Masked training"] \
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

from tests.browser import harness
from tests.measure import summary

TARGET_RATIO = 1.5


FIRST_CHART_JS = ("() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')]"
                  ".some((gd) => gd.data && gd._fullLayout)")


def timed_start(playwright, path: str, env: dict[str, str], script: str = "app.py"
                ) -> tuple[float, float, float, harness.StreamlitServer]:
    """Starts ``script`` and opens ``path`` in a fresh browser: (s to healthy, s to the first chart drawn, s
    to every chart drawn and Streamlit idle, server). The times include launching Chromium."""
    t0 = time.perf_counter()
    server = harness.start_streamlit(script, env=env, health_timeout=120)
    healthy = time.perf_counter() - t0
    browser = harness.launch_chromium(playwright)
    try:
        page = browser.new_page(viewport=harness.VIEWPORT)
        page.goto(server.url + path)
        page.wait_for_function(FIRST_CHART_JS, polling="raf", timeout=harness.FIRST_LOAD_TIMEOUT_S * 1e3)
        first = time.perf_counter() - t0
        harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S, settle=0.0)
        drawn = time.perf_counter() - t0
    except BaseException:
        server.stop()
        raise
    finally:
        browser.close()
    return healthy, first, drawn, server


def cache_files(cache: str) -> int:
    return sum(1 for f in Path(cache).rglob("*") if f.is_file())


def wait_for_warmup(cache: str, quiet: float = 8.0, timeout: float = 300.0) -> float:
    """Waits until the server's warm-up has written every program: the cache folder's file count stays
    the same for ``quiet`` seconds. Returns the seconds waited (at most ``timeout``)."""
    t0 = time.perf_counter()
    count, since = cache_files(cache), time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        time.sleep(0.5)
        now = cache_files(cache)
        if now != count:
            count, since = now, time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            break
    return since - t0


# A control's value and its ends: a slider thumb's aria values (an <input type="range">'s own), a number
# input's value and min/max attributes (none: no end); and whether it is a number input.
VALUE_JS = """(el) => {
  const num = (v, none) => (v === null || v === undefined || v === '' ? none : Number(v));
  const isNumber = el.tagName === 'INPUT' && el.type === 'number';
  return [num(el.getAttribute('aria-valuenow') ?? el.value, NaN),
          num(el.getAttribute('aria-valuemin') ?? el.getAttribute('min'), -Infinity),
          num(el.getAttribute('aria-valuemax') ?? el.getAttribute('max'), Infinity), isNumber];
}"""
NUMBER_KEYS = {"ArrowRight": "ArrowUp", "ArrowLeft": "ArrowDown"}  # a number input steps with ↑ and ↓


def press_and_wait(page, thumb, direction: list[str]) -> float:
    """One key press on ``thumb`` (a slider's thumb, or a number input: ↑ for → and ↓ for ←); seconds
    until the charts hold new data and Streamlit is idle again.

    Keeps pressing the same way (so every value is new and nothing is served from Streamlit's cache)
    until the control reaches an end, then turns around.
    """
    value, low, high, is_number = thumb.evaluate(VALUE_JS)
    if direction[0] == "ArrowRight" and value >= high:
        direction[0] = "ArrowLeft"
    elif direction[0] == "ArrowLeft" and value <= low:
        direction[0] = "ArrowRight"
    before = harness.page_state(page)["signature"]
    thumb.focus()
    t = time.perf_counter()
    page.keyboard.press(NUMBER_KEYS[direction[0]] if is_number else direction[0])
    harness.wait_for_repaint(page, before)
    return time.perf_counter() - t


def describe(name: str, seconds: list[float]) -> str:
    return f"{name:<34} {summary(seconds)}  worst {max(seconds) * 1e3:.1f} ms  (n = {len(seconds)})"


def starts(p, args: argparse.Namespace, env: dict, cache: str) -> harness.StreamlitServer:
    """A cold start (empty JAX cache) then a warm one (same cache), timed; returns the warm server."""
    print(f"cold start (empty JAX cache {cache}) …", flush=True)
    t0 = time.perf_counter()
    healthy, first, cold, app = timed_start(p, args.start_page, env)
    settled = wait_for_warmup(cache) + cold
    app.stop()
    files = cache_files(cache)
    print(f"  server healthy after {healthy:6.1f} s, first chart drawn after {first:6.1f} s, every chart"
          f" after {cold:6.1f} s; warm-up done ({files} programs on disk) after about {settled:6.1f} s"
          f" ({time.perf_counter() - t0:.0f} s in all)")
    print(f"warm start (same cache, {files} compiled programs on disk) …", flush=True)
    healthy, first, warm, app = timed_start(p, args.start_page, env)
    print(f"  server healthy after {healthy:6.1f} s, first chart drawn after {first:6.1f} s, every chart"
          f" after {warm:6.1f} s")
    healthy, first, _, bare = timed_start(p, "/", env, "benchmarks/bare_app.py")
    bare.stop()
    print(f"bare page, the same way: server healthy after {healthy:6.1f} s, first chart drawn after"
          f" {first:6.1f} s (Chromium's launch and Streamlit's own start, for scale)")
    return app


def presses(browser, app: harness.StreamlitServer, bare: harness.StreamlitServer, args: argparse.Namespace):
    """(app page, bare page, app times, bare times): ``args.repeat`` presses on each, alternating."""
    app_page = browser.new_context(viewport=harness.VIEWPORT).new_page()
    bare_page = browser.new_context(viewport=harness.VIEWPORT).new_page()
    app_page.goto(app.url + "/")
    harness.wait_until_drawn(app_page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
    app_page.goto(app.url + harness.nav_path(app_page, args.page))
    harness.wait_until_drawn(app_page)
    bare_page.goto(bare.url + "/")
    harness.wait_until_drawn(bare_page)
    app_thumb = harness.slider_by_label(app_page, args.slider)
    bare_thumb = harness.slider_by_label(bare_page, "Width")
    app_dir, bare_dir = ["ArrowRight"], ["ArrowRight"]
    # One press each that is not counted: the first rerun of a page pays for one-off work
    # (e.g. the sidebar's data set, the loo curve) that later presses find in the cache.
    press_and_wait(app_page, app_thumb, app_dir)
    press_and_wait(bare_page, bare_thumb, bare_dir)
    app_times, bare_times = [], []
    for _ in range(args.repeat):
        app_times.append(press_and_wait(app_page, app_thumb, app_dir))
        bare_times.append(press_and_wait(bare_page, bare_thumb, bare_dir))
    return app_page, bare_page, app_times, bare_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="key presses per page")
    parser.add_argument("--page", default="Masked training", help="sidebar label of the app page")
    parser.add_argument("--slider", default="Hold-out size", help="label of the app slider")
    parser.add_argument("--start-page", default="/", help="page opened for the cold and warm start")
    parser.add_argument("--skip-cold", action="store_true", help="only the repaint times (default cache)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kernelviz-jax-cache-") as cache, sync_playwright() as p:
        env = {"KERNELVIZ_JAX_CACHE": cache}
        app = bare = None
        try:
            app = harness.start_streamlit("app.py") if args.skip_cold else starts(p, args, env, cache)
            bare = harness.start_streamlit("benchmarks/bare_app.py")

            browser = harness.launch_chromium(p)
            app_page, bare_page, app_times, bare_times = presses(browser, app, bare, args)
            errors = harness.exception_texts(app_page) + harness.exception_texts(bare_page)
            browser.close()
        finally:
            for server in (app, bare):
                if server is not None:
                    server.stop()

    print()
    print(f"key press → repainted charts ({args.repeat} presses each, alternating):")
    print(describe(f"app {args.page} '{args.slider}'", app_times))
    print(describe("bare page 'Width'", bare_times))
    ratio = statistics.median(app_times) / statistics.median(bare_times)
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio of medians app / bare: {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target)")
    print(f"ratio of worst cases:        {max(app_times) / max(bare_times):.2f}x")
    if errors:
        print("exception boxes seen:", *errors, sep="\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
