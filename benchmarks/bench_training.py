"""Masked training: kv.fit (one compiled while loop) against the blog post's per-step Python loop.

Run from the repository root:

    python -m benchmarks.bench_training [--repeats 5] [--steps 1000] [--cold-warmup]

The data are the blog post's (x = linspace(−3, 3, 150), y = f(x) + n(x) ε), 8 heads, 1,000 steps. The
baseline is the post's training loop: each step draws a permutation split in Python, then calls a jitted
step (value_and_grad of the hold-out MSE of the 8-head Gaussian smoother + an optax Adam update). Both run
in float64 (kernelviz enables it). Printed: median wall time of several runs after compilation, the ratio,
compile counts (jax.monitoring backend-compile events), a press of a steps slider trained fresh against
continued from the run before it, what the parameter snapshots of chapters 4 and 5 cost (kept against not
kept, alternating), warmup() time with this process's persistent cache, and with
``--cold-warmup`` also warmup() in a fresh process on an empty cache directory (every program compiled by
XLA). The machine's load average is printed with each figure: on a shared machine the timings move with
it.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import random

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.warmup import count_compilations, warmup
from kernelviz.data import post
from kernelviz.models import heads as kv_heads
from kernelviz.models import holdout_fast, incontext, training
from kernelviz.models.attention import layer_output
from kernelviz.models.attention.training import LayerRequest, _train, layer_start
from kernelviz.models.heads import SEEDS_MAX
from kernelviz.models.holdout import holdout_bucket, holdout_split
from kernelviz.models.incontext import _pretrain, pretrain_args
from kernelviz.models.training import TRAIN_MAX_POINTS
from kernelviz.runtime import jax_setup
from kernelviz.runtime import train as adapter
from tests.reference.plain_attention import fit_plain
from tests.reference.plain_training import plain_post_model, reference_fit

HEADS = 8


def baseline_train(X, Y, hold_out_size: int, n_steps: int, key, learning_rate: float = 0.2):
    """The blog post's `train` for its MultiheadGaussianKernel, without printing."""
    n_total = X.shape[0]
    post_ells = jnp.linspace(0.1, 3.0, HEADS)  # the post's convention exp(−((x − x′)/ℓ)²)
    params = (jnp.log(post_ells), jnp.full((HEADS,), 1.0 / HEADS))
    optimizer = optax.adam(learning_rate=learning_rate)
    opt_state = optimizer.init(params)

    def predict(params, X_test, X_obs, Y_obs):
        log_ell, u = params

        def head(log_l):
            def predict_one(x):
                ks = jnp.exp(-jnp.square((x - X_obs) / jnp.exp(log_l)))
                ws = ks / (jnp.sum(ks) + 1e-16)
                return jnp.sum(Y_obs * ws)

            return jax.vmap(predict_one)(X_test)

        return jnp.einsum("kn,k->n", jax.vmap(head)(log_ell), u)

    @jax.jit
    def step(params, opt_state, X_obs, Y_obs, X_test, Y_test):
        def loss_fn(p):
            return jnp.mean(jnp.square(predict(p, X_test, X_obs, Y_obs) - Y_test))

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def split_data(key):
        indices = random.permutation(key, jnp.arange(n_total))
        ind_test, ind_obs = indices[:hold_out_size], indices[hold_out_size:]
        return X[ind_obs], Y[ind_obs], X[ind_test], Y[ind_test]

    losses = []
    for _ in range(n_steps):
        key, subkey = random.split(key)
        X_obs, Y_obs, X_test, Y_test = split_data(subkey)
        params, opt_state, loss = step(params, opt_state, X_obs, Y_obs, X_test, Y_test)
        losses.append(loss)
    jax.block_until_ready(params)
    return params, losses


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def load() -> str:
    """The 1, 5 and 15 minute load averages, for quoting next to a timing."""
    return "load " + " ".join(f"{v:.2f}" for v in os.getloadavg())


