"""Every benchmark from one entry point, run from the repository root.

    python -m benchmarks                 what each benchmark measures, and how to run it
    python -m benchmarks --quick         the backend's figures in a few minutes, no browser
    python -m benchmarks NAME [ARGS...]  one benchmark (``training`` for ``bench_training``), with its own
                                         arguments (``--help`` lists them)

Each benchmark prints its figures and the reference it is compared against, measured in the same run;
``docs/benchmarks.md`` keeps the figures of record.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]


class Benchmark(NamedTuple):
    """One script: what it measures, whether it drives Chromium, and its arguments in ``--quick``
    (None: not part of it)."""

    measures: str
    browser: bool
    quick: tuple[str, ...] | None = None


BENCHMARKS = {
    "training": Benchmark("masked training against the blog post's per-step loop, and the plain forms",
                          False, ("--repeats", "2")),
    "loo": Benchmark("the exact leave-one-out optimum against statsmodels' cv_ls", False,
                     ("--sizes", "150", "600", "--repeat", "3")),
    "streaming": Benchmark("2,000 queries over 200,000 keys without the weights, against NumPy", False,
                           ("--repeat", "2")),
    "attention": Benchmark("chapter 4's trained layer against the best Gaussian, by leave-one-out error",
                           False, ("--seeds", "2")),
    "incontext": Benchmark("chapter 5: pretraining time, in-context error, the learned window", False,
                           ("--repeats", "1")),
    "blocks": Benchmark("multi-head predictions in query blocks sized to the cache, against fixed blocks",
                        False, ("--repeats", "2")),
    "threads": Benchmark("one XLA compute thread against one per core", False, ("--repeat", "3")),
    "lean": Benchmark("training programs compiled lean against XLA's defaults: memory and time", False),
    "memory": Benchmark("the server's peak memory while one visitor walks every page and control", True),
    "sliders": Benchmark("every slider: key press to repainted charts, against a bare page", True),
    "chart_element": Benchmark("the bare page's charts updated in place, against st.plotly_chart", True),
    "ab": Benchmark("two checkouts of the app, one slider pressed on each in turn", True),
    "cold_start": Benchmark("every page from an empty compilation cache, from the server's start, against a "
                            "bare page; two cores and one", True),
    "repaint": Benchmark("chapter 2's hold-out slider against a bare page; cold and warm start", True),
    "warmup_sliders": Benchmark("a first visitor's slider while the warm-up still compiles", True),
    "first_screen": Benchmark("where each page's first chart starts at 1280 × 720", True),
    "lessons": Benchmark("the presenter view: next scene's charts repainted, against a bare page", True),
    "sessions": Benchmark("N browser sessions on one server: isolation, queueing, memory", True),
    "class": Benchmark("a class session: 100 phones answer on one server, 200 on two replicas, a restart",
                       True),
    "explain": Benchmark("chapter 1: a click on the fit to the explained repaint, against a bare page", True),
}


def listing() -> str:
    lines = ["python -m benchmarks NAME [ARGS]   (--quick: every benchmark marked *, quick settings)", ""]
    for name, b in BENCHMARKS.items():
        mark = "*" if b.quick is not None else " "
        lines.append(f" {mark} {name:15s} {b.measures}{'  [Chromium]' if b.browser else ''}")
    return "\n".join(lines)


def run(name: str, args: list[str]) -> int:
    """``python -m benchmarks.bench_NAME ARGS`` in a process of its own; its exit code."""
    return subprocess.run([sys.executable, "-m", f"benchmarks.bench_{name}", *args], cwd=ROOT).returncode


def quick() -> int:
    """Every benchmark with quick settings, one after another; 1 if any failed."""
    failed = []
    for name, b in BENCHMARKS.items():
        if b.quick is None:
            continue
        print(f"\n=== {name}: {b.measures}\n    python -m benchmarks {name} {' '.join(b.quick)}", flush=True)
        start = time.perf_counter()
        if run(name, list(b.quick)) != 0:
            failed.append(name)
        print(f"=== {name}: {time.perf_counter() - start:.0f} s", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "--list"):
        print(__doc__.strip(), "", listing(), sep="\n")
        return 0
    if argv[0] == "--quick":
        return quick()
    argv = [argv[0].removeprefix("bench_"), *argv[1:]]  # bench_class names the same script as class
    if argv[0] not in BENCHMARKS:
        print(f"no benchmark named {argv[0]!r}\n\n{listing()}", file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
