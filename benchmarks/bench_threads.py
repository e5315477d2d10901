"""One XLA compute thread (kernelviz's default) against XLA's own one per core, in one run.

Runs the same calls in two fresh processes, one with ``KERNELVIZ_XLA_THREADS=1`` (the default: JAX's CPU
client gets a one-thread intra-op pool, ``kernelviz/runtime/jax_setup.py``) and one with
``KERNELVIZ_XLA_THREADS=all`` (XLA's default: a thread per core), each after ``the warm-up``, and prints the
median time of each call in both and their ratio. The calls are what the pages run on a slider move, plus one
large streaming prediction where splitting the work over the cores might pay.

    python benchmarks/bench_threads.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = "--child"


def calls() -> dict:
    """name → call, on the blog post's data (150 points) and on one large set for the streaming path."""
    import numpy as np

    import kernelviz as kv

    ds = kv.blog_data()
    grid = ds.grid(256)
    rng = np.random.default_rng(0)
    big_keys = np.sort(rng.uniform(-3.0, 3.0, 200_000))
    big_values = np.sin(big_keys) + rng.normal(0.0, 0.3, big_keys.size)
    big_queries = np.linspace(-3.0, 3.0, 2_000)
    return {
        "chapter 1: Nadaraya–Watson, 256 queries": lambda i: kv.nadaraya_watson(
            grid, ds.x, ds.y, 0.2 + 0.01 * i, with_weights=True),
        "chapter 2: masked training, hold-out 10": lambda i: kv.fit(ds.x, ds.y, holdout=10, steps=100,
                                                                    seed=i),
        "chapter 2: leave-one-out optimum": lambda i: kv.loo_lengthscale(ds.x, ds.y + 1e-3 * i),
        "chapter 3: 8 heads, 1,000 steps": lambda i: kv.fit(ds.x, ds.y, heads=8, steps=1000, seed=i,
                                                            multihead=True),
        "chapter 4: attention, 4 heads, 1,000 steps": lambda i: kv.fit_attention(
            ds.x, ds.y, heads=4, d_qk=4, holdout=10, steps=1000, seed=i),
        "streaming: 2,000 queries × 200,000 keys": lambda i: kv.nadaraya_watson(
            big_queries, big_keys, big_values, 0.05 + 0.001 * i, with_weights=False),
    }


def child(repeat: int) -> None:
    """Times every call (one untimed call first) and prints name → median seconds as JSON."""
    from kernelviz.app.warmup import warmup
    from kernelviz.runtime import jax_setup

    warmup()
    out = {}
    for name, call in calls().items():
        call(-1)
        times = []
        for i in range(repeat):
            t = time.perf_counter()
            call(i)
            times.append(time.perf_counter() - t)
        out[name] = statistics.median(times)
    out["XLA compute threads"] = jax_setup.set_up().one_compute_thread
    print(json.dumps(out))


def run(threads: str, repeat: int) -> dict:
    env = {**os.environ, "KERNELVIZ_XLA_THREADS": threads, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, __file__, CHILD, str(repeat)], env=env, cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == CHILD:
        child(int(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed calls of each")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; median of {args.repeat} calls after the warm-up", flush=True)
    one, every = run("1", args.repeat), run("all", args.repeat)
    if not one.pop("XLA compute threads") or every.pop("XLA compute threads"):
        print("(the one-thread client was not made: no CPU affinity here, or a single core)")
    print(f"{'call':<44} {'one thread':>11} {'one per core':>13} {'ratio':>7}")
    for name in one:
        print(f"{name:<44} {one[name] * 1e3:>8.1f} ms {every[name] * 1e3:>10.1f} ms "
              f"{every[name] / one[name]:>6.2f}x")


if __name__ == "__main__":
    main()
