"""The presenter view: → (Next) to every chart of the next scene repainted, against a bare Streamlit page.

Starts the app and the bare page (benchmarks/bare_app.py: one slider, two Plotly charts), opens a lesson in
a 1280 × 720 tab, waits until the server is idle (its warm-up done), and plays the lesson through once
without counting (a first visit of each scene computes and caches what it shows). Then ``--rounds`` times:
back to scene 1 with ← (not timed), and for each scene that shows charts, one → timed from the key to its
charts repainted (chart data changed and Streamlit idle), each followed by one timed press on the bare
page's slider. Prints the median per scene, the bare page's over the same presses, their ratio, and the
worst ratio (target: at most 1.5x, warm). A scene on another chapter switches pages: its time includes the
switch. The first press after opening the lesson's link is not counted: it also pays for one-off work in
the browser (1.55x the bare page's press on 2026-11-26).

    python -m benchmarks.bench_lessons [--lesson ten-minutes] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import press_and_wait
from kernelviz.app.ui.lesson import files as lesson_files
from kernelviz.app.ui.questions.predict import QUESTION_CHAPTERS
from tests.browser import harness
from tests.measure import wait_until_idle

TARGET_RATIO = 1.5
WINDOW = {"width": 1280, "height": 720}


def settle(page, timeout: float = harness.FIRST_LOAD_TIMEOUT_S) -> None:
    """Waits until Streamlit is idle (a scene without charts has nothing to repaint)."""
    page.wait_for_function("() => { const s = (" + harness.PAGE_STATE_JS + ")();"
                           " return s.connection === 'CONNECTED' && s.script === 'notRunning'"
                           " && s.stale === 0 && !s.signature.includes('undrawn'); }",
                           polling=100, timeout=timeout * 1e3)


def next_scene(page, charts: bool) -> float:
    """Presses → and returns the seconds until the next scene is drawn (its charts repainted)."""
    before = harness.page_state(page)["signature"]
    t = time.perf_counter()
    page.keyboard.press("ArrowRight")
    if charts:
        harness.wait_for_repaint(page, before, timeout=harness.FIRST_LOAD_TIMEOUT_S)
    else:
        time.sleep(0.3)
        settle(page)
    return time.perf_counter() - t


def back_to_start(page, scenes: list[lesson_files.Scene]) -> None:
    """Presses ← until scene 1 is shown again (not timed), as a teacher going over the lesson again."""
    for _ in scenes[1:]:
        page.keyboard.press("ArrowLeft")
        time.sleep(0.3)
        settle(page)


def play(page, url: str, scenes: list[lesson_files.Scene], bare_page, bare_thumb, rounds: int) -> dict:
    """{scene number: ([app seconds], [bare seconds])} over ``rounds`` plays, after one uncounted play
    from the lesson's link (whose first press also pays for one-off work in the browser)."""
    times: dict[int, tuple[list[float], list[float]]] = {}
    page.goto(url)
    settle(page)
    for counted in [False] + [True] * rounds:
        if counted:
            back_to_start(page, scenes)
        for scene in scenes[1:]:
            seconds = next_scene(page, bool(scene.charts))
            if counted and scene.charts:
                app, bare = times.setdefault(scene.number, ([], []))
                app.append(seconds)
                bare.append(press_and_wait(bare_page, bare_thumb, ["ArrowRight"]))
    return times


def report(times: dict, scenes: list[lesson_files.Scene]) -> None:
    print(f"\n{'scene':<52} {'app':>9} {'bare':>9} {'ratio':>6}")
    ratios = []
    for number, (app, bare) in sorted(times.items()):
        ratio = statistics.median(app) / statistics.median(bare)
        ratios.append(ratio)
        title = f"{number} · {scenes[number - 1].title}"[:52]
        print(f"{title:<52} {statistics.median(app) * 1e3:7.0f}ms {statistics.median(bare) * 1e3:7.0f}ms "
              f"{ratio:5.2f}x")
    worst = max(ratios)
    print(f"\nworst ratio {worst:.2f}x, median {statistics.median(ratios):.2f}x "
          f"({'within' if worst <= TARGET_RATIO else 'OVER'} the {TARGET_RATIO}x target)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="ten-minutes")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    found = lesson_files.load_lesson(lesson_files.lesson_path(args.lesson), QUESTION_CHAPTERS)
    scenes = list(found.scenes)
    with sync_playwright() as p:
        app, bare = harness.start_streamlit("app.py"), harness.start_streamlit("benchmarks/bare_app.py")
        try:
            browser = harness.launch_chromium(p)
            page = browser.new_context(viewport=WINDOW).new_page()
            page.goto(app.url + "/")
            harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
            print(f"server idle (warm-up done) after {wait_until_idle(app.pid):.0f} s more", flush=True)
            bare_page = browser.new_context(viewport=WINDOW).new_page()
            bare_page.goto(bare.url + "/")
            harness.wait_until_drawn(bare_page)
            bare_thumb = harness.slider_by_label(bare_page, "Width")
            times = play(page, f"{app.url}/?lesson={args.lesson}", scenes, bare_page, bare_thumb, args.rounds)
            errors = harness.exception_texts(page)
            browser.close()
        finally:
            app.stop()
            bare.stop()
    report(times, scenes)
    if errors:
        print("exception boxes seen:", *errors, sep="\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
