"""Leave-one-out cross-validation of the Nadaraya–Watson smoother: one loss for the curve, the optimum and
d2l's parametric fit.

    CV(ℓ) = (1/n) Σ_i (y_i − m_{−i}(x_i; ℓ))²,   m_{−i} the smoother fitted without point i,

computed as attention pooling (``kernelviz.pooling``) of every point against all the others (its own key
masked out). In d2l's parametrisation w = 1/ℓ the scaled distance is (x_i − x_j)·w, which is what
``loo_loss`` takes, so d2l's training differentiates in w exactly as d2l does.

Where some point's window holds no other point (compact kernels at small ℓ), m_{−i} is undefined and
CV(ℓ) = +∞: the optimum is always a lengthscale at which every point can be predicted from the others.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz import pooling
from kernelviz.kernels import get_kernel, kernel_index, log_kernel
from kernelviz.shapes import bucket, pad, vector

__all__ = ["loo_bounds", "loo_curve", "loo_lengthscale", "loo_loss"]

LOO_BLOCK = 64  # candidate lengthscales evaluated per compiled call


def loo_loss(w: Array, x: Array, y: Array, mask: Array, kernel: str | Array,
             outside: float = -jnp.inf) -> Array:
    """(1/n) Σ_i (y_i − Σ_{j≠i} softmax_j(log K((x_i − x_j) w)) y_j)² over the n real points (``mask``).

    With ``outside`` = −∞ (the curve) a point with an empty window makes the loss +∞; inside training a
    finite ``outside`` gives such a point the plain mean of the others instead (finite loss and gradient).
    """
    n = jnp.sum(mask)
    available = mask[None, :] & ~jnp.eye(x.shape[0], dtype=bool)
    scores = log_kernel((x[:, None] - x[None, :]) * w, kernel, outside)
    mean, _, _ = pooling.pool(scores, y, available)
    err = jnp.where(mask, jnp.square(mean - y), 0.0)
    return jnp.where(jnp.any(jnp.isnan(err)), jnp.inf, jnp.sum(err) / n)


@jax.jit
def _loo_cv(x, y, mask, lengthscales, kernel):
    return jax.lax.map(lambda ell: loo_loss(1.0 / ell, x, y, mask, kernel), lengthscales)


def _data(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = vector("x", x), vector("y", y)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same length, got {xs.shape[0]} and {ys.shape[0]}")
    if xs.shape[0] < 2:
        raise ValueError("leave-one-out needs at least two points")
    return xs, ys


def loo_curve(x: object, y: object, lengthscales: object, kernel: str = "gaussian") -> np.ndarray:
    """CV(ℓ) for each ℓ in ``lengthscales``: the mean squared leave-one-out error (+∞ for an empty window)."""
    get_kernel(kernel)
    xs, ys = _data(x, y)
    ells = np.asarray(lengthscales, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(ells) & (ells > 0)):
        raise ValueError("lengthscales must be finite positive numbers")
    n = xs.shape[0]
    size = bucket(n)
    scale = pooling.value_scale(ys)
    mask = np.arange(size) < n
    xp, yp = pad(xs, size, xs[0]), pad(ys / scale, size)
    count = ells.shape[0]
    padded = pad(ells, -(-count // LOO_BLOCK) * LOO_BLOCK, 1.0)
    out = [
        np.asarray(_loo_cv(xp, yp, mask, padded[i : i + LOO_BLOCK], kernel_index(kernel)))
        for i in range(0, padded.shape[0], LOO_BLOCK)
    ]
    return np.concatenate(out)[:count] * scale**2


def loo_bounds(x: object) -> tuple[float, float]:
    """A lengthscale range that brackets every interesting ℓ: a tenth of the smallest gap to 10 × the span."""
    xs = np.unique(vector("x", x))
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
    xs, ys = _data(x, y)
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
        if not np.isfinite(cv[best]):
            raise ValueError("no lengthscale lets every point be predicted from the others")
        grid = np.geomspace(grid[max(best - 1, 0)], grid[min(best + 1, grid.shape[0] - 1)], 128)
    cv = loo_curve(xs, ys, grid, kernel)
    return float(grid[int(np.argmin(cv))])
