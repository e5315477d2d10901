"""The kernel zoo, written as log-kernels of the scaled distance u = (x − x′)/ℓ.

Every kernel is a tiny function of one scaled distance ``u``; jnp broadcasting lifts it to whole
matrices. Working with log K instead of K lets the smoother form its weights with a softmax,

    w_i(x) = exp(log K(u_i)) / Σ_j exp(log K(u_j)) = softmax_i(log K(u_i)),

which neither underflows at tiny ℓ nor overflows at huge ℓ.

Conventions (the same throughout the package and the pages):

* Gaussian K(u) = exp(−u²/2): ℓ is the kernel's standard deviation. The blog post's ℓ is √2 times this one
  and d2l's learnable w is 1/ℓ.
* Compact kernels live on |u| ≤ 1. Outside their support log K = ``outside`` (−∞ by default; training
  passes a large finite negative so no gradient is NaN).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
from jax import Array

from kernelviz.runtime.i18n import _
from kernelviz.runtime.jax_setup import float64

__all__ = ["KERNELS", "Kernel", "get_kernel", "kernel_index", "kernel_scores", "kernel_value",
           "kernel_values", "log_kernel"]

# Scaled distances are clipped here so u² stays finite in float64 (1e150² = 1e300 < 1.8e308).
U_MAX = 1e150
U_MAX_F32 = 1e18  # the same in float32 (1e18² = 1e36 < 3.4e38)


def _gaussian(u: Array) -> Array:
    """log K(u) = −u²/2, K(u) = exp(−u²/2)."""
    return -0.5 * u * u


def _laplace(u: Array) -> Array:
    """log K(u) = −|u|, K(u) = exp(−|u|)."""
    return -jnp.abs(u)


def _cauchy(u: Array) -> Array:
    """log K(u) = −log(1 + u²), K(u) = 1/(1 + u²)."""
    return -jnp.log1p(u * u)


def _boxcar(u: Array) -> Array:
    """log K(u) = 0 on |u| ≤ 1, K(u) = 1 there."""
    return jnp.zeros_like(u)


def _epanechnikov(u: Array) -> Array:
    """log K(u) = log(1 − u²) on |u| < 1, K(u) = 1 − u²."""
    return jnp.log1p(-u * u)


def _triangular(u: Array) -> Array:
    """log K(u) = log(1 − |u|) on |u| < 1, K(u) = 1 − |u|."""
    return jnp.log1p(-jnp.abs(u))


def _tricube(u: Array) -> Array:
    """log K(u) = 3 log(1 − |u|³) on |u| < 1, K(u) = (1 − |u|³)³."""
    return 3.0 * jnp.log1p(-jnp.abs(u) ** 3)


@dataclass(frozen=True)
class Kernel:
    """One kernel of the zoo.

    ``log_k`` maps scaled distances u to log K(u) inside the support; ``support`` is None for kernels that
    are positive everywhere and 1.0 for compact ones (|u| ≤ 1, or |u| < 1 where K(±1) = 0).
    ``differentiable`` is False where ∂ log K/∂ℓ is zero almost everywhere (boxcar), so training searches ℓ.
    """

    name: str
    label: str
    latex: str
    log_k: Callable[[Array], Array]
    support: float | None = None
    closed: bool = False
    differentiable: bool = True

    @property
    def compact(self) -> bool:
        """True when K(u) = 0 for |u| > 1."""
        return self.support is not None


_ZOO: dict[str, Kernel] = {
    k.name: k
    for k in (
        Kernel("gaussian", _("Gaussian"), r"K(u) = e^{-u^2/2}", _gaussian),
        Kernel("boxcar", _("Boxcar"), r"K(u) = \mathbb{1}\{|u| \le 1\}", _boxcar, 1.0, True, False),
        Kernel("epanechnikov", _("Epanechnikov"), r"K(u) = \max(0,\ 1 - u^2)", _epanechnikov, 1.0),
        Kernel("triangular", _("Triangular"), r"K(u) = \max(0,\ 1 - |u|)", _triangular, 1.0),
        Kernel("tricube", _("Tricube"), r"K(u) = \max(0,\ 1 - |u|^3)^3", _tricube, 1.0),
        Kernel("laplace", _("Laplace"), r"K(u) = e^{-|u|}", _laplace),
        Kernel("cauchy", _("Cauchy"), r"K(u) = \frac{1}{1 + u^2}", _cauchy),
    )
}

KERNELS: tuple[str, ...] = tuple(_ZOO)


def get_kernel(name: str) -> Kernel:
    """The kernel called ``name`` (one of ``KERNELS``); a ValueError lists the choices otherwise."""
    try:
        return _ZOO[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown kernel {name!r}; choose one of {', '.join(KERNELS)}") from None


def kernel_index(kernel: str | int) -> int:
    """Position of a kernel in ``KERNELS``: a traced argument, so one compiled program serves all."""
    if isinstance(kernel, int) and not isinstance(kernel, bool) and 0 <= kernel < len(KERNELS):
        return kernel
    return KERNELS.index(get_kernel(kernel).name)  # type: ignore[arg-type]


def _log_k_of(k: Kernel, u: Array, outside: Array) -> Array:
    if k.support is None:
        return k.log_k(u)
    inside = jnp.abs(u) <= k.support if k.closed else jnp.abs(u) < k.support
    safe_u = jnp.where(inside, u, 0.0)
    return jnp.where(inside, k.log_k(safe_u), outside)


def log_kernel(u: Array, kernel: str | int | Array = "gaussian", outside: float = -jnp.inf) -> Array:
    """log K(u) for scaled distances ``u``, equal to ``outside`` where K(u) = 0.

    ``kernel`` is a name, or an index into ``KERNELS`` that may be a traced integer: then ``lax.switch``
    picks the formula at run time and one compiled program serves every kernel.
    ``u`` is clipped to ±1e150 first (±1e18 in float32), so any finite input gives a finite or ``outside``
    value. Inside the
    support the formula is evaluated at a safe point elsewhere, so gradients are finite everywhere.
    """
    u = jnp.asarray(u)
    limit = U_MAX_F32 if u.dtype == jnp.float32 else U_MAX
    u = jnp.clip(u, -limit, limit)
    outside_ = jnp.asarray(outside, dtype=u.dtype)
    if isinstance(kernel, str):
        return _log_k_of(get_kernel(kernel), u, outside_)
    branches = [lambda u, o, k=k: _log_k_of(k, u, o) for k in _ZOO.values()]
    return jax.lax.switch(jnp.asarray(kernel, dtype=jnp.int32), branches, u, outside_)


def kernel_scores(queries: Array, keys: Array, lengthscale: Array, kernel: str | int | Array = "gaussian",
                  outside: float = -jnp.inf) -> Array:
    """The kernel score s_i(x) = log K((x − x_i)/ℓ) of every query × key pair, (q, n): the one score of
    Nadaraya–Watson, its leave-one-out curve and optimum, the post's heads and d2l's pooling (w = 1/ℓ).

    ``outside`` is the score where a compact kernel is 0: −∞ for predictions (an empty window is NaN),
    a large finite negative inside training (no NaN gradient).
    """
    return log_kernel((queries[:, None] - keys[None, :]) / lengthscale, kernel, outside)


@float64
@partial(jax.jit, static_argnames="kernel")
def kernel_value(u: Array, kernel: str = "gaussian") -> Array:
    """K(u) itself, for drawing the kernel's shape (0 outside a compact support)."""
    return jnp.exp(log_kernel(u, kernel))


@float64
@jax.jit
def kernel_values(u: Array) -> Array:
    """K(u) of every kernel of the zoo, (len(KERNELS), m) for u (m,) in the order of ``KERNELS``: one
    compiled program per length of ``u`` (the kernel index is traced, ``log_kernel``'s ``lax.switch``)."""
    index = jnp.arange(len(KERNELS), dtype=jnp.int32)
    return jnp.exp(jax.vmap(lambda i: log_kernel(u, i))(index))
