"""The notes' SelfAttention written in JAX (kernelviz.models.attention.selfattention) against the notes'
PyTorch module re-done in NumPy step by step, JAX's own ``jax.nn.dot_product_attention`` and equinox's
MultiheadAttention; and kernelviz's attention layer against it on the same weights."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kernelviz as kv
from kernelviz.models.attention import AttentionFit
from kernelviz.models.attention.selfattention import as_self_attention, multihead_self_attention


def torch_like_self_attention(x, weight_q, weight_k, weight_v):
    """The notes' ``SelfAttention.forward`` in NumPy, with ``nn.Linear``'s (out, in) weights: Q = X weightᵀ,
    scores = Q Kᵀ / √embed_dim, softmax over the last axis, times V."""
    q, k, v = x @ weight_q.T, x @ weight_k.T, x @ weight_v.T
    scores = q @ k.T / np.sqrt(x.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


@pytest.fixture(scope="module")
def trained() -> tuple[kv.Dataset, AttentionFit]:
    ds = kv.blog_data()
    return ds, kv.fit_attention(ds.x, ds.y, heads=3, d_qk=4, holdout=10, steps=200, seed=1, d_v=4)


def test_self_attention_is_the_notes_module():
    rng = np.random.default_rng(0)
    embed_dim, n = 6, 11
    x = rng.normal(size=(n, embed_dim))
    weights = [rng.normal(size=(embed_dim, embed_dim)) for _ in range(3)]  # nn.Linear(e, e).weight
    ours = kv.self_attention(x, *(w.T for w in weights))  # W_q = weight.T
    np.testing.assert_allclose(ours, torch_like_self_attention(x, *weights), atol=1e-12)
    q, k, v = (x @ w.T for w in weights)
    jax_own = jax.nn.dot_product_attention(q[:, None, :], k[:, None, :], v[:, None, :])[:, 0, :]
    np.testing.assert_allclose(ours, jax_own, rtol=1e-5, atol=1e-6)  # JAX's own computes in float32


def test_kernelviz_layer_is_the_notes_self_attention_on_the_same_weights(trained):
    """Tokens X, W_q with a zero row for ỹ, d_qk = d_v = 4 = embed_dim: the notes' square maps exactly."""
    ds, fit = trained
    w = as_self_attention(fit, ds.x, ds.y)
    assert w.x.shape == (ds.x.size, 4) and w.w_q.shape == w.w_k.shape == w.w_v.shape == (3, 4, 4)
    np.testing.assert_array_equal(w.w_q[:, 3], 0.0)  # a query never sees y
    layer = kv.attention_predict(fit, ds.x, ds.x, ds.y)
    for h in range(fit.heads):
        notes = torch_like_self_attention(w.x, w.w_q[h].T, w.w_k[h].T, w.w_v[h].T)
        np.testing.assert_allclose(layer.head_vectors[h], notes, atol=1e-9)
        np.testing.assert_allclose(kv.self_attention(w.x, w.w_q[h], w.w_k[h], w.w_v[h]), notes, atol=1e-9)
    np.testing.assert_allclose(multihead_self_attention(*w)[:, 0] * fit.y_scale, layer.mean, atol=1e-9)


def test_kernelviz_layer_is_equinox_multihead_attention(trained):
    """equinox's MultiheadAttention without biases (query size 4, qk size d_qk, vo size d_v, output 1) on
    the same weights: Concat(head_1 … head_H) W_O, as ``nn.MultiheadAttention(bias=False)`` computes it."""
    eqx = pytest.importorskip("equinox")
    ds, fit = trained
    w = as_self_attention(fit, ds.x, ds.y)
    heads, d_qk, d_v = fit.heads, fit.d_qk, w.w_v.shape[2]
    mha = eqx.nn.MultiheadAttention(heads, 4, output_size=1, qk_size=d_qk, vo_size=d_v,
                                    key=jax.random.PRNGKey(0))
    stack = lambda m: jnp.asarray(np.concatenate(list(m), axis=1).T)  # noqa: E731  (H, 4, d) → (H·d, 4)
    mha = eqx.tree_at(lambda m: (m.query_proj.weight, m.key_proj.weight, m.value_proj.weight,
                                 m.output_proj.weight), mha,
                      (stack(w.w_q), stack(w.w_k), stack(w.w_v), jnp.asarray(w.w_o.T)))
    x = jnp.asarray(w.x)
    layer = kv.attention_predict(fit, ds.x, ds.x, ds.y, with_weights=False)
    np.testing.assert_allclose(mha(x, x, x)[:, 0] * fit.y_scale, layer.mean, atol=1e-9)
    np.testing.assert_allclose(multihead_self_attention(*w), mha(x, x, x), atol=1e-12)


def test_chapter_4_shows_the_notes_module_and_checks_it_on_the_trained_layer():
    from test_app import ok, open_code, start

    at = start("chapters/4_attention.py")
    ok(at)
    text = " ".join(m.value for m in at.markdown)
    assert "nn.MultiheadAttention(embed_dim, num_heads)" in text
    check = next(m.value for m in at.markdown if "the notes' SelfAttention head by head" in m.value)
    words = check.replace(":", " ").split()
    numbers = [float(v.rstrip(".,;")) for v in words if v[:1].isdigit() and "e" in v]
    assert len(numbers) == 2 and all(v < 1e-9 for v in numbers), check
    codes = " ".join(c.value for c in open_code(at).code)
    assert "def self_attention(" in codes and "def multihead_self_attention(" in codes
