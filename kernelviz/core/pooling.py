"""Attention pooling: the one computation behind every model in kernelviz.

A query x scores every key x_i, the scores become weights by a softmax over the keys that are available
to it, and the weights average the values v_i:

    w_i(x) = exp s_i(x) / Σ_{j available} exp s_j(x)          (``masked_softmax``)
    m(x)   = Σ_i w_i(x) v_i,   s²(x) = Σ_i w_i(x) (v_i − m(x))²   (``moments``)

The models differ only in the score function:

* Nadaraya–Watson (``kernelviz.models.smoothing``): s_i(x) = log K((x − x_i)/ℓ), a log-kernel of the distance;
* dot-product attention (``kernelviz.models.attention``): s_i(x) = ⟨q(x), k(x_i)⟩/√d.

Linear attention (chapter 5's comparison, ``kernelviz.models.incontext``) skips the softmax: w_i = s_i/n
(``linear_weights``).

Several heads are one ``jax.vmap`` over per-head parameters (``over_heads``); a multi-head model mixes the
heads' outputs linearly, f̂(x) = Σ_h u_h m_h(x) (``mix``). For many keys, ``summarize`` and ``merge``
combine the pooling of key blocks exactly (a running log-sum-exp, the FlashAttention trick), so memory stays
O(queries × block) however many keys there are.

Numerics: a softmax over scores (log-kernels) never underflows at tiny ℓ nor overflows at huge ℓ. A key that
is not available, or whose kernel is zero (score −∞), gets weight exactly 0; a query with no key of finite
score has an all-zero weight row and mean and variance NaN (an empty window: nothing to average). Training
passes finite scores and at least one available key per row, so neither NaN nor a NaN gradient can occur.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array

from kernelviz.runtime.serve import Pooled
from kernelviz.runtime.shapes import value_scale

__all__ = [
    "BLOCK_CELLS",
    "Pooled",
    "Summary",
    "finish",
    "fitted_block",
    "linear_weights",
    "masked_softmax",
    "merge",
    "mix",
    "moments",
    "multihead",
    "over_heads",
    "over_query_blocks",
    "pool",
    "pooled_heads",
    "pooled_sum",
    "scalar_heads",
    "summarize",
    "summed_heads",
    "value_scale",
]


def _shifted_exp(scores: Array, available: Array | None, floor: float = -jnp.inf) -> tuple[Array, Array]:
    """(exp(s_i − top) on the available keys and 0 elsewhere, top) per row, top = max(max_j s_j, ``floor``).

    The top is taken without gradient (any shift gives the same softmax) and replaced by 0 on a row with
    no finite score, so that row gives zeros, never NaN.
    """
    z = scores if available is None else jnp.where(available, scores, -jnp.inf)
    top = jax.lax.stop_gradient(jnp.maximum(jnp.max(z, axis=-1, keepdims=True), floor))
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    return jnp.exp(z - top), top[..., 0]


def masked_softmax(scores: Array, available: Array | None = None, sink: float | None = None) -> Array:
    """w_i = exp s_i / Σ_j exp s_j over the keys with ``available`` true (all when None), per row.

    Unavailable keys and keys of score −∞ get weight 0; a row without any such key is all zeros.
    ``sink`` adds one more key of that score and value 0 to every row, w_i = exp s_i / (Σ_j exp s_j +
    exp sink): the blog post's K_i / (Σ_j K_j + 1e-16) is ``sink = log 1e-16``, whose row of kernel values
    adding up to little more than 1e-16 then predicts near 0, and a row of zeros exactly 0 (the post's
    arithmetic, which ``kernelviz.models.heads`` keeps to re-run the post's code).
    """
    floor = -jnp.inf if sink is None else sink
    e, top = _shifted_exp(scores, available, floor)
    total = jnp.sum(e, axis=-1, keepdims=True)
    if sink is not None:
        total = total + jnp.exp(sink - top)[..., None]
    return e / jnp.where(total > 0, total, 1.0)


def linear_weights(scores: Array, available: Array, n: Array) -> Array:
    """Linear attention's weights w_i = s_i/n on the ``available`` keys, 0 elsewhere: no softmax, so the rows
    need not sum to 1 nor stay positive, and no weight can single out the keys near x."""
    return jnp.where(available, scores, 0.0) / n


def moments(weights: Array, values: Array) -> tuple[Array, Array]:
    """m = Σ_i w_i v_i and s² = Σ_i w_i (v_i − m)² per row of ``weights``; NaN on an all-zero row."""
    empty = jnp.sum(weights, axis=-1) <= 0
    mean = weights @ values
    var = jnp.sum(weights * jnp.square(values - mean[..., None]), axis=-1)
    return jnp.where(empty, jnp.nan, mean), jnp.where(empty, jnp.nan, jnp.maximum(var, 0.0))


def pool(scores: Array, values: Array, available: Array | None = None) -> Pooled:
    """Attention pooling of ``values`` (n,) with ``scores`` (q, n): the weights w (q, n) and their moments
    m, s² (q,), as the record a served model returns (``kernelviz.runtime.serve.Pooled``)."""
    w = masked_softmax(scores, available)
    mean, var = moments(w, values)
    return Pooled(mean=mean, var=var, weights=w)


@partial(jax.custom_vjp, nondiff_argnums=(3,))
def pooled_sum(scores: Array, available: Array, values: Array, sink: float | None = None) -> Array:
    """f_r = Σ_h m_hr = Σ_h Σ_i w_hri v_ih: every head's pooled value, summed (a layer whose heads pool one
    value each), w_h the ``masked_softmax`` of head h's scores (H, r, n) with its ``sink``, v_h =
    ``values[:, h]`` (n, H).

    Its gradient is written out, one sweep over the weights instead of JAX's pass back through the softmax
    (a sink is a key of value 0, so it leaves the formula as it is):

        ∂f_r/∂s_hri = w_hri (v_ih − m_hr),      ∂f_r/∂v_ih = w_hri.
    """
    return jnp.einsum("hrn,nh->r", masked_softmax(scores, available, sink), values)


def _pooled_sum_fwd(scores: Array, available: Array, values: Array, sink: float | None = None
                    ) -> tuple[Array, tuple]:
    w = masked_softmax(scores, available, sink)
    m = jnp.einsum("hrn,nh->hr", w, values)
    return jnp.sum(m, axis=0), (w, m, values)


def _pooled_sum_bwd(sink: float | None, res: tuple, g: Array) -> tuple[Array, None, Array]:
    """The cotangents of ``pooled_sum``: ḡ_r w_hri (v_ih − m_hr) for the scores, Σ_r ḡ_r w_hri for v."""
    w, m, values = res
    gw = w * g[None, :, None]
    return gw * (values.T[:, None, :] - m[:, :, None]), None, jnp.einsum("hrn->nh", gw)


pooled_sum.defvjp(_pooled_sum_fwd, _pooled_sum_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(0, 4))
def pooled_heads(score: Callable[[Array], Array], theta: Array, available: Array, values: Array,
                 sink: float | None = None) -> Array:
    """f_r = Σ_h Σ_i w_hri v_ih for heads whose scores s_h = ``score(θ_h)`` (rows, n) depend on one number
    θ_h each (a kernel head's log ℓ_h), w_h the ``masked_softmax`` of s_h (with its ``sink``),
    v_h = ``values[:, h]`` (n, H).

    ``pooled_sum`` of the scores, its gradient in θ fused with the forward pass, which takes ∂s_h/∂θ_h in
    forward mode (the chain rule on ``pooled_sum``'s score cotangent):

        ∂f_r/∂θ_h = Σ_i w_hri (v_ih − m_hr) ∂s_hri/∂θ_h,      ∂f_r/∂v_ih = w_hri.
    """
    return pooled_sum(over_heads(score, theta), available, values, sink)


def _pooled_heads_fwd(score: Callable, theta: Array, available: Array, values: Array,
                      sink: float | None = None) -> tuple[Array, tuple]:
    s, slope = over_heads(lambda t: jax.jvp(score, (t,), (jnp.ones_like(t),)), theta)
    f, res = _pooled_sum_fwd(s, available, values, sink)
    return f, (res, slope)


def _pooled_heads_bwd(score: Callable, sink: float | None, res: tuple, g: Array) -> tuple[Array, None, Array]:
    sums, slope = res
    ds, _, dv = _pooled_sum_bwd(sink, sums, g)
    return jnp.sum(ds * slope, axis=(1, 2)), None, dv


pooled_heads.defvjp(_pooled_heads_fwd, _pooled_heads_bwd)


def _f32(tree: object) -> object:
    """Every array of ``tree`` in float32: the training forms' arithmetic."""
    return jax.tree.map(lambda a: jnp.asarray(a, jnp.float32), tree)


def scalar_heads(score_fn: Callable[[Array, Array, Array], Array], theta: Array, queries: Array, keys: Array,
                 available: Array, values: Array, limit: float = jnp.inf, sink: float | None = None) -> Array:
    """f_r = Σ_h Σ_i w_hri v_ih: H heads whose scores s_h = ``score_fn(θ_h, queries, keys)`` (r, n) depend on
    one number θ_h each, w_h their masked softmax over the ``available`` keys (and ``sink``),
    v_h = ``values[:, h]`` (n, H).

    Training's form: θ clipped to ±``limit``, scores, pooling and gradient in float32 with the gradient in θ
    written out (``pooled_heads``), the result in the dtype of ``values``; ``tests/test_training.py``
    checks it against the plain float64 form."""
    q, k, t = _f32(queries), _f32(keys), jnp.clip(theta, -limit, limit).astype(jnp.float32)
    return pooled_heads(lambda th: score_fn(th, q, k), t, available, _f32(values), sink).astype(values.dtype)


def over_heads(fn: Callable[..., object], head_params: object, *shared: object) -> object:
    """``fn(params_h, *shared)`` for every head h: a ``jax.vmap`` over the leading axis of ``head_params``.

    Every output gains a leading head axis H.
    """
    return jax.vmap(fn, in_axes=(0, *(None,) * len(shared)))(head_params, *shared)


def mix(head_means: Array, head_vars: Array, mixing: Array) -> tuple[Array, Array]:
    """The multi-head output f̂ = Σ_h u_h m_h and its band, from per-head moments (H, q).

    The u_h are free (negative, or not summing to 1), so the band pools the heads' weights by
    p_h = |u_h| / Σ_g |u_g|, w̄_i = Σ_h p_h w_hi, and takes the local variance around f̂:

        s²(x) = Σ_i w̄_i (y_i − f̂)² = Σ_h p_h (s_h² + (m_h − f̂)²),

    (the second form follows from Σ_i w_hi (y_i − m_h) = 0), so no (H, q, n) array is needed. Heads with
    u_h = 0 take no part; NaN where a head with u_h ≠ 0 is NaN, or where every u_h is 0.
    """
    used = (mixing != 0)[:, None]
    mean = jnp.sum(jnp.where(used, mixing[:, None] * head_means, 0.0), axis=0)
    absu = jnp.abs(mixing)
    total = jnp.sum(absu)
    p = (absu / jnp.where(total > 0, total, 1.0))[:, None]
    var = jnp.sum(jnp.where(used, p * (head_vars + jnp.square(head_means - mean)), 0.0), axis=0)
    none = total <= 0
    return jnp.where(none, jnp.nan, mean), jnp.where(none, jnp.nan, var)


# ---------------------------------------------------------------------------------------------------------
# Pooling over key blocks: exact, in memory O(queries × block)
# ---------------------------------------------------------------------------------------------------------


class Summary(NamedTuple):
    """What pooling over one block of keys leaves per query: the largest score ``top``, the mass
    Σ_i exp(s_i − top), and the weighted ``mean`` and sum of squares ``m2`` = mass · s² of the values."""

    top: Array
    mass: Array
    mean: Array
    m2: Array


def summarize(scores: Array, values: Array, available: Array | None = None) -> Summary:
    """The ``Summary`` of pooling ``values`` with ``scores`` (q, n_block); mean and m2 are 0 on empty rows."""
    e, top = _shifted_exp(scores, available)
    mass = jnp.sum(e, axis=-1)
    w = e / jnp.where(mass > 0, mass, 1.0)[..., None]
    mean, var = moments(w, values)
    empty = mass <= 0
    top = jnp.where(empty, -jnp.inf, top)
    return Summary(top, mass, jnp.where(empty, 0.0, mean), jnp.where(empty, 0.0, var * mass))


def merge(a: Summary, b: Summary) -> Summary:
    """The summary of two disjoint key sets: masses rescaled to the common top, means and sums of squares
    combined as in Chan et al.'s parallel variance, m2 = m2_a + m2_b + δ² M_a M_b / (M_a + M_b)."""
    top = jnp.maximum(a.top, b.top)
    ma = a.mass * jnp.exp(jnp.where(jnp.isfinite(a.top), a.top - top, -jnp.inf))
    mb = b.mass * jnp.exp(jnp.where(jnp.isfinite(b.top), b.top - top, -jnp.inf))
    mass = ma + mb
    safe = jnp.where(mass > 0, mass, 1.0)
    delta = b.mean - a.mean
    mean = jnp.where(mass > 0, a.mean + delta * mb / safe, 0.0)
    ra = jnp.where(a.mass > 0, ma / jnp.where(a.mass > 0, a.mass, 1.0), 0.0)
    rb = jnp.where(b.mass > 0, mb / jnp.where(b.mass > 0, b.mass, 1.0), 0.0)
    m2 = a.m2 * ra + b.m2 * rb + jnp.square(delta) * ma * mb / safe
    return Summary(top, mass, mean, m2)


def finish(s: Summary) -> tuple[Array, Array]:
    """(m, s²) from a summary; NaN where no key had a finite score."""
    empty = s.mass <= 0
    var = s.m2 / jnp.where(empty, 1.0, s.mass)
    return jnp.where(empty, jnp.nan, s.mean), jnp.where(empty, jnp.nan, jnp.maximum(var, 0.0))


def over_query_blocks(fn: Callable[[Array], object], queries: Array, block: int,
                      query_axes: object) -> object:
    """``fn`` over consecutive blocks of ``block`` queries (``lax.map``), outputs stitched back together.

    ``fn(q_block)`` returns arrays in a tuple or a record; ``query_axes`` has the same structure, each
    output's query axis in its place (0 for a (q,) vector, 1 for an (H, q, n) head stack). Temporaries are
    then one block's, not all queries'.
    """
    outs = jax.lax.map(fn, queries.reshape(-1, block, *queries.shape[1:]))

    def stitch(o: Array, axis: int) -> Array:
        o = jnp.moveaxis(o, 0, axis)  # the block axis just before the within-block query axis
        return o.reshape(*o.shape[:axis], -1, *o.shape[axis + 2 :])

    return jax.tree.map(stitch, outs, query_axes)


# Heads × queries × keys of one block's temporaries (2 MB in float64): past it a block no longer fits the
# CPU's cache, and a prediction from 2,000 keys ran 2–4x slower (benchmarks/bench_blocks.py).
BLOCK_CELLS = 1 << 18


def fitted_block(block: int, heads: int, keys: int) -> int:
    """``block`` halved until one block's heads × queries × keys fit in ``BLOCK_CELLS`` (at least 8
    queries)."""
    while block > 8 and heads * block * keys > BLOCK_CELLS:
        block //= 2
    return block


def multihead(score_fn: Callable[[object, Array, Array], Array], head_params: object, queries: Array,
              keys: Array, values: Array, available: Array, mixing: Array, *, block: int,
              with_weights: bool) -> Pooled:
    """H heads pooled side by side and mixed: scores s_h = ``score_fn(params_h, queries, keys)`` (q, n).

    Returns ``Pooled``: f̂ (q,) and its band s² (q,) as ``mean`` and ``var``, the heads' means and variances
    (H, q) and, with ``with_weights``, their weights (H, q, n). Queries run in blocks of at most ``block``
    (``over_query_blocks``; fewer where H × block × n would leave the cache: ``fitted_block``).
    """

    def one_block(qb: Array) -> Pooled:
        heads = over_heads(lambda p: pool(score_fn(p, qb, keys), values, available), head_params)
        mean, var = mix(heads.mean, heads.var, mixing)
        return Pooled(mean=mean, var=var, head_means=heads.mean, head_vars=heads.var,
                      weights=heads.weights if with_weights else None)

    axes = Pooled(mean=0, var=0, head_means=1, head_vars=1, weights=1 if with_weights else None)
    heads = jax.tree.leaves(head_params)[0].shape[0]
    return over_query_blocks(one_block, queries, fitted_block(block, heads, keys.shape[0]), axes)


def summed_heads(score_fn: Callable[[object, Array, Array], Array], head_params: object, queries: Array,
                 keys: Array, available: Array, values: Array) -> Array:
    """f_r = Σ_h Σ_i w_hri v_ih: H heads, scores s_h = ``score_fn(params_h, queries, keys)`` (r, n), w_h their
    masked softmax over the ``available`` keys (r, n), v_h = ``values[:, h]`` (n, H), the heads summed.

    A layer's training form: scores, pooling and gradient run in float32 (``pooled_sum``, its gradient
    written out), the result in the dtype of ``values``; ``benchmarks/bench_training.py`` times it against
    the plain float64 layer in the same run."""
    scores = over_heads(score_fn, _f32(head_params), _f32(queries), _f32(keys))
    return pooled_sum(scores, available, _f32(values)).astype(values.dtype)
