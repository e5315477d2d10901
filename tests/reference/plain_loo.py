"""The plain reference for kernelviz's leave-one-out optimum (``kv.loo_lengthscale``), for tests and
benchmarks to compare against.

kernelviz's search (``kernelviz.models.loo._optimum``) has two speed devices: the coarse grid's CV in float32
(``loo.GRID_DTYPE``), and the pairs summed in blocks of ``loo.PAIR_BLOCK`` over the real points only.
``reference_search`` runs the same grid and refinement (``loo._refined``) on the same data
(``loo._padded``) without them, each device off on its own or both: the grid in float64, and one block as
large as the padded data. ``benchmarks/bench_loo.py`` times it against ``loo._search`` in the same run.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core.kernels import get_kernel, kernel_index
from kernelviz.models import loo


@partial(jax.jit, static_argnames=("blocks", "grid_dtype", "smooth"))
def _plain_optimum(x: Array, y: Array, mask: Array, nn: Array, bounds: Array, kernel: Array, *, blocks: bool,
                   grid_dtype: type, smooth: bool) -> tuple[Array, Array]:
    """``loo._optimum`` with the grid's CV in ``grid_dtype`` and, unless ``blocks``, one block of pairs."""
    cv = loo._pair_cv(x, y, mask, nn, kernel, min(loo.PAIR_BLOCK, x.shape[0]) if blocks else x.shape[0])
    return loo._refined(partial(cv, dtype=grid_dtype), cv, bounds, smooth)


def reference_search(xs: np.ndarray, ys: np.ndarray, kernel: str, *, blocks: bool = False,
                     float32_grid: bool = False) -> tuple[float, float]:
    """(ℓ*, CV(ℓ*)) as ``loo._search`` finds them, by default with both speed devices off: the coarse grid
    in float64 (``float32_grid`` turns that device back on) and every pair in one block (``blocks``)."""
    p = loo._padded(xs, ys, kernel)
    t, cv = _plain_optimum(p.x, p.y, p.mask, p.nn, p.bounds, kernel_index(kernel), blocks=blocks,
                           grid_dtype=loo.GRID_DTYPE if float32_grid else jnp.float64,
                           smooth=get_kernel(kernel).differentiable)
    return p.span * math.exp(float(t)), float(cv) * p.scale**2
