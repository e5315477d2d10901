"""Every slider of every chapter: key press to repainted charts, against a bare Streamlit page, in one run.

Starts the app (default JAX cache) and the bare page (benchmarks/bare_app.py: one slider, two Plotly
charts), opens the app and waits until its server is idle (the background warm-up has finished, so no
press competes with it for the cores), then for each chapter in the sidebar and each
slider on it: one press that is not counted (a first rerun pays for one-off work), then ``--repeat`` presses,
each followed, once the app's server has been idle for ``IDLE_QUIET_S`` (chapters 4 and 5 prepare the next
notch after a press: the bare page's press does not share the core with it), by one press on the bare page's
slider; then the slider is pressed back to where it was (not counted), so every slider is measured around the
chapter's defaults. A press is timed from the key to the repainted charts (chart data changed and Streamlit
idle); the bytes the server sent over the websocket during the rerun are the page's payload. Prints a table
(median per slider, the bare page's median over the same presses, their ratio, kB per rerun, the server's
part: key press to its "script finished", the server's CPU per press: its process's CPU time, every thread,
from the key press until it is idle again (what it prepares ahead included), and the browser's Plotly draws:
how many a press makes and the milliseconds they hold the page's main thread) and the worst ratio (target: at
most 1.5, aim 1.2). The table at the end adds each slider's ratio to the bare page's median over the whole run
("run"), steadier than three bare presses. The CPU per press says what a class costs: a core holds about 2.5 s
/ (CPU per press) students each moving that slider every 5 s with the server half busy.

    python -m benchmarks.bench_sliders [--repeat 5] [--chapter "Masked"] \
        [--slider "Number of points"] [--pin] [--without-ahead] [--in-a-row K] [--modes around,leave]

With ``--in-a-row K`` every slider (the overview's and the sidebar's number of points included) is pressed
as a presenter steps through it: K presses one way, each as soon as the charts have repainted and Streamlit
is idle in the browser (not waiting for the server to go idle: what a press leaves behind, such as the next
notch, is paid by the next), every value new, turning at an end; then the bare page's slider K presses in a
row the same way. The server's CPU per press is its CPU from the first key until it is idle after the last,
over K. The table adds the worst press to the median.

With ``--modes around,leave`` each chapter is measured both ways in one run, and the two tables printed
one after the other: "around" as above, "leave" as a student exploring presses: every control of a page is
left where its presses ended, so the page's later controls are pressed with the earlier ones moved. Each
chapter's "leave" presses start in a new session at the chapter's defaults (the sidebar's data included).
Number inputs (a seed) are pressed as the sliders are, with ↑ and ↓.

With ``--pin`` (two cores or more) both servers run on the first core and Chromium, Playwright's driver
and this process on the others, as on Streamlit Community Cloud, where the browser is on the student's
machine: without it, the server's run and Chromium's drawing of the previous charts share the cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import NamedTuple

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import press_and_wait
from benchmarks.bench_sessions import pin_apart
from benchmarks.sessions_client import script_finished, server_time
from tests.browser import harness
from tests.measure import cpu_seconds, wait_until_idle

TARGET_RATIO = 1.5
IDLE_QUIET_S = 0.5  # after an app press, the app's server idle this long before the bare page is pressed

# Wraps Plotly's drawing calls in the page (once; Plotly is loaded with the first chart) so that each call
# is counted with the time it holds the main thread. A chart Streamlit mounts is drawn with Plotly.react;
# a figure that changed is a new element (its id hashes the figure), mounted afresh and drawn again after
# mounting, when it takes its measured width.
DRAWS_JS = """() => {
  const P = window.Plotly;
  if (!P || P.__kvCounted) return !!P;
  window.__kvDraws = [0, 0];
  for (const name of ['newPlot', 'react', 'relayout', 'restyle', 'update', 'redraw']) {
    const f = P[name];
    if (typeof f !== 'function') continue;
    P[name] = function (...args) {
      const t = performance.now();
      try { return f.apply(this, args); }
      finally { window.__kvDraws[0] += 1; window.__kvDraws[1] += performance.now() - t; }
    };
  }
  P.__kvCounted = true;
  return true;
}"""
TAKE_DRAWS_JS = "() => { const d = window.__kvDraws || [0, 0]; window.__kvDraws = [0, 0]; return d; }"


class Payload:
    """Counts the bytes a page receives over its websockets; ``take()`` returns them and starts again.

    Also notes when each "script finished" message arrives (``finished``, for ``server_time``).
    """

    def __init__(self, page) -> None:
        self.bytes = 0
        self.finished: list[float] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        self.bytes += len(payload) if payload else 0
        if payload and script_finished(payload):
            self.finished.append(time.perf_counter())

    def take(self) -> int:
        count, self.bytes = self.bytes, 0
        return count


class SliderRow(NamedTuple):
    """One slider's presses: seconds to the repainted charts (``app``) and the bare page's beside them,
    bytes sent per rerun, the server's part (s) and CPU (s), and the browser's Plotly draws and their
    main-thread seconds (and the bare page's), one entry per counted press."""

    chapter: str
    slider: str
    app: list[float]
    bare: list[float]
    sizes: list[int]
    server: list[float]
    cpu: list[float]
    draws: list[int]
    draw_s: list[float]
    bare_draws: list[int]
    bare_draw_s: list[float]


def first_press(app_page, index: int, chapter: str) -> tuple[SliderRow, float, list[str], list[str]]:
    """An empty row for the slider at ``index``, its value before, and the directions of the app's and the
    bare page's presses, after one press of it that is not counted (a first rerun pays for one-off work)."""
    thumb = controls(app_page).nth(index)
    row = SliderRow(chapter, control_label(thumb), *([] for _ in SliderRow._fields[2:]))
    start = thumb_value(thumb)
    app_dir, bare_dir = ["ArrowRight"], ["ArrowRight"]
    press_and_wait(app_page, thumb, app_dir)
    return row, start, app_dir, bare_dir


def count_draws(*pages) -> None:
    """Plotly's draws counted from now on in each page (``DRAWS_JS``), the count so far dropped."""
    for page in pages:
        page.evaluate(DRAWS_JS)
        page.evaluate(TAKE_DRAWS_JS)


def measure_slider(app_page, payload: Payload, index: int, bare_page, bare_thumb, repeat: int,
                   app_pid: int, chapter: str, leave: bool = False) -> SliderRow:
    """The slider at ``index`` of the page, pressed ``repeat`` times (``app_pid``: the app's server), then
    pressed back to where it was unless ``leave``."""
    row, start, app_dir, bare_dir = first_press(app_page, index, chapter)
    payload.take()
    count_draws(app_page, bare_page)
    for _ in range(repeat):
        thumb = controls(app_page).nth(index)
        used = cpu_seconds(app_pid)
        row.app.append(press_and_wait(app_page, thumb, app_dir))
        row.server.append(server_time(payload.finished, time.perf_counter() - row.app[-1]))
        wait_until_idle(app_pid, quiet=IDLE_QUIET_S)  # what the server prepares after the press, too
        row.cpu.append(cpu_seconds(app_pid) - used)
        row.sizes.append(payload.take())
        take_draws(app_page, row.draws, row.draw_s)
        row.bare.append(press_and_wait(bare_page, bare_thumb, bare_dir))
        take_draws(bare_page, row.bare_draws, row.bare_draw_s)
    if not leave:
        move_back(app_page, index, start)
    payload.take()
    return row


def measure_in_a_row(app_page, payload: Payload, index: int, bare_page, bare_thumb, k: int,
                     app_pid: int, chapter: str, leave: bool = False) -> SliderRow:
    """The slider at ``index`` pressed ``k`` times in a row, then the bare page's ``k`` times in a row;
    then the slider pressed back to where it was unless ``leave``."""
    row, start, app_dir, bare_dir = first_press(app_page, index, chapter)
    wait_until_idle(app_pid, quiet=IDLE_QUIET_S)
    count_draws(app_page, bare_page)
    payload.take()
    used = cpu_seconds(app_pid)
    for _ in range(k):
        row.app.append(press_and_wait(app_page, controls(app_page).nth(index), app_dir))
        row.server.append(server_time(payload.finished, time.perf_counter() - row.app[-1]))
        row.sizes.append(payload.take())
        take_draws(app_page, row.draws, row.draw_s)
    wait_until_idle(app_pid, quiet=IDLE_QUIET_S)
    row.cpu.append((cpu_seconds(app_pid) - used) / k)
    for _ in range(k):
        row.bare.append(press_and_wait(bare_page, bare_thumb, bare_dir))
        take_draws(bare_page, row.bare_draws, row.bare_draw_s)
    if not leave:
        move_back(app_page, index, start)
    wait_until_idle(app_pid, quiet=IDLE_QUIET_S)
    payload.take()
    return row


def take_draws(page, draws: list[int], seconds: list[float]) -> None:
    """Appends the Plotly draws the page made since the last call, and their main-thread seconds."""
    count, ms = page.evaluate(TAKE_DRAWS_JS)
    draws.append(int(count))
    seconds.append(ms / 1e3)


NUMBER_INPUTS = (f'[data-testid="stApp"] [data-testid="stNumberInput"] '
                 f'input:not([disabled], {harness.QUESTION} *)')


def controls(page):
    """Every slider thumb and number input a visitor can move on the page, in the page's order."""
    return harness.sliders(page).or_(page.locator(NUMBER_INPUTS))


def control_label(thumb) -> str:
    """A slider's label, or a number input's."""
    return harness.slider_label(thumb) or thumb.evaluate(
        "(el) => el.closest('[data-testid=\"stNumberInput\"]')?.querySelector('label')?.innerText || ''")


def thumb_value(thumb) -> float:
    return float(thumb.evaluate("(el) => Number(el.getAttribute('aria-valuenow') ?? el.value)"))


def move_back(page, index: int, value: float) -> None:
    """Presses the slider at ``index`` back to ``value`` (not timed), so that every slider is measured
    around the chapter's defaults, not in a state the sliders before it left behind."""
    for _ in range(50):
        thumb = controls(page).nth(index)
        now = thumb_value(thumb)
        if now == value:
            return
        press_and_wait(page, thumb, ["ArrowLeft" if now > value else "ArrowRight"])
    raise RuntimeError(f"slider {index} did not return to {value}")


MODES = ("around", "leave")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="counted presses per slider")
    parser.add_argument("--chapter", default="", help="only chapters whose sidebar label contains this")
    parser.add_argument("--slider", default="", help="only sliders whose label contains this")
    parser.add_argument("--pin", action="store_true", help="servers on the first core, Chromium on the rest")
    parser.add_argument("--without-ahead", action="store_true",
                        help="the app with KERNELVIZ_AHEAD=0: chapter 5 prepares no next notch")
    parser.add_argument("--in-a-row", type=int, default=0, metavar="K",
                        help="press each slider K times in a row, as a presenter does (overview included)")
    parser.add_argument("--modes", default="around",
                        help="around (each control pressed back to where it was), leave (left where it "
                             "ended), or both: around,leave")
    args = parser.parse_args()
    args.modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if not args.modes or set(args.modes) - set(MODES):
        parser.error(f"--modes takes {', '.join(MODES)} or both, comma-separated")
    if args.pin and (os.cpu_count() or 1) < 2:
        parser.error("--pin needs at least two cores")
    return args


