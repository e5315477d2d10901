"""Small measuring helpers shared by the benchmark scripts: wall time, CPU time, peak resident memory, the
server's script runs, and which process runs where."""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple


def rss_bytes(pid: int | str = "self") -> int:
    """Resident set size of a process, read from /proc (0 where it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@contextmanager
def peak_rss(pid: int | str = "self", interval: float = 0.002, read: Callable[[int | str], int] = rss_bytes):
    """Samples a process's RSS (``read``: by default its own; ``process_tree_rss`` for it and its children)
    in a thread; yields a dict whose 'peak' and 'start' are filled in bytes."""
    out = {"start": read(pid), "peak": 0}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            out["peak"] = max(out["peak"], read(pid))
            time.sleep(interval)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()
        out["peak"] = max(out["peak"], read(pid))


def timings(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock seconds of ``repeat`` calls of ``fn``."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def summary(seconds: list[float]) -> str:
    """'median … (min …, max …)' in milliseconds."""
    ms = [s * 1e3 for s in seconds]
    return f"median {statistics.median(ms):9.1f} ms (min {min(ms):.1f}, max {max(ms):.1f})"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far, in seconds (from /proc; 0 where unreadable)."""
    try:  # the fields after the command name, the state (field 3) first
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, quiet: float = 3.0, busy_share: float = 0.05, timeout: float = 300.0) -> float:
    """Waits until process ``pid`` uses less than ``busy_share`` of a core over ``quiet`` seconds (a
    server whose background warm-up has finished); returns the seconds waited (at most ``timeout``)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        before = cpu_seconds(pid)
        time.sleep(quiet)
        if cpu_seconds(pid) - before < busy_share * quiet:
            break
    return time.perf_counter() - t0


class Run(NamedTuple):
    """One script run in ``timed_streamlit.py``'s log: its session, and when it started and ended
    (``time.time()`` seconds)."""

    session: str
    start: float
    end: float


def _rows(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def run_lines(log: Path) -> list[Run]:
    """Every script run in the log ("<end> <seconds> <session id>" lines)."""
    return [Run(r[2], float(r[0]) - float(r[1]), float(r[0])) for r in _rows(log) if len(r) == 3]


def request_lines(log: Path) -> list[tuple[str, float]]:
    """Every rerun request in the log ("<arrival> <session id> rerun requested" lines): (session, arrival)."""
    return [(r[1], float(r[0])) for r in _rows(log) if len(r) == 4 and r[2] == "rerun"]


def run_times(log: Path, since: float, until: float) -> list[float]:
    """Seconds of each script run (``timed_streamlit.py``'s log) that ended between two ``time.time()``s."""
    return [r.end - r.start for r in run_lines(log) if since <= r.end <= until]


def served_times(log: Path, since: float, until: float) -> list[float]:
    """For each rerun request that arrived between two ``time.time()``s: seconds from its arrival to the end
    of its session's first run that started after it (the run that carries the new value), on the
    server's clock alone (the browser's share of a press is not in it)."""
    runs = run_lines(log)
    out = []
    for session, arrived in request_lines(log):
        if since <= arrived <= until:
            ends = [r.end for r in runs if r.session == session and r.start >= arrived - 1e-3]
            if ends:
                out.append(min(ends) - arrived)
    return out


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""


def pin(pids: list[int], cpus: set[int]) -> int:
    """Set the CPU affinity of every thread of ``pids`` (new threads and processes inherit it); returns
    how many threads were pinned."""
    count = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("[0-9]*"):
            try:
                os.sched_setaffinity(int(task.name), cpus)
                count += 1
            except OSError:
                continue
    return count
