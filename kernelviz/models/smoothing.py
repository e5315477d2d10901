"""Nadaraya–Watson kernel regression: attention pooling (``kernelviz.core.pooling``) with kernel scores.

For queries x, keys x_i and values y_i the score of a key is its log-kernel,

    s_i(x) = log K((x − x_i)/ℓ)                                 (``kernel_scores``)
    w_i(x) = K((x − x_i)/ℓ) / Σ_j K((x − x_j)/ℓ) = softmax_i s_i(x)
    m(x)   = Σ_i w_i(x) y_i,   s²(x) = Σ_i w_i(x) (y_i − m(x))²   (the fit and its band m ± 2s)

and H heads with lengthscales ℓ_h mixed by u_h give the multi-head kernel regression f̂ = Σ_h u_h m_h
(``predict_heads``). A query whose window holds no key (compact kernels) has mean and std NaN and a zero
weight row. Nothing else is ever NaN or infinite, for any ℓ > 0 and finite data.

Two paths compute ``nadaraya_watson``: dense (the (q, n) weights at once, for heatmaps and small data) and
streaming (key blocks merged by ``pooling.merge`` inside ``lax.scan``, memory O(query block × key block)).
Shapes are padded to buckets with masks (``kernelviz.runtime.shapes``), so a slider never changes a compiled
shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel, kernel_index, kernel_scores
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import bucket, check_lengthscale, pad, vector

__all__ = [
    "HEADS_MAX",
    "HeadsPrediction",
    "Smooth",
    "kernel_scores",
    "knn_average",
    "knn_scores",
    "nadaraya_watson",
    "nadaraya_watson_path",
    "predict_heads",
]

HEADS_MAX = 8  # heads are padded to this many, so the head count never recompiles
DENSE_MAX_KEYS = 4096  # with_weights=False above this many keys takes the streaming path
MAX_WEIGHT_ENTRIES = 50_000_000  # q × n above this (400 MB of float64) must use with_weights=False
QUERY_BLOCK = 256
KEY_BLOCK = 4096
HEADS_QUERY_BLOCK = 64  # queries per block of a multi-head prediction (temporaries H × 64 × n)


class Smooth(NamedTuple):
    """A Nadaraya–Watson prediction: mean m(x), local std s(x) (shape (q,)) and weights (q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    weights: np.ndarray | None


@dataclass(frozen=True)
class HeadsPrediction:
    """A multi-head prediction: ``mean`` Σ_h u_h m_h (q,), its band ``std`` (q,), the heads' own
    ``head_means`` and ``head_stds`` (H, q) and their weights (H, q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    head_means: np.ndarray
    head_stds: np.ndarray
    weights: np.ndarray | None


def _prepare(queries: object, keys: object, values: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = vector("queries", queries), vector("keys", keys), vector("values", values)
    if k.shape != v.shape:
        raise ValueError(f"keys and values must have the same length, got {k.shape[0]} and {v.shape[0]}")
    if k.shape[0] == 0:
        raise ValueError("kernel regression needs at least one (key, value) pair")
    return q, k, v


@jax.jit
def _nw_dense(queries, keys, values, key_mask, lengthscale, kernel):
    return pooling.pool(kernel_scores(queries, keys, lengthscale, kernel), values, key_mask)


@jax.jit
def _nw_path(queries, keys, values, key_mask, lengthscales, kernel):
    def one(ell):
        mean, var, _ = pooling.pool(kernel_scores(queries, keys, ell, kernel), values, key_mask)
        return mean, var

    return jax.lax.map(one, lengthscales)


PATH_BLOCK = 32  # lengthscales of a path are padded to a multiple of this (few compiled shapes)


@float64
def nadaraya_watson_path(queries: object, keys: object, values: object, lengthscales: object,
                         kernel: str = "gaussian") -> tuple[np.ndarray, np.ndarray]:
    """m_ℓ(x) and s_ℓ(x) of ``nadaraya_watson`` for every ℓ in ``lengthscales``, in one compiled call
    (``lax.map`` over ℓ: one ℓ's q × n scores in memory at a time): arrays (L, q), for a figure that
    scrubs through ℓ in the browser."""
    get_kernel(kernel)
    ells = vector("lengthscales", lengthscales)
    if ells.size == 0 or not np.all(ells > 0):
        raise ValueError("lengthscales must be positive")
    q, k, v = _prepare(queries, keys, values)
    nq, nk, count = q.shape[0], k.shape[0], ells.shape[0]
    scale = pooling.value_scale(v)
    mean, var = _nw_path(pad(q, bucket(nq)), pad(k, bucket(nk), k[0]), pad(v / scale, bucket(nk)),
                         np.arange(bucket(nk)) < nk, pad(ells, -(-count // PATH_BLOCK) * PATH_BLOCK, 1.0),
                         kernel_index(kernel))
    return np.asarray(mean)[:count, :nq] * scale, np.sqrt(np.asarray(var)[:count, :nq]) * scale


@partial(jax.jit, static_argnames=("query_block", "key_block"))
def _nw_stream(queries, keys, values, key_mask, lengthscale, kernel, query_block, key_block):
    blocks = (keys.reshape(-1, key_block), values.reshape(-1, key_block), key_mask.reshape(-1, key_block))

    def one_query_block(qs):
        empty = jnp.full(qs.shape, -jnp.inf), *(jnp.zeros(qs.shape),) * 3

        def step(state, blk):
            k, v, m = blk
            block = pooling.summarize(kernel_scores(qs, k, lengthscale, kernel), v, m)
            return pooling.merge(state, block), None

        summary, _ = jax.lax.scan(step, pooling.Summary(*empty), blocks)
        return pooling.finish(summary)

    return pooling.over_query_blocks(one_query_block, queries, query_block, (0, 0))


def _smooth(mean: Array, var: Array, weights: np.ndarray | None, nq: int, scale: float) -> Smooth:
    return Smooth(np.asarray(mean)[:nq] * scale, np.sqrt(np.asarray(var)[:nq]) * scale, weights)


@float64
def nadaraya_watson(
    queries: object,
    keys: object,
    values: object,
    lengthscale: float,
    kernel: str = "gaussian",
    with_weights: bool = True,
    *,
    stream: bool | None = None,
    query_block: int = QUERY_BLOCK,
    key_block: int = KEY_BLOCK,
) -> Smooth:
    """Nadaraya–Watson regression m(x) = Σ_i softmax_i(log K((x − x_i)/ℓ)) y_i with its local std s(x).

    ``with_weights=True`` also returns the (q, n) weights w_i(x) (rows sum to 1, or are all 0 for an empty
    window). ``with_weights=False`` never builds that matrix for more than ``DENSE_MAX_KEYS`` keys: it
    streams over key blocks (force either path with ``stream``).
    """
    get_kernel(kernel)
    ell = check_lengthscale(lengthscale)
    q, k, v = _prepare(queries, keys, values)
    nq, nk = q.shape[0], k.shape[0]
    if nq == 0:
        return Smooth(np.zeros(0), np.zeros(0), np.zeros((0, nk)) if with_weights else None)
    if with_weights and stream:
        raise ValueError("the streaming path never forms the weights; ask with_weights=False")
    if with_weights and nq * nk > MAX_WEIGHT_ENTRIES:
        raise ValueError(f"{nq} × {nk} weights would not fit in memory; ask with_weights=False")
    scale = pooling.value_scale(v)
    if stream is None:
        stream = not with_weights and nk > DENSE_MAX_KEYS
    if not stream:
        qp, kp = bucket(nq), bucket(nk)
        mask = np.arange(kp) < nk
        out = _nw_dense(pad(q, qp), pad(k, kp), pad(v / scale, kp), mask, ell, kernel_index(kernel))
        weights = np.asarray(out.weights)[:nq, :nk] if with_weights else None
        return _smooth(out.mean, out.var, weights, nq, scale)
    qb, kb = min(query_block, bucket(nq)), min(key_block, bucket(nk))
    qp, kp = -(-nq // qb) * qb, bucket(-(-nk // kb), 1, 2) * kb
    mean, var = _nw_stream(pad(q, qp), pad(k, kp), pad(v / scale, kp), np.arange(kp) < nk, ell,
                           kernel_index(kernel), qb, kb)
    return _smooth(mean, var, None, nq, scale)


@partial(jax.jit, static_argnames=("with_weights",))
def _heads(queries, keys, values, key_mask, lengthscales, mixing, kernel, with_weights):
    def score(ell, q, k):
        return kernel_scores(q, k, ell, kernel)

    return pooling.multihead(score, lengthscales, queries, keys, values, key_mask, mixing,
                             block=HEADS_QUERY_BLOCK, with_weights=with_weights)


@float64
def predict_heads(
    queries: object,
    x: object,
    y: object,
    lengthscales: object,
    mixing: object,
    kernel: str = "gaussian",
    with_weights: bool = True,
) -> HeadsPrediction:
    """Multi-head kernel regression at ``queries``: f̂(x) = Σ_h u_h m_h(x) with its band (``pooling.mix``).

    Each head is a Nadaraya–Watson smoother m_h with lengthscale ℓ_h. The band pools the heads' weights by
    |u_h|: s²(x) = Σ_i w̄_i(x) (y_i − f̂(x))², w̄ = Σ_h |u_h| w_h / Σ_h |u_h|. Where a head with u_h ≠ 0 has
    an empty window the mixture is NaN, like the head. ``weights`` is (H, q, n), or None with
    ``with_weights=False``.
    """
    k = get_kernel(kernel)
    q, xs, ys = _prepare(queries, x, y)
    ell, u = vector("lengthscales", lengthscales), vector("mixing", mixing)
    h = ell.shape[0]
    if not 1 <= h <= HEADS_MAX or u.shape != ell.shape:
        raise ValueError(f"give 1 … {HEADS_MAX} lengthscales and as many mixing weights")
    if not np.all(ell > 0):
        raise ValueError("lengthscales must be positive")
    nq, n = q.shape[0], xs.shape[0]
    qp, kp = bucket(nq), bucket(n)
    scale = pooling.value_scale(ys)
    mean, var, hm, hv, *w = _heads(
        pad(q, qp), pad(xs, kp, xs[0]), pad(ys / scale, kp), np.arange(kp) < n, pad(ell, HEADS_MAX, 1.0),
        pad(u, HEADS_MAX), kernel_index(k.name), with_weights=bool(with_weights),
    )
    return HeadsPrediction(
        mean=np.asarray(mean)[:nq] * scale,
        std=np.sqrt(np.asarray(var)[:nq]) * scale,
        head_means=np.asarray(hm)[:h, :nq] * scale,
        head_stds=np.sqrt(np.asarray(hv)[:h, :nq]) * scale,
        weights=np.array(np.asarray(w[0])[:h, :nq, :n]) if w else None,
    )


def knn_scores(queries: Array, keys: Array, key_mask: Array, k: Array) -> Array:
    """The k-NN score of every query × key pair, (q, n): 0 on the k nearest available keys (ties broken by
    position), −∞ elsewhere, so the softmax gives each of them weight 1/k."""
    dist = jnp.where(key_mask[None, :], jnp.abs(queries[:, None] - keys[None, :]), jnp.inf)
    order = jnp.argsort(dist, axis=1, stable=True)
    rows = jnp.arange(order.shape[0])[:, None]
    rank = jnp.zeros_like(order).at[rows, order].set(jnp.arange(order.shape[1]))
    return jnp.where(rank < k, 0.0, -jnp.inf)


@jax.jit
def _knn(queries, keys, values, key_mask, k):
    return pooling.pool(knn_scores(queries, keys, key_mask, k), values, key_mask)


@float64
def knn_average(queries: object, keys: object, values: object, k: int) -> Smooth:
    """k-nearest-neighbour averaging: m(x) = (1/k) Σ_{i ∈ N_k(x)} y_i, the boxcar whose width adapts to x.

    Attention pooling with the score 0 on the k nearest keys and −∞ elsewhere (``knn_scores``), so std and
    weights follow the same formulas as ``nadaraya_watson``; k is clipped to 1…n.
    """
    q, keys_, v = _prepare(queries, keys, values)
    n, nq = keys_.shape[0], q.shape[0]
    kk = int(min(max(int(k), 1), n))
    size, qsize = bucket(n), bucket(nq)
    mask = np.arange(size) < n
    scale = pooling.value_scale(v)
    out = _knn(pad(q, qsize, q[0]), pad(keys_, size, keys_[0]), pad(v / scale, size), mask, kk)
    mean, var, w = (np.asarray(a)[:nq] for a in out)
    return Smooth(mean * scale, np.sqrt(var) * scale, w[:, :n])
