"""Lean compilation (``kernelviz._jax.lean_jit``): what it saves while compiling, what it costs at run time.

Run from the repository root:

    PYTHONPATH=. python benchmarks/bench_lean.py [--repeats 5] [--rounds 2]

For each large program at the pages' defaults (chapter 2's fit in kernelviz's and in the post's arithmetic,
the leave-one-out ℓ*, chapter 3's multi-head fit, chapter 4's attention training and chapter 5's
pretraining), a fresh process with app.py's memory settings (``kernelviz._memory``) compiles it
on an empty cache and then runs it warm. Printed per
program, with ``KERNELVIZ_LEAN_COMPILE=0`` (XLA's defaults) and lean: the compile time, the peak resident
memory the compilation added, and the median warm time; then the ratios. The two settings alternate,
``--rounds`` times each, so both see the same machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time
from _measure import peak_rss
from kernelviz import _memory
_memory.limit_native_heap(); _memory.release_after_compiles(); _memory.share_ir_context()  # as app.py
import kernelviz as kv
from kernelviz import incontext
ds = kv.blog_data()
x, y = ds.x, ds.y
kv.nadaraya_watson([0.0], x, y, 0.3)  # XLA's start-up, outside every figure
PROGRAMS = {
    "fit (ch. 2)": lambda seed: kv.fit(x, y, holdout=10, steps=1000, seed=seed),
    "fit, post's arithmetic": lambda seed: kv.fit(x, y, holdout=10, steps=1000, seed=seed, arithmetic="post"),
    "loo ℓ* (ch. 1)": lambda seed: kv.loo_lengthscale(x, y + 1e-3 * seed),
    "fit, 8 heads (ch. 3)": lambda seed: kv.fit(x, y, heads=8, holdout=10, steps=1000, seed=seed),
    "attention (ch. 4)": lambda seed: kv.fit_attention(x, y, holdout=10, steps=1000, seed=seed),
    "pretraining (ch. 5)": lambda seed: incontext.pretrain(seed=seed),
}
repeats = int(sys.argv[1])
out = {}
for name, run in PROGRAMS.items():
    _memory.release_native_heap()
    with peak_rss() as mem:
        t = time.perf_counter(); run(0); first = time.perf_counter() - t
    warm = []
    for seed in range(1, repeats + 1):
        t = time.perf_counter(); run(seed); warm.append(time.perf_counter() - t)
    out[name] = {"first": first, "added": (mem["peak"] - mem["start"]) / 1e6, "warm": sorted(warm)}
print(json.dumps(out))
"""


def child(lean: bool, repeats: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="kernelviz-jax-cache-") as cache:
        env = {**os.environ, "KERNELVIZ_JAX_CACHE": cache, "KERNELVIZ_LEAN_COMPILE": "1" if lean else "0",
               "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), os.getcwd()])}
        out = subprocess.run([sys.executable, "-c", CHILD, str(repeats)], env=env, capture_output=True,
                             text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="warm runs per program and process")
    parser.add_argument("--rounds", type=int, default=2, help="processes per setting, alternating")
    args = parser.parse_args()
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for r in range(args.rounds):
        for lean in (False, True):
            t = time.perf_counter()
            runs[lean].append(child(lean, args.repeats))
            print(f"round {r + 1}, {'lean' if lean else 'XLA defaults'}: {time.perf_counter() - t:5.1f} s "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"\n{'program':<24} {'compile s':>15} {'compile adds MB':>17} {'warm ms':>17}"
          f" {'warm lean/default':>18}")
    for name in runs[True][0]:
        def fig(lean: bool, key: str, name: str = name) -> float:
            values = [run[name][key] for run in runs[lean]]
            if key == "warm":
                return statistics.median(v for run in values for v in run) * 1e3
            return statistics.median(values)

        ratio = fig(True, "warm") / fig(False, "warm")
        print(f"{name:<24} {fig(False, 'first'):6.1f} → {fig(True, 'first'):5.1f}"
              f" {fig(False, 'added'):8.0f} → {fig(True, 'added'):5.0f}"
              f" {fig(False, 'warm'):8.1f} → {fig(True, 'warm'):6.1f} {ratio:17.2f}x")


if __name__ == "__main__":
    main()
