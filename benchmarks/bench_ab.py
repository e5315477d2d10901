"""Two versions of the app side by side: one slider pressed on each in turn, in one run.

A change that should make a press faster is measured against the version before it, on the same machine at
the same moment: ``--old`` and ``--new`` are two checkouts of the repository (``git worktree add DIR REV``),
each served by its own ``streamlit run``. Both pages are opened at ``--path``, the servers are left to
finish their warm-up, then each press on ``--slider`` alternates between the two pages, each once the
server pressed before is idle again (so a press never shares the cores with what the other version does
after its own, such as chapter 5 preparing its next notch); per version it
prints the median key press → repainted charts, the Plotly draws a press and the milliseconds they hold
the page's main thread, and the new version's press as a ratio of the old one's.

    python -m benchmarks.bench_ab --old ../kv-old --new . --path /dot-product-attention \\
        --slider "Hold-out size" [--repeat 8]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import press_and_wait
from benchmarks.bench_sliders import DRAWS_JS, IDLE_QUIET_S, take_draws
from tests.browser import harness
from tests.measure import wait_until_idle


def open_version(browser, server: harness.StreamlitServer, path: str):
    """The version's page at ``path``, after its home page (versions from before chapters/ showed a notice
    on a fresh server's first link into a chapter), drawn, with Plotly's drawing calls counted."""
    page = browser.new_context(viewport=harness.VIEWPORT).new_page()
    for at in ("/", path):
        page.goto(server.url + at)
        harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
    page.evaluate(DRAWS_JS)
    return page


def press(page, slider: str, direction: list[str]) -> tuple[float, int, float]:
    """One press: seconds to the repainted charts, the Plotly draws it made and their main-thread seconds
    (draws after the charts' data changed are counted too)."""
    seconds = press_and_wait(page, harness.slider_by_label(page, slider), direction)
    page.wait_for_timeout(400)
    draws, draw_s = [], []
    take_draws(page, draws, draw_s)
    return seconds, draws[0], draw_s[0]


class Presses(NamedTuple):
    """One page's presses: seconds to the repainted charts, Plotly draws and their main-thread seconds."""

    seconds: list[float]
    draws: list[float]
    draw_s: list[float]


def taken_in_turn(pages: dict[str, Any], slider: str, repeat: int,
                  settle: Callable[[str], object] = lambda name: None) -> dict[str, Presses]:
    """``repeat`` presses of ``slider`` on each of ``pages`` in turn (the first of each not counted), each
    followed by ``settle(name)``; per page, what ``press`` measured."""
    out = {name: Presses([], [], []) for name in pages}
    directions = {name: ["ArrowRight"] for name in pages}
    for i in range(repeat + 1):
        for name, page in pages.items():
            measured = press(page, slider, directions[name])
            settle(name)
            if i:
                for into, value in zip(out[name], measured, strict=True):
                    into.append(value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout of the version before")
    parser.add_argument("--new", type=Path, required=True, help="checkout of the version after")
    parser.add_argument("--path", required=True, help="the page's URL path, e.g. /multi-head")
    parser.add_argument("--slider", required=True, help="the slider's label")
    parser.add_argument("--repeat", type=int, default=8, help="counted presses per version")
    args = parser.parse_args()
    versions = {"old": args.old.resolve(), "new": args.new.resolve()}
    with sync_playwright() as p:
        servers = {name: harness.start_streamlit(str(root / "app.py")) for name, root in versions.items()}
        try:
            browser = harness.launch_chromium(p)
            pages = {name: open_version(browser, servers[name], args.path) for name in versions}
            for server in servers.values():
                wait_until_idle(server.pid)
            # each press once the server pressed before is idle: what it prepares ahead, too
            presses = taken_in_turn(pages, args.slider, args.repeat,
                                    lambda name: wait_until_idle(servers[name].pid, quiet=IDLE_QUIET_S))
            browser.close()
        finally:
            for server in servers.values():
                server.stop()
    report(presses, args)


def report(presses: dict[str, Presses], args: argparse.Namespace) -> None:
    med = statistics.median
    print(f"\n{args.path} · {args.slider}, {args.repeat} presses each, taken in turn")
    for name, (seconds, draws, draw_s) in presses.items():
        print(f"{name:<4} press {med(seconds) * 1e3:6.0f} ms   draws {med(draws):3.0f}   Plotly "
              f"{med(draw_s) * 1e3:5.0f} ms   ({', '.join(f'{s * 1e3:.0f}' for s in seconds)})")
    ratio = med(presses["new"][0]) / med(presses["old"][0])
    print(f"new / old: the press {ratio:.2f}x")


if __name__ == "__main__":
    main()
