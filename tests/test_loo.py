"""Leave-one-out cross-validation: the curve and its optimum against plain NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import kernelviz as kv
import tests.reference.plain_loo as reference_loo
from kernelviz.app.warmup import count_compilations
from kernelviz.models import loo
from kernelviz.models.loo import loo_bounds
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


SMOOTH = [k for k in kv.KERNELS if k != "boxcar"]


@pytest.mark.parametrize("kernel", SMOOTH)
def test_loo_optimum_is_a_local_minimum_to_high_precision(kernel):
    """No ℓ a relative 1e-6 away does better: the refinement converged, not only the grid."""
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-2, 2, 80))
    y = np.sin(2 * x) + rng.normal(0, 0.3, 80)
    ell = kv.loo_lengthscale(x, y, kernel)
    at = numpy_loo(x, y, ell, kernel)
    for step in (1 - 1e-6, 1 + 1e-6):
        assert at <= numpy_loo(x, y, ell * step, kernel) * (1 + 1e-12)


def boxcar_brute_force(x, y):
    """The best CV over every interval between pairwise distances (its middle ℓ), with NumPy."""
    d = np.unique(np.abs(x[:, None] - x[None, :]))
    d = d[d > 0]
    mids = np.sqrt(d[:-1] * d[1:])
    cvs = np.array([numpy_loo(x, y, m, "boxcar") for m in mids])
    return cvs.min()


@pytest.mark.parametrize("seed", range(4))
def test_boxcar_sweep_and_grid_search_find_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    n = 12 + 10 * seed
    x = np.sort(rng.uniform(0, 3, n))
    y = np.cos(3 * x) + rng.normal(0, 0.2, n)
    best = boxcar_brute_force(x, y)
    swept = kv.loo_lengthscale(x, y, "boxcar")
    assert numpy_loo(x, y, swept, "boxcar") == pytest.approx(best, rel=1e-12)
    # the path beyond BOXCAR_SWEEP_MAX points: nested grids, near the optimum but without a guarantee
    searched, cv = loo._search(x, y, "boxcar")
    assert cv == pytest.approx(numpy_loo(x, y, searched, "boxcar"), rel=1e-9)
    assert cv <= best * 1.1


def test_loo_optimum_of_repeated_and_scaled_data():
    """CV(ℓ; a·x) = CV(ℓ/a; x): the optimum scales with x, also for huge and tiny spans and repeated x."""
    x = np.repeat(np.linspace(0, 1, 30), 2)
    y = np.sin(5 * x) + np.tile([0.1, -0.1], 30)
    base = kv.loo_lengthscale(x, y)
    for a in (1e-6, 1e6):
        assert kv.loo_lengthscale(a * x + 3 * a, y) == pytest.approx(a * base, rel=1e-6)


def test_loo_optimum_compiles_once_for_every_teaching_size_and_kernel():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 5, 256))
    y = np.sin(x) + rng.normal(0, 0.3, 256)
    kv.loo_lengthscale(x, y)
    with count_compilations() as count:
        for i, n in enumerate((10, 50, 150, 256)):
            kv.loo_lengthscale(x[:n], y[:n], SMOOTH[i % len(SMOOTH)])
    assert count.requests == 0, count.names


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "boxcar"])
def test_loo_search_matches_its_plain_reference(kernel):
    """The float32 grid and the blocks of pairs change the time, not the optimum: ``loo._search`` against
    ``tests/reference/plain_loo.py`` (float64 grid, one block), on more points than one block holds."""
    rng = np.random.default_rng(5)
    x = np.sort(rng.uniform(0, 4, 150))
    y = np.sin(2 * x) + rng.normal(0, 0.3, 150)
    ell, cv = loo._search(x, y, kernel)
    ell_ref, cv_ref = reference_loo.reference_search(x, y, kernel)
    assert cv == pytest.approx(cv_ref, rel=1e-9 if kernel != "boxcar" else 0.05)
    if kernel == "gaussian":
        assert ell == pytest.approx(ell_ref, rel=1e-6)


def test_read_off_is_linear_in_log_lengthscale_and_nan_where_it_cannot_read():
    from kernelviz.app.views import read_off

    grid = np.geomspace(0.01, 10.0, 31)
    line = 2.0 + 0.5 * np.log(grid)
    at = np.array([0.013, 0.5, 9.99, 0.005, 11.0])
    got = read_off(grid, line, at)
    np.testing.assert_allclose(got[:3], 2.0 + 0.5 * np.log(at[:3]), rtol=1e-12)
    assert np.isnan(got[3:]).all()  # outside the grid
    gap = np.where(grid < 0.1, np.inf, line)
    beside = read_off(grid, gap, np.array([0.05, 0.099, 0.2]))
    assert np.isnan(beside[:2]).all() and np.isfinite(beside[2])


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_chapter_2_path_on_the_loo_curve_is_the_curve_or_exact(kernel):
    """Chapter 2 reads training's path off the drawn curve (20 points a decade) and computes exactly what
    it cannot read: outside the curve's range and beside its gaps (a compact kernel's empty windows)."""
    from kernelviz.app.ui.caching.cache import on_loo_curve
    from kernelviz.app.ui.widgets.sidebar import make_data

    data = make_data(("blog", 150, 2024), kv.make_dataset("blog", n=150, seed=2024))
    x, y = data.train.x, data.train.y
    grid = np.geomspace(0.02, 20.0, 61)
    cv = kv.loo_curve(x, y, grid, kernel)
    at = np.array([1e-3, 0.03, 0.07, 0.3, 0.8, 3.0, 15.0, 40.0])
    got = on_loo_curve(data, kernel, grid, cv, at)
    exact = kv.loo_curve(x, y, at, kernel)
    read = np.isfinite(from_curve := np.interp(np.log(at), np.log(grid), cv)) & (at >= 0.02) & (at <= 20)
    np.testing.assert_allclose(got[read], from_curve[read], rtol=1e-12)
    np.testing.assert_allclose(got[read], exact[read], rtol=0.02)  # the line is within 2 % of CV
    np.testing.assert_array_equal(got[~read], exact[~read])
    assert (~read).sum() >= 2
