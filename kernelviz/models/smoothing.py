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
The adapter (``kernelviz.runtime.serve``) pads shapes to buckets with masks, so a slider never changes a
compiled shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel, kernel_index, kernel_scores
from kernelviz.runtime import serve
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import check_lengthscale, param, vector

__all__ = [
    "HEADS_MAX",
    "HeadsPrediction",
    "Smooth",
    "heads_model",
    "kernel_scores",
    "knn_average",
    "knn_model",
    "knn_scores",
    "nadaraya_watson",
    "nadaraya_watson_model",
    "nadaraya_watson_path",
    "nadaraya_watson_streamed",
    "path_model",
    "predict_heads",
    "streamed_model",
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


def nadaraya_watson_model(queries: Array, keys: Array, values: Array, available: Array, lengthscale: Array,
                          kernel: Array) -> pooling.Pooled:
    """Nadaraya–Watson at every query x: the score of key x_i is s_i(x) = log K((x − x_i)/ℓ), the weights
    w_i(x) are the softmax of the scores over the available keys, and

        m(x) = Σ_i w_i(x) y_i,    s²(x) = Σ_i w_i(x) (y_i − m(x))²."""
    scores = kernel_scores(queries, keys, lengthscale, kernel)
    return pooling.pool(scores, values, available)


def path_model(queries: Array, keys: Array, values: Array, available: Array, lengthscales: Array,
               kernel: Array) -> pooling.Pooled:
    """m_ℓ(x) and s²_ℓ(x) of ``nadaraya_watson_model`` for every ℓ of ``lengthscales``, (L, q) each."""

    def one(ell: Array) -> pooling.Pooled:
        pooled = nadaraya_watson_model(queries, keys, values, available, ell, kernel)
        return pooling.Pooled(mean=pooled.mean, var=pooled.var)

    return jax.lax.map(one, lengthscales)  # one ℓ's q × n weights in memory at a time


def heads_model(queries: Array, keys: Array, values: Array, available: Array, lengthscales: Array,
                mixing: Array, kernel: Array, with_weights: bool) -> pooling.Pooled:
    """Multi-head kernel regression: head h is ``nadaraya_watson_model`` with ℓ_h, and the heads mix as
    f̂(x) = Σ_h u_h m_h(x), its band s²(x) = Σ_i w̄_i(x) (y_i − f̂(x))² with w̄ = Σ_h |u_h| w_h / Σ_h |u_h|
    (``pooling.mix``). Returns f̂ and s² as mean and var, the heads' m_h and s²_h, and their weights with
    ``with_weights``."""

    def score(ell: Array, q: Array, k: Array) -> Array:
        return kernel_scores(q, k, ell, kernel)

    return pooling.multihead(score, lengthscales, queries, keys, values, available, mixing,
                             block=HEADS_QUERY_BLOCK, with_weights=with_weights)


PATH_BLOCK = 32  # lengthscales of a path are padded to a multiple of this (few compiled shapes)


@float64
def nadaraya_watson_path(queries: object, keys: object, values: object, lengthscales: object,
                         kernel: str = "gaussian") -> tuple[np.ndarray, np.ndarray]:
    """m_ℓ(x) and s_ℓ(x) of ``nadaraya_watson`` for every ℓ in ``lengthscales``, in one compiled call
    (``path_model``): arrays (L, q), for a figure that scrubs through ℓ in the browser."""
    get_kernel(kernel)
    ells = vector("lengthscales", lengthscales)
    if ells.size == 0 or not np.all(ells > 0):
        raise ValueError("lengthscales must be positive")
    p = serve.problem(queries, keys, values)
    out = serve.read(serve.over(path_model, p, serve.Grid(ells, PATH_BLOCK), kernel_index(kernel)), p,
                     model=path_model)
    return out.mean, out.std


def streamed_model(queries: Array, keys: Array, values: Array, available: Array, lengthscale: Array,
                   kernel: Array, *, sizes: tuple[int, int]) -> pooling.Pooled:
    """(m, s²) of ``nadaraya_watson_model`` at every query, the keys pooled in blocks (``pooling.summarize``)
    merged exactly (``pooling.merge``); ``sizes`` = (query block, key block), the keys a whole number of
    key blocks."""
    query_block, key_block = sizes
    blocks = (keys.reshape(-1, key_block), values.reshape(-1, key_block), available.reshape(-1, key_block))

    def one_query_block(qs):
        empty = jnp.full(qs.shape, -jnp.inf), *(jnp.zeros(qs.shape),) * 3

        def step(state, blk):
            k, v, m = blk
            block = pooling.summarize(kernel_scores(qs, k, lengthscale, kernel), v, m)
            return pooling.merge(state, block), None

        summary, _ = jax.lax.scan(step, pooling.Summary(*empty), blocks)
        return pooling.finish(summary)

    mean, var = pooling.over_query_blocks(one_query_block, queries, query_block, (0, 0))
    return pooling.Pooled(mean=mean, var=var)


def nadaraya_watson_streamed(p: serve.Problem, lengthscale: float, kernel: str,
                             query_block: int = QUERY_BLOCK, key_block: int = KEY_BLOCK) -> Smooth:
    """``nadaraya_watson_model`` for many keys without its weights: key blocks pooled one at a time and
    merged exactly (``pooling.summarize``, ``pooling.merge``: a running log-sum-exp), so memory stays
    O(query block × key block) (``streamed_model``, served by ``serve.streamed``)."""
    out = serve.streamed(streamed_model, p, lengthscale, kernel_index(kernel), query_block=query_block,
                         key_block=key_block)
    return Smooth(out.mean, out.std, None)


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
    """Nadaraya–Watson regression m(x) = Σ_i softmax_i(log K((x − x_i)/ℓ)) y_i with its local std s(x)
    (``nadaraya_watson_model``, served by ``kernelviz.runtime.serve``).

    ``with_weights=True`` also returns the (q, n) weights w_i(x) (rows sum to 1, or are all 0 for an empty
    window). ``with_weights=False`` never builds that matrix for more than ``DENSE_MAX_KEYS`` keys: it
    streams over key blocks (``nadaraya_watson_streamed``; force either path with ``stream``).
    """
    get_kernel(kernel)
    ell = check_lengthscale(lengthscale)
    p = serve.problem(queries, keys, values)
    if p.nq == 0:
        return Smooth(np.zeros(0), np.zeros(0), np.zeros((0, p.nk)) if with_weights else None)
    if with_weights and stream:
        raise ValueError("the streaming path never forms the weights; ask with_weights=False")
    if with_weights and p.nq * p.nk > MAX_WEIGHT_ENTRIES:
        raise ValueError(f"{p.nq} × {p.nk} weights would not fit in memory; ask with_weights=False")
    if stream or (stream is None and not with_weights and p.nk > DENSE_MAX_KEYS):
        return nadaraya_watson_streamed(p, ell, kernel, query_block, key_block)
    out = serve.serve(nadaraya_watson_model, p, ell, kernel_index(kernel), weights=with_weights)
    return Smooth(out.mean, out.std, out.weights)


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
    """Multi-head kernel regression at ``queries``: f̂(x) = Σ_h u_h m_h(x) with its band (``heads_model``,
    served by ``kernelviz.runtime.serve``). Where a head with u_h ≠ 0 has an empty window the mixture is
    NaN, like the head. ``weights`` is (H, q, n), or None with ``with_weights=False``.
    """
    k = get_kernel(kernel)
    ell, u = vector("lengthscales", lengthscales), vector("mixing", mixing)
    h = ell.shape[0]
    if not 1 <= h <= HEADS_MAX or u.shape != ell.shape:
        raise ValueError(f"give 1 … {HEADS_MAX} lengthscales and as many mixing weights")
    if not np.all(ell > 0):
        raise ValueError("lengthscales must be positive")
    p = serve.problem(queries, x, y)
    out = serve.serve(heads_model, p, param(ell, HEADS_MAX, 1.0), param(u, HEADS_MAX), kernel_index(k.name),
                      heads=h, static={"with_weights": bool(with_weights)})
    return HeadsPrediction(out.mean, out.std, out.head_means, out.head_stds, out.weights)


def knn_scores(queries: Array, keys: Array, key_mask: Array, k: Array) -> Array:
    """The k-NN score of every query × key pair, (q, n): 0 on the k nearest available keys (ties broken by
    position), −∞ elsewhere, so the softmax gives each of them weight 1/k."""
    dist = jnp.where(key_mask[None, :], jnp.abs(queries[:, None] - keys[None, :]), jnp.inf)
    order = jnp.argsort(dist, axis=1, stable=True)
    rows = jnp.arange(order.shape[0])[:, None]
    rank = jnp.zeros_like(order).at[rows, order].set(jnp.arange(order.shape[1]))
    return jnp.where(rank < k, 0.0, -jnp.inf)


def knn_model(queries: Array, keys: Array, values: Array, available: Array, k: Array) -> pooling.Pooled:
    """k-nearest-neighbour averaging as attention pooling: score 0 on the k nearest available keys and −∞
    elsewhere (``knn_scores``), so each of them gets weight 1/k: m(x) = (1/k) Σ_{i ∈ N_k(x)} y_i."""
    return pooling.pool(knn_scores(queries, keys, available, k), values, available)


@float64
def knn_average(queries: object, keys: object, values: object, k: int) -> Smooth:
    """k-nearest-neighbour averaging (``knn_model``, served by ``kernelviz.runtime.serve``): the boxcar
    whose width adapts to x; std and weights follow the same formulas as ``nadaraya_watson``. k is clipped
    to 1 … n."""
    p = serve.problem(queries, keys, values)
    out = serve.serve(knn_model, p, int(min(max(int(k), 1), p.nk)))
    return Smooth(out.mean, out.std, out.weights)
