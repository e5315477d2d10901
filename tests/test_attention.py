"""Dot-product attention as a kernel smoother: the Gaussian identity, training, prediction, kernel."""

from __future__ import annotations

import numpy as np
import pytest

import kernelviz as kv


@pytest.fixture(scope="module")
def blog() -> tuple[np.ndarray, np.ndarray]:
    ds = kv.blog_data()
    return ds.x, ds.y


@pytest.fixture(scope="module")
def trained(blog) -> kv.AttentionFit:
    x, y = blog
    return kv.fit_attention(x, y, heads=2, d_qk=4, holdout=10, steps=500, learning_rate=0.05, seed=0)


def np_attention_weights(q, k, w_q, w_k, score_scale, center=0.0, scale=1.0):
    def phi(v):
        t = (v - center) / scale
        return np.stack([np.ones_like(t), t, t * t], axis=-1)

    s = (phi(q) @ w_q) @ (phi(k) @ w_k).T * score_scale
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("ell", [0.03, 0.1, 0.25, 1.0, 5.0])
def test_gaussian_nadaraya_watson_is_dot_product_attention(blog, ell):
    x, y = blog
    q = np.linspace(-3.5, 3.5, 101)
    g = kv.gaussian_attention_params(ell)
    assert g.w_q.shape == (3, 2) and g.w_k.shape == (3, 2) and g.score_scale == pytest.approx(2**-0.5)
    att = kv.dot_product_attention(q, x, y, g.w_q, g.w_k, g.score_scale)
    nw = kv.nadaraya_watson(q, x, y, ell)
    np.testing.assert_allclose(att.weights, nw.weights, atol=1e-6)
    np.testing.assert_allclose(att.mean, nw.mean, atol=1e-6)
    np.testing.assert_allclose(att.std, nw.std, atol=1e-6)
    # the same identity with standardised tokens x̃ = (x − c)/s
    gs = kv.gaussian_attention_params(ell, scale=1.7)
    att_s = kv.dot_product_attention(q, x, y, gs.w_q, gs.w_k, gs.score_scale, center=0.4, scale=1.7)
    np.testing.assert_allclose(att_s.mean, nw.mean, atol=1e-6)


def test_gaussian_scores_differ_from_the_kernel_by_a_query_constant():
    ell = 0.4
    g = kv.gaussian_attention_params(ell)
    xq, xk = np.array([-1.0, 0.3, 2.0]), np.linspace(-2, 2, 9)
    phi = lambda v: np.stack([np.ones_like(v), v, v * v], axis=-1)  # noqa: E731
    s = (phi(xq) @ g.w_q) @ (phi(xk) @ g.w_k).T * g.score_scale
    log_k = -((xq[:, None] - xk[None, :]) ** 2) / (2 * ell**2)
    np.testing.assert_allclose(s - log_k, np.repeat((xq**2 / (2 * ell**2))[:, None], 9, axis=1), atol=1e-9)


def test_dot_product_attention_matches_numpy(blog):
    x, y = blog
    rng = np.random.default_rng(1)
    w_q, w_k = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    q = np.linspace(-3, 3, 20)
    att = kv.dot_product_attention(q, x, y, w_q, w_k, center=0.1, scale=1.5)
    w = np_attention_weights(q, x, w_q, w_k, 0.5, center=0.1, scale=1.5)
    np.testing.assert_allclose(att.weights, w, atol=1e-12)
    np.testing.assert_allclose(att.mean, w @ y, atol=1e-12)


def test_fit_attention_learns_and_records(trained):
    f = trained
    assert f.w_q.shape == (2, 3, 4) and f.w_k.shape == (2, 3, 4) and f.mixing.shape == (2,)
    assert f.losses.shape == (500,) and f.steps_run == 500 and not f.diverged and f.message == ""
    assert f.losses[-100:].mean() < f.losses[:100].mean()
    assert (f.heads, f.d_qk, f.holdout, f.learning_rate, f.seed) == (2, 4, 10, 0.05, 0)