class Bench(NamedTuple):
    """What every measurement shares: the arguments, the browser, the app's and the bare page's servers,
    the bare page and its slider."""

    args: argparse.Namespace
    browser: object
    app: object
    bare_page: object
    bare_thumb: object


def measure_page(bench: Bench, page, payload: Payload, label: str, leave: bool) -> list[SliderRow]:
    """Every control of the chapter open in ``page``, measured one after the other (left where it ended
    with ``leave``)."""
    args, rows = bench.args, []
    measure = measure_in_a_row if args.in_a_row else measure_slider
    for index in range(controls(page).count()):
        if args.slider not in control_label(controls(page).nth(index)):
            continue
        rows.append(measure(page, payload, index, bench.bare_page, bench.bare_thumb,
                            args.in_a_row or args.repeat, bench.app.pid, label, leave))
        print(line(rows[-1]), flush=True)
    return rows


def open_page(bench: Bench, page, path: str) -> None:
    page.goto(bench.app.url + path)
    harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)


def measure_chapters(bench: Bench, app_page, payload: Payload
                     ) -> tuple[dict[str, list[SliderRow]], list[str]]:
    """Each chapter's controls in each mode: "around" in the session of ``app_page``, "leave" in a new
    session per chapter. Returns the rows by mode and the exception boxes seen."""
    rows: dict[str, list[SliderRow]] = {mode: [] for mode in bench.args.modes}
    errors: list[str] = []
    for label, path in harness.nav_links(app_page):
        label = label.splitlines()[-1].strip()
        overview = path in ("", "/") and not bench.args.in_a_row
        if overview or path in harness.REFERENCE_PATHS or bench.args.chapter not in label:
            continue
        for mode in bench.args.modes:
            print(f"-- {label}, {mode}", flush=True)
            if mode == "around":
                open_page(bench, app_page, path)
                rows[mode] += measure_page(bench, app_page, payload, label, leave=False)
                continue
            context = bench.browser.new_context(viewport=harness.VIEWPORT)
            page = context.new_page()
            own = Payload(page)
            open_page(bench, page, path)
            rows[mode] += measure_page(bench, page, own, label, leave=True)
            errors += harness.exception_texts(page)
            context.close()
    return rows, errors + harness.exception_texts(app_page)


