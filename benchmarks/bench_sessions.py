"""Ten visitors at once: are their sessions isolated, and how much slower does each repaint get?

Starts ``streamlit run app.py`` on loopback (``timed_streamlit.py``: the server logs its script runs and
the rerun requests it receives) and, with Playwright's async API, opens a chapter in browser contexts of
one Chromium (each context is its own Streamlit session). The chapter is visited once and the server left
until it is idle (its warm-up done), as a teacher opens the app before class; then:

1. one session alone presses ArrowRight on the chapter's slider ``--moves`` times; each press is timed from
   the key to the repainted charts (chart data changed, Streamlit idle);
2. ten sessions do the same at the same time, each with settings of its own, so that no session's results
   can come from another's cache (``sessions_client.DRILLS``):
   - ``--chapter 2`` (the default) presses the hold-out size, each session on its own data (noise seed),
     training seed and learning rate;
   - ``--chapter 4`` presses the number of heads from 1, each press training the layer, each session on
     its own data and training seed;
   - ``--chapter 5`` presses the number of heads from 1, each session with its own pretraining seed: every
     press pretrains a layer, the costliest rerun of the app.

   With ``--shared`` the class's sessions all start from the same settings, as a class following the
   teacher's steps: a press another session made first is read from the caches (Streamlit's caches are
   the server's, and a second request for a result being computed waits for it).

Every session then checks that its widgets and its URL still hold its own settings, that the page shows no
exception box, and that its charts carry exactly the data a brand-new session opened at its URL shows.
Prints the median repaint time with ten sessions and alone, and the ratio (target: at most 3), and the
server's peak resident memory over the whole run (limit: 690 MB).

It prints the server's CPU per script run (the server process's CPU time, every thread, over a phase,
divided by its runs) and how many students one core holds at that cost. It also prints the server's part
of a press on the server's own clock: from the moment its rerun request arrived to the end of the run
that carries it (target: at most 1.5x one session's, a server that keeps up). One Chromium for thirty
sessions delays the requests themselves, and those seconds are the test machine's, not a class's (each
student has a browser of their own).

By default the sessions press at the same instant, the worst case: every rerun queues behind the others.
With ``--every 5`` each session presses once every 5 seconds instead, from a random start within the first
5 seconds (seeded), like a class whose students each move a slider every few seconds; run it with more
``--sessions`` to find how many such students one server holds before its reruns take 3x as long.

    python -m benchmarks.bench_sessions [--chapter 2] [--sessions 10] [--moves 6] [--every SECONDS] \
        [--shared] [--bare] [--pin] [--light]

With ``--pin`` (a machine of two cores or more) the server runs on the first core, and Chromium,
Playwright's driver and this process on the others (CPU affinity of every thread, as ``taskset`` sets
it), so the server's times are its own.

With ``--light`` the sessions do not draw their charts (``benchmarks/sessions_client.py``): one Chromium
drawing thirty pages on one core is slower than the server, and its key presses wait for it. The server
still computes, builds and sends every figure; a press ends at its "script finished" message, so the
times are the server's side of a class whose students each have a laptop. Isolation is then checked on
the settings and the URL (the full check, charts included, is the default mode's).

With ``--bare`` it then measures the bare page of ``bench_repaint.py`` the same way: every session's page is
drawn by one Chromium on this machine's cores, and the bare page's ratio shows how much of the slowdown that
alone causes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from playwright.async_api import async_playwright

from benchmarks.sessions_client import ALONE, DRILLS, Drill, Session, settle, wait_drawn
from tests.browser import harness
from tests.measure import (
    cpu_seconds,
    peak_rss,
    pin,
    process_name,
    run_times,
    served_times,
    summary,
    wait_until_idle,
)

TARGET_RATIO = 3.0
SERVED_TARGET = 1.5  # a server that keeps up with a class: its part of a press at most 1.5x one session's
LIMIT_MB = 690  # Cloud's smallest container (decimal megabytes, as bench_memory.py reads it)
OPEN_AT_ONCE = 5  # sessions that load their page at the same time (one Chromium loads them all)


def pin_apart(servers: list[int]) -> str:
    """The servers (``servers``: their pids) on the first core; Chromium, Playwright's driver and this
    process (which reads every session's websocket frames) on every other core. The servers are pinned
    last: they are this process's children too, and the later setting is the one that holds."""
    others = set(range(1, os.cpu_count() or 1))
    mine = [os.getpid(), *harness.descendants(os.getpid())]
    browser = sum(1 for p in mine if "chrom" in process_name(p))
    moved = pin(mine, others)
    served = pin(servers, {0})
    return (f"pinned {served} server threads to core 0, and {moved - served} threads of Chromium ({browser}"
            f" processes), Playwright and this client to cores {sorted(others)}")


async def chapter_path(browser, server: harness.StreamlitServer, drill: Drill) -> str:
    """The URL path of the drill's chapter, read from the sidebar; the page is visited once (its first
    run)."""
    warm = await browser.new_page(viewport=harness.VIEWPORT)
    await warm.goto(server.url + "/")
    await settle(warm)
    path = None
    for a in await warm.locator('[data-testid="stSidebarNavLink"]').all():
        if drill.page.lower() in (await a.inner_text()).lower():
            path = urlsplit(await a.get_attribute("href")).path
    if path is None:
        raise LookupError(f"no {drill.page!r} page in the sidebar")
    await warm.goto(server.url + path)
    await settle(warm)
    await warm.close()
    return path


class Phase(NamedTuple):
    """What one phase (one session alone, or the class together) measured, in seconds per press or run."""

    repaint: list[float]  # key press → repainted charts (light: → the server's "script finished")
    seen: list[float]  # key press → "script finished", as the browser sees it
    runs: list[float]  # each script run's own time (timed_streamlit.py)
    served: list[float]  # rerun request arrived → its run finished, on the server's clock
    cpu: float  # the server process's CPU seconds (every thread) per script run over the phase


def phase(log: Path, sessions: list[Session], since: float, until: float, cpu: float) -> Phase:
    """What ``sessions`` measured between two ``time.time()``s, the server having used ``cpu`` seconds."""
    runs = run_times(log, since, until)
    return Phase([t for s in sessions for t in s.times], [t for s in sessions for t in s.server_times],
                 runs, served_times(log, since, until), cpu / max(len(runs), 1))


async def class_of(args: argparse.Namespace, browser, server: harness.StreamlitServer, path: str, log: Path
                   ) -> tuple[Phase, list[str]]:
    """``args.sessions`` sessions (opened ``OPEN_AT_ONCE`` at a time) press together: what they measured,
    and the isolation problems."""
    sessions = [Session(0 if args.shared else i, DRILLS[args.chapter], light=args.light)
                for i in range(args.sessions)]
    opening = asyncio.Semaphore(OPEN_AT_ONCE)

    async def open_one(s: Session) -> None:
        async with opening:
            await s.open(browser, server.url, path)

    await asyncio.gather(*(open_one(s) for s in sessions))
    phases = random.Random(0)
    since, cpu = time.time(), cpu_seconds(server.process.pid)
    await asyncio.gather(*(s.move(args.moves, args.every, phases.uniform(0.0, args.every or 0.0))
                           for s in sessions))
    span = time.time() - since
    together = phase(log, sessions, since, since + span, cpu_seconds(server.process.pid) - cpu)
    print(f"             {len(together.runs)} script runs in {span:.0f} s kept the server busy"
          f" {sum(together.runs) / span:.0%} of the time", flush=True)
    unfinished = sum(s.unfinished for s in sessions)
    if unfinished:
        print(f"             {unfinished} of {args.sessions * args.moves} presses not finished within"
              f" {harness.RERUN_TIMEOUT_S:.0f} s: the server did not keep up", flush=True)
    print(f"{args.sessions} sessions: repaint {summary(together.repaint)}", flush=True)
    print(f"             server  {summary(together.served)}", flush=True)
    problems = []
    for s in sessions:  # one at a time: the check opens one more session per visitor
        problems += await s.verify(browser, args.moves)
        await s.context.close()
    return together, problems


async def run(args: argparse.Namespace, server: harness.StreamlitServer, log: Path
              ) -> tuple[Phase, Phase, list[str]]:
    """Returns what one session alone and the sessions together measured, and every isolation problem."""
    async with async_playwright() as p:
        browser = await harness.launch_chromium(p)
        if args.pin:
            print(pin_apart([server.process.pid]), flush=True)
        path = await chapter_path(browser, server, DRILLS[args.chapter])
        waited = await asyncio.to_thread(wait_until_idle, server.process.pid)
        print(f"server idle (warm-up done) {waited:.0f} s after the chapter's first visit", flush=True)
        alone_session = Session(ALONE, DRILLS[args.chapter], light=args.light)
        await alone_session.open(browser, server.url, path)
        since, cpu = time.time(), cpu_seconds(server.process.pid)
        await alone_session.move(args.moves)
        alone = phase(log, [alone_session], since, time.time(), cpu_seconds(server.process.pid) - cpu)
        problems = await alone_session.verify(browser, args.moves)
        await alone_session.context.close()
        print(f"1 session:   repaint {summary(alone.repaint)}", flush=True)
        print(f"             server  {summary(alone.served)}", flush=True)
        together, more = await class_of(args, browser, server, path, log)
        await browser.close()
    return alone, together, problems + more


async def run_bare(args: argparse.Namespace, server: harness.StreamlitServer) -> tuple[list, list]:
    """The same presses on the bare page (benchmarks/bare_app.py, slider "Width"): one session alone, then
    ``args.sessions`` at once. Their ratio is the floor this machine sets for any Streamlit page."""

    async def open_page(browser):
        context = await browser.new_context(viewport=harness.VIEWPORT)
        page = await context.new_page()
        await page.goto(server.url + "/")
        await settle(page)
        return context, page

    async def move(page, times: list[float]) -> None:
        thumb = page.locator(
            '[data-testid="stApp"] input[type="range"][aria-label="Width"],'
            ' [data-testid="stApp"] [role="slider"][aria-label="Width"]'
        ).first
        for _ in range(args.moves):
            before = (await page.evaluate(harness.PAGE_STATE_JS))["signature"]
            await thumb.focus()
            t = time.perf_counter()
            await page.keyboard.press("ArrowRight")
            await wait_drawn(page, before)
            times.append(time.perf_counter() - t)

    async with async_playwright() as p:
        browser = await harness.launch_chromium(p)
        if args.pin:
            pin_apart([server.process.pid])
        alone: list[float] = []
        context, page = await open_page(browser)
        await move(page, alone)
        await context.close()
        opened = await asyncio.gather(*(open_page(browser) for _ in range(args.sessions)))
        together: list[float] = []
        await asyncio.gather(*(move(page, together) for _, page in opened))
        await browser.close()
    return alone, together


def compare_bare(args: argparse.Namespace, ratio: float) -> None:
    """The bare page measured the same way, and kernelviz's ratio against its ratio."""
    bare = harness.start_streamlit("benchmarks/bare_app.py")
    try:
        bare_alone, bare_together = asyncio.run(run_bare(args, bare))
    finally:
        bare.stop()
    bare_ratio = statistics.median(bare_together) / statistics.median(bare_alone)
    print(f"bare page, same presses: {statistics.median(bare_alone) * 1e3:.1f} ms alone,"
          f" {statistics.median(bare_together) * 1e3:.1f} ms with {args.sessions} sessions,"
          f" ratio {bare_ratio:.2f}x (kernelviz / bare: {ratio / bare_ratio:.2f})")


def ratio_line(label: str, alone: list[float], together: list[float], sessions: int) -> float:
    """Prints one measure's median alone and together, and their ratio; returns the ratio."""
    one, all_ = statistics.median(alone), statistics.median(together)
    ratio = all_ / one
    print(f"{label}: {one * 1e3:.1f} ms alone, {all_ * 1e3:.1f} ms with {sessions} sessions,"
          f" ratio {ratio:.2f}x")
    return ratio


def capacity(args: argparse.Namespace, alone: Phase, together: Phase) -> None:
    """The server's CPU per script run (all its threads: the script, the event loop sending the messages),
    and the students one core holds at that cost, each moving a control every ``--every`` seconds (5)."""
    every = args.every or 5.0
    print(f"the server's CPU per script run (every thread): {alone.cpu * 1e3:.1f} ms alone,"
          f" {together.cpu * 1e3:.1f} ms with {args.sessions} sessions; one core busy half the time"
          f" (a queue that stays short) holds {0.5 * every / together.cpu:.0f} students moving a control"
          f" every {every:g} s, fully busy {every / together.cpu:.0f}")


def report(args: argparse.Namespace, alone: Phase, together: Phase) -> float:
    """Prints the repaint, server and script-run times alone and together; returns the repaint ratio."""
    ratio = statistics.median(together.repaint) / statistics.median(alone.repaint)
    print()
    print(f"median repaint, {'1 session alone:':<26} {statistics.median(alone.repaint) * 1e3:8.1f} ms")
    label = f"{args.sessions} sessions {'at once' if args.every is None else f'every {args.every:g} s'}:"
    print(f"median repaint, {label:<26} {statistics.median(together.repaint) * 1e3:8.1f} ms"
          f"  (worst {max(together.repaint) * 1e3:.1f} ms)")
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio: {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target)")
    if alone.seen and together.seen:
        ratio_line("key press → script finished, as the browser sees it", alone.seen, together.seen,
                   args.sessions)
    if alone.served and together.served:
        served = ratio_line("the server's part (rerun request arrived → script finished, server clock)",
                            alone.served, together.served, args.sessions)
        print(f"{'':>4}({'within' if served <= SERVED_TARGET else 'OVER'} the {SERVED_TARGET:g}x of a server"
              f" that keeps up; worst {max(together.served) * 1e3:.0f} ms)")
    if alone.runs and together.runs:
        run_ratio = statistics.median(together.runs) / statistics.median(alone.runs)
        print(f"the server's own time per script run (timed_streamlit.py): {summary(alone.runs)} alone "
              f"({len(alone.runs)} runs)")
        print(f"{'':>60}{summary(together.runs)} with {args.sessions} sessions ({len(together.runs)} runs),"
              f" ratio {run_ratio:.2f}x")
    capacity(args, alone, together)
    if not args.light:
        print("(all sessions' pages are drawn by one Chromium on this machine's cores, so the repaint times"
              " include the browser's share of the CPU; the server-side times do not)")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--chapter", type=int, choices=sorted(DRILLS), default=2,
                        help="2: chapter 2's hold-out size; 4, 5: the chapter's number of heads")
    parser.add_argument("--moves", type=int, default=6, help="key presses per session")
    parser.add_argument("--every", type=float, default=None,
                        help="seconds between one session's presses (default: all sessions press at once)")
    parser.add_argument("--bare", action="store_true",
                        help="also measure the bare page (one slider, two charts) the same way")
    parser.add_argument("--shared", action="store_true",
                        help="every session of the class on the same settings, as a class following the"
                        " teacher's steps: a press another session made first is read from the caches")
    parser.add_argument("--pin", action="store_true", help="server on the first core, Chromium on the rest")
    parser.add_argument("--light", action="store_true",
                        help="sessions that do not draw their charts (benchmarks/sessions_client.py): the"
                        " server's side alone, as if every student had a laptop of their own")
    args = parser.parse_args()
    if args.pin and (os.cpu_count() or 1) < 2:
        parser.error("--pin needs at least two cores")
    drill = DRILLS[args.chapter]
    if drill.end is not None and drill.start + args.moves > drill.end:
        parser.error(f"{drill.slider!r} goes from {drill.start} to {drill.end}: at most"
                     f" {drill.end - drill.start} --moves")

    log = Path(tempfile.mkstemp(prefix="kernelviz-runs-", suffix=".txt")[1])
    server = harness.start_streamlit("app.py", env={"KERNELVIZ_RUN_LOG": str(log)},
                                 launcher=(str(Path(__file__).with_name("timed_streamlit.py")),))
    try:
        with peak_rss(server.process.pid, interval=0.02) as memory:
            alone, together, problems = asyncio.run(run(args, server, log))
    finally:
        server.stop()

    ratio = report(args, alone, together)
    peak = memory["peak"] / 1e6
    print(f"server peak RSS {peak:.0f} MB with {args.sessions + 1} sessions on their own data"
          f" ({'within' if peak <= LIMIT_MB else 'OVER'} the {LIMIT_MB} MB of Cloud's smallest container)")
    if args.bare:
        compare_bare(args, ratio)
    if problems:
        print("isolation problems:", *problems, sep="\n  ")
        sys.exit(1)
    kept = "settings and URL (charts not drawn: --light)" if args.light else "settings, URL and chart data"
    print(f"isolation: all {args.sessions + 1} sessions kept their own {kept}")


if __name__ == "__main__":
    main()
