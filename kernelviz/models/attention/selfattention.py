"""The lecture notes' PyTorch ``SelfAttention`` in JAX, multi-head attention beside it, and the weights that
make them kernelviz's attention layer (``kernelviz.models.attention``).

The notes' module has three bias-free ``nn.Linear(embed_dim, embed_dim)`` maps and computes

    Q = X W_q,   K = X W_k,   V = X W_v,   output = softmax(Q Kᵀ/√embed_dim) V,

the softmax over the keys (the last axis). ``nn.Linear`` stores its weight as (out, in) and computes
X weightᵀ, so the W_q here is ``self.W_q.weight.T`` there. The notes' maps are square, so √embed_dim is √d
with d the width of a query; ``attention_weights`` divides by √d, as equinox's ``dot_product_attention``
does, and so also covers query/key maps narrower than the embedding. Multi-head attention runs H such
heads and multiplies their concatenation by W_O (``multihead_self_attention``). They are written op by op,
as the notes' PyTorch runs them; ``notes_outputs`` runs them compiled, through the adapter. The notes end
by naming PyTorch's ``torch.nn.MultiheadAttention(embed_dim, num_heads)``; built with ``bias=False``
(kernelviz's addition, not the notes'), it computes the same with every head's query, key and value width
embed_dim/num_heads and a square W_O; here each width is free and W_O may be narrow.

kernelviz's layer is this computation on the tokens t = (1, x̃, x̃², ỹ), with W_q and W_k reading only the
position part φ(x̃) = (1, x̃, x̃²): ``as_self_attention`` writes its maps as 4-row matrices (a zero row for
ỹ), so that head h of ``self_attention`` on the tokens is ``kv.attention_predict``'s head h with the points
as queries.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.models.attention import D_V_MAX, AttentionFit, tokens
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.runtime import serve
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import param, vector

__all__ = ["NotesOutputs", "SelfAttentionWeights", "as_self_attention", "attention_weights",
           "multihead_self_attention", "notes_outputs", "notes_program", "self_attention",
           "softmax_attention"]


def attention_weights(query: Array, key: Array) -> Array:
    """A_ij = softmax_j(q_i · k_j / √d) for query (q, d) and key (n, d): (q, n), rows summing to 1."""
    return jax.nn.softmax(query @ key.T / jnp.sqrt(query.shape[-1]), axis=-1)


def softmax_attention(query: Array, key: Array, value: Array) -> Array:
    """Attention(Q, K, V) = softmax(Q Kᵀ/√d) V: (q, d_v) for query (q, d), key (n, d), value (n, d_v)."""
    return attention_weights(query, key) @ value


@float64
def self_attention(x: Array, w_q: Array, w_k: Array, w_v: Array) -> Array:
    """The notes' ``SelfAttention.forward``: softmax(X W_q (X W_k)ᵀ/√d) X W_v for X (n, e), W_q, W_k (e, d),
    W_v (e, d_v); (n, d_v), one output row x′_i per input row x_i."""
    return softmax_attention(x @ w_q, x @ w_k, x @ w_v)


@float64
def multihead_self_attention(x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array) -> Array:
    """MultiHead(X) = Concat(head_1, …, head_H) W_O, head_h = softmax(X W_q^h (X W_k^h)ᵀ/√d) X W_v^h, for
    W_q, W_k (H, e, d), W_v (H, e, d_v) and W_O (H·d_v, out): (n, out)."""
    heads = jax.vmap(self_attention, in_axes=(None, 0, 0, 0))(x, w_q, w_k, w_v)  # (H, n, d_v)
    return jnp.concatenate(list(heads), axis=-1) @ w_o


class SelfAttentionWeights(NamedTuple):
    """The arguments of ``multihead_self_attention`` for kernelviz's layer: the tokens X (n, 4), the maps
    W_q, W_k (H, 4, d_qk), W_v (H, 4, d_v) and W_O (H·d_v, 1), the U_h stacked."""

    x: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray


@float64
def as_self_attention(fit: AttentionFit, x: object, y: object) -> SelfAttentionWeights:
    """kernelviz's layer on the points (x, y) as the notes' matrices: X = tokens t_i = (1, x̃_i, x̃_i², ỹ_i)
    and W_q^h, W_k^h with a zero row for ỹ under the 3 rows that read φ(x̃), so X W_q^h = φ(x̃) W_q^h.
    Then multihead_self_attention(*weights) · y_scale = ``attention_predict(fit, x, x, y).mean``."""
    xs, ys = vector("x", x), vector("y", y)
    xt = (xs - fit.center) / fit.scale
    pad = ((0, 0), (0, 1), (0, 0))  # one more row, for ỹ
    w_q, w_k = (np.pad(w, pad) for w in (fit.w_q, fit.w_k))
    return SelfAttentionWeights(tokens(xt, ys / fit.y_scale), w_q, w_k, np.asarray(fit.w_v),
                                np.asarray(fit.mixing).reshape(-1, 1))


class NotesOutputs(NamedTuple):
    """The notes' outputs on one set of weights: every head's ``self_attention`` (H, n, d_v) and
    ``multihead_self_attention`` (n, out)."""

    heads: np.ndarray
    joined: np.ndarray


def notes_program(x: Array, w_q: Array, w_k: Array, w_v: Array, w_o: Array) -> tuple[Array, Array]:
    """head_h = ``self_attention``(X, W_q^h, W_k^h, W_v^h) for every h, and MultiHead(X) =
    ``multihead_self_attention`` with W_O given per head, (H, d_v, out)."""
    heads = jax.vmap(self_attention, in_axes=(None, 0, 0, 0))(x, w_q, w_k, w_v)
    return heads, multihead_self_attention(x, w_q, w_k, w_v, w_o.reshape(-1, w_o.shape[-1]))


@float64
def notes_outputs(w: SelfAttentionWeights) -> NotesOutputs:
    """``notes_program`` on ``w``, served by ``kernelviz.runtime.serve``: the heads in ``HEADS_MAX`` slots and
    the value columns in ``D_V_MAX`` (added heads and columns are zero maps with zero rows of W_O, so they
    add exact zeros), so the head count and d_v never change the compiled program (d_qk does: it sets the
    score scale √d); the outputs cut back to the real heads and d_v."""
    heads, d_v, out = w.w_v.shape[0], w.w_v.shape[2], w.w_o.shape[1]
    qk = (HEADS_MAX, *w.w_q.shape[1:])
    slots = (param(w.w_q, qk), param(w.w_k, qk), param(w.w_v, (HEADS_MAX, w.w_v.shape[1], D_V_MAX)),
             param(w.w_o.reshape(heads, d_v, out), (HEADS_MAX, D_V_MAX, out)))
    h, joined = serve.call(notes_program, w.x, *slots)
    return NotesOutputs(serve.cut(h, (heads, w.x.shape[0], d_v)), np.asarray(joined))
