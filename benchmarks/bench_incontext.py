"""Chapter 5's pretrained in-context layer: time, compile cost, and what it learns against the smoothers.

Run from the repository root:

    python -m benchmarks.bench_incontext [--repeats 3] [--tasks 256] [--gradient | --batch]

Prints:

* compile: the pretraining program lowered and compiled with the persistent cache off (seconds, and the
  growth of the process's resident memory and of its peak across it), after XLA's start-up and beside
  chapter 4's training program compiled the same way; then the first call;
* warm pretraining at the defaults (``incontext.pretrain()``: 1500 Adam steps × 32 sine prompts of 32
  points), median of ``--repeats`` calls with other seeds; then the GP family;
* recompiles: ``_pretrain``'s cache size and the compilations counted while pretraining at other controls
  (family, roughness, noise, n, heads, steps, softmax/linear); both must stay 1 and 0;
* errors on fresh tasks (mean (f̂(x_q) − f(x_q))²): the softmax layer, the linear layer, Nadaraya–Watson at
  the family's best fixed ℓ (chosen in hindsight on the same tasks), the ratios, the learned window, the
  best ℓ and the mean leave-one-out ℓ* of single prompts; for both families;
* the sweep: the learned window at three roughness values and three noise values, beside the best ℓ;
* with ``--gradient`` only: pretraining with its gradient written out head by head
  (``incontext.gradient.loss_by_heads``) against the plain ``jax.value_and_grad`` of
  ``pretraining_loss`` over every padded head, for 1, 4 and 8 heads and both kinds, timed in turns;
* with ``--batch`` only: prompts per step and step size, (64, 0.4), (32, 0.4) and (32, 0.6): the layer's
  error over Nadaraya–Watson's at the best fixed ℓ (on ``--tasks`` fresh tasks: the best ℓ is chosen in
  hindsight on them, so few tasks flatter it) for four seeds and their mean, and the time, per family.
Targets: warm ≤ 1.5 s; layer ≤ 1.1x NW; window falling with roughness; linear ≥ 1.5x softmax.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
import types
from collections.abc import Callable
from itertools import pairwise

import jax
import numpy as np

from kernelviz.app.warmup import count_compilations
from kernelviz.models import attention
from kernelviz.models import incontext as ic
from kernelviz.models.attention import training as attention_training
from kernelviz.models.incontext import evaluation as ev
from kernelviz.runtime import train
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
    layer = train.compiled(attention_training._train, ("model", "snapshots"))
    starts = train.starts(run.params)
    _compile("chapter 4's training  ", lambda: layer.lower(run.run, *starts, run.loop,
                                                            model=attention.layer_output, snapshots=True))
    args = ic.pretrain_args(ic.PretrainRequest())
    pre, pre_starts = train.compiled(ic._pretrain, ("snapshots",)), train.starts(args.params)
    _compile("chapter 5's pretrain  ", lambda: pre.lower(args.run, *pre_starts, args.loop, snapshots=True))
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
          f"loaded; _pretrain cache size {train.compiled(ic._pretrain, ('snapshots',))._cache_size()}"
          "  [target 0 and 1]")


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


def _plain_losses() -> tuple[Callable, ...]:
    """Each kind's step as ``jax.value_and_grad`` of ``pretraining_loss``: every padded head computed."""

    def plain(kind: int) -> Callable:
        def branch(params, prompts, available, heads):
            loss, grads = jax.value_and_grad(ic.pretraining_loss)(params, kind, prompts, available)
            return loss.astype(params.u.dtype), grads

        return branch

    return tuple(plain(k) for k in range(len(ic.KINDS)))


def _program(losses: tuple[Callable, ...], batch: int = ic.BATCH) -> Callable:
    """``_pretrain`` traced afresh with ``losses`` as each kind's step (``ic._LOSSES``) and ``batch`` prompts
    per step, in new step branches (JAX keeps a branch's trace by its function), compiled."""
    saved = ic._LOSSES, ic._STEPS, ic.BATCH
    ic._LOSSES, ic.BATCH = losses, batch
    ic._STEPS = tuple(ic._step_branch(m) for m in ic.POINT_BUCKETS)
    fun = ic._pretrain
    try:
        fn = types.FunctionType(fun.__code__, fun.__globals__)  # a program of its own (the adapter's)
        start = ic.pretrain_args(ic.PretrainRequest(steps=10, learning_rate=0.4))
        jax.block_until_ready(train.fit(fn, start.run, start.params, start.loop))
    finally:
        ic._LOSSES, ic._STEPS, ic.BATCH = saved
    return fn


def batch_choice(repeats: int, tasks: int) -> None:
    """The error ratio to Nadaraya–Watson at the family's best ℓ on ``tasks`` fresh tasks (four seeds) and
    the time at the defaults, for each (prompts per step, step size)."""
    configs = ((64, 0.4), (32, 0.4), (32, 0.6))
    programs = {b: _program(ic._LOSSES, b) for b in sorted({b for b, _ in configs})}
    saved = ic._pretrain
    try:
        for family in ("sine", "gp"):
            best = ev.best_fixed_lengthscale(family, 3.0, 0.1, 32, tasks).error
            for b, lr in configs:
                ic._pretrain = programs[b]
                ratios = [ev.in_context_error(ic.pretrain(family, learning_rate=lr, seed=s), tasks) / best
                          for s in range(4)]
                times = []
                for s in range(repeats):
                    t = time.perf_counter()
                    ic.pretrain(family, learning_rate=lr, seed=10 + s)
                    times.append(time.perf_counter() - t)
                print(f"{family:5} {b:3} prompts, step size {lr}: error / NW "
                      f"{' '.join(f'{r:.4f}' for r in ratios)} (mean {np.mean(ratios):.4f}); "
                      f"{statistics.median(times):.3f} s")
    finally:
        ic._pretrain = saved


def gradient_cost(repeats: int) -> None:
    """Pretraining at the default steps with each gradient, in turns, for a few heads and both kinds."""
    programs = {"written out": _program(ic._LOSSES), "value_and_grad": _program(_plain_losses())}
    print(f"pretraining, {ic.STEPS} steps, median of {repeats} in turns:")
    for kind in ic.KINDS:
        for heads in (1, 4, 8):
            run = ic.pretrain_args(ic.PretrainRequest(heads=heads, kind=kind, seed=1))
            times: dict[str, list[float]] = {k: [] for k in programs}
            for _ in range(repeats):
                for label, fn in programs.items():
                    t = time.perf_counter()
                    jax.block_until_ready(train.fit(fn, run.run, run.params, run.loop))
                    times[label].append(time.perf_counter() - t)
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"  {kind:7} H={heads}: written out {med['written out']:.3f} s, value_and_grad "
                  f"{med['value_and_grad']:.3f} s ({med['value_and_grad'] / med['written out']:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=ev.EVAL_TASKS)
    parser.add_argument("--gradient", action="store_true", help="only time the two gradients")
    parser.add_argument("--batch", action="store_true", help="only compare prompts per step")
    a = parser.parse_args()
    print(f"cores available: {len(os.sched_getaffinity(0))}, load average {os.getloadavg()[0]:.2f}")
    if a.gradient or a.batch:
        gradient_cost(a.repeats) if a.gradient else batch_choice(a.repeats, a.tasks)
        return
    compile_cost()
    warm_times(a.repeats)
    recompiles()
    errors(a.tasks)
    sweep()


if __name__ == "__main__":
    main()
