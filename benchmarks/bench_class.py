"""A class session at full size: does one server take a class's answers, and do replicas take more?

A teacher (a real Chromium page at 1280 × 720) starts a class session on the long lesson's question scene;
students join and answer. Most students are headless phones (``class_client.py``: a Streamlit session over
the websocket each, polling as the join view does); ``--phones`` more are real Chromium pages at 390 × 844.

Three parts, each printing its figures (``--part`` picks one):

* ``one``: one server, ``--students`` (100) join at once and answer within ``--within`` (10) seconds. It
  prints how many answers were acknowledged and counted (none twice), when the stage's count reached them
  after the last answer (target: 2 s), the server's peak memory (limit: 690 MB), the teacher's Next with the
  class waiting against Next with no class (target: at most 1.5x), and the server's CPU per student per
  minute while the class waits (the polling's cost).
* ``replicas``: two replicas behind nginx (``deploy/nginx.conf``) sharing one Postgres (Debian's, started
  here, or ``KERNELVIZ_TEST_POSTGRES``), twice the students, split by nginx: the same figures.
* ``restart``: the server is killed (SIGKILL) once the answers are in, and a new one starts on the same
  SQLite file: answers acknowledged before the kill against answers counted after it (equal).

    python -m benchmarks bench_class [--part one|replicas|restart|all] [--students 100] [--within 10] \
        [--phones 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import signal
import statistics
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks.class_client import Student, attend
from tests.browser.harness import (
    PHONE,
    answer_question,
    launch_chromium,
    process_tree_rss,
    settled,
    start_class,
    start_streamlit,
)
from tests.measure import cpu_seconds, peak_rss, wait_until_idle
from tests.services import fresh_database, start_nginx, start_postgres, stop_postgres

COUNT_WITHIN_S = 2.0  # the stage shows every answer this soon after the last one
MEMORY_MB = 690  # Cloud's smallest container
WAIT_S = 20.0  # how long the class waits (polling) while the server's CPU is read


def timed_click(page: Any, name: str) -> float:
    """Seconds from a click on button ``name`` to the page settled again (the stage redrawn)."""
    start = time.perf_counter()
    page.get_by_role("button", name=name).click()
    page.wait_for_function("() => document.querySelector('[data-testid=stStatusWidget]') === null",
                           timeout=120_000)
    settled(page)
    return time.perf_counter() - start


def next_seconds(stage: Any, repeat: int = 3) -> float:
    """The teacher's Next (the question scene to the next scene), median of ``repeat``, back each time."""
    times = []
    for _ in range(repeat):
        times.append(timed_click(stage, "Next"))
        timed_click(stage, "Previous")
    return statistics.median(times)


class Class:
    """Headless students in a thread of their own (an asyncio loop): they join at once, answer at random
    moments within ``within`` s, and poll until ``stop()``."""

    def __init__(self, urls: list[str], code: str, n: int, within: float) -> None:
        rng = random.Random(0)
        self.students = [Student(urls[k % len(urls)], code) for k in range(n)]
        self.values = [round(rng.uniform(-1.0, 3.0), 2) for _ in range(n)]
        self.delays = [rng.uniform(1.0, within) for _ in range(n)]
        self.started = time.monotonic()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()

    async def _run(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        await asyncio.gather(*(attend(s, v, self.started + d, self._stop) for s, v, d
                               in zip(self.students, self.values, self.delays, strict=True)),
                             return_exceptions=True)

    def acked(self) -> list[float]:
        return [s.acked_at for s in self.students if s.acked_at is not None]

    def wait_acked(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.acked()) < len(self.students) and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        if self._loop is not None and not self._loop.is_closed():  # closed: every student's server is gone
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)


def stage_count_seen(stage: Any, n: int, timeout: float = 30.0) -> float:
    """When (time.monotonic()) the stage first shows ``n`` answers."""
    stage.wait_for_function(f"() => /Answers so far\\s*{n}\\b/.test(document.body.innerText)",
                            timeout=timeout * 1e3, polling=100)
    return time.monotonic()


