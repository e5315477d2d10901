"""Lean compilation (``kernelviz.runtime.jax_setup.lean_jit``): what it saves while compiling, what it costs
at run time.

Run from the repository root:

    python -m benchmarks.bench_lean [--rounds 2] [--repeats 7]

The large programs at the pages' settings: chapter 2's fit in kernelviz's and in the post's arithmetic, the
leave-one-out ℓ*, chapter 3's eight heads (hold-out 10 and 75), chapter 4's attention training and chapter
5's pretraining. Printed per program, with XLA's defaults (``KERNELVIZ_LEAN_COMPILE=0``) and lean:

* compiling: a fresh process with app.py's memory settings (``kernelviz.runtime.memory``) compiles each
  program on
  an empty cache; the seconds and the peak resident memory the compilation added, median over ``--rounds``
  processes per setting, the two settings alternating;
* warm: one process holds both compilations of every program and times them in turn, ``--repeats`` calls
  each, alternating which goes first; the median and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CASES = r"""
import kernelviz as kv
from kernelviz.runtime import jax_setup
jax_setup.set_up()  # as the server
from kernelviz.models import incontext
ds = kv.blog_data()
x, y = ds.x, ds.y
kv.nadaraya_watson([0.0], x, y, 0.3)  # XLA's start-up, outside every figure
CASES = {
    "fit (ch. 2)": lambda s: kv.fit(x, y, holdout=10, steps=1000, seed=s),
    "fit, post's arithmetic": lambda s: kv.fit(x, y, holdout=10, steps=1000, seed=s, arithmetic="post"),
    "loo ℓ* (ch. 1)": lambda s: kv.loo_lengthscale(x, y + 1e-3 * s),
    "8 heads (ch. 3)": lambda s: kv.fit(x, y, heads=8, holdout=10, steps=1000, seed=s),
    "8 heads, hold-out 75": lambda s: kv.fit(x, y, heads=8, holdout=75, steps=1000, seed=s),
    "attention (ch. 4)": lambda s: kv.fit_attention(x, y, holdout=10, steps=1000, seed=s),
    "pretraining (ch. 5)": lambda s: incontext.pretrain(seed=s),
}
"""

COMPILE = r"""
import json, time
from tests.measure import peak_rss
from kernelviz.runtime import memory as _memory
_memory.limit_native_heap(); _memory.release_after_compiles(); _memory.share_ir_context()  # as app.py
""" + CASES + r"""
out = {}
for name, run in CASES.items():
    _memory.release_native_heap()
    with peak_rss() as mem:
        t = time.perf_counter(); run(0); seconds = time.perf_counter() - t
    out[name] = (seconds, (mem["peak"] - mem["start"]) / 1e6)
print(json.dumps(out))
"""

WARM = r"""
import json, sys, time
import jax
from kernelviz.models.attention import training as attention_training
from kernelviz.models import heads
from kernelviz.models import incontext
from kernelviz.models import loo
import functools, types
from kernelviz.runtime import train
ADAPTED = [(heads, "_adam_run"), (heads, "_search_run"), (attention_training, "_train"),
           (incontext, "_pretrain"), (loo, "_optimum")]
def copy(fn):  # the training adapter compiles the copies with XLA's defaults
    return types.FunctionType(fn.__code__, fn.__globals__)
both = {key: {"lean": getattr(*key), "default": copy(getattr(*key))} for key in ADAPTED}
DEFAULTS = {fns["default"] for key, fns in both.items() if key in ADAPTED}
_compiled = train.compiled
train.compiled = functools.cache(lambda program, static=(), lean=True: _compiled(
    program, static, lean and program not in DEFAULTS))
def use(setting):
    for (module, name), fns in both.items():
        setattr(module, name, fns[setting])
""" + CASES + r"""
repeats, out = int(sys.argv[1]), {}
for name, run in CASES.items():
    times = {"default": [], "lean": []}
    for setting in times:
        use(setting); run(0)
    for r in range(repeats):
        for setting in (("lean", "default") if r % 2 else ("default", "lean")):
            use(setting); t = time.perf_counter(); run(r + 1); times[setting].append(time.perf_counter() - t)
    out[name] = times
print(json.dumps(out))
"""


def child(code: str, lean: bool, *args: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="kernelviz-jax-cache-") as cache:
        env = {**os.environ, "KERNELVIZ_JAX_CACHE": cache, "KERNELVIZ_LEAN_COMPILE": "1" if lean else "0",
               "PYTHONPATH": os.getcwd()}
        out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True,
                             check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="compiling processes per setting, alternating")
    parser.add_argument("--repeats", type=int, default=7, help="warm calls per program and setting")
    args = parser.parse_args()
    compiled: dict[bool, list[dict]] = {False: [], True: []}
    for r in range(args.rounds):
        for lean in (False, True):
            compiled[lean].append(child(COMPILE, lean))
            print(f"compiling, round {r + 1}, {'lean' if lean else 'XLA defaults'} (load "
                  f"{os.getloadavg()[0]:.2f})", flush=True)
    warm = child(WARM, True, str(args.repeats))
    print(f"warm calls done (load {os.getloadavg()[0]:.2f})\n")
    print(f"{'program':<24} {'compile s':>14} {'compiling adds MB':>18} {'warm ms':>17}"
          f" {'warm lean/default':>18}")
    for name, times in warm.items():
        sec, mb = ([statistics.median(run[name][i] for run in compiled[lean]) for lean in (False, True)]
                   for i in (0, 1))
        ms = [statistics.median(times[s]) * 1e3 for s in ("default", "lean")]
        print(f"{name:<24} {sec[0]:5.1f} → {sec[1]:4.1f} {mb[0]:9.0f} → {mb[1]:5.0f}"
              f" {ms[0]:8.1f} → {ms[1]:6.1f} {ms[1] / ms[0]:17.2f}x")


if __name__ == "__main__":
    main()
