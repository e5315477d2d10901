"""Peak memory of the app server while one visitor walks every page and moves its sliders.

Starts ``streamlit run app.py`` (by default with an empty JAX compilation cache, so the peak includes
compiling every program, as on a fresh Streamlit Community Cloud container), then in one browser session
opens the overview, clicks through every chapter in the sidebar, moves each slider on each page once and
picks another kernel where there is a kernel choice. A thread samples the resident memory of the server
process and all its children every 20 ms. Prints the RSS after each page and the peak, against the
690 MB limit of Cloud's smallest container.

    python -m benchmarks.bench_memory [--warm-cache] [--verbose] [--ablate]

``--ablate`` walks four times in one run: with everything in ``kernelviz/runtime/memory.py`` and
``kernelviz.runtime.jax_setup.lean_jit``, without the heap tuning (``KERNELVIZ_HEAP_TUNING=0``), without the
shared MLIR context (``KERNELVIZ_SHARED_IR_CONTEXT=0``) and without lean compilation
(``KERNELVIZ_LEAN_COMPILE=0``), and prints the four peaks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

from tests.browser import harness

LIMIT_BYTES = 690 * 1000 * 1000  # Cloud's smallest container, read as decimal megabytes (the stricter)
MB = 1e6


class TreeSampler:
    """Samples ``process_tree_rss(pid)`` in a thread; ``peak`` is the largest value seen, in bytes."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid, self.interval = pid, interval
        self.peak = 0
        self.recent = 0  # the largest value since the caller last set it to 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = harness.process_tree_rss(self.pid)
            self.peak, self.recent = max(self.peak, rss), max(self.recent, rss)
            time.sleep(self.interval)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def rss_split(pid: int) -> str:
    """The server process's resident memory split into anonymous (heap, arrays, caches) and file-backed
    (mapped libraries such as jaxlib's), from /proc/PID/smaps_rollup."""
    fields: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            name, value = line.split(":", 1)
            fields[name] = int(value.split()[0]) * 1024
    except (OSError, ValueError):
        return ""
    anon = fields.get("Anonymous", 0)
    return f"anon {anon / MB:6.1f} MB, files {(fields.get('Rss', 0) - anon) / MB:6.1f} MB"


def move_everything(page, sampler: TreeSampler, pid: int, verbose: bool = False) -> int:
    """Moves each slider once (and picks the next kernel); returns how many controls were moved.

    With ``verbose`` prints, per control, its label, the time to the repainted charts and the peak RSS
    while it reran."""

    def moved(label: str, t: float) -> None:
        if verbose:
            print(f"    {label[:30]:<30} {time.perf_counter() - t:5.1f} s  peak {sampler.recent / MB:7.1f} MB"
                  f"  rss {harness.process_tree_rss(pid) / MB:7.1f} MB", flush=True)
        sampler.recent = 0

    count = 0
    i = 0
    while i < harness.sliders(page).count():
        thumb = harness.sliders(page).nth(i)
        label = thumb.get_attribute("aria-label") or f"slider {i + 1}"
        before = harness.page_state(page)["signature"]
        key = harness.slider_key_towards_middle(thumb)
        thumb.focus()
        sampler.recent, t = 0, time.perf_counter()
        page.keyboard.press(key)
        harness.wait_for_repaint(page, before)
        moved(label, t)
        count += 1
        i += 1
    if "Kernel" in harness.widget_values(page):
        options = harness.select_options(page, "Kernel")
        current = harness.widget_values(page)["Kernel"]
        before = harness.page_state(page)["signature"]
        sampler.recent, t = 0, time.perf_counter()
        harness.choose_option(page, "Kernel", options[(options.index(current) + 1) % len(options)])
        harness.wait_for_repaint(page, before)
        moved("Kernel", t)
        count += 1
    return count


def walk(env: dict[str, str], verbose: bool) -> tuple[int, int, list[str]]:
    """One visitor walks every page against a fresh server; returns (peak RSS, RSS at the end, errors)."""
    with sync_playwright() as p:
        server = harness.start_streamlit("app.py", env=env)
        try:
            idle = harness.process_tree_rss(server.pid)
            print(f"server idle before any visitor: {idle / MB:7.1f} MB", flush=True)
            with TreeSampler(server.pid) as sampler:
                browser = harness.launch_chromium(p)
                page = browser.new_context(viewport=harness.VIEWPORT).new_page()
                page.goto(server.url + "/")
                harness.wait_until_drawn(page, timeout=harness.FIRST_LOAD_TIMEOUT_S)
                rss = harness.process_tree_rss(server.pid)
                print(f"{'/ (first visit, warm-up)':<34} rss {rss / MB:7.1f} MB  peak so far"
                      f" {sampler.peak / MB:7.1f} MB", flush=True)
                visit_chapters(page, sampler, server.pid, verbose)
                errors = harness.exception_texts(page)
                browser.close()
        finally:
            final = harness.process_tree_rss(server.pid)
            server.stop()
    return sampler.peak, final, errors


def visit_chapters(page, sampler: TreeSampler, pid: int, verbose: bool) -> None:
    """Clicks through every chapter in the sidebar and moves its controls, printing RSS per page."""
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    hrefs = [urlsplit(a.get_attribute("href")).path for a in links.all()]
    for index, href in enumerate(hrefs):
        t = time.perf_counter()
        links.nth(index).click()
        page.wait_for_url(lambda u, href=href: urlsplit(u).path == href)
        harness.wait_until_drawn(page)
        moved = 0 if href in harness.REFERENCE_PATHS else move_everything(page, sampler, pid, verbose)
        rss = harness.process_tree_rss(pid)
        print(f"{href + f' ({moved} controls moved)':<34} rss {rss / MB:7.1f} MB  peak so far"
              f" {sampler.peak / MB:7.1f} MB  ({time.perf_counter() - t:5.1f} s;"
              f" {rss_split(pid)})", flush=True)


def report(name: str, peak: int, final: int) -> None:
    verdict = "within" if peak <= LIMIT_BYTES else "OVER"
    print(f"{name}: peak RSS of the server (+ children) {peak / MB:7.1f} MB ({peak / 2**20:.1f} MiB), "
          f"{final / MB:7.1f} MB at the end; {verdict} the 690 MB limit ({peak / LIMIT_BYTES:.0%} of it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-cache", action="store_true",
                        help="use the default JAX cache (programs already compiled) instead of an empty one")
    parser.add_argument("--verbose", action="store_true",
                        help="print the time and peak memory of every control moved")
    parser.add_argument("--ablate", action="store_true",
                        help="walk again without the heap tuning, the shared IR context and lean compilation")
    args = parser.parse_args()
    ablations = [("without heap tuning", {"KERNELVIZ_HEAP_TUNING": "0"}),
                 ("without the shared IR context", {"KERNELVIZ_SHARED_IR_CONTEXT": "0"}),
                 ("without lean compilation", {"KERNELVIZ_LEAN_COMPILE": "0"})]
    runs = [("with heap tuning", {})] + (ablations if args.ablate else [])
    results, errors = [], []
    for name, extra in runs:
        with tempfile.TemporaryDirectory(prefix="kernelviz-jax-cache-") as cache:
            env = {**extra, **({} if args.warm_cache else {"KERNELVIZ_JAX_CACHE": cache})}
            print(f"== {name} ({'default' if args.warm_cache else 'empty'} JAX cache)", flush=True)
            peak, final, errs = walk(env, args.verbose)
            results.append((name, peak, final))
            errors += errs
    print()
    for name, peak, final in results:
        report(name, peak, final)
    if errors:
        print("exception boxes seen:", *errors, sep="\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