def join_phones(browser: Any, url: str, code: str, n: int) -> list[Any]:
    """``n`` Chromium phones open the join link."""
    phones = [browser.new_context(**PHONE).new_page() for _ in range(n)]
    for phone in phones:
        phone.goto(f"{url}/?join={code}")
        settled(phone)
    return phones


def answer_on(phones: list[Any]) -> list[float]:
    """Each phone answers as a student would (slider, Send); when each saw its receipt (time.monotonic())."""
    acked = []
    for k, phone in enumerate(phones):
        answer_question(phone, 3 + 4 * k, "ArrowRight")
        acked.append(time.monotonic())
    return acked


def report_class(name: str, klass: Class, phones: list[float], seen: float, counted: dict,
                 within: float) -> None:
    acked = klass.acked() + phones
    total = len(klass.students) + len(phones)
    last = max(acked) - klass.started
    print(f"{name}: {len(klass.students)} headless students and {len(phones)} Chromium phones")
    print(f"  answers acknowledged: {len(acked)} of {total}, the last {last:.1f} s after they "
          f"joined (target: within {within:g} s)")
    print(f"  answers counted: {len(counted)}, from {len(set(counted))} students (none twice)")
    print(f"  the stage showed {len(acked)} answers {seen - max(acked):.2f} s after the last acknowledgement "
          f"(target: {COUNT_WITHIN_S:g} s)")


def class_run(stage: Any, browser: Any, urls: list[str], code: str, args: argparse.Namespace,
              engine: Any) -> tuple[Class, list[float], float, dict]:
    """Students answer the open question: returns them (headless, and the real phones' receipts), when the
    stage counted them all, and the store's answers of that round."""
    from kernelviz.app.classroom import store

    round_ = store.find(engine, code).round
    pages = join_phones(browser, urls[0], code, args.phones)
    klass = Class(urls, code, args.students, args.within)
    phones = answer_on(pages)
    seen = stage_count_seen(stage, args.students + len(phones), timeout=120)
    klass.wait_acked()
    return klass, phones, seen, store.answers(engine, code, round_)


def waiting_cpu(pids: list[int]) -> float:
    """The servers' CPU seconds over ``WAIT_S`` s."""
    before = sum(map(cpu_seconds, pids))
    time.sleep(WAIT_S)
    return sum(map(cpu_seconds, pids)) - before


def report_costs(peaks: dict, alone: float, busy: float, idle_cpu: float, class_cpu: float, n: int) -> None:
    for pid, memory in peaks.items():
        print(f"  peak memory of server {pid}: {memory['peak'] / 2**20:.0f} MB (limit: {MEMORY_MB} MB)")
    print(f"  teacher's Next: {busy:.2f} s with the class waiting, {alone:.2f} s with none: "
          f"{busy / alone:.2f}x (target: at most 1.5x)")
    per = (class_cpu - idle_cpu) / n / (WAIT_S / 60)
    print(f"  servers' CPU while the class waits: {class_cpu:.1f} s in {WAIT_S:g} s (with no class "
          f"{idle_cpu:.1f} s): {per * 1000:.0f} ms per student per minute")


def session_part(name: str, browser: Any, servers: list, front: str, engine: Any,
                 args: argparse.Namespace) -> None:
    """One class on ``servers`` reached through ``front``: join, answer, count, wait, Next."""
    pids = [s.pid for s in servers]
    with ExitStack() as memory:
        peaks = {pid: memory.enter_context(peak_rss(pid, 0.2, read=process_tree_rss)) for pid in pids}
        stage = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        code = start_class(stage, front)
        for pid in pids:  # the teacher opened the app before class: its warm-up's compilations are done
            wait_until_idle(pid)
        alone = next_seconds(stage)
        idle_cpu = waiting_cpu(pids)
        klass, phones, seen, counted = class_run(stage, browser, [front], code, args, engine)
        class_cpu = waiting_cpu(pids)
        busy = next_seconds(stage)
        klass.stop()
    report_class(name, klass, phones, seen, counted, args.within)
    report_costs(peaks, alone, busy, idle_cpu, class_cpu, args.students + args.phones)


