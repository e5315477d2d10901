"""The first visit to a fresh server: every page from an empty compilation cache, against a bare page.

A teacher opens the app on a container that has just woken up. For each page this script starts a new
``streamlit run app.py`` on an empty JAX compilation cache (a fresh ``KERNELVIZ_JAX_CACHE``), opens that
page straight away in a new Chromium, and times from the server's start to the first chart drawn and to
every chart drawn with Streamlit idle. The floor is the bare page (``benchmarks/bare_app.py``: one slider,
two charts of the dashboard's size), started and timed the same way in the same run. It does this on two
cores, and again with the server on one core (``--pin``: the server on core 0, Chromium on the others),
and prints each time with its ratio to the floor. ``--without-kept`` starts each page a second time with
``KERNELVIZ_KEPT=0`` (every default view computed, ``kernelviz/app/ui/caching/kept.py``), to show what
the kept results buy, in the same run.

    python -m benchmarks.bench_cold_start [--pages overview,kernel-regression] [--cores 2,1] [--without-kept]
"""

from __future__ import annotations

import argparse
import os
import stat
import statistics
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from playwright.sync_api import sync_playwright

from benchmarks.bench_repaint import timed_start
from kernelviz.app.ui.pages import CHAPTERS

PAGES = {"overview": "/", **{c.url: f"/{c.url}" for c in CHAPTERS}}


class Start(NamedTuple):
    """One cold start: seconds from the server's start to its first chart and to every chart drawn."""

    first: float
    drawn: float


def one_core_python(folder: Path) -> str:
    """A launcher that runs this Python on core 0 only (``taskset``), for ``KERNELVIZ_SERVER_PYTHON``."""
    script = folder / "python-on-core-0"
    script.write_text(f'#!/bin/sh\nexec taskset -c 0 "{sys.executable}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def cold_start(p, script: str, path: str, env: dict[str, str]) -> Start:
    """``script`` started on an empty compilation cache, ``path`` opened at once; the server stopped."""
    with tempfile.TemporaryDirectory(prefix="kernelviz-cold-") as cache:
        _, first, drawn, server = timed_start(p, path, {**env, "KERNELVIZ_JAX_CACHE": cache}, script)
        server.stop()
    return Start(first, drawn)


def floor(p, env: dict[str, str], rounds: int) -> Start:
    """The bare page's cold start, the median of ``rounds``."""
    starts = [cold_start(p, "benchmarks/bare_app.py", "/", env) for _ in range(rounds)]
    return Start(statistics.median(s.first for s in starts), statistics.median(s.drawn for s in starts))


def run(cores: int, pages: list[str], rounds: int, without_kept: bool = False) -> None:
    """Every page's cold start and the floor, with the server on ``cores`` cores (1: pinned to core 0)."""
    everywhere = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    with tempfile.TemporaryDirectory() as folder:
        env = {} if cores > 1 else {"KERNELVIZ_SERVER_PYTHON": one_core_python(Path(folder))}
        if cores == 1 and everywhere is not None and len(everywhere) > 1:
            os.sched_setaffinity(0, everywhere - {0})  # this script and Chromium off the server's core
        try:
            _pages(cores, pages, rounds, env, without_kept)
        finally:
            if everywhere is not None:
                os.sched_setaffinity(0, everywhere)


def _pages(cores: int, pages: list[str], rounds: int, env: dict[str, str], without_kept: bool) -> None:
    """The floor, then each page's cold start, printed as they come (and with ``KERNELVIZ_KEPT=0``)."""
    with sync_playwright() as p:
        base = floor(p, env, rounds)
        plural = "s" if cores > 1 else ""
        print(f"\nserver on {cores} core{plural}; bare page: first chart {base.first:.1f} s, all drawn"
              f" {base.drawn:.1f} s (median of {rounds})", flush=True)
        heading = f"{'page':24s} {'first chart':>18s} {'all charts drawn':>20s}"
        extra = f"   {'without kept results: first':>28s} {'all drawn':>16s}" if without_kept else ""
        print(heading + extra)
        for name in pages:
            s = cold_start(p, "app.py", PAGES[name], env)
            line = f"{name:24s} {_ratio(s.first, base.first)} {_ratio(s.drawn, base.drawn):>20s}"
            if without_kept:
                c = cold_start(p, "app.py", PAGES[name], {**env, "KERNELVIZ_KEPT": "0"})
                line += f"   {_ratio(c.first, base.first):>28s} {_ratio(c.drawn, base.drawn):>16s}"
            print(line, flush=True)


def _ratio(seconds: float, floor_s: float) -> str:
    return f"{seconds:7.1f} s ({seconds / floor_s:3.1f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, of {', '.join(PAGES)}")
    parser.add_argument("--cores", default="2,1", help="server core settings to run: 2 (all), 1 (pinned)")
    parser.add_argument("--rounds", type=int, default=2, help="cold starts of the bare page per setting")
    parser.add_argument("--without-kept", action="store_true",
                        help="each page again with KERNELVIZ_KEPT=0: what the kept default views buy")
    args = parser.parse_args()
    pages = [name for name in args.pages.split(",") if name]
    unknown = [name for name in pages if name not in PAGES]
    if unknown:
        parser.error(f"unknown pages {unknown}; choose from {', '.join(PAGES)}")
    for cores in (int(c) for c in args.cores.split(",")):
        run(cores, pages, args.rounds, args.without_kept)


if __name__ == "__main__":
    main()
