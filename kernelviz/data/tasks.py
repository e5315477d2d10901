"""Families of small regression tasks: the prompts chapter 5's layer is pretrained on.

A task is a random function f on the domain [−1, 1]; a prompt is n context points and ``QUERIES`` query
points drawn from it,

    x_i ~ U[−1, 1],   y_i = f(x_i) + σ ε_i,  ε_i ~ N(0, 1)   (i = 1 … n),      x_q ~ U[−1, 1], f(x_q),

σ the label noise. Two families share one "task roughness" r (``ROUGHNESS_RANGE``, higher = rougher),
r the typical frequency of f in radians per unit of x:

* ``"sine"``: f(x) = a sin(ω x + φ), ω ~ U[0, 2r] (mean r), φ ~ U[0, 2π], a ~ U[½, 3/2];
* ``"gp"``: a Gaussian-process draw with the RBF kernel k(x, x′) = exp(−(x − x′)²/2λ²), λ = 1/r (its
  spectral density is a Gaussian of standard deviation 1/λ = r in ω), drawn as f = L z, L Lᵀ = K + εI
  the Cholesky factor over the context and query points together, z ~ N(0, I), jitter ε = ``GP_JITTER``.

Everything is drawn with ``jax.random`` inside the caller's jit; the family is a traced index
(``lax.switch``), roughness and noise are traced numbers, so one program serves every setting. Draws are
float32 (the training precision of ``pooling.summed_heads``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.data.post import erf_normals
from kernelviz.runtime import serve
from kernelviz.runtime.jax_setup import float64

__all__ = [
    "FAMILIES",
    "GP_JITTER",
    "NOISE_MAX",
    "N_MAX",
    "N_MIN",
    "QUERIES",
    "ROUGHNESS_RANGE",
    "Prompts",
    "Task",
    "check_task",
    "draw_prompts",
    "family_index",
    "gp_lengthscale",
    "sample_prompts",
]

FAMILIES = ("sine", "gp")
ROUGHNESS_RANGE = (1.0, 10.0)  # r: typical frequency of f in radians per unit x
NOISE_MAX = 1.0  # label noise σ in 0 … NOISE_MAX
N_MIN, N_MAX = 4, 64  # context points per prompt; padded to a bucket of 32 or 64 with a mask
QUERIES = 8  # query points per prompt, on which the pretraining loss is taken
GP_JITTER = 1e-4  # added to the GP kernel's diagonal before the float32 Cholesky
DTYPE = jnp.float32


class Task(NamedTuple):
    """A family of tasks: ``family`` (a name in ``FAMILIES``; inside a compiled program its index, which may
    be traced), the task ``roughness`` r and the label ``noise`` σ (numbers, or traced)."""

    family: str | int | Array = "sine"
    roughness: float | Array = 3.0
    noise: float | Array = 0.1


DEFAULT_TASK = Task()  # random sines at roughness 3, label noise 0.1


class Prompts(NamedTuple):
    """A batch of prompts: context ``x``, ``y`` (B, m), queries ``xq`` and their true ``fq`` (B, Q)."""

    x: Array
    y: Array
    xq: Array
    fq: Array


def gp_lengthscale(roughness: float | Array) -> float | Array:
    """λ = 1/r: the RBF lengthscale of the GP family at roughness r."""
    return 1.0 / roughness


def _sine(u: Array, roughness: Array, points: Array) -> Array:
    """f(points) = a sin(ω points + φ) for one task per row from its uniforms u on [−1, 1): ω ~ U[0, 2r],
    φ ~ U[0, 2π], a ~ U[½, 3/2]."""
    p = (u[:, :3] + 1.0) / 2.0
    omega, phase, amp = 2 * roughness * p[:, 0:1], 2 * jnp.pi * p[:, 1:2], 0.5 + p[:, 2:3]
    return amp * jnp.sin(omega * points + phase)


def _gp(u: Array, roughness: Array, points: Array) -> Array:
    """f(points) = L z per row, L Lᵀ = exp(−(x − x′)²/2λ²) + εI, λ = 1/r, z ~ N(0, I) from the row's
    uniforms u."""
    lam = gp_lengthscale(roughness)
    d = points[:, :, None] - points[:, None, :]
    k = jnp.exp(-0.5 * jnp.square(d / lam)) + GP_JITTER * jnp.eye(points.shape[1], dtype=DTYPE)
    z = erf_normals(u[:, : points.shape[1]])
    return jnp.einsum("bij,bj->bi", jax.lax.linalg.cholesky(k, symmetrize_input=False), z)


def draw_prompts(key: Array, task: Task, batch: int, points: int, queries: int = QUERIES) -> Prompts:
    """``batch`` prompts of ``points`` context points (x_i ~ U[−1, 1], y_i = f(x_i) + σ ε_i, ε_i ~ N(0, 1))
    and ``queries`` query points with their true f, one task f per prompt from ``task.family`` (an index
    into ``FAMILIES``, ``lax.switch``) at roughness r and noise σ: one draw of uniforms on [−1, 1) (a single
    random-bits call, which keeps the compiled step small), split into the points, the label noise's
    normals (``post.erf_normals``) and the task's. ``batch``, ``points`` and ``queries`` are static, the
    task may be traced."""
    m = points + queries
    u = jax.random.uniform(key, (batch, 2 * m + points), DTYPE, -1.0, 1.0)
    xs, eps = u[:, :m], erf_normals(u[:, m : m + points])
    f = jax.lax.switch(task.family, (_sine, _gp), u[:, m + points :], jnp.asarray(task.roughness, DTYPE), xs)
    y = f[:, :points] + jnp.asarray(task.noise, DTYPE) * eps
    return Prompts(xs[:, :points], y, xs[:, points:], f[:, points:])


def family_index(family: str) -> int:
    """Position of a family in ``FAMILIES``, or a ValueError naming the families."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, not {family!r}")
    return FAMILIES.index(family)


def _check_float(name: str, value: object, lo: float, hi: float) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {value!r}") from None
    if not (np.isfinite(v) and lo <= v <= hi):
        raise ValueError(f"{name} must be between {lo:g} and {hi:g}, not {v:g}")
    return v


def check_task(family: str, roughness: object, noise: object, n: object) -> tuple[int, float, float, int]:
    """(family index, r, σ, n) checked against ``FAMILIES``, ``ROUGHNESS_RANGE``, 0 … ``NOISE_MAX`` and
    ``N_MIN`` … ``N_MAX``, or a ValueError that says which control is out of range."""
    fam = family_index(family)
    r = _check_float("the task roughness", roughness, *ROUGHNESS_RANGE)
    s = _check_float("the label noise", noise, 0.0, NOISE_MAX)
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not N_MIN <= int(n) <= N_MAX:
        raise ValueError(f"the number of context points n must be an integer in {N_MIN} … {N_MAX}, not {n!r}")
    return fam, r, s, int(n)


@float64
def sample_prompts(task: Task = DEFAULT_TASK, n: int = 32, count: int = 1, seed: int = 0,
                   queries: int = QUERIES) -> Prompts:
    """``count`` prompts of ``task`` (``draw_prompts``, compiled by ``kernelviz.runtime.serve.call``) as
    numpy arrays (float64): x, y (count, n), xq, fq (count, queries)."""
    fam, r, s, m = check_task(task.family, task.roughness, task.noise, n)
    p = serve.call(draw_prompts, jax.random.PRNGKey(int(seed)), Task(fam, r, s),
                   static={"batch": int(count), "points": m, "queries": int(queries)})
    return Prompts(*(np.asarray(a, dtype=np.float64) for a in p))
