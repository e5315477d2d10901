"""Chapter 5's pretrained in-context layer: time, compile cost, and what it learns against the smoothers.

Run from the repository root:

    python -m benchmarks.bench_incontext [--repeats 3] [--tasks 256]

Prints:

* compile: the pretraining program lowered and compiled with the persistent cache off (seconds, and the
  growth of the process's resident memory and of its peak across it), after XLA's start-up and beside
  chapter 4's training program compiled the same way; then the first call;
* warm pretraining at the defaults (``incontext.pretrain()``: 1500 Adam steps × 64 sine prompts of 32
  points), median of ``--repeats`` calls with other seeds; then the GP family;
* recompiles: ``_pretrain``'s cache size and the compilations counted while pretraining at other controls
  (family, roughness, noise, n, heads, steps, softmax/linear); both must stay 1 and 0;
* errors on fresh tasks (mean (f̂(x_q) − f(x_q))²): the softmax layer, the linear layer, Nadaraya–Watson at
  the family's best fixed ℓ (chosen in hindsight on the same tasks), the ratios, the learned window, the
  best ℓ and the mean leave-one-out ℓ* of single prompts; for both families;
* the sweep: the learned window at three roughness values and three noise values, beside the best ℓ.
Targets: warm ≤ 1.5 s; layer ≤ 1.1x NW; window falling with roughness; linear ≥ 1.5x softmax.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Callable
from itertools import pairwise

import jax
import numpy as np

from kernelviz.app.warmup import count_compilations
from kernelviz.models import attention
from kernelviz.models import incontext as ic
from kernelviz.models.attention import training as attention_training
from kernelviz.models.incontext import evaluation as ev
from tests.measure import rss_bytes

MB = 2**20


def _compile(label: str, lower: Callable[[], jax.stages.Lowered]) -> float:
    """Lower and compile one program with the persistent cache off; print its time and memory growth."""
    rss0, peak0 = rss_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t = time.perf_counter()
    lowered = lower()
    t_lower = time.perf_counter() - t
    lowered.compile()
    t_all = time.perf_counter() - t
    rss1, peak1 = rss_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"{label}: compile {t_all:6.2f} s (tracing and lowering {t_lower:.2f} s), program text "
          f"{len(lowered.as_text()) / 1e3:.0f} kB; RSS +{(rss1 - rss0) / MB:.0f} MB "
          f"({rss1 / MB:.0f} MB), peak +{(peak1 - peak0) / MB:.0f} MB ({peak1 / MB:.0f} MB)")
    return t_all


def compile_cost() -> None:
    """The pretraining program's compile time and memory, after XLA's own start-up (a tiny program) and
    beside chapter 4's training program (``attention_training._train``) compiled the same way."""
    jax.config.update("jax_enable_compilation_cache", False)
    _compile("XLA start-up (x + 1)", lambda: jax.jit(lambda x: x + 1.0).lower(1.0))
    x = np.linspace(-3.0, 3.0, 50)
    run = attention_training.layer_start(x, np.sin(x))
    _compile("chapter 4's training  ", lambda: attention_training._train.lower(attention.layer_output,
                                                                                *run.args))
    args = ic.pretrain_args("sine", 3.0, 0.1, 32, 1, ic.STEPS, ic.LEARNING_RATE, "softmax", 0)
    _compile("chapter 5's pretrain  ", lambda: ic._pretrain.lower(args))
    jax.config.update("jax_enable_compilation_cache", True)
    with count_compilations() as count:
        t = time.perf_counter()
        ic.pretrain()
        first = time.perf_counter() - t
    print(f"first pretrain() call: {first:6.2f} s ({count.requests} programs, {count.cache_hits} from the "
          f"persistent cache, {count.seconds:.2f} s compiling or loading)")


def warm_times(repeats: int) -> None:
    for family in ("sine", "gp"):
        ic.pretrain(family, seed=99)
        ts = []
        for seed in range(1, repeats + 1):
            t = time.perf_counter()
            fit = ic.pretrain(family, seed=seed)
            ts.append(time.perf_counter() - t)
        print(f"warm pretrain({family!r}) at the defaults ({fit.steps_run} steps × {ic.BATCH} prompts of "
              f"{fit.n} points): median {statistics.median(ts):.3f} s (min {min(ts):.3f}, max {max(ts):.3f})"
              + ("  [target ≤ 1.5 s]" if family == "sine" else ""))


def recompiles() -> None:
    controls = [dict(family="gp", roughness=6.0, noise=0.5, n=50, heads=3, steps=300, kind="softmax"),
                dict(family="sine", roughness=9.0, noise=0.0, n=12, heads=8, steps=200, kind="linear"),
                dict(family="sine", roughness=1.0, noise=1.0, n=64, heads=2, steps=1, learning_rate=0.1)]
    with count_compilations() as count:
        for c in controls:
            ic.pretrain(**c)  # type: ignore[arg-type]
    print(f"recompiles across {len(controls)} other control settings: {count.requests} programs compiled or "
          f"loaded; _pretrain cache size {ic._pretrain._cache_size()}  [target 0 and 1]")


def errors(tasks: int) -> None:
    print(f"\nerrors on {tasks} fresh tasks, mean (f̂(x_q) − f(x_q))² (n = 32, σ = 0.1, r = 3):")
    print(f"{'family':7} {'softmax':>9} {'linear':>9} {'NW best ℓ':>10} {'soft/NW':>8} {'lin/soft':>9} "
          f"{'window':>7} {'best ℓ':>7} {'LOO ℓ*':>7}")
    for family in ("sine", "gp"):
        soft, lin = ic.pretrain(family), ic.pretrain(family, kind="linear")
        e = ev.evaluate(soft, lin, tasks_count=tasks)
        print(f"{family:7} {e.layer_error:9.5f} {e.linear_error:9.5f} {e.nw_error:10.5f} "
              f"{e.layer_error / e.nw_error:7.3f}x {e.linear_error / e.layer_error:8.1f}x "
              f"{e.learned_window:7.4f} {e.best_lengthscale:7.4f} {e.loo_lengthscale:7.4f}")
    print("  [targets: soft/NW ≤ 1.1x, lin/soft ≥ 1.5x]")


def sweep() -> None:
    for family in ("sine", "gp"):
        rows = ev.window_sweep(family, roughness=(1.5, 3.0, 6.0, 10.0), noise=(0.0, 0.3, 1.0))
        print(f"\nlearned window against roughness and noise ({family}):")
        print(f"{'roughness':>9} {'noise':>6} {'window':>8} {'best ℓ':>8}")
        for r in rows:
            print(f"{r.roughness:9.1f} {r.noise:6.2f} {r.window:8.4f} {r.best_lengthscale:8.4f}")
        by_r = [r.window for r in rows if r.noise == 0.1]
        by_s = [r.window for r in rows if r.roughness == 3.0 and r.noise != 0.1]
        print(f"  window falls as roughness rises: {all(a > b for a, b in pairwise(by_r))}"
              f"; rises with noise: {all(a < b for a, b in pairwise(by_s))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=ev.EVAL_TASKS)
    a = parser.parse_args()
    print(f"cores available: {len(os.sched_getaffinity(0))}, load average {os.getloadavg()[0]:.2f}")
    compile_cost()
    warm_times(a.repeats)
    recompiles()
    errors(a.tasks)
    sweep()


if __name__ == "__main__":
    main()
