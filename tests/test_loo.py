"""Leave-one-out cross-validation: the curve and its optimum against plain NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelviz as kv
from kernelviz.loo import loo_bounds
from tests.test_smoothing import X, Y, numpy_kernel


def numpy_loo(x, y, ell, kernel):
    k = numpy_kernel((x[:, None] - x[None, :]) / ell, kernel)
    np.fill_diagonal(k, 0.0)
    total = k.sum(axis=1)
    if np.any(total <= 0):
        return np.inf
    return float(np.mean((k @ y / total - y) ** 2))


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_loo_curve_matches_numpy(kernel):
    ells = np.geomspace(0.02, 20, 23)
    got = kv.loo_curve(X, Y, ells, kernel)
    want = np.array([numpy_loo(X, Y, e, kernel) for e in ells])
    assert np.array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], rtol=1e-9)


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_loo_optimum_beats_a_brute_force_grid(kernel):
    ell = kv.loo_lengthscale(X, Y, kernel)
    lo, hi = loo_bounds(X)
    grid = np.geomspace(lo, hi, 4000)
    cv_grid = np.array([numpy_loo(X, Y, e, kernel) for e in grid])
    best = grid[np.argmin(cv_grid)]
    cv_star = numpy_loo(X, Y, ell, kernel)
    assert cv_star <= cv_grid.min() * (1 + 1e-9)
    if kernel in ("gaussian", "laplace", "cauchy"):  # smooth curves: the minimiser itself is unique
        assert ell == pytest.approx(best, rel=0.01)


def test_loo_boxcar_is_exact_on_a_hand_made_case():
    # Points 0, 1, 3, 7 with y = 0, 1, 0, 1: every window needs ℓ ≥ 4 (the gap from 7 to 3).
    x = np.array([0.0, 1.0, 3.0, 7.0])
    y = np.array([0.0, 1.0, 0.0, 1.0])
    ell = kv.loo_lengthscale(x, y, "boxcar")
    assert ell >= 4.0
    assert np.isinf(kv.loo_curve(x, y, [3.99], "boxcar")[0])


def test_loo_needs_two_distinct_points():
    with pytest.raises(ValueError):
        kv.loo_lengthscale([1.0, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError):
        kv.loo_curve([1.0], [1.0], [1.0])
