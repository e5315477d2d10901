"""Leave-one-out cross-validation of the Nadaraya–Watson smoother: one loss for the curve, the optimum and
d2l's parametric fit.

    CV(ℓ) = (1/n) Σ_i (y_i − m_{−i}(x_i; ℓ))²,   m_{−i} the smoother fitted without point i,

computed as attention pooling (``kernelviz.core.pooling``) of every point against all the others (its own key
masked out). In d2l's parametrisation w = 1/ℓ the scaled distance is (x_i − x_j)·w, which is what
``loo_loss`` takes, so d2l's training differentiates in w exactly as d2l does.

Where some point's window holds no other point (compact kernels at small ℓ), m_{−i} is undefined and
CV(ℓ) = +∞: the optimum is always a lengthscale at which every point can be predicted from the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel, kernel_index, kernel_scores, log_kernel
from kernelviz.runtime import serve, train
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import columns, paired, vector

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
    scores = kernel_scores(x, x, 1.0 / w, kernel, outside)
    mean = pooling.pool(scores, y, available).mean
    err = jnp.where(mask, jnp.square(mean - y), 0.0)
    return jnp.where(jnp.any(jnp.isnan(err)), jnp.inf, jnp.sum(err) / n)


def curve_model(queries: Array, keys: Array, values: Array, available: Array, lengthscales: Array,
                kernel: Array) -> tuple[Array]:
    """CV(ℓ) = (1/n) Σ_i (y_i − m_{−i}(x_i))² (``loo_loss``) for every ℓ of ``lengthscales``: each point, as
    a query, predicted from all the others; the queries are the keys."""
    return (jax.lax.map(lambda ell: loo_loss(1.0 / ell, keys, values, available, kernel), lengthscales),)


def _data(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    return paired(x, y, 2, "leave-one-out needs at least two points")


@float64
def loo_curve(x: object, y: object, lengthscales: object, kernel: str = "gaussian") -> np.ndarray:
    """CV(ℓ) for each ℓ in ``lengthscales``: the mean squared leave-one-out error (+∞ for an empty window)."""
    get_kernel(kernel)
    xs, ys = _data(x, y)
    ells = np.asarray(lengthscales, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(ells) & (ells > 0)):
        raise ValueError("lengthscales must be finite positive numbers")
    p = serve.problem(xs, xs, ys)
    grid = serve.Grid(ells, LOO_BLOCK, chunks=True)
    return serve.over(curve_model, p, grid, kernel_index(kernel))[0] * p.scale**2  # in the data's units²


def loo_bounds(x: object) -> tuple[float, float]:
    """A lengthscale range that brackets every interesting ℓ: a tenth of the smallest gap to 10 × the span."""
    xs = np.unique(vector("x", x))
    if xs.shape[0] < 2:
        raise ValueError("leave-one-out needs at least two distinct x values")
    span = float(xs[-1] - xs[0])
    gap = float(np.min(np.diff(xs)))
    return max(gap / 10.0, span * 1e-9), span * 10.0


# ---------------------------------------------------------------------------------------------------------
# The optimum
# ---------------------------------------------------------------------------------------------------------

GRID_POINTS = 64  # coarse grid of log ℓ over the search range
PAIR_BLOCK = 64  # rows and columns per block of pairs
REFINE_STEPS = 64  # refinement steps at most
LOG_TOL = 1e-10  # refinement stops once log ℓ moves less than this
ZOOM_LEVELS, ZOOM_POINTS = 4, 33  # nested grids for the boxcar beyond the exact sweep
BOXCAR_SWEEP_MAX = 2048  # the boxcar's exact sweep holds n² events in memory


def _cv_blocks(t: Array, x: Array, y: Array, mask: Array, nn: Array, kernel: Array, block: int) -> Array:
    """CV(ℓ = e^t), summed block by block over the real pairs only.

    Every kernel of the zoo decreases with |u|, so the largest score of row i is log K(nn_i/ℓ), nn_i the
    distance from x_i to its nearest other point. Shifting by it,

        e_ij = exp(log K((x_i − x_j)/ℓ) − log K(nn_i/ℓ)) ≤ 1,   m_{−i} = Σ_{j≠i} e_ij y_j / Σ_{j≠i} e_ij,

    so the sums of the column blocks simply add up (no running maximum). The loop visits the ⌈n/B⌉²
    blocks that hold real points (a traced count), so padding costs nothing. +∞ if a window is empty.
    """
    n = jnp.sum(mask)
    blocks = (n + block - 1) // block
    w = jnp.exp(-t)
    top = log_kernel(nn * w, kernel)  # the score of the nearest other point
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    index = jnp.arange(x.shape[0])

    def cut(a: Array, start: Array) -> Array:
        return jax.lax.dynamic_slice_in_dim(a, start, block, axis=-1)

    def add(k: Array, sums: Array) -> Array:
        r, c = (k // blocks) * block, (k % blocks) * block
        pair = cut(mask, c)[None, :] & (cut(index, r)[:, None] != cut(index, c)[None, :])
        score = kernel_scores(cut(x, r), cut(x, c), jnp.exp(t), kernel) - cut(top, r)[:, None]
        e = jnp.where(pair, jnp.exp(score), 0.0)
        part = jnp.stack([jnp.sum(e, axis=1), e @ cut(y, c)])
        return jax.lax.dynamic_update_slice_in_dim(sums, cut(sums, r) + part, r, axis=1)

    mass, total = jax.lax.fori_loop(0, blocks * blocks, add, jnp.zeros((2, x.shape[0]), x.dtype))
    empty = jnp.any(mask & (mass <= 0))
    err = jnp.where(mask, jnp.square(y - total / jnp.where(mass > 0, mass, 1.0)), 0.0)
    return jnp.where(empty, jnp.inf, jnp.sum(err) / n)


Bracket = tuple[Array, Array, Array]  # (left end, right end, best t) of log ℓ


def _best_on_grid(cv: Callable[[Array], Array], a: Array, b: Array, points: int) -> Bracket:
    """CV at ``points`` evenly spaced t in [a, b] (``lax.map``): (left neighbour, right neighbour, best t)."""
    grid = jnp.linspace(a, b, points)
    values = jax.lax.map(cv, grid)
    k = jnp.argmin(jnp.where(jnp.isnan(values), jnp.inf, values))
    return grid[jnp.maximum(k - 1, 0)], grid[jnp.minimum(k + 1, points - 1)], grid[k]


def _newton(cv: Callable[[Array], Array], a: Array, b: Array, t: Array) -> Array:
    """Safeguarded Newton on CV′(t) = 0 inside the bracket [a, b] of log ℓ, from t.

    Each step takes CV′ and CV″ at t (nested forward-mode derivatives: one pass over the pairs), keeps the
    half of the bracket where the minimum lies (left of t when CV′(t) > 0), then moves to t − CV′/CV″ when
    CV″ > 0 and that point lies inside the bracket, else to the bracket's middle (bisection: a kink of a
    compact kernel's CV is found too). Stops when t moves less than ``LOG_TOL``.
    """

    def slope(s: Array) -> tuple[Array, Array]:
        return jax.jvp(lambda u: jax.jvp(cv, (u,), (jnp.ones_like(u),))[1], (s,), (jnp.ones_like(s),))

    def step(state: tuple) -> tuple:
        i, a, b, t, _ = state
        g, h = slope(t)
        a, b = jnp.where(g > 0, a, t), jnp.where(g > 0, t, b)
        newton = t - g / h
        nxt = jnp.where((h > 0) & (newton > a) & (newton < b), newton, 0.5 * (a + b))
        return i + 1, a, b, nxt, jnp.abs(nxt - t)

    def going(state: tuple) -> Array:
        return (state[0] < REFINE_STEPS) & (state[4] > LOG_TOL)

    return jax.lax.while_loop(going, step, (0, a, b, t, jnp.asarray(jnp.inf, t.dtype)))[3]


def _zoom(cv: Callable[[Array], Array], a: Array, b: Array, t: Array) -> Array:
    """For a piecewise constant CV (the boxcar): ``ZOOM_LEVELS`` nested grids of ``ZOOM_POINTS`` t, each
    over the two neighbours of the previous best."""
    def level(_: Array, bracket: Bracket) -> Bracket:
        return _best_on_grid(cv, bracket[0], bracket[1], ZOOM_POINTS)

    return jax.lax.fori_loop(0, ZOOM_LEVELS, level, (a, b, t))[2]


GRID_DTYPE = jnp.float32  # the coarse grid's CV; the refinement runs in the data's float64


def _pair_cv(x: Array, y: Array, mask: Array, nn: Array, kernel: Array, block: int) -> Callable[..., Array]:
    """t ↦ CV(ℓ = e^t) by ``_cv_blocks`` in a given dtype (default: the data's)."""

    def cv(t: Array, dtype: type = x.dtype) -> Array:
        return _cv_blocks(t.astype(dtype), *(a.astype(dtype) for a in (x, y)), mask, nn.astype(dtype), kernel,
                          block)

    return cv


def _refined(cv_grid: Callable[[Array], Array], cv: Callable[[Array], Array], bounds: Array,
             smooth: bool) -> tuple[Array, Array]:
    """(t*, CV(t*)): the best of ``GRID_POINTS`` evenly spaced t = log ℓ over ``bounds`` by ``cv_grid``, then
    ``_newton`` (``smooth``) or ``_zoom`` by ``cv`` between its two neighbours."""
    coarse = _best_on_grid(cv_grid, jnp.log(bounds[0]), jnp.log(bounds[1]), GRID_POINTS)
    t = (_newton if smooth else _zoom)(cv, *coarse)
    return t, cv(t)


def _optimum(x: Array, y: Array, mask: Array, nn: Array, bounds: Array, kernel: Array, *,
             smooth: bool) -> tuple[Array, Array]:
    """(log ℓ*, CV(ℓ*)) by ``_refined``: the grid's CV in ``GRID_DTYPE``, the pairs in blocks of
    ``PAIR_BLOCK`` (``tests/reference/plain_loo.py`` holds the plain form, float64 and one block); compiled
    by ``kernelviz.runtime.train.call`` (``lean_jit``), ``smooth`` static."""
    cv = _pair_cv(x, y, mask, nn, kernel, min(PAIR_BLOCK, x.shape[0]))
    return _refined(partial(cv, dtype=GRID_DTYPE), cv, bounds, smooth)


def _nearest(xs: np.ndarray) -> np.ndarray:
    """nn_i = min_{j≠i} |x_i − x_j| (0 for a repeated x)."""
    order = np.argsort(xs, kind="stable")
    gaps = np.diff(xs[order])
    nn = np.empty_like(xs)
    nn[order] = np.minimum(np.r_[np.inf, gaps], np.r_[gaps, np.inf])
    return nn


class _Padded(NamedTuple):
    """The search's data: x shifted and divided by its span, y by max |y|, padded to a bucket
    (``shapes.columns``)."""

    x: np.ndarray
    y: np.ndarray
    mask: np.ndarray
    nn: np.ndarray
    bounds: np.ndarray
    span: float
    scale: float


def _padded(xs: np.ndarray, ys: np.ndarray, kernel: str) -> _Padded:
    """The search's data (CV(ℓ; x) = CV(ℓ/s; x/s)) and range: ``loo_bounds(x)``, its lower end raised for
    compact kernels to just above max_i nn_i, below which some window is empty."""
    lo, hi = loo_bounds(xs)
    span, scale = float(np.ptp(xs)), pooling.value_scale(ys)
    nn = _nearest(xs)
    if get_kernel(kernel).compact:
        lo = max(lo, float(nn.max()) * (1.0 + 1e-9))
    c = columns((xs - xs.min()) / span, ys / scale, nn / span)
    (x, y, near), mask = c.arrays, c.mask
    return _Padded(x, y, mask, near, np.array([lo, hi]) / span, span, scale)


def _search(xs: np.ndarray, ys: np.ndarray, kernel: str) -> tuple[float, float]:
    """(ℓ*, CV(ℓ*)) from the compiled search (``_optimum``) on the ``_padded`` data."""
    p = _padded(xs, ys, kernel)
    t, cv = train.call(_optimum, p.x, p.y, p.mask, p.nn, p.bounds, kernel_index(kernel),
                       static={"smooth": get_kernel(kernel).differentiable})
    return p.span * math.exp(float(t)), float(cv) * p.scale**2


def _boxcar_sweep(xs: np.ndarray, ys: np.ndarray) -> float:
    """The boxcar's exact optimum: CV(ℓ) only changes where ℓ crosses a pairwise distance.

    With the others sorted by distance from x_i, d_i(1) ≤ d_i(2) ≤ …, the window |x_i − x_j| ≤ ℓ holds the
    k_i(ℓ) nearest, whose mean is a running mean c_i(k) = (1/k) Σ_{r≤k} y_(r), so

        n CV(ℓ) = Σ_i e_i(k_i(ℓ)),   e_i(k) = (y_i − c_i(k))²,   for ℓ ≥ max_i d_i(1),

    and n CV changes by e_i(k) − e_i(k − 1) when ℓ reaches d_i(k): one sort of the n(n − 1) events and a
    cumulative sum give CV on every interval between distances. The answer is the geometric middle of the
    best interval (twice its start for the last, unbounded one).
    """
    n = xs.shape[0]
    d = np.abs(xs[:, None] - xs[None, :])
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1, kind="stable")[:, :-1]
    dist = np.take_along_axis(d, near, axis=1)
    err = np.square(ys[:, None] - np.cumsum(ys[near], axis=1) / np.arange(1, n))
    when, change = dist[:, 1:].ravel(), np.diff(err, axis=1).ravel()
    order = np.argsort(when, kind="stable")
    when, change = when[order], change[order]
    start = max(float(dist[:, 0].max()), loo_bounds(xs)[0])  # from here on every window holds a point
    edges = np.unique(np.r_[start, when[when > start]])
    level = np.r_[0.0, np.cumsum(change)][np.searchsorted(when, edges, side="right")]
    best = int(np.argmin(level))
    upper = edges[best + 1] if best + 1 < edges.shape[0] else edges[best] * 2.0
    return float(math.sqrt(edges[best] * upper))


