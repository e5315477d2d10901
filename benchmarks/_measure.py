"""Small measuring helpers shared by the benchmark scripts: wall time and peak resident memory."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path


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
def peak_rss(pid: int | str = "self", interval: float = 0.002):
    """Samples a process's RSS in a thread; yields a dict whose 'peak' and 'start' are filled in bytes."""
    out = {"start": rss_bytes(pid), "peak": 0}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            out["peak"] = max(out["peak"], rss_bytes(pid))
            time.sleep(interval)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()
        out["peak"] = max(out["peak"], rss_bytes(pid))


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
