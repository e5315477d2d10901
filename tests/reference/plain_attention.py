"""The plain reference for chapter 4's training form: the attention layer in float64, differentiated by JAX.

``kv.fit_attention`` trains ``kernelviz.models.attention.layer_output``, which pools in float32 with its
gradient written out (``kernelviz.core.pooling.summed_heads``). ``fit_plain`` trains the same layer from the
same start (``layer_start``) with the same loop (``train_layer``), written the plain way: every head's
weights by the masked softmax, the pooled tokens, then the read-out, all in float64, the gradient JAX's own.
The benchmarks (``bench_training.py``, ``bench_attention.py``) time and score both in the same run.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import Array

from kernelviz.core import pooling
from kernelviz.models.attention import AttentionFit, features
from kernelviz.models.attention.training import LayerRequest, layer_start, train_layer


def plain_layer_output(params: tuple[Array, ...], queries: Array, keys: Array, toks: Array, available: Array,
                       d_qk: object) -> Array:
    """f̂(x) = Σ_h (Σ_i w_hi t_i) W_v^h U_h, w_h = softmax_i ⟨φ(x) W_q^h, φ(x_i) W_k^h⟩/√d_qk, in float64."""
    w_q, w_k, w_v, u = params
    q = jnp.einsum("rf,hfd->hrd", features(queries), w_q)
    k = jnp.einsum("nf,hfd->hnd", features(keys), w_k)
    weights = pooling.masked_softmax(jnp.einsum("hrd,hnd->hrn", q, k) / jnp.sqrt(d_qk), available)
    pooled = jnp.einsum("hrn,nf->hrf", weights, toks)
    return jnp.einsum("hrf,hfv,hv->r", pooled, w_v, u)


def fit_plain(x: object, y: object, **settings: object) -> AttentionFit:
    """``kv.fit_attention(x, y, **settings)`` with the plain float64 layer."""
    return train_layer(plain_layer_output, layer_start(x, y, LayerRequest(**settings)))