@float64
def loo_lengthscale(x: object, y: object, kernel: str = "gaussian") -> float:
    """The ℓ that minimises CV(ℓ), the exact leave-one-out error of the smoother, in one compiled call.

    Search in t = log ℓ: CV at ``GRID_POINTS`` evenly spaced t over ``loo_bounds(x)`` (float32, one pass
    over the pairs per t) picks the best basin; safeguarded Newton steps t ← t − CV′(t)/CV″(t) on float64
    CV inside the two neighbouring grid points then converge to its minimum (``_newton``): quadratically,
    so a handful of passes reach a relative precision of 1e-10 in ℓ, where golden-section or Brent would
    need dozens. The boxcar's CV is piecewise constant: up to ``BOXCAR_SWEEP_MAX`` points it is swept
    exactly (``_boxcar_sweep``); beyond, nested grids (``_zoom``) come close (within a few per cent of the
    best CV in tests) without a guarantee, since a grid can step over a narrow best interval.
    A ValueError when no ℓ lets every point be predicted from the others.
    """
    k = get_kernel(kernel)
    xs, ys = _data(x, y)
    loo_bounds(xs)  # two distinct x values at least
    if not k.differentiable and xs.shape[0] <= BOXCAR_SWEEP_MAX:
        return _boxcar_sweep(xs, ys)
    ell, cv = _search(xs, ys, k.name)
    if not math.isfinite(cv):
        raise ValueError("no lengthscale lets every point be predicted from the others")
    return ell
