"""The exact leave-one-out optimum ℓ* (``kv.loo_lengthscale``) against statsmodels' cv_ls bandwidth.

Run from the repository root (statsmodels is not a dependency of kernelviz: ``pip install statsmodels``):

    python -m benchmarks.bench_loo [--sizes 150 600 2000] [--repeat 5]

For the blog post's formula at each n it prints, in one run:

* statsmodels ``KernelReg(y, x, "c", reg_type="lc", bw="cv_ls")``: the same Nadaraya–Watson smoother
  (Gaussian kernel, ℓ = its bandwidth), its bandwidth chosen by minimising the same leave-one-out error with
  Nelder–Mead from a rule-of-thumb start;
* kernelviz's ℓ*, its relative difference to statsmodels' and both leave-one-out errors (``kv.loo_curve``),
  so a difference in ℓ can be read as "who found the lower error";
* the times: statsmodels, kernelviz once compiled (median of ``--repeat``) and the first call (compiling);
* ``kernelviz.models.loo._search`` against its plain reference (``tests/reference/plain_loo.py``), with the
  speed
  devices switched off one at a time and both: blocks of 64 × 64 pairs over the real points only (off: one
  block as large as the padded data), the coarse grid in float32 (off: in float64); and the previous
  method, nested grids of ``kv.loo_curve`` (256, then three times 128 points).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np

import kernelviz as kv
from kernelviz.models import loo
from tests.reference.plain_loo import reference_search

try:
    from statsmodels.nonparametric.kernel_regression import KernelReg
except ImportError:  # the comparison needs it; the ablation does not
    KernelReg = None


def statsmodels_cv_ls(x: np.ndarray, y: np.ndarray) -> float:
    """statsmodels' bandwidth, as |h|: its unconstrained Nelder–Mead can end at a negative h (it does at
    n = 2,000 here), the same smoother since the Gaussian depends on h² only."""
    return abs(float(KernelReg(y, x, "c", reg_type="lc", bw="cv_ls").bw[0]))


def nested_grids(x: np.ndarray, y: np.ndarray) -> float:
    """The previous method: a log grid of 256 ℓ over ``loo_bounds``, then three of 128 around the best."""
    grid = np.geomspace(*loo.loo_bounds(x), 256)
    for _ in range(3):
        best = int(np.argmin(kv.loo_curve(x, y, grid)))
        grid = np.geomspace(grid[max(best - 1, 0)], grid[min(best + 1, grid.shape[0] - 1)], 128)
    return float(grid[int(np.argmin(kv.loo_curve(x, y, grid)))])


def seconds(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """(median wall time over ``repeat`` calls, the last result)."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def compare(n: int, repeat: int) -> None:
    ds = kv.make_dataset("blog", n=n, seed=2024)
    x, y = np.asarray(ds.x), np.asarray(ds.y)
    t = time.perf_counter()
    ours = kv.loo_lengthscale(x, y)
    first = time.perf_counter() - t
    fast, _ = seconds(lambda: kv.loo_lengthscale(x, y), repeat)
    line = f"n = {n:5d}  kernelviz ℓ* = {ours:.6f} in {fast * 1e3:8.1f} ms (first call {first:5.2f} s)"
    if KernelReg is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its own divide-by-zero and random-state warnings
            slow, theirs = seconds(lambda: statsmodels_cv_ls(x, y), 1 if n > 1000 else min(repeat, 3))
        ratio = slow / fast
        line += f"\n{'':10s}statsmodels ℓ = {theirs:.6f} in {slow * 1e3:8.1f} ms   speed-up {ratio:.1f}x"
        if math.isfinite(theirs) and theirs > 0:
            cv_ours, cv_theirs = kv.loo_curve(x, y, [ours, theirs])
            line += (f"   ℓ differs by {abs(ours / theirs - 1):.2e}   CV {cv_ours:.10f} (kernelviz) vs "
                     f"{cv_theirs:.10f}")
    print(line)


def ablation(n: int, repeat: int) -> None:
    ds = kv.make_dataset("blog", n=n, seed=2024)
    x, y = np.asarray(ds.x), np.asarray(ds.y)
    variants = {
        "kernelviz (all devices)": lambda: loo._search(x, y, "gaussian"),
        "one block of the padded size": lambda: reference_search(x, y, "gaussian", float32_grid=True),
        "coarse grid in float64": lambda: reference_search(x, y, "gaussian", blocks=True),
        "plain reference (neither)": lambda: reference_search(x, y, "gaussian"),
    }
    base = None
    for name, fn in variants.items():
        fn()  # compile
        s, (ell, _) = seconds(fn, repeat)
        base = base or s
        print(f"n = {n:5d}  {name:32s} {s * 1e3:9.1f} ms   {s / base:5.2f}x the time with all devices"
              f"   ℓ = {ell:.6f}")
    s, old = seconds(lambda: nested_grids(x, y), max(1, repeat // 2))
    print(f"n = {n:5d}  {'previous method (nested grids)':32s} {s * 1e3:9.1f} ms   {s / base:5.2f}x"
          f"   ℓ = {old:.6f}")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--sizes", type=int, nargs="+", default=[150, 600, 2000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if KernelReg is None:
        print("statsmodels is not installed (pip install statsmodels): comparison skipped")
    print("== kernelviz against statsmodels KernelReg(bw='cv_ls'), Gaussian kernel, blog post's formula")
    for n in args.sizes:
        compare(n, args.repeat)
    print("\n== what each speed device of loo._search buys against tests/reference/plain_loo.py (same run)")
    for n in args.sizes:
        ablation(n, args.repeat)


if __name__ == "__main__":
    main()
