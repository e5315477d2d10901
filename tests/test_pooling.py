"""The pooling core (kernelviz/core/pooling.py) against plain NumPy references.

The references are written out from the formulas in the module's docstring:

    w_i = exp s_i / Σ_{j available} exp s_j,   m = Σ_i w_i v_i,   s² = Σ_i w_i (v_i − m)²,

and, for a mixture of heads with p_h = |u_h| / Σ_g |u_g| and w̄_i = Σ_h p_h w_hi,

    f̂ = Σ_h u_h m_h,   s²(f̂) = Σ_i w̄_i (v_i − f̂)².
"""

from __future__ import annotations

from itertools import pairwise

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from kernelviz.core import pooling  # importing kernelviz turns on float64

Q, N = 7, 40


def np_weights(scores: np.ndarray, available: np.ndarray) -> np.ndarray:
    """Softmax over the available keys of each row; an all-zero row when none has a finite score."""
    z = np.where(available, scores, -np.inf)
    top = np.max(z, axis=-1, keepdims=True)
    e = np.exp(z - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def np_pool(scores: np.ndarray, values: np.ndarray, available: np.ndarray) -> tuple[np.ndarray, ...]:
    """(mean, variance, weights), NaN moments on a row without weight."""
    w = np_weights(scores, available)
    mean = w @ values
    var = np.sum(w * (values[None, :] - mean[:, None]) ** 2, axis=-1)
    empty = w.sum(axis=-1) == 0
    return np.where(empty, np.nan, mean), np.where(empty, np.nan, var), w


def problem(seed: int, q: int = Q, n: int = N, empty_rows: tuple[int, ...] = ()) -> tuple[np.ndarray, ...]:
    """Scores (q, n) of several magnitudes, values (n,) and an availability mask with some keys off."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(q, n)) * rng.choice([0.1, 3.0, 30.0], size=(q, 1))
    values = rng.normal(size=n) * 2.0 + 1.0
    available = rng.random((q, n)) < 0.7
    available[:, 0] = True  # every row has a key …
    available[list(empty_rows)] = False  # … except the rows asked to be empty
    return scores, values, available


# ------------------------------------------------------------------------------------------ weights


def test_weight_rows_sum_to_one_and_masked_keys_get_exactly_zero() -> None:
    scores, _, available = problem(10)
    w = np.asarray(pooling.masked_softmax(scores, available))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-14)
    assert np.all(w[~available] == 0.0) and np.all(w >= 0.0)
    np.testing.assert_allclose(w, np_weights(scores, available), rtol=1e-12, atol=1e-300)


def test_masked_keys_do_not_matter_whatever_their_score() -> None:
    scores, _, available = problem(11)
    rng = np.random.default_rng(1)
    wild = np.where(available, scores, rng.choice([1e300, -1e300, np.nan, np.inf], size=scores.shape))
    np.testing.assert_array_equal(pooling.masked_softmax(wild, available),
                                  pooling.masked_softmax(scores, available))


def test_no_mask_means_every_key_and_a_shift_changes_nothing() -> None:
    scores, _, _ = problem(12)
    w = pooling.masked_softmax(scores)
    np.testing.assert_allclose(w, np_weights(scores, np.ones_like(scores, dtype=bool)), rtol=1e-12)
    # softmax(s + c) = softmax(s): scores far beyond exp's range neither overflow nor underflow
    for shift in (-1e4, 1e4):
        np.testing.assert_allclose(pooling.masked_softmax(scores + shift), w, rtol=1e-9, atol=1e-300)


def test_keys_of_score_minus_infinity_get_weight_zero() -> None:
    scores = np.array([[0.0, -np.inf, np.log(3.0), -np.inf]])  # log K = −∞ outside a compact window
    np.testing.assert_allclose(pooling.masked_softmax(scores), [[0.25, 0.0, 0.75, 0.0]], rtol=1e-15)


# ------------------------------------------------------------------------------------------ moments


def test_pool_matches_numpy() -> None:
    scores, values, available = problem(13)
    got = pooling.pool(scores, values, available)
    mean, var, w = np_pool(scores, values, available)
    np.testing.assert_allclose(got.weights, w, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.mean, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.var, var, rtol=1e-12, atol=1e-12)


def test_moments_of_hand_computed_weights() -> None:
    # w = (0.25, 0.75) on v = (1, 3): m = 2.5, s² = 0.25·1.5² + 0.75·0.5² = 0.75
    mean, var = pooling.moments(jnp.array([[0.25, 0.75]]), jnp.array([1.0, 3.0]))
    np.testing.assert_allclose(mean, [2.5], rtol=1e-15)
    np.testing.assert_allclose(var, [0.75], rtol=1e-15)


def test_empty_rows_have_nan_mean_and_std_and_a_zero_weight_row() -> None:
    scores, values, available = problem(16, empty_rows=(2, 5))
    scores[4] = -np.inf  # a row whose every key is outside the window
    got = pooling.pool(scores, values, available)
    empty = np.isin(np.arange(Q), [2, 4, 5])
    assert np.all(np.isnan(got.mean[empty])) and np.all(np.isnan(got.var[empty]))
    assert np.all(np.asarray(got.weights)[empty] == 0.0)
    assert np.all(np.isfinite(got.mean[~empty])) and np.all(np.isfinite(got.var[~empty]))
    mean, var, _ = np_pool(scores, values, available)
    np.testing.assert_allclose(got.mean, mean, rtol=1e-12, atol=1e-12)  # NaN where NumPy's is NaN
    np.testing.assert_allclose(got.var, var, rtol=1e-12, atol=1e-12)


def test_gradient_is_finite_and_zero_on_masked_keys() -> None:
    scores, values, available = problem(14)
    scores = np.where(available, scores, -1e30)  # training masks with a large finite negative

    def loss(s: jax.Array, v: jax.Array) -> jax.Array:
        p = pooling.pool(s, v, available)
        return jnp.sum(p.mean**2 + p.var)

    gs, gv = jax.grad(loss, argnums=(0, 1))(scores, values)
    assert np.all(np.isfinite(gs)) and np.all(np.isfinite(gv))
    assert np.all(np.asarray(gs)[~available] == 0.0)


# ------------------------------------------------------------------------------------- key blocks


def pooled_by_blocks(scores: np.ndarray, values: np.ndarray, available: np.ndarray,
                     bounds: list[int]) -> tuple[jax.Array, jax.Array]:
    """summarize each block of keys [bounds[k], bounds[k+1]), merge left to right, finish."""
    blocks = [
        pooling.summarize(scores[:, a:b], values[a:b], available[:, a:b])
        for a, b in pairwise(bounds)
    ]
    total = blocks[0]
    for block in blocks[1:]:
        total = pooling.merge(total, block)
    return pooling.finish(total)


@pytest.mark.parametrize("bounds", [[0, N], [0, 20, N], [0, 1, 7, 30, N], list(range(0, N + 1, 5))])
def test_merging_blocks_equals_pooling_all_keys_at_once(bounds: list[int]) -> None:
    scores, values, available = problem(17, empty_rows=(3,))
    scores[:, 20:] += 40.0  # blocks on very different scales: the running maximum rescales the masses
    available[1, :20] = False  # a row that is empty in the first blocks only
    mean, var = pooled_by_blocks(scores, values, available, bounds)
    whole = pooling.pool(scores, values, available)
    np.testing.assert_allclose(mean, whole.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(var, whole.var, rtol=1e-10, atol=1e-12)
    ref_mean, ref_var, _ = np_pool(scores, values, available)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(var, ref_var, rtol=1e-10, atol=1e-12)
    assert np.isnan(mean[3]) and np.isnan(var[3])


def test_merge_is_symmetric_and_an_empty_block_changes_nothing() -> None:
    scores, values, available = problem(15)
    a = pooling.summarize(scores[:, :15], values[:15], available[:, :15])
    b = pooling.summarize(scores[:, 15:], values[15:], available[:, 15:])
    ab, ba = pooling.finish(pooling.merge(a, b)), pooling.finish(pooling.merge(b, a))
    for got, want in zip(ba, ab, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    empty = pooling.summarize(scores[:, :15], values[:15], np.zeros_like(available[:, :15]))
    assert np.all(np.asarray(empty.top) == -np.inf) and np.all(np.asarray(empty.mass) == 0.0)
    for got, want in zip(pooling.finish(pooling.merge(empty, a)), pooling.finish(a), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-15)


# ------------------------------------------------------------------------------------------- mixing


def np_mixture(scores: np.ndarray, values: np.ndarray, available: np.ndarray,
               u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """f̂ = Σ_h u_h m_h and s² = Σ_i w̄_i (v_i − f̂)² with the pooled weights w̄ = Σ_h p_h w_h."""
    heads = [np_pool(s, values, available) for s in scores]
    f = sum(u_h * m for u_h, (m, _, _) in zip(u, heads, strict=True))
    p = np.abs(u) / np.abs(u).sum()
    w_bar = sum(p_h * w for p_h, (_, _, w) in zip(p, heads, strict=True))
    return f, np.sum(w_bar * (values[None, :] - f[:, None]) ** 2, axis=-1)


@pytest.mark.parametrize("u", [[1.0], [0.5, 0.5], [0.7, -0.4, 1.3], [2.0, 0.0, -0.25, 0.1]])
def test_mix_band_is_the_local_variance_of_the_pooled_weights(u: list[float]) -> None:
    mixing = np.array(u)
    scores = np.stack([problem(seed)[0] for seed in range(len(u))])
    _, values, available = problem(99)
    heads = [pooling.pool(s, values, available) for s in scores]
    mean, var = pooling.mix(jnp.stack([h.mean for h in heads]), jnp.stack([h.var for h in heads]), mixing)
    ref_mean, ref_var = np_mixture(scores, values, available, mixing)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(var, ref_var, rtol=1e-11, atol=1e-12)


def test_mix_ignores_heads_with_zero_weight_and_is_nan_when_every_u_is_zero() -> None:
    means = jnp.array([[1.0, 2.0], [np.nan, np.nan], [3.0, 0.0]])
    variances = jnp.array([[0.5, 0.1], [np.nan, np.nan], [0.2, 0.4]])
    mean, var = pooling.mix(means, variances, jnp.array([0.5, 0.0, -0.5]))
    # f̂ = 0.5 m_1 − 0.5 m_3; p = (½, 0, ½): s² = ½(s_1² + (m_1 − f̂)²) + ½(s_3² + (m_3 − f̂)²)
    f = np.array([-1.0, 1.0])
    band = 0.5 * (np.array([0.5, 0.1]) + (np.array([1.0, 2.0]) - f) ** 2)
    band += 0.5 * (np.array([0.2, 0.4]) + (np.array([3.0, 0.0]) - f) ** 2)
    np.testing.assert_allclose(mean, f, rtol=1e-15)
    np.testing.assert_allclose(var, band, rtol=1e-15)
    none = pooling.mix(means, variances, jnp.zeros(3))
    assert np.all(np.isnan(none[0])) and np.all(np.isnan(none[1]))


def test_multihead_is_each_head_pooled_then_mixed_in_any_query_blocks() -> None:
    """Gaussian heads, s_hi(x) = −(x − x_i)²/(2ℓ_h²), through ``multihead`` and by hand in NumPy."""
    rng = np.random.default_rng(3)
    keys = np.sort(rng.uniform(-3, 3, N))
    values = np.sin(keys) + 0.1 * rng.normal(size=N)
    queries = np.linspace(-3.5, 3.5, 12)
    lengthscales, mixing = np.array([0.2, 0.6, 1.5]), np.array([0.5, -0.2, 0.9])
    key_ok = np.arange(N) % 4 != 0  # one mask for every query, as for a hold-out set
    available = np.broadcast_to(key_ok, (queries.size, N))

    def score(ell: jax.Array, q: jax.Array, k: jax.Array) -> jax.Array:
        return -jnp.square(q[:, None] - k[None, :]) / (2 * ell**2)

    scores = np.stack([-((queries[:, None] - keys[None, :]) ** 2) / (2 * ell**2) for ell in lengthscales])
    ref_mean, ref_var = np_mixture(scores, values, available, mixing)
    for block in (12, 4, 3):
        mean, var, head_means, _, weights = pooling.multihead(
            score, lengthscales, queries, keys, values, key_ok, mixing, block=block, with_weights=True
        )
        np.testing.assert_allclose(mean, ref_mean, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(var, ref_var, rtol=1e-11, atol=1e-12)
        assert head_means.shape == (3, 12) and weights.shape == (3, 12, N)
        np.testing.assert_allclose(weights[1], np_weights(scores[1], available), rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize(("values", "scale"), [([0.0, 0.0], 1.0), ([-3.0, 2.0], 3.0), ([], 1.0)])
def test_value_scale(values: list[float], scale: float) -> None:
    assert pooling.value_scale(np.array(values)) == scale
