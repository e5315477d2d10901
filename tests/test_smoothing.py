"""Nadaraya–Watson, its ±2σ band and leave-one-out, against plain NumPy and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import kernelviz as kv
from kernelviz.core.kernels import get_kernel
from kernelviz.runtime.shapes import bucket

RNG = np.random.default_rng(7)
X = np.sort(RNG.uniform(-3, 3, 60))
Y = np.sin(X) + 0.3 * RNG.normal(size=60)
Q = np.linspace(-3.5, 3.5, 41)
EXTREME_ELLS = [1e-4, 1e-2, 0.3, 3.0, 1e4]


def numpy_kernel(u: np.ndarray, kernel: str) -> np.ndarray:
    """K(u) written out independently of kernelviz.core.kernels."""
    a = np.abs(u)
    return {
        "gaussian": np.exp(-0.5 * u**2),
        "laplace": np.exp(-a),
        "cauchy": 1.0 / (1.0 + u**2),
        "boxcar": (a <= 1).astype(float),
        "epanechnikov": np.clip(1 - u**2, 0, None),
        "triangular": np.clip(1 - a, 0, None),
        "tricube": np.clip(1 - a**3, 0, None) ** 3,
    }[kernel]


def numpy_nw(q, x, y, ell, kernel):
    """The textbook K / ΣK smoother (fine at moderate ℓ), NaN where the window is empty."""
    k = numpy_kernel((q[:, None] - x[None, :]) / ell, kernel)
    total = k.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = k / total
    mean = (w * y).sum(axis=1)
    var = (w * (y[None, :] - mean[:, None]) ** 2).sum(axis=1)
    return mean, np.sqrt(var), np.nan_to_num(w)


@pytest.mark.parametrize("kernel", kv.KERNELS)
@pytest.mark.parametrize("ell", [0.05, 0.3, 1.5])
def test_matches_numpy_reference(kernel, ell):
    s = kv.nadaraya_watson(Q, X, Y, ell, kernel)
    mean, std, w = numpy_nw(Q, X, Y, ell, kernel)
    np.testing.assert_allclose(s.mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s.std, std, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(s.weights, w, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("kernel", kv.KERNELS)
@pytest.mark.parametrize("ell", EXTREME_ELLS)
def test_weights_are_distributions_or_empty(kernel, ell):
    s = kv.nadaraya_watson(Q, X, Y, ell, kernel)
    assert s.weights.shape == (Q.size, X.size)
    assert np.all(s.weights >= 0)
    sums = s.weights.sum(axis=1)
    empty = np.isnan(s.mean)
    np.testing.assert_allclose(sums[~empty], 1.0, atol=1e-12)
    assert np.all(sums[empty] == 0)
    assert np.array_equal(empty, np.isnan(s.std))
    assert np.all(np.isfinite(s.mean[~empty])) and np.all(s.std[~empty] >= 0)
    if not get_kernel(kernel).compact:
        assert not empty.any()


def test_hand_computed_three_points():
    # Boxcar with ℓ = 1.5 at query 0 sees keys -1 and 1 (|u| ≤ 1) but not 3: mean (2 + 4)/2, std 1.
    s = kv.nadaraya_watson([0.0], [-1.0, 1.0, 3.0], [2.0, 4.0, 100.0], 1.5, "boxcar")
    assert s.mean[0] == pytest.approx(3.0) and s.std[0] == pytest.approx(1.0)
    np.testing.assert_allclose(s.weights, [[0.5, 0.5, 0.0]])
    # Gaussian with ℓ = 1: weights ∝ exp(-1/2), exp(-1/2), exp(-9/2).
    s = kv.nadaraya_watson([0.0], [-1.0, 1.0, 3.0], [2.0, 4.0, 100.0], 1.0)
    raw = np.exp([-0.5, -0.5, -4.5])
    np.testing.assert_allclose(s.weights[0], raw / raw.sum(), rtol=1e-12)


def test_gaussian_is_softmax_of_scaled_squared_distance():
    ell = 0.4
    logits = -((Q[:, None] - X[None, :]) ** 2) / (2 * ell**2)
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    s = kv.nadaraya_watson(Q, X, Y, ell)
    np.testing.assert_allclose(s.mean, w @ Y, rtol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "cauchy", "boxcar", "epanechnikov"])
def test_huge_lengthscale_is_average_pooling(kernel):
    s = kv.nadaraya_watson(Q, X, Y, 1e9, kernel)
    np.testing.assert_allclose(s.mean, Y.mean(), rtol=1e-6)
    np.testing.assert_allclose(s.std, Y.std(), rtol=1e-5)


@pytest.mark.parametrize(("kernel", "ell"), [("gaussian", 1e-4), ("laplace", 1e-7)])
def test_tiny_lengthscale_is_nearest_neighbour(kernel, ell):
    # Cauchy is left out on purpose: its weights fall only like (ℓ/d)², so no ℓ makes it a 1-NN rule.
    s = kv.nadaraya_watson(Q, X, Y, ell, kernel)
    nearest = np.argmin(np.abs(Q[:, None] - X[None, :]), axis=1)
    np.testing.assert_allclose(s.mean, Y[nearest], rtol=1e-9)
    np.testing.assert_allclose(s.std, 0.0, atol=1e-9)


def test_empty_window_gives_nan_and_zero_row():
    s = kv.nadaraya_watson([0.0, 10.0], [0.0, 0.5], [1.0, 2.0], 1.0, "epanechnikov")
    assert np.isfinite(s.mean[0]) and np.isnan(s.mean[1]) and np.isnan(s.std[1])
    assert np.all(s.weights[1] == 0)


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_extreme_data_stays_finite(kernel):
    x = np.array([-1e300, -1.0, 0.0, 1e-300, 2.0, 1e300])
    y = np.array([1e300, -1e300, 5.0, 0.0, -1e-300, 1e300])
    for ell in EXTREME_ELLS:
        s = kv.nadaraya_watson(x, x, y, ell, kernel, with_weights=True)
        ok = ~np.isnan(s.mean)
        assert ok.all() or get_kernel(kernel).compact
        assert np.all(np.isfinite(s.mean[ok])) and np.all(np.isfinite(s.std[ok]))
        assert np.all(np.isfinite(s.weights))


@pytest.mark.parametrize("kernel", kv.KERNELS)
@pytest.mark.parametrize("ell", [1e-3, 0.2, 5.0])
def test_streaming_equals_dense(kernel, ell):
    x = np.sort(RNG.uniform(-3, 3, 777))
    y = np.cos(2 * x) + RNG.normal(size=777)
    q = np.linspace(-4, 4, 301)
    dense = kv.nadaraya_watson(q, x, y, ell, kernel, with_weights=True)
    stream = kv.nadaraya_watson(
        q, x, y, ell, kernel, with_weights=False, stream=True, query_block=64, key_block=128
    )
    assert stream.weights is None
    np.testing.assert_allclose(stream.mean, dense.mean, rtol=1e-9, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(stream.std, dense.std, rtol=1e-7, atol=1e-9, equal_nan=True)


def test_large_key_sets_take_the_streaming_path_without_weights():
    x = np.linspace(0, 1, 5000)
    s = kv.nadaraya_watson(x[:10], x, x, 0.01, with_weights=False)
    assert s.weights is None and np.all(np.isfinite(s.mean))
    with pytest.raises(ValueError, match="with_weights=False"):
        kv.nadaraya_watson(np.zeros(20_000), np.zeros(5_000), np.zeros(5_000), 1.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "x"])
def test_bad_lengthscale_is_a_value_error(bad):
    with pytest.raises(ValueError):
        kv.nadaraya_watson(Q, X, Y, bad)


@pytest.mark.parametrize(
    ("queries", "keys", "values"),
    [([0.0], [], []), ([0.0], [1.0, 2.0], [1.0]), ([np.nan], [1.0], [1.0]), ([0.0], [np.inf], [1.0])],
)
def test_bad_arrays_are_value_errors(queries, keys, values):
    with pytest.raises(ValueError):
        kv.nadaraya_watson(queries, keys, values, 1.0)


def test_unknown_kernel_lists_choices():
    with pytest.raises(ValueError, match="gaussian"):
        kv.nadaraya_watson(Q, X, Y, 1.0, "rbf")


def test_no_queries_gives_empty_result():
    s = kv.nadaraya_watson([], X, Y, 1.0)
    assert s.mean.shape == (0,) and s.weights.shape == (0, X.size)


def test_knn_average_matches_sorting_by_hand():
    s = kv.knn_average([0.1], [-2.0, 0.0, 0.5, 3.0], [1.0, 2.0, 4.0, 8.0], 2)
    assert s.mean[0] == pytest.approx(3.0) and s.std[0] == pytest.approx(1.0)
    assert kv.knn_average(Q, X, Y, 10_000).mean == pytest.approx(np.full(Q.size, Y.mean()))


def test_padded_sizes_are_few_and_hold_the_data() -> None:
    # every teaching size shares the first padded size, so both built-in data sets share their programs
    assert {bucket(n) for n in (1, 3, 10, 50, 150, 200, 256)} == {256}
    assert [bucket(n) for n in (257, 1000, 1024, 1025, 4096)] == [1024, 1024, 1024, 4096, 4096]
    sizes = range(1, 20_000, 7)
    assert all(n <= bucket(n) < max(4 * n, 257) for n in sizes)
    assert len({bucket(n) for n in sizes}) == 5  # 256, 1024, 4096, 16384, 65536
    assert [bucket(n, 1, 2) for n in (1, 2, 3, 5, 9)] == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_path_is_the_smoother_at_every_lengthscale(kernel):
    from kernelviz.models.smoothing import nadaraya_watson_path

    q = np.linspace(X.min(), X.max(), 40)
    ells = np.geomspace(0.01, 5, 37)  # not a multiple of the padding block
    means, stds = nadaraya_watson_path(q, X, Y, ells, kernel)
    assert means.shape == stds.shape == (37, 40)
    for i in (0, 18, 36):
        one = kv.nadaraya_watson(q, X, Y, ells[i], kernel, with_weights=False)
        np.testing.assert_allclose(means[i], one.mean, rtol=1e-12, equal_nan=True)
        np.testing.assert_allclose(stds[i], one.std, rtol=1e-12, atol=1e-15, equal_nan=True)
    with pytest.raises(ValueError):
        nadaraya_watson_path(q, X, Y, [0.1, -1.0])