COLD = """
import time
from kernelviz.app.warmup import warmup
t0 = time.perf_counter()
r = warmup()
print(f"{time.perf_counter() - t0:.1f} {r.programs} {r.compiled} {r.cache_hits}")
"""


def cold_warmup() -> str:
    """warmup() (default sizes) in a fresh interpreter whose persistent cache directory is empty."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "KERNELVIZ_JAX_CACHE": cache}
        before = load()
        cmd = [sys.executable, "-c", COLD]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        seconds, programs, compiled, hits = run.stdout.split()
        return (f"warmup() on an empty cache (fresh process): {seconds} s, {programs} programs "
                f"({compiled} compiled by XLA, {hits} from the cache); {before} before, {load()} after")



def against_the_post(x: np.ndarray, y: np.ndarray, X: jax.Array, Y: jax.Array,
                     args: argparse.Namespace) -> None:
    """kv.fit against the blog post's per-step Python loop, hold-out 1, 10 and 75."""
    print()
    print(f"{'hold-out':>8} {'rows':>5} {'kv.fit':>10} {'per step':>10} {'loop':>10} {'per step':>10} "
          f"{'ratio':>7} {'compiles fit/loop':>18}  load average")
    for holdout in (1, 10, 75):
        with count_compilations() as c_fit:
            kv.fit(x, y, heads=HEADS, holdout=holdout, steps=args.steps, seed=0)
        t_fit = median_time(
            lambda h=holdout: kv.fit(x, y, heads=HEADS, holdout=h, steps=args.steps, seed=1), args.repeats
        )
        with count_compilations() as c_loop:
            baseline_train(X, Y, holdout, 3, random.PRNGKey(0))
        loop_repeats = max(1, min(args.repeats, 3))
        t_loop = median_time(
            lambda h=holdout: baseline_train(X, Y, h, args.steps, random.PRNGKey(1)), loop_repeats
        )
        print(f"{holdout:>8} {holdout_bucket(holdout):>5} {t_fit * 1e3:>8.1f}ms "
              f"{t_fit / args.steps * 1e6:>8.1f}us {t_loop * 1e3:>8.1f}ms "
              f"{t_loop / args.steps * 1e6:>8.1f}us {t_loop / t_fit:>6.1f}x "
              f"{c_fit.requests:>9}/{c_loop.requests}  {load()}")