def part_one(browser: Any, args: argparse.Namespace, folder: Path) -> None:
    from kernelviz.app.classroom import store

    url = f"sqlite:///{folder / 'one.sqlite3'}"
    server = start_streamlit(env={"KERNELVIZ_CLASS_DB": url})
    try:
        server.wait_healthy()
        session_part("one server", browser, [server], server.url, store.engine_for(url), args)
    finally:
        server.stop()


def part_replicas(browser: Any, args: argparse.Namespace, folder: Path) -> None:
    from kernelviz.app.classroom import store

    pg = Path(tempfile.mkdtemp(prefix="kv-pg-"))  # in /tmp itself: the postgres user reads it
    server = os.environ.get("KERNELVIZ_TEST_POSTGRES") or start_postgres(pg)
    database = fresh_database(server)
    replicas = [start_streamlit(env={"KERNELVIZ_CLASS_DB": database}) for _ in range(2)]
    proxy = None
    try:
        for replica in replicas:
            replica.wait_healthy()
        proxy, front = start_nginx(folder / "nginx", [r.url.removeprefix("http://") for r in replicas])
        doubled = argparse.Namespace(**{**vars(args), "students": 2 * args.students})
        session_part("two replicas behind nginx, one Postgres", browser, replicas, front,
                     store.engine_for(database), doubled)
    finally:
        if proxy is not None:
            proxy.terminate()
        for replica in replicas:
            replica.stop()
        stop_postgres(pg)
        shutil.rmtree(pg, ignore_errors=True)


def _token(student: Student) -> str | None:
    found = re.search(r"(?:^|&)me=([\w-]+)", student.query)
    return found.group(1) if found else None


def part_restart(browser: Any, args: argparse.Namespace, folder: Path) -> None:
    """The server killed halfway through the answers; a new one on the same file."""
    from kernelviz.app.classroom import store

    url = f"sqlite:///{folder / 'restart.sqlite3'}"
    env = {"KERNELVIZ_CLASS_DB": url}
    first = start_streamlit(env=env)
    first.wait_healthy()
    stage = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    code = start_class(stage, first.url)
    address = stage.url.removeprefix(first.url)
    round_ = store.find(store.engine_for(url), code).round
    klass = Class([first.url], code, args.students, args.within)
    time.sleep(args.within / 2)
    os.killpg(first.pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    acked = {_token(s) for s in klass.students if s.acked_at is not None}
    klass.stop()
    second = start_streamlit(env=env)
    try:
        second.wait_healthy()
        counted = store.answers(store.engine_for(url), code, round_)
        stage.goto(second.url + address)
        stage_count_seen(stage, len(counted), timeout=60)
        print(f"restart: the server killed (SIGKILL) {args.within / 2:g} s into the answers, a new one "
              "started on the same SQLite file")
        print(f"  answers acknowledged before the kill: {len(acked)}; of them counted after it: "
              f"{len(acked & set(counted))} (target: all); counted in all: {len(counted)} (answers in flight "
              "at the kill count when their commit was done)")
        print(f"  the teacher's address reopened session {code} on the new server, its stage showing "
              f"{len(counted)} answers")
    finally:
        second.stop()


PARTS = {"one": part_one, "replicas": part_replicas, "restart": part_restart}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all")
    parser.add_argument("--students", type=int, default=100, help="headless students (twice on replicas)")
    parser.add_argument("--within", type=float, default=10.0, help="seconds in which they answer")
    parser.add_argument("--phones", type=int, default=2, help="real Chromium phones beside them")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="kv-bench-class-") as where:
        browser = launch_chromium(p)
        for name, part in PARTS.items():
            if args.part in (name, "all"):
                part(browser, args, Path(where))
                print(flush=True)
        browser.close()


if __name__ == "__main__":
    main()
