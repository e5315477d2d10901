"""Nadaraya–Watson kernel regression: the prediction, its local ±2σ band and the weights behind both.

For queries x, keys x_i and values y_i,

    w_i(x) = K((x − x_i)/ℓ) / Σ_j K((x − x_j)/ℓ) = softmax_i(log K((x − x_i)/ℓ))
    m(x)   = Σ_i w_i(x) y_i                        (the fit)
    s²(x)  = Σ_i w_i(x) (y_i − m(x))²              (kernel-weighted local variance: band m ± 2s)

A query whose window holds no key (possible with compact kernels) has no defined prediction: its mean and
std are NaN and its weight row is zero. Nothing else is ever NaN or infinite, for any ℓ > 0 and finite data.

Two paths compute the same numbers:

* dense: the (q, n) weight matrix at once, for the heatmaps and for small data;
* streaming: key blocks visited by ``lax.scan`` with a running log-sum-exp and a running weighted
  mean/variance merge (the FlashAttention trick), so memory is O(query block × key block), never O(q × n).

Shapes are padded to power-of-two buckets with masks, so a slider never changes a compiled shape.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.kernels import get_kernel, kernel_index, log_kernel

__all__ = [
    "Smooth",
    "knn_average",
    "loo_curve",
    "loo_lengthscale",
    "nadaraya_watson",
]

DENSE_MAX_KEYS = 4096  # with_weights=False above this many keys takes the streaming path
MAX_WEIGHT_ENTRIES = 50_000_000  # q × n above this (400 MB of float64) must use with_weights=False
QUERY_BLOCK = 256
KEY_BLOCK = 4096


class Smooth(NamedTuple):
    """A Nadaraya–Watson prediction: mean m(x), local std s(x) (shape (q,)) and weights (q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    weights: np.ndarray | None


MIN_BUCKET = 256  # the smallest padded size: every data set of up to 256 points shares one set of programs
BUCKET_GROWTH = 4  # padded sizes 256, 1024, 4096, …


def bucket(n: int, minimum: int = MIN_BUCKET, growth: int = BUCKET_GROWTH) -> int:
    """The padded size for n items: the smallest ``minimum`` · growthᵏ (k = 0, 1, …) that holds n.

    Each padded size costs one compiled program per function (tens of MB of machine code for the
    training loops), so there are few of them: the teaching sizes (10 … 256 points, both built-in data
    sets) share the first; padding a small problem costs microseconds, and a larger one at most
    ``growth`` times the work on the real size.
    """
    size = max(minimum, 1)
    while size < n:
        size *= growth
    return size


def _pad(a: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.float64)
    out[: a.shape[0]] = a
    return out


def _as_vector(name: str, a: object) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite numbers; found NaN or infinity")
    return arr


def check_lengthscale(lengthscale: float) -> float:
    """ℓ as a float, or a ValueError for anything that is not a finite positive number."""
    ell = float(lengthscale)
    if not (math.isfinite(ell) and ell > 0):
        raise ValueError(f"the lengthscale must be a finite positive number, not {lengthscale!r}")
    return ell


def softmax_rows(logits: Array) -> Array:
    """Row-wise softmax that leaves a row of all −∞ (an empty window) as a row of zeros."""
    top = jnp.max(logits, axis=-1, keepdims=True)
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    e = jnp.exp(logits - top)
    total = jnp.sum(e, axis=-1, keepdims=True)
    return e / jnp.where(total > 0, total, 1.0)


def weighted_moments(weights: Array, values: Array) -> tuple[Array, Array]:
    """m = Σ w_i y_i and s = sqrt(Σ w_i (y_i − m)²) per row; NaN where a row's weights are all zero."""
    empty = jnp.sum(weights, axis=-1) <= 0
    mean = weights @ values
    var = jnp.sum(weights * jnp.square(values[None, :] - mean[:, None]), axis=-1)
    nan = jnp.nan
    return jnp.where(empty, nan, mean), jnp.where(empty, nan, jnp.sqrt(jnp.maximum(var, 0.0)))


def scaled_logits(queries: Array, keys: Array, key_mask: Array, lengthscale: Array, kernel: Array) -> Array:
    """log K((x − x_i)/ℓ) for every query × key pair, −∞ on padded keys."""
    u = (queries[:, None] - keys[None, :]) / lengthscale
    return jnp.where(key_mask[None, :], log_kernel(u, kernel), -jnp.inf)


def _value_scale(values: Array, key_mask: Array) -> Array:
    """max |y| over the real keys (1 when all are 0): values are divided by it so y² cannot overflow."""
    top = jnp.max(jnp.where(key_mask, jnp.abs(values), 0.0))
    return jnp.where(top > 0, top, 1.0)


def in_query_blocks(fn, queries: Array, block: int, query_axes: tuple[int, ...]) -> tuple:
    """``fn`` over consecutive blocks of ``block`` queries (``lax.map``), outputs stitched back together.

    ``fn(q_block)`` returns a tuple of arrays; output i has its query axis at ``query_axes[i]`` (0 for a
    (q,) vector, 1 for an (H, q, n) head stack), and comes back with the full query axis there. So a
    computation over (H, q, n) needs memory for (H, block, n) temporaries only, besides what it returns.
    """
    outs = jax.lax.map(fn, queries.reshape(-1, block))

    def stitch(o: Array, axis: int) -> Array:
        o = jnp.moveaxis(o, 0, axis)  # the block axis just before the within-block query axis
        return o.reshape(*o.shape[:axis], -1, *o.shape[axis + 2 :])

    return tuple(stitch(o, axis) for o, axis in zip(outs, query_axes, strict=True))


@jax.jit
def _nw_dense(queries, keys, values, key_mask, lengthscale, kernel):
    scale = _value_scale(values, key_mask)
    w = softmax_rows(scaled_logits(queries, keys, key_mask, lengthscale, kernel))
    mean, std = weighted_moments(w, jnp.where(key_mask, values / scale, 0.0))
    return mean * scale, std * scale, w


def _merge(state, block):
    """Merge two weighted summaries (log-scale max, weight, mean, M2) of disjoint key sets."""
    m1, w1, mu1, q1 = state
    m2, w2, mu2, q2 = block
    m = jnp.maximum(m1, m2)
    a = w1 * jnp.exp(jnp.where(jnp.isfinite(m1), m1 - m, -jnp.inf))
    b = w2 * jnp.exp(jnp.where(jnp.isfinite(m2), m2 - m, -jnp.inf))
    total = a + b
    safe = jnp.where(total > 0, total, 1.0)
    delta = mu2 - mu1
    mu = jnp.where(total > 0, mu1 + delta * b / safe, 0.0)
    q1s = q1 * jnp.where(w1 > 0, a / jnp.where(w1 > 0, w1, 1.0), 0.0)
    q2s = q2 * jnp.where(w2 > 0, b / jnp.where(w2 > 0, w2, 1.0), 0.0)
    q = q1s + q2s + jnp.square(delta) * a * b / safe
    return m, total, mu, q


def _block_summary(logits: Array, values: Array):
    """(max log-kernel, Σw, weighted mean, Σw(y − mean)²) of one key block, w = exp(logit − max)."""
    m = jnp.max(logits, axis=-1)
    e = jnp.exp(logits - jnp.where(jnp.isfinite(m), m, 0.0)[:, None])
    w = jnp.sum(e, axis=-1)
    safe = jnp.where(w > 0, w, 1.0)
    mu = (e @ values) / safe
    q = jnp.sum(e * jnp.square(values[None, :] - mu[:, None]), axis=-1)
    return m, w, mu, q


@partial(jax.jit, static_argnames=("query_block", "key_block"))
def _nw_stream(queries, keys, values, key_mask, lengthscale, kernel, query_block, key_block):
    scale = _value_scale(values, key_mask)
    values = jnp.where(key_mask, values / scale, 0.0)
    kb = keys.reshape(-1, key_block)
    vb = values.reshape(-1, key_block)
    mb = key_mask.reshape(-1, key_block)

    def one_query_block(qs):
        init = (
            jnp.full(qs.shape, -jnp.inf),
            jnp.zeros(qs.shape),
            jnp.zeros(qs.shape),
            jnp.zeros(qs.shape),
        )

        def step(state, blk):
            k, v, mask = blk
            return _merge(state, _block_summary(scaled_logits(qs, k, mask, lengthscale, kernel), v)), None

        (_, w, mu, q), _ = jax.lax.scan(step, init, (kb, vb, mb))
        empty = w <= 0
        var = q / jnp.where(empty, 1.0, w)
        return (
            jnp.where(empty, jnp.nan, mu * scale),
            jnp.where(empty, jnp.nan, jnp.sqrt(jnp.maximum(var, 0.0)) * scale),
        )

    mean, std = jax.lax.map(one_query_block, queries.reshape(-1, query_block))
    return mean.reshape(-1), std.reshape(-1)


def _prepare(queries: object, keys: object, values: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = _as_vector("queries", queries)
    k = _as_vector("keys", keys)
    v = _as_vector("values", values)
    if k.shape != v.shape:
        raise ValueError(f"keys and values must have the same length, got {k.shape[0]} and {v.shape[0]}")
    if k.shape[0] == 0:
        raise ValueError("kernel regression needs at least one (key, value) pair")
    return q, k, v


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
        empty = np.zeros(0)
        return Smooth(empty, empty, np.zeros((0, nk)) if with_weights else None)
    if with_weights and stream:
        raise ValueError("the streaming path never forms the weights; ask with_weights=False")
    if stream is None:
        stream = not with_weights and nk > DENSE_MAX_KEYS
    if not stream:
        if with_weights and nq * nk > MAX_WEIGHT_ENTRIES:
            raise ValueError(
                f"{nq} × {nk} weights would not fit in memory; ask with_weights=False for the prediction"
            )
        qp, kp = bucket(nq), bucket(nk)
        mask = np.arange(kp) < nk
        mean, std, w = _nw_dense(_pad(q, qp), _pad(k, kp), _pad(v, kp), mask, ell, kernel_index(kernel))
        weights = np.asarray(w)[:nq, :nk] if with_weights else None
        return Smooth(np.asarray(mean)[:nq], np.asarray(std)[:nq], weights)
    qb = min(query_block, bucket(nq))
    kb = min(key_block, bucket(nk))
    qp = -(-nq // qb) * qb
    kp = bucket(-(-nk // kb), 1, 2) * kb
    mask = np.arange(kp) < nk
    mean, std = _nw_stream(_pad(q, qp), _pad(k, kp), _pad(v, kp), mask, ell, kernel_index(kernel), qb, kb)
    return Smooth(np.asarray(mean)[:nq], np.asarray(std)[:nq], None)


def knn_average(queries: object, keys: object, values: object, k: int) -> Smooth:
    """k-nearest-neighbour averaging: m(x) = (1/k) Σ_{i ∈ N_k(x)} y_i, the boxcar whose width adapts to x.

    Weights are 1/k on the k nearest keys (ties broken by position), so std and weights follow the same
    formulas as ``nadaraya_watson``; k is clipped to 1…n.
    """
    q, keys_, v = _prepare(queries, keys, values)
    kk = int(min(max(int(k), 1), keys_.shape[0]))
    order = np.argsort(np.abs(q[:, None] - keys_[None, :]), axis=1, kind="stable")[:, :kk]
    w = np.zeros((q.shape[0], keys_.shape[0]))
    np.put_along_axis(w, order, 1.0 / kk, axis=1)
    mean = w @ v
    std = np.sqrt(np.maximum((w * (v[None, :] - mean[:, None]) ** 2).sum(axis=1), 0.0))
    return Smooth(mean, std, w)


# ---------------------------------------------------------------------------------------------------------
# Leave-one-out cross-validation
#
#     CV(ℓ) = (1/n) Σ_i (y_i − m_{−i}(x_i; ℓ))²,  m_{−i} the smoother fitted without point i.
#
# Where some point's window holds no other point (compact kernels at small ℓ), m_{−i} is undefined and
# CV(ℓ) = +∞: the optimum is always a lengthscale at which every point can be predicted from the others.
# ---------------------------------------------------------------------------------------------------------

LOO_BLOCK = 64  # candidate lengthscales evaluated per compiled call


@jax.jit
def _loo_cv(x, y, mask, lengthscales, kernel):
    n = jnp.sum(mask)
    scale = _value_scale(y, mask)
    ys = jnp.where(mask, y / scale, 0.0)
    keep = mask[:, None] & mask[None, :] & ~jnp.eye(x.shape[0], dtype=bool)
    diff = x[:, None] - x[None, :]

    def one(ell):
        logits = jnp.where(keep, log_kernel(diff / ell, kernel), -jnp.inf)
        w = softmax_rows(logits)
        pred = w @ ys
        empty = (jnp.sum(w, axis=-1) <= 0) & mask
        err = jnp.sum(jnp.where(mask, jnp.square(pred - ys), 0.0)) / n
        return jnp.where(jnp.any(empty), jnp.inf, err * scale * scale)

    return jax.lax.map(one, lengthscales)


def loo_curve(x: object, y: object, lengthscales: object, kernel: str = "gaussian") -> np.ndarray:
    """CV(ℓ) for each ℓ in ``lengthscales``: the mean squared leave-one-out error (+∞ for an empty window)."""
    get_kernel(kernel)
    _, xs, ys = _prepare([], x, y)
    if xs.shape[0] < 2:
        raise ValueError("leave-one-out needs at least two points")
    ells = np.asarray(lengthscales, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(ells) & (ells > 0)):
        raise ValueError("lengthscales must be finite positive numbers")
    n = xs.shape[0]
    size = bucket(n)
    mask = np.arange(size) < n
    xp, yp = _pad(xs, size), _pad(ys, size)
    count = ells.shape[0]
    padded = np.ones(-(-count // LOO_BLOCK) * LOO_BLOCK)
    padded[:count] = ells
    out = [
        np.asarray(_loo_cv(xp, yp, mask, padded[i : i + LOO_BLOCK], kernel_index(kernel)))
        for i in range(0, padded.shape[0], LOO_BLOCK)
    ]
    return np.concatenate(out)[:count]


def loo_bounds(x: object) -> tuple[float, float]:
    """A lengthscale range that brackets every interesting ℓ: a tenth of the smallest gap to 10 × the span."""
    xs = np.unique(_as_vector("x", x))
    if xs.shape[0] < 2:
        raise ValueError("leave-one-out needs at least two distinct x values")
    span = float(xs[-1] - xs[0])
    gap = float(np.min(np.diff(xs)))
    return max(gap / 10.0, span * 1e-9), span * 10.0


BOXCAR_EXACT_MAX = 20_000  # distinct pairwise distances evaluated one by one for the boxcar kernel


def loo_lengthscale(x: object, y: object, kernel: str = "gaussian") -> float:
    """The ℓ that minimises CV(ℓ), the exact leave-one-out error of the smoother.

    A log-spaced grid over ``loo_bounds(x)`` finds the best basin, then two finer grids around the best
    point refine it to a relative step of about 3e-5. The boxcar kernel's CV(ℓ) is piecewise constant,
    changing only where ℓ crosses a pairwise distance |x_i − x_j|; there every such distance is a candidate
    and the answer is the geometric middle of the best interval.
    """
    get_kernel(kernel)
    _, xs, ys = _prepare([], x, y)
    lo, hi = loo_bounds(xs)
    if not get_kernel(kernel).differentiable:
        dist = np.unique(np.abs(xs[:, None] - xs[None, :])[np.triu_indices(xs.shape[0], 1)])
        dist = dist[dist > 0]
        if dist.shape[0] <= BOXCAR_EXACT_MAX:
            cv = loo_curve(xs, ys, dist, kernel)
            best = int(np.argmin(cv))
            upper = dist[best + 1] if best + 1 < dist.shape[0] else dist[best] * 2.0
            return float(math.sqrt(dist[best] * upper))
    grid = np.geomspace(lo, hi, 256)
    for _ in range(3):
        cv = loo_curve(xs, ys, grid, kernel)
        best = int(np.argmin(cv))
        left = grid[max(best - 1, 0)]
        right = grid[min(best + 1, grid.shape[0] - 1)]
        if not np.isfinite(cv[best]):
            raise ValueError("no lengthscale lets every point be predicted from the others")
        grid = np.geomspace(left, right, 128)
    cv = loo_curve(xs, ys, grid, kernel)
    return float(grid[int(np.argmin(cv))])