def speed_devices(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """kv.fit with each speed device switched off in turn, same run."""
    print("\nspeed devices of kv.fit (8 heads, 1,000 steps), each switched off in turn, same run:")
    print(f"{'hold-out':>8} {'both':>10} {'plain float64 autodiff':>24} {'all rows every step':>21} "
          f"{'post arithmetic':>21}")
    for holdout in (1, 75):
        row = []
        runs = (
            lambda h=holdout: kv.fit(x, y, heads=HEADS, holdout=h, steps=args.steps),
            lambda h=holdout: reference_fit(x, y, HEADS, h, args.steps, plain=True, all_rows=False),
            lambda h=holdout: reference_fit(x, y, HEADS, h, args.steps, plain=False, all_rows=True),
            lambda h=holdout: kv.fit(x, y, heads=HEADS, holdout=h, steps=args.steps, arithmetic="post"),
        )
        for run in runs:
            run()
            row.append(median_time(run, max(1, min(args.repeats, 3))))
        print(f"{holdout:>8} {row[0] * 1e3:>8.1f}ms {row[1] * 1e3:>15.1f}ms ({row[1] / row[0]:.1f}x) "
              f"{row[2] * 1e3:>12.1f}ms ({row[2] / row[0]:.1f}x) "
              f"{row[3] * 1e3:>12.1f}ms ({row[3] / row[0]:.1f}x)")


def post_arithmetic(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """Chapter 2's panels: kv.fit with the post's arithmetic (one head, 250 steps) at its four hold-out sizes,
    its gradient written out (``kv_heads.post_model``) against JAX's gradient of the plain formula
    (``plain_post_model``), in turns, same run. Each form gets a program of its own: a copy of the training
    loop's function, traced while ``kv_heads.post_model`` is that form."""
    original, forms = kv_heads._adam_run, {"written out": kv_heads.post_model, "autodiff": plain_post_model}
    runs = {form: types.FunctionType(original.__code__, original.__globals__) for form in forms}  # compiled
    # by the training adapter, one program each
    times: dict[str, dict[int, list[float]]] = {form: {h: [] for h in (1, 10, 75, 120)} for form in forms}
    try:
        for form in forms:
            kv_heads.post_model, kv_heads._adam_run = forms[form], runs[form]
            for h in times[form]:
                kv.fit(x, y, holdout=h, steps=250, arithmetic="post")  # traced and compiled with this form
        for _ in range(max(1, args.repeats)):
            for form in forms:
                kv_heads._adam_run = runs[form]
                for h, seen in times[form].items():
                    t = time.perf_counter()
                    kv.fit(x, y, holdout=h, steps=250, seed=len(seen), arithmetic="post")
                    seen.append(time.perf_counter() - t)
    finally:
        kv_heads.post_model, kv_heads._adam_run = forms["written out"], original
    print("\nthe post's arithmetic, one head, 250 steps (chapter 2's panels): gradient written out against "
          "JAX's, in turns")
    for h in times["autodiff"]:
        a, b = (statistics.median(times[f][h]) for f in forms)
        print(f"  hold-out {h:>3}: {a * 1e3:6.1f} ms against {b * 1e3:6.1f} ms ({b / a:.2f}x)")
    total = [sum(statistics.median(v) for v in times[f].values()) for f in forms]
    print(f"  the four panels: {total[0] * 1e3:.1f} ms against {total[1] * 1e3:.1f} ms "
          f"({total[1] / total[0]:.2f}x); {load()}")


def continued_presses(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """A press of a steps slider, every run it asks for trained fresh against continued from the run of the
    steps before it (``kv.fit(..., start=…)``), in turns: chapter 2 at 100 → 150 steps (its own model at
    hold-out 10 and the post's four hold-out sizes in both arithmetics: nine runs), chapter 3's own model
    (eight heads) at 1,000 → 1,050."""
    m, mh = vt.MaskedSettings(), defaults.MULTIHEAD
    chapter2 = [dict(holdout=m.holdout)] + [dict(holdout=h, arithmetic=a) for h in (1, 10, 75, 120)
                                            for a in ("post", "kernelviz")]
    presses = {"chapter 2, 100 → 150 steps": (chapter2, m.steps, 50),
               "chapter 3, 8 heads, 1,000 → 1,050 steps": ([dict(heads=8, multihead=True)], mh.steps, 50)}
    for name, (runs, before, more) in presses.items():
        times: dict[str, list[float]] = {"fresh": [], "continued": []}
        for seed in range(max(2, args.repeats) + 1):  # the first round compiles and is not counted
            starts = [kv.fit(x, y, steps=before, seed=seed, **r) for r in runs]
            for form, seen in times.items():
                t = time.perf_counter()
                for r, start in zip(runs, starts, strict=True):
                    kv.fit(x, y, steps=before + more, seed=seed, start=start if form == "continued" else None,
                           **r)
                if seed:
                    seen.append(time.perf_counter() - t)
        fresh, cont = (statistics.median(v) for v in times.values())
        print(f"\na press of a steps slider, {name} ({len(runs)} run(s)): trained fresh "
              f"{fresh * 1e3:.1f} ms, continued {cont * 1e3:.1f} ms ({fresh / cont:.1f}x); {load()}")


def split_forms(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """``holdout_split_fast`` (what training runs) against ``holdout_split`` (the formula the pages show),
    same run: ``args.steps`` splits of 256 slots in one compiled loop (the post's keys) at hold-out 1 and 75,
    then kv.fit on the post's data, 8 heads, at hold-out 1, 10 and 75, each form in a program of its own
    (a copy of the training loop's function traced while ``holdout_fast.holdout_split_fast`` is that form),
    in turns."""
    mask = np.arange(TRAIN_MAX_POINTS) < TRAIN_MAX_POINTS
    forms = {"fast": holdout_fast.holdout_split_fast, "formula": holdout_split}

    def splits_of(split):
        @jax.jit
        def splits(key, holdout):
            keys = post.step_keys(key, args.steps)

            def body(step, acc):
                order, avail = split(keys[step], mask, holdout)
                return acc + order[0] + jnp.sum(avail, dtype=order.dtype)
            return jax.lax.fori_loop(0, args.steps, body, jnp.zeros((), jnp.int64))
        return splits

    print(f"\nhold-out sets, {args.steps:,} splits of {mask.size} slots (fast form against the formula):")
    compiled = {f: splits_of(forms[f]) for f in forms}
    for h in (1, 75):
        runs = {f: functools.partial(lambda c, k: c(post.prng_key(1), k).block_until_ready(), compiled[f],
                                     np.int32(h)) for f in forms}
        [r() for r in runs.values()]
        fast, formula = (median_time(runs[f], args.repeats) for f in forms)
        print(f"  hold-out {h:>3}: {fast * 1e3:6.1f} ms against {formula * 1e3:6.1f} ms "
              f"({formula / fast:.1f}x)")
    original = kv_heads._adam_run
    programs = {f: types.FunctionType(original.__code__, original.__globals__) for f in forms}
    times: dict[str, dict[int, list[float]]] = {f: {h: [] for h in (1, 10, 75)} for f in forms}
    try:
        for _ in range(max(1, args.repeats) + 1):  # the first round traces and compiles each form
            for f in forms:
                kv_heads._adam_run = programs[f]
                for h, seen in times[f].items():
                    t = time.perf_counter()
                    with adapter.fast_forms(f == "fast"):  # read when the program is traced
                        kv.fit(x, y, heads=HEADS, holdout=h, steps=args.steps, seed=len(seen), multihead=True)
                    seen.append(time.perf_counter() - t)
    finally:
        kv_heads._adam_run = original
    print(f"kv.fit, {HEADS} heads, {args.steps:,} steps (fast form against the formula):")
    for h in times["fast"]:
        fast, formula = (statistics.median(times[f][h][1:]) for f in forms)
        print(f"  hold-out {h:>3}: {fast * 1e3:6.1f} ms against {formula * 1e3:6.1f} ms "
              f"({formula / fast:.2f}x); {load()}")


def attention_devices(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """kv.fit_attention at chapter 4's defaults (scores φ A_h φ′ᵀ, scalar values, float32 pooling with its
    gradient by hand: ``pooling.summed_heads``) against the plain float64 layer differentiated by JAX
    (``reference_attention.fit_plain``, same start, same loop), same run."""
    a = ps.LAYER.start
    print(f"\nkv.fit_attention ({a.heads} heads, d_qk {a.d_qk}, {args.steps:,} steps) against the plain "
          "float64 reference (tests/reference/plain_attention.py):")
    print(f"{'hold-out':>8} {'kernelviz':>10} {'plain float64 autodiff':>24}  final loss kernelviz / plain")
    for holdout in (1, 10, 75):
        row, losses = [], []
        for fit in (kv.fit_attention, fit_plain):
            def run(h=holdout, f=fit):
                return f(x, y, heads=a.heads, d_qk=a.d_qk, holdout=h, steps=args.steps,
                         learning_rate=a.learning_rate, seed=a.seed)
            losses.append(float(run().losses[-100:].mean()))
            row.append(median_time(run, max(1, min(args.repeats, 3))))
        print(f"{holdout:>8} {row[0] * 1e3:>8.1f}ms {row[1] * 1e3:>15.1f}ms ({row[1] / row[0]:.1f}x)  "
              f"{losses[0]:.4f} / {losses[1]:.4f}")


def snapshot_cost(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """Chapter 4's and chapter 5's training with the parameter snapshots the replays use, and without
    (``snapshots=False``), the two alternating in the same run: what keeping them costs."""
    a = ps.LAYER.start
    print(f"\nparameter snapshots ({training.SNAPSHOTS} per run), kept against not kept, same run:")
    print(f"{'run':>40} {'kept':>10} {'not kept':>10} {'ratio':>7}")
    runs = {}
    for holdout in (1, 10, 75):
        layer = layer_start(x, y, LayerRequest(heads=a.heads, d_qk=a.d_qk, holdout=holdout, steps=args.steps,
                                               learning_rate=a.learning_rate, seed=a.seed))
        runs[f"fit_attention, hold-out {holdout}"] = lambda keep, r=layer: adapter.fit(
            _train, r.run, r.params, r.loop, static={"model": layer_output, "snapshots": keep})
    for heads in (1, 8):
        pre = pretrain_args(incontext.PretrainRequest(heads=heads))
        runs[f"pretrain, {heads} head{'s' if heads > 1 else ''}"] = lambda keep, r=pre: adapter.fit(
            _pretrain, r.run, r.params, r.loop, static={"snapshots": keep})
    for name, run in runs.items():
        fn = jax_setup.float64(run)  # as fit_attention and pretrain run them
        times = {True: [], False: []}
        for keep in (True, False):
            jax.block_until_ready(fn(keep))  # compiled
        for _ in range(max(3, args.repeats)):
            for keep in (True, False):
                t0 = time.perf_counter()
                jax.block_until_ready(fn(keep))
                times[keep].append(time.perf_counter() - t0)
        kept, plain = statistics.median(times[True]), statistics.median(times[False])
        print(f"{name:>40} {kept * 1e3:>8.1f}ms {plain * 1e3:>8.1f}ms {kept / plain:>6.2f}x  {load()}")


def after_warmup(x: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """Compilations in a sweep after the warm-up, and the seed spread."""
    with count_compilations() as c_after:
        for holdout in (1, 10, 75):
            kv.fit(x, y, heads=3, holdout=holdout, steps=17, seed=5, learning_rate=0.05, kernel="laplace")
    print(f"\nafter warm-up, a sweep of hold-out/heads/kernel/steps/seed/learning rate: "
          f"{c_after.requests} compilations")
    fits = kv.fit_seeds(x, y, seeds=range(SEEDS_MAX), heads=1, holdout=10, steps=args.steps)
    t_seeds = median_time(
        lambda: kv.fit_seeds(x, y, seeds=range(SEEDS_MAX), heads=1, holdout=10, steps=args.steps),
        max(1, min(args.repeats, 3)),
    )
    print(f"fit_seeds ({SEEDS_MAX} seeds, 1 head, hold-out 10): {t_seeds * 1e3:.0f} ms ({load()}); "
          "lengthscales "
          + ", ".join(f"{f.lengthscales[0]:.3f}" for f in fits)
          + f"; leave-one-out optimum {kv.loo_lengthscale(x, y):.3f}")
    print(f"np.median(per-step kv.fit losses) sanity: {np.median(fits[0].losses):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--cold-warmup", action="store_true", help="also time warmup() on an empty cache")
    args = parser.parse_args()

    ds = kv.blog_data()
    x, y = ds.x, ds.y
    X, Y = jnp.asarray(x), jnp.asarray(y)
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, data n={x.shape[0]}, {HEADS} heads, "
          f"{args.steps} steps, median of {args.repeats} runs after compilation")
    print(f"persistent compilation cache: {jax_setup.set_up().cache_dir}")

    if args.cold_warmup:
        print(cold_warmup())
    t0 = time.perf_counter()
    report = warmup()
    print(f"warmup() {report.n_points}: {time.perf_counter() - t0:.1f} s, {report.programs} programs "
          f"({report.compiled} compiled by XLA, {report.cache_hits} loaded from the persistent cache); "
          f"{load()}")

    against_the_post(x, y, X, Y, args)
    speed_devices(x, y, args)
    post_arithmetic(x, y, args)
    continued_presses(x, y, args)
    split_forms(x, y, args)
    attention_devices(x, y, args)
    snapshot_cost(x, y, args)
    after_warmup(x, y, args)


if __name__ == "__main__":
    main()
