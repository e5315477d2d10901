"""What a pretrained in-context layer (``kernelviz.models.incontext``) learned, and how well it does on fresh
tasks.

* the learned kernel: each head's log-weight as a function of the offset δ = x′ − x at a few queries x,
  log K_h(x, δ) = s_h(x, x + δ) − s_h(x, x) (``learned_kernel``);
* the learned window: s_h(x, x′) = c0 + c1 x′ + c2 x′² is quadratic in x′ (features (1, x′, x′²)), so
  softmax weights are exactly a Gaussian in x′ of standard deviation ℓ_h(x) = (−2 c2)^{−1/2}, the same
  ℓ as Nadaraya–Watson's K(u) = exp(−u²/2), u = (x − x′)/ℓ (``learned_window``);
* the reference smoothers: Nadaraya–Watson at the one ℓ with the lowest mean error over fresh tasks of the
  family (``best_fixed_lengthscale``), and the leave-one-out optimum ℓ* of single prompts
  (``loo_window``, ``kernelviz.models.loo.loo_lengthscale``);
* errors on fresh tasks, mean over tasks and queries of (f̂(x_q) − f(x_q))² (``in_context_error``,
  ``evaluate``), and a sweep of the learned window over roughness and noise (``window_sweep``).

Fresh tasks come from keys the pretraining never uses (``EVAL_SEED`` + seed), with ``tasks.N_MAX`` points
drawn and the first n used, so n is a mask, not a shape.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.kernels import kernel_scores
from kernelviz.data import tasks
from kernelviz.models.attention import features
from kernelviz.models.incontext import KINDS, ICLParams, Pretrained, layer_output, pretrain
from kernelviz.models.loo import loo_lengthscale
from kernelviz.runtime import serve
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import vector

__all__ = [
    "EVAL_TASKS",
    "LENGTHSCALE_GRID",
    "Evaluation",
    "LengthscaleSearch",
    "SweepRow",
    "Window",
    "best_fixed_lengthscale",
    "evaluate",
    "in_context_error",
    "learned_kernel",
    "learned_window",
    "loo_window",
    "window_sweep",
]

EVAL_TASKS = 256
LOO_TASKS = 32
EVAL_SEED = 1_000_003  # fresh tasks: pretraining keys are PRNGKey(seed) folded with the step
LENGTHSCALE_GRID = np.geomspace(0.01, 4.0, 64)
WINDOW_QUERIES = np.linspace(-1.0, 1.0, 21)


@float64
def learned_kernel(fit: Pretrained, queries: object, grid_offsets: object) -> np.ndarray:
    """log K_h(x, δ) = s_h(x, x + δ) − s_h(x, x) for every head, query x and offset δ: (H, q, g), with
    s_h(x, x′) = φ(x) A_h φ(x′)ᵀ (``Pretrained.score_matrices``). For the softmax layer the weight of a key
    at x + δ is ∝ K_h(x, δ); a window is a peak near δ = 0."""
    q, d = vector("queries", queries), vector("grid_offsets", grid_offsets)
    keys = q[:, None] + np.append(d, 0.0)  # (q, g + 1): the offsets, then x itself
    s = np.einsum("qf,hfk,qgk->hqg", np.asarray(features(q)), fit.score_matrices, np.asarray(features(keys)))
    return s[..., :-1] - s[..., -1:]


class Window(NamedTuple):
    """``lengthscales`` ℓ_h(x) and ``centres`` (window centre − x) per head and query (H, q); ``window``
    the |u_h|-weighted mean over heads of the median ℓ_h(x) over the queries, in x units."""

    lengthscales: np.ndarray
    centres: np.ndarray
    window: float


@float64
def learned_window(fit: Pretrained, queries: object = WINDOW_QUERIES) -> Window:
    """The width of the learned window: with c = φ(x) A_h, s_h(x, x′) = c0 + c1 x′ + c2 x′², so the softmax
    weights are ∝ exp(−(x′ − μ)²/2ℓ²), ℓ_h(x) = (−2 c2)^{−1/2} (∂²s/∂x′² = −1/ℓ²) and μ = −c1/2c2; ℓ = ∞
    where c2 ≥ 0 (no window). Comparable to Nadaraya–Watson's ℓ. For the linear layer the same numbers
    describe its scores, which it does not normalise: they are not a window of weights."""
    q = vector("queries", queries)
    c = np.einsum("qf,hfg->hqg", np.asarray(features(q)), fit.score_matrices)
    c1, c2 = c[..., 1], c[..., 2]
    neg = c2 < 0
    safe = np.where(neg, c2, -1.0)
    ell = np.where(neg, 1.0 / np.sqrt(-2.0 * safe), np.inf)
    centre = np.where(neg, -c1 / (2.0 * safe) - q, np.nan)
    u = np.abs(fit.mixing)
    w = u / u.sum() if u.sum() > 0 else np.full(fit.heads, 1.0 / fit.heads)
    return Window(ell, centre, float(np.sum(w * np.median(ell, axis=1))))


def _fresh(family: str, roughness: float, noise: float, n: int, count: int, seed: int
           ) -> tuple[tasks.Prompts, np.ndarray]:
    """``count`` fresh prompts (``tasks.N_MAX`` points drawn) and the mask of their first n points."""
    tasks.check_task(family, roughness, noise, n)
    p = tasks.sample_prompts(tasks.Task(family, roughness, noise), tasks.N_MAX, count, EVAL_SEED + int(seed))
    return p, np.arange(tasks.N_MAX) < n


def _nw_errors(prompts: tasks.Prompts, available: Array, lengthscales: Array) -> Array:
    """Mean (m_ℓ(x_q) − f(x_q))² over prompts and queries for every ℓ, m_ℓ Gaussian Nadaraya–Watson
    (``kernel_scores`` on ``pooling.pool``), one ℓ at a time (``lax.map``)."""

    def one(ell: Array) -> Array:
        def task(x, y, xq, fq):
            return jnp.mean(jnp.square(pooling.pool(kernel_scores(xq, x, ell, 0), y, available).mean - fq))

        return jnp.mean(jax.vmap(task)(*prompts))

    return jax.lax.map(one, lengthscales)


class LengthscaleSearch(NamedTuple):
    """``best`` ℓ, its ``error``, and the whole curve: ``lengthscales`` (L,) and ``errors`` (L,)."""

    best: float
    error: float
    lengthscales: np.ndarray
    errors: np.ndarray


@float64
def best_fixed_lengthscale(family: str = "sine", roughness: float = 3.0, noise: float = 0.1, n: int = 32,
                           tasks_count: int = EVAL_TASKS, seed: int = 0) -> LengthscaleSearch:
    """The single ℓ of Gaussian Nadaraya–Watson with the lowest mean query error over ``tasks_count`` fresh
    tasks of the family (a search over ``LENGTHSCALE_GRID``, log-spaced 0.01 … 4): the best a fixed window
    can do, chosen in hindsight on the very tasks it is scored on."""
    p, mask = _fresh(family, roughness, noise, n, tasks_count, seed)
    errs = serve.call(_nw_errors, p, mask, LENGTHSCALE_GRID)
    k = int(np.argmin(errs))
    return LengthscaleSearch(float(LENGTHSCALE_GRID[k]), float(errs[k]), LENGTHSCALE_GRID.copy(), errs)


@float64
def loo_window(family: str = "sine", roughness: float = 3.0, noise: float = 0.1, n: int = 32,
               tasks_count: int = LOO_TASKS, seed: int = 0) -> np.ndarray:
    """The leave-one-out optimum ℓ* (``loo_lengthscale``) of each of ``tasks_count`` single fresh prompts:
    the window a smoother would choose from one prompt alone, (tasks_count,)."""
    p, _ = _fresh(family, roughness, noise, n, tasks_count, seed)
    return np.array([loo_lengthscale(p.x[i, :n], p.y[i, :n]) for i in range(tasks_count)])


def _layer_errors(params: ICLParams, prompts: tasks.Prompts, available: Array, *, kind: int) -> Array:
    """Mean (f̂(x_q) − f(x_q))² of the layer over the prompts and their queries."""
    f = jax.vmap(lambda x, y, xq: layer_output(params, kind, xq, x, y, available))(prompts.x, prompts.y,
                                                                                    prompts.xq)
    return jnp.mean(jnp.square(f - prompts.fq))


@float64
def in_context_error(fit: Pretrained, tasks_count: int = EVAL_TASKS, seed: int = 0,
                     family: str | None = None, roughness: float | None = None, noise: float | None = None,
                     ) -> float:
    """Mean (f̂(x_q) − f(x_q))² of the layer over ``tasks_count`` fresh tasks, of the family and controls it
    was pretrained on unless ``family``, ``roughness`` or ``noise`` say otherwise."""
    fam = fit.family if family is None else family
    r = fit.roughness if roughness is None else roughness
    s = fit.noise if noise is None else noise
    p, mask = _fresh(fam, r, s, fit.n, tasks_count, seed)
    return float(serve.call(_layer_errors, fit.params, p, mask, static={"kind": KINDS.index(fit.kind)}))


class Evaluation(NamedTuple):
    """Errors on the same fresh tasks: the layer's, the linear layer's (NaN without one), Nadaraya–Watson's
    at the family's best fixed ℓ; that ℓ, the mean leave-one-out ℓ* of single prompts and the layer's
    learned window."""

    layer_error: float
    linear_error: float
    nw_error: float
    best_lengthscale: float
    loo_lengthscale: float
    learned_window: float


@float64
def evaluate(fit: Pretrained, linear: Pretrained | None = None, tasks_count: int = EVAL_TASKS,
             seed: int = 0, loo_tasks: int = LOO_TASKS) -> Evaluation:
    """``fit`` (and ``linear``) against Nadaraya–Watson at the best fixed ℓ on the same fresh tasks."""
    best = best_fixed_lengthscale(fit.family, fit.roughness, fit.noise, fit.n, tasks_count, seed)
    lin = np.nan if linear is None else in_context_error(linear, tasks_count, seed, fit.family,
                                                         fit.roughness, fit.noise)
    loo = float(np.mean(loo_window(fit.family, fit.roughness, fit.noise, fit.n, loo_tasks, seed)))
    return Evaluation(in_context_error(fit, tasks_count, seed), float(lin), best.error, best.best, loo,
                      learned_window(fit).window)


class SweepRow(NamedTuple):
    """One setting of a sweep: its ``roughness`` and ``noise``, the learned ``window`` and the best fixed
    Nadaraya–Watson ℓ (``best_lengthscale``) of the family there."""

    roughness: float
    noise: float
    window: float
    best_lengthscale: float


@float64
def window_sweep(family: str = "sine", roughness: tuple[float, ...] = (1.5, 3.0, 6.0),
                 noise: tuple[float, ...] = (0.0, 0.3, 1.0), base_roughness: float = 3.0,
                 base_noise: float = 0.1, **pretrain_kwargs: object) -> list[SweepRow]:
    """The learned window at each roughness (noise ``base_noise``), then at each noise (roughness
    ``base_roughness``): one pretraining per setting (``pretrain``, same program), with the best fixed ℓ."""
    settings = [(r, base_noise) for r in roughness] + [(base_roughness, s) for s in noise]
    rows = []
    for r, s in settings:
        fit = pretrain(family, r, s, **pretrain_kwargs)  # type: ignore[arg-type]
        best = best_fixed_lengthscale(family, r, s, fit.n)
        rows.append(SweepRow(float(r), float(s), learned_window(fit).window, best.best))
    return rows
