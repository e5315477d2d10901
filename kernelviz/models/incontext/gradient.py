"""Chapter 5's pretraining step: the loss and its gradient head by head, the gradient written out.

The layer (``kernelviz.models.incontext.layer_output``) on a batch of B prompts with Q queries each is
f̂ = Σ_h u_h m_h, m_h = Σ_i w_hi y_i, w_h the softmax of the scores s_hi = φ(x_q) A_h φ(x_i)ᵀ (or s_hi/n
for linear attention), A_h = W_q^h W_k^hᵀ/√d_qk. For L = mean over b, q of (f̂ − f)² and
g = ∂L/∂f̂ = 2(f̂ − f)/(B Q), the chain rule gives

    ∂L/∂u_h = Σ_{b,q} g m_h,
    ∂L/∂s_hi = g u_h w_hi (y_i − m_h)   (softmax),   g u_h y_i/n   (linear, available keys),
    ∂L/∂A_h = Σ_{b,q,i} ∂L/∂s_hi φ(x_q)ᵀ φ(x_i),
    ∂L/∂W_q^h = ∂L/∂A_h W_k^h/√d_qk,   ∂L/∂W_k^h = (∂L/∂A_h)ᵀ W_q^h/√d_qk.

The heads run in ``fori_loop``s with a traced trip count, so a step costs what its heads need and one
program serves 1 … ``HEADS_MAX`` heads: the first loop keeps each head's mean m_h, the second computes its
weights again (cheaper on the CPU than a buffer of every head's weights) and turns them into ∂L/∂A_h.
The scores are the quadratic Σ_k c_k(x_q) x_i^k, c = φ(x_q) A_h, and ∂L/∂A_h is summed the same way:
elementwise products and sums, which XLA fuses, with no batched matrix product.
``tests/test_incontext.py`` checks the result against ``jax.value_and_grad`` of ``pretraining_loss``;
``python -m benchmarks.bench_incontext --gradient`` times both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array

from kernelviz.core.pooling import linear_weights, masked_softmax
from kernelviz.models.attention import features, score_matrices
from kernelviz.models.smoothing import HEADS_MAX

__all__ = ["HeadPass", "head_weights", "heads_forward", "loss_by_heads", "score_gradients"]


class HeadPass(NamedTuple):
    """The forward pass, head by head: f̂ (B, Q) and each head's mean m_h (HEADS_MAX, B, Q) (heads past the
    first ``heads``: zeros)."""

    f: Array
    means: Array


def head_weights(kind: int, a: Array, phi_q: Array, phi_x: Array, available: Array) -> Array:
    """One head's weights w_i(x_q) (B, Q, n) from its score matrix A (3, 3): the masked softmax of
    s_i = φ(x_q) A φ(x_i)ᵀ (``kind`` 0), or s_i/n on the ``available`` keys (``kind`` 1)."""
    c = phi_q @ a  # (B, Q, 3): s_i = Σ_k c_k φ_k(x_i), a quadratic in x_i
    s = sum(c[..., k, None] * phi_x[:, None, :, k] for k in range(3))
    if kind == 0:
        return masked_softmax(s, available)
    return linear_weights(s, available, jnp.sum(available))


def heads_forward(kind: int, a: Array, u: Array, phi_q: Array, phi_x: Array, y: Array, available: Array,
                  heads: Array) -> HeadPass:
    """f̂ = Σ_h u_h m_h, m_h = Σ_i w_hi y_i, over the first ``heads`` (traced) of the score matrices ``a``
    (HEADS_MAX, 3, 3) and output weights ``u``, keeping each head's m_h for the gradient."""
    b, q = phi_q.shape[:2]

    def head(h: Array, acc: HeadPass) -> HeadPass:
        w = head_weights(kind, a[h], phi_q, phi_x, available)
        m = jnp.einsum("bqn,bn->bq", w, y)
        return HeadPass(acc.f + u[h] * m, acc.means.at[h].set(m))

    start = HeadPass(jnp.zeros((b, q), y.dtype), jnp.zeros((HEADS_MAX, b, q), y.dtype))
    return jax.lax.fori_loop(0, heads, head, start)


def score_gradients(kind: int, a: Array, fwd: HeadPass, g: Array, u: Array, phi_q: Array, phi_x: Array,
                    y: Array, available: Array, heads: Array) -> Array:
    """∂L/∂A_h = Σ_{b,q,i} ∂L/∂s_hi φ(x_q)ᵀ φ(x_i) (HEADS_MAX, 3, 3) for the first ``heads`` of the score
    matrices ``a``, from the forward pass's means and g = ∂L/∂f̂ (B, Q); 0 for the other heads."""

    def head(h: Array, grads: Array) -> Array:
        gu = (g * u[h])[..., None]
        if kind == 0:
            w = head_weights(kind, a[h], phi_q, phi_x, available)
            ds = gu * w * (y[:, None, :] - fwd.means[h][..., None])
        else:
            ds = gu * jnp.where(available, y, 0.0)[:, None, :] / jnp.sum(available)
        t = jnp.stack([jnp.sum(ds * phi_x[:, None, :, k], axis=-1) for k in range(3)], axis=-1)  # (B, Q, 3)
        return grads.at[h].set(jnp.einsum("bqf,bqg->fg", phi_q, t))

    return jax.lax.fori_loop(0, heads, head, jnp.zeros((HEADS_MAX, 3, 3), y.dtype))


def loss_by_heads(kind: int) -> Callable:
    """(params, prompts, available, heads) ↦ (L, ∂L/∂params) of ``pretraining_loss`` for the first ``heads``
    heads (traced) of a ``kind`` layer (0 softmax, 1 linear), the other heads' gradient 0: the forward pass
    head by head (``heads_forward``), then the gradient above (``score_gradients``), in the prompts'
    float32, returned in the params' dtype."""

    def branch(params: NamedTuple, prompts: NamedTuple, available: Array, heads: Array
               ) -> tuple[Array, NamedTuple]:
        dtype, d_qk = prompts.y.dtype, params.w_q.shape[-1]
        a = jnp.asarray(score_matrices(params.w_q, params.w_k, d_qk), dtype)
        u = jnp.asarray(params.u, dtype)
        phi_q, phi_x = features(prompts.xq), features(prompts.x)
        fwd = heads_forward(kind, a, u, phi_q, phi_x, prompts.y, available, heads)
        err = fwd.f - prompts.fq
        g = 2.0 * err / err.size
        da = score_gradients(kind, a, fwd, g, u, phi_q, phi_x, prompts.y, available, heads)
        da = da.astype(params.w_q.dtype)
        du = jnp.einsum("bq,hbq->h", g, fwd.means).astype(params.u.dtype)
        root = d_qk**0.5
        grads = type(params)(da @ params.w_k / root, jnp.swapaxes(da, -1, -2) @ params.w_q / root, du)
        return jnp.mean(jnp.square(err)).astype(params.u.dtype), grads

    return branch
