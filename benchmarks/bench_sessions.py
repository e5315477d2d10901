"""Ten visitors at once: are their sessions isolated, and how much slower does each repaint get?

Starts ``streamlit run app.py`` on loopback and, with Playwright's async API, opens the masked-training
chapter in browser contexts of one Chromium (each context is its own Streamlit session):

1. one session alone presses ArrowRight on "Hold-out size" ``--moves`` times; each press is timed from the
   key to the repainted charts (chart data changed, Streamlit idle);
2. ten sessions do the same at the same time, each with different settings: its own noise seed for the
   data (so no session's results can come from another's cache), its own training seed and learning rate.

Every session then checks that its widgets and its URL still hold its own settings, that the page shows no
exception box, and that its charts carry exactly the data a brand-new session opened at its URL shows.
Prints the median repaint time with ten sessions and alone, and the ratio (target: at most 3), and the
server's peak resident memory over the whole run (limit: 690 MB).

By default the sessions press at the same instant, the worst case: every rerun queues behind the others.
With ``--every 5`` each session presses once every 5 seconds instead, from a random start within the first
5 seconds (seeded), like a class whose students each move a slider every few seconds; run it with more
``--sessions`` to find how many such students one server holds before its reruns take 3x as long.

    python -m benchmarks.bench_sessions [--sessions 10] [--moves 6] [--every SECONDS] \
        [--bare] [--pin] [--light]

With ``--pin`` (a machine of two cores or more) the server runs on the first core and Chromium on the
others (CPU affinity of every thread, as ``taskset`` sets it), so the server's times are its own.

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
from urllib.parse import urlsplit

from playwright.async_api import async_playwright

from benchmarks.sessions_client import Session, settle, wait_drawn
from tests.browser import harness
from tests.measure import peak_rss, pin, process_name, run_times, summary

TARGET_RATIO = 3.0
LIMIT_MB = 690  # Cloud's smallest container (decimal megabytes, as bench_memory.py reads it)
PAGE = "Masked training"  # sidebar label of the chapter
OPEN_AT_ONCE = 5  # sessions that load their page at the same time (one Chromium loads them all)
LEARNING_RATES = ("0.01", "0.03", "0.1", "0.2", "0.3")  # options of the page's "Learning rate" slider


def pin_browser(args: argparse.Namespace) -> None:
    """With ``--pin``, Chromium's processes (descendants of this one named chrom…) go to every core but
    the first."""
    if args.pin:
        browser = [p for p in harness.descendants(os.getpid()) if "chrom" in process_name(p)]
        others = set(range(1, os.cpu_count() or 1))
        print(f"pinned {pin(browser, others)} Chromium threads to cores {sorted(others)}", flush=True)


async def chapter_path(browser, server: harness.StreamlitServer) -> str:
    """The URL path of ``PAGE``, read from the sidebar; the page is visited once (its first run)."""
    warm = await browser.new_page(viewport=harness.VIEWPORT)
    await warm.goto(server.url + "/")
    await settle(warm)
    path = None
    for a in await warm.locator('[data-testid="stSidebarNavLink"]').all():
        if PAGE.lower() in (await a.inner_text()).lower():
            path = urlsplit(await a.get_attribute("href")).path
    if path is None:
        raise LookupError(f"no {PAGE!r} page in the sidebar")
    await warm.goto(server.url + path)
    await settle(warm)
    await warm.close()
    return path


async def class_of(args: argparse.Namespace, browser, server: harness.StreamlitServer, path: str, log: Path
                   ) -> tuple[list, list, list, list[str]]:
    """``args.sessions`` sessions (opened ``OPEN_AT_ONCE`` at a time) press together: their repaint times,
    server times as the browser sees them, the script runs' own times, and the isolation problems."""
    sessions = [
        Session(i, data_seed=6000 + i, seed=i, lr=LEARNING_RATES[i % len(LEARNING_RATES)], light=args.light)
        for i in range(args.sessions)
    ]
    opening = asyncio.Semaphore(OPEN_AT_ONCE)

    async def open_one(s: Session) -> None:
        async with opening:
            await s.open(browser, server.url, path)

    await asyncio.gather(*(open_one(s) for s in sessions))
    phases = random.Random(0)
    since = time.time()
    await asyncio.gather(*(s.move(args.moves, args.every, phases.uniform(0.0, args.every or 0.0))
                           for s in sessions))
    span = time.time() - since
    runs = run_times(log, since, since + span)
    print(f"             {len(runs)} script runs in {span:.0f} s kept the server busy"
          f" {sum(runs) / span:.0%} of the time", flush=True)
    together = [t for s in sessions for t in s.times]
    seen = [t for s in sessions for t in s.server_times]
    print(f"{args.sessions} sessions: repaint {summary(together)}", flush=True)
    print(f"             server  {summary(seen)}", flush=True)
    problems = []
    for s in sessions:  # one at a time: the check opens one more session per visitor
        problems += await s.verify(browser, args.moves)
        await s.context.close()
    return together, seen, runs, problems