def test_attention_predict_matches_numpy_reference(blog, trained):
    x, y = blog
    f = trained
    q = np.linspace(-3.2, 3.2, 33)
    p = kv.attention_predict(f, q, x, y)
    ws = np.stack([
        np_attention_weights(q, x, f.w_q[h], f.w_k[h], 0.5, f.center, f.scale) for h in range(f.heads)
    ])
    hm = ws @ y
    mean = f.mixing @ hm
    pooled = np.einsum("h,hqn->qn", np.abs(f.mixing) / np.abs(f.mixing).sum(), ws)
    std = np.sqrt(np.sum(pooled * (y[None, :] - mean[:, None]) ** 2, axis=1))
    np.testing.assert_allclose(p.weights, ws, atol=1e-10)
    np.testing.assert_allclose(p.head_means, hm, atol=1e-9)
    np.testing.assert_allclose(p.mean, mean, atol=1e-9)
    np.testing.assert_allclose(p.std, std, atol=1e-9)
    assert p.head_stds.shape == (2, 33) and np.all(p.std >= 0)


def test_attention_predict_in_query_blocks_and_without_weights(blog, trained):
    x, y = blog
    q = np.linspace(-3.5, 3.5, 300)  # several query blocks, padded past the first data bucket
    p = kv.attention_predict(trained, q, x, y)
    ws = np.stack([
        np_attention_weights(q, x, trained.w_q[h], trained.w_k[h], 0.5, trained.center, trained.scale)
        for h in range(trained.heads)
    ])
    np.testing.assert_allclose(p.weights, ws, atol=1e-10)
    np.testing.assert_allclose(p.mean, trained.mixing @ (ws @ y), atol=1e-9)
    light = kv.attention_predict(trained, q, x, y, with_weights=False)
    assert light.weights is None
    for field in ("mean", "std", "head_means", "head_stds"):
        np.testing.assert_array_equal(getattr(light, field), getattr(p, field))


def test_learned_kernel_on_a_grid_is_not_symmetric(trained):
    grid = np.linspace(-3, 3, kv.KERNEL_GRID_POINTS)
    s = kv.attention_kernel(trained, grid, kind="scores")
    k = kv.attention_kernel(trained, grid)
    w = kv.attention_kernel(trained, grid, kind="weights")
    assert s.shape == k.shape == w.shape == (2, 100, 100)
    np.testing.assert_allclose(k, np.exp(s - s.max(axis=(1, 2), keepdims=True)), rtol=1e-12)
    np.testing.assert_allclose(w.sum(axis=2), 1.0, atol=1e-12)
    assert np.max(np.abs(s - s.transpose(0, 2, 1))) > 1e-3
    # the Gaussian kernel, written as attention, is symmetric up to the per-query constant
    g = kv.gaussian_attention_params(0.5)
    gw = kv.dot_product_attention(grid, grid, np.zeros_like(grid), g.w_q, g.w_k, g.score_scale).weights
    ref = np_attention_weights(grid, grid, g.w_q, g.w_k, g.score_scale)
    np.testing.assert_allclose(gw, ref, atol=1e-12)


def test_attention_diverging_learning_rate_is_reported(blog):
    x, y = blog
    f = kv.fit_attention(x, y, heads=2, d_qk=4, holdout=10, steps=50, learning_rate=1e7, seed=0)
    assert f.diverged and f.steps_run < 50 and "diverged" in f.message
    assert all(np.all(np.isfinite(a)) for a in (f.w_q, f.w_k, f.mixing, f.losses))


def test_attention_padding_does_not_change_the_model(blog):
    """Heads and d_qk are padded with masks: a 1-head, d_qk=1 model behaves as the unpadded formula."""
    x, y = blog
    f = kv.fit_attention(x, y, heads=1, d_qk=1, holdout=10, steps=20, seed=2)
    assert f.w_q.shape == (1, 3, 1)
    q = np.linspace(-3, 3, 11)
    p = kv.attention_predict(f, q, x, y)
    w = np_attention_weights(q, x, f.w_q[0], f.w_k[0], 1.0, f.center, f.scale)
    np.testing.assert_allclose(p.mean, f.mixing[0] * (w @ y), atol=1e-9)
