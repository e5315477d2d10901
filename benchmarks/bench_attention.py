"""Chapter 4's trained attention layer against the kernels it generalises, by leave-one-out error.

Run from the repository root:

    python -m benchmarks.bench_attention [--seeds 5] [--heads 4] [--steps 1000]

For the blog post's data (``kv.blog_data()``) and d2l's (``kv.d2l_data()``) it prints one row per model:

* the Gaussian smoother at its exact leave-one-out optimum ℓ* (``kv.loo_lengthscale``; its error is also
  printed from ``kv.loo_curve``, which the row's must equal);
* chapter 3's multi-head kernel regression, ``kv.fit(heads=4, multihead=True, holdout=1, steps=1000)``;
* the attention layer at chapter 4's defaults (``kernelviz.app.ps.LAYER.start``), from each start (random
  maps, Gaussian heads at the post's spread, Gaussian heads around ℓ*), with Adam's step constant or decaying
  along a half cosine;
* the same layer from chapter 4's default start, trained by the plain float64 reference
  (``tests/reference/plain_attention.py``: no float32, JAX's own gradient), whose row the one above it
  must match within float32 accuracy, at a higher time.

Columns: the leave-one-out error (1/n) Σ_i (y_i − f̂_{−i}(x_i))² (``attention_loo_error``: every point
predicted from all the others; chapter 3's heads go through ``gaussian_layer``), median and range over the
seeds; the error against the true mean, mean (f̂(x) − f(x))² on 400 points over the data's range (both data
sets are synthetic: an error on data the model never saw); the mean width 4s̄ of the ±2s band; how far the
heads look from their query, max over heads of the mean |Σ_i w_hi x_i − x| over the data, in units of the
span; and the median fit time. The leave-one-out error of a trained model is measured on its own training
data, so a model with many parameters can look better there than it is: the truth column is the check.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.views import page_settings as ps
from kernelviz.models.attention import AttentionFit, attention_loo_error, attention_predict, gaussian_layer
from tests.reference.plain_attention import fit_plain

TRUTH_POINTS = 400


def _evaluate(ds: kv.Dataset, layer: AttentionFit) -> tuple[float, float, float, float]:
    """(leave-one-out error, error against the true mean, band width 4s̄, largest head offset / span)."""
    x, y = ds.x, ds.y
    grid = np.linspace(x.min(), x.max(), TRUTH_POINTS)
    on_grid = attention_predict(layer, grid, x, y, with_weights=False)
    on_data = attention_predict(layer, x, x, y, with_weights=False)
    offset = float(np.max(np.mean(np.abs(on_data.centres - x), axis=1))) / float(np.ptp(x))
    truth = float(np.mean(np.square(on_grid.mean - ds.true_mean(grid))))
    return attention_loo_error(layer, x, y), truth, float(np.mean(4.0 * on_grid.std)), offset


def _row(name: str, ds: kv.Dataset, make: Callable[[int], AttentionFit], seeds: int) -> str:
    results, times = [], []
    for seed in range(seeds):
        start = time.perf_counter()
        layer = make(seed)
        times.append(time.perf_counter() - start)
        results.append(_evaluate(ds, layer))
    loo, truth, band, offset = (np.array(c) for c in zip(*results, strict=True))
    return (f"  {name:<44} {np.median(loo):8.4f} ({loo.min():.4f}–{loo.max():.4f})  {np.median(truth):8.4f}"
            f"  {np.median(band):6.3f}  {np.median(offset):6.3f}  {statistics.median(times):6.2f}")


def _models(ds: kv.Dataset, heads: int, steps: int) -> list[tuple[str, Callable[[int], AttentionFit]]]:
    x, y = ds.x, ds.y
    a = ps.LAYER.start
    ell = kv.loo_lengthscale(x, y)
    mh = defaults.MULTIHEAD

    def chapter3(seed: int) -> AttentionFit:
        f = kv.fit(x, y, heads=mh.heads, multihead=True, holdout=mh.holdout, steps=mh.steps,
                   learning_rate=mh.learning_rate, seed=seed)
        return gaussian_layer(f.lengthscales, f.mixing, x, y)

    def layer(start: str, decay: bool, fit: Callable[..., AttentionFit] = kv.fit_attention,
              ) -> Callable[[int], AttentionFit]:
        return lambda seed: fit(x, y, heads=heads, d_qk=a.d_qk, holdout=a.holdout, steps=steps,
                                learning_rate=a.learning_rate, seed=seed, d_v=a.d_v, start=start, decay=decay)

    rows = [(f"Gaussian smoother at ℓ* = {ell:.4g}", lambda seed: gaussian_layer([ell], [1.0], x, y)),
            (f"chapter 3: {mh.heads} Gaussian heads, hold-out {mh.holdout}", chapter3)]
    for start, label in (("random", "random maps"), ("post", "post's spread"), ("gaussian", "around ℓ*")):
        for decay in (False, True):
            rows.append((f"attention, from {label}, step {'decaying' if decay else 'constant'}",
                         layer(start, decay)))
    rows.append((f"the same from {a.start}, plain float64 reference", layer(a.start, True, fit_plain)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--heads", type=int, default=ps.LAYER.start.heads)
    parser.add_argument("--steps", type=int, default=ps.LAYER.start.steps)
    args = parser.parse_args()
    a = ps.LAYER.start
    print(f"attention layer: {args.heads} heads, d_qk {a.d_qk}, d_v {a.d_v}, hold-out {a.holdout}, "
          f"{args.steps} steps, Adam {a.learning_rate}; median over seeds 0 … {args.seeds - 1}")
    print(f"  {'model':<44} {'leave-one-out (range)':>25}  {'vs truth':>8}  {'band':>6}  {'offset':>6}  "
          f"{'time s':>6}")
    for ds in (kv.blog_data(), kv.d2l_data()):
        ell = kv.loo_lengthscale(ds.x, ds.y)
        print(f"{ds.title} ({len(ds)} points): ℓ* = {ell:.4g}, kv.loo_curve(ℓ*) = "
              f"{float(kv.loo_curve(ds.x, ds.y, [ell])[0]):.4f}")
        for name, make in _models(ds, args.heads, args.steps):
            seeds = 1 if name.startswith("Gaussian") else args.seeds
            print(_row(name, ds, make, seeds), flush=True)


if __name__ == "__main__":
    main()