def main() -> None:
    args = parse_args()
    with sync_playwright() as p:
        env = {"KERNELVIZ_AHEAD": "0"} if args.without_ahead else None
        app = harness.start_streamlit("app.py", env=env)
        bare = harness.start_streamlit("benchmarks/bare_app.py")
        try:
            browser = harness.launch_chromium(p)
            if args.pin:
                print(pin_apart([app.pid, bare.pid]), flush=True)
            app_page = browser.new_context(viewport=harness.VIEWPORT).new_page()
            payload = Payload(app_page)
            bare_page = browser.new_context(viewport=harness.VIEWPORT).new_page()
            app_page.goto(app.url + "/")
            harness.wait_until_drawn(app_page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
            print(f"server idle (warm-up done) after {wait_until_idle(app.pid):.0f} s more", flush=True)
            bare_page.goto(bare.url + "/")
            harness.wait_until_drawn(bare_page)
            bench = Bench(args, browser, app, bare_page, harness.slider_by_label(bare_page, "Width"))
            rows, errors = measure_chapters(bench, app_page, payload)
            browser.close()
        finally:
            app.stop()
            bare.stop()
    for mode, mode_rows in rows.items():
        print(f"\n== {mode}: " + ("each control pressed back to where it was" if mode == "around" else
                                  "each control left where it ended"))
        report(mode_rows, [])
    if errors:
        print("exception boxes seen:", *errors, sep="\n")
        sys.exit(1)


def line(r: SliderRow, floor: float | None = None) -> str:
    """One slider's line; with ``floor`` (the bare page's median over the whole run) also its ratio to it."""
    med = statistics.median
    steady = "" if floor is None else f" {med(r.app) / floor:6.2f}x"
    return (f"{r.chapter[:28]:<28} {r.slider[:30]:<30} {med(r.app) * 1e3:8.0f}ms {max(r.app) * 1e3:7.0f}ms "
            f"{med(r.bare) * 1e3:8.0f}ms {med(r.app) / med(r.bare):5.2f}x{steady} "
            f"{med(r.sizes) / 1e3:8.0f}kB {med(r.server) * 1e3:8.0f}ms {med(r.cpu) * 1e3:8.0f}ms "
            f"{med(r.draws):6.0f} {med(r.draw_s) * 1e3:8.0f}ms")


def report(rows: list[SliderRow], errors: list[str]) -> None:
    """The table again, with each slider's ratio to the bare page's median over the whole run ("run"): three
    bare presses beside a slider move with the machine's load, their whole run much less."""
    med = statistics.median
    floor = med(t for r in rows for t in r.bare) if rows else None
    print(f"\n{'chapter':<28} {'slider':<30} {'app':>10} {'worst':>9} {'bare':>10} {'ratio':>6} {'run':>7} "
          f"{'payload':>10} {'server':>10} {'CPU':>10} {'draws':>6} {'Plotly':>10}")
    for r in rows:
        print(line(r, floor))
    if rows:
        ratios = [med(r.app) / med(r.bare) for r in rows]
        steady = [med(r.app) / floor for r in rows]
        worst = max(ratios)
        verdict = "within" if worst <= TARGET_RATIO else "OVER"
        over = sum(x > TARGET_RATIO for x in steady)
        print(f"\nworst ratio {worst:.2f}x, median ratio {med(ratios):.2f}x "
              f"({verdict} the {TARGET_RATIO}x target); against the bare page's median over the run "
              f"({floor * 1e3:.0f} ms): worst {max(steady):.2f}x, median {med(steady):.2f}x, "
              f"{len(steady) - over} of {len(steady)} within; largest payload "
              f"{max(med(r.sizes) for r in rows) / 1e3:.0f} kB per rerun")
        draws = [med(r.draws) for r in rows]
        bare_ms = med(d for r in rows for d in r.bare_draw_s) * 1e3
        print(f"Plotly draws a press: the bare page {med(d for r in rows for d in r.bare_draws):.0f} "
              f"(two charts) in {bare_ms:.0f} ms, the app {min(draws):.0f}–{max(draws):.0f}")
        costly = max(rows, key=lambda r: med(r.cpu))
        print(f"costliest press: {costly.chapter}, {costly.slider}: {med(costly.cpu) * 1e3:.0f} ms of the"
              f" server's CPU")
    if errors:
        print("exception boxes seen:", *errors, sep="\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