async def run(args: argparse.Namespace, server: harness.StreamlitServer, log: Path
              ) -> tuple[list, list, list[str]]:
    """Returns the sessions alone and together (their repaint times, server times as the browser sees
    them and the script runs' own times from ``log``), and every isolation problem found."""
    async with async_playwright() as p:
        browser = await harness.launch_chromium(p)
        pin_browser(args)
        path = await chapter_path(browser, server)
        alone = Session(-1, data_seed=5000, seed=50, lr="0.2", light=args.light)
        await alone.open(browser, server.url, path)
        since = time.time()
        await alone.move(args.moves)
        alone_runs = run_times(log, since, time.time())
        problems = await alone.verify(browser, args.moves)
        await alone.context.close()
        print(f"1 session:   repaint {summary(alone.times)}", flush=True)
        print(f"             server  {summary(alone.server_times)}", flush=True)
        *together, more = await class_of(args, browser, server, path, log)
        await browser.close()
    return (alone.times, alone.server_times, alone_runs), tuple(together), problems + more


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
    if args.pin:
        pin([bare.process.pid], {0})
    try:
        bare_alone, bare_together = asyncio.run(run_bare(args, bare))
    finally:
        bare.stop()
    bare_ratio = statistics.median(bare_together) / statistics.median(bare_alone)
    print(f"bare page, same presses: {statistics.median(bare_alone) * 1e3:.1f} ms alone,"
          f" {statistics.median(bare_together) * 1e3:.1f} ms with {args.sessions} sessions,"
          f" ratio {bare_ratio:.2f}x (kernelviz / bare: {ratio / bare_ratio:.2f})")


def report(args: argparse.Namespace, alone_times: tuple, together_times: tuple) -> float:
    """Prints the repaint, browser-seen server and script-run times alone and together; returns the
    repaint ratio."""
    alone, alone_server, alone_runs = alone_times
    together, together_server, together_runs = together_times
    ratio = statistics.median(together) / statistics.median(alone)
    print()
    print(f"median repaint, {'1 session alone:':<26} {statistics.median(alone) * 1e3:8.1f} ms")
    label = f"{args.sessions} sessions {'at once' if args.every is None else f'every {args.every:g} s'}:"
    print(f"median repaint, {label:<26} {statistics.median(together) * 1e3:8.1f} ms"
          f"  (worst {max(together) * 1e3:.1f} ms)")
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio: {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target)")
    if alone_server and together_server:
        server_ratio = statistics.median(together_server) / statistics.median(alone_server)
        alone_ms = statistics.median(alone_server) * 1e3
        together_ms = statistics.median(together_server) * 1e3
        print(f"server side only (key press → script finished): {alone_ms:.1f} ms alone, {together_ms:.1f} ms"
              f" with {args.sessions} sessions, ratio {server_ratio:.2f}x")
    if alone_runs and together_runs:
        run_ratio = statistics.median(together_runs) / statistics.median(alone_runs)
        print(f"the server's own time per script run (timed_streamlit.py): {summary(alone_runs)} alone "
              f"({len(alone_runs)} runs)")
        print(f"{'':>60}{summary(together_runs)} with {args.sessions} sessions ({len(together_runs)} runs),"
              f" ratio {run_ratio:.2f}x ({'within' if run_ratio <= TARGET_RATIO else 'OVER'} the"
              f" {TARGET_RATIO:g}x target)")
    if not args.light:
        print("(all sessions' pages are drawn by one Chromium on this machine's cores, so the repaint times"
              " include the browser's share of the CPU; the server-side times do not)")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--moves", type=int, default=6, help="key presses per session")
    parser.add_argument("--every", type=float, default=None,
                        help="seconds between one session's presses (default: all sessions press at once)")
    parser.add_argument("--bare", action="store_true",
                        help="also measure the bare page (one slider, two charts) the same way")
    parser.add_argument("--pin", action="store_true", help="server on the first core, Chromium on the rest")
    parser.add_argument("--light", action="store_true",
                        help="sessions that do not draw their charts (benchmarks/sessions_client.py): the"
                        " server's side alone, as if every student had a laptop of their own")
    args = parser.parse_args()
    if args.pin and (os.cpu_count() or 1) < 2:
        parser.error("--pin needs at least two cores")

    log = Path(tempfile.mkstemp(prefix="kernelviz-runs-", suffix=".txt")[1])
    server = harness.start_streamlit("app.py", env={"KERNELVIZ_RUN_LOG": str(log)},
                                 launcher=(str(Path(__file__).with_name("timed_streamlit.py")),))
    if args.pin:
        print(f"pinned {pin([server.process.pid], {0})} server threads to core 0", flush=True)
    try:
        with peak_rss(server.process.pid, interval=0.02) as memory:
            alone_times, together_times, problems = asyncio.run(run(args, server, log))
    finally:
        server.stop()

    ratio = report(args, alone_times, together_times)
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
