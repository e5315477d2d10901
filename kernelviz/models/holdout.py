"""Masked training's hold-out sets and their loss (``kernelviz.models.training.run`` takes the loss).

One step of masked training (the blog post's) holds out ``holdout`` random points and predicts them from the
others: ``holdout_split`` draws the set as the post draws it, ``holdout_objective`` is the step's loss and
gradient, summed over chunks of held-out rows (``chunked_sum``) whose counts are traced loop bounds, so one
program serves every hold-out size and hold-out 1 computes 4 rows of the kernel matrix, not n.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array

from kernelviz.data import post
from kernelviz.models import holdout_fast
from kernelviz.models.training import STEPS_MAX, TRAIN_MAX_POINTS
from kernelviz.runtime import train

__all__ = [
    "HOLDOUT_BLOCK",
    "HOLDOUT_ROWS",
    "Holdout",
    "Predict",
    "Split",
    "chunked_sum",
    "holdout_bucket",
    "holdout_chunks",
    "holdout_objective",
    "holdout_range",
    "holdout_split",
]

HOLDOUT_BLOCK = 64  # a training step runs ⌊holdout/64⌋ chunks of 64 held-out rows,
HOLDOUT_ROWS = 4  # then ⌈(holdout mod 64)/4⌉ chunks of 4,
HOLDOUT_SMALL_MAX = 10  # or, when that is more than 10 chunks, one more chunk of 64 (cheaper then)


def holdout_range(n: int) -> tuple[int, int]:
    """The hold-out sizes allowed for n points: 1 … n − 2 (at least two points must remain to predict from).

    For more than ``TRAIN_MAX_POINTS`` points training uses a subsample, so n is that size then.
    """
    m = min(int(n), TRAIN_MAX_POINTS)
    return 1, max(1, m - 2)



def holdout_split(key: Array, mask: Array, holdout: Array) -> tuple[Array, Array]:
    """One step's random hold-out set, drawn as the blog post draws it: (an order of the slots with the
    held-out points first, the keys left available).

    The post holds out ``random.permutation(key, arange(n))[:holdout]``: ``arange(n)`` sorted, stably, by
    32-bit random keys (``kernelviz.data.post.permutation_keys``), n the real points, which come first;
    the padded slots go last. The points after the first ``holdout`` of that order stay available.
    """
    size = mask.shape[0]
    bits = post.permutation_keys(key, jnp.sum(mask), size)
    order = jnp.lexsort((jnp.arange(size), bits, ~mask))  # real slots first, by key, ties by index
    rank = jnp.zeros(size, order.dtype).at[order].set(jnp.arange(size, dtype=order.dtype))
    return order, mask & (rank >= holdout)


def chunked_sum(fn: Callable[[Array, Array], object], order: Array, holdout: Array, zero: object,
                rows: int = HOLDOUT_ROWS, big: int = HOLDOUT_BLOCK) -> object:
    """Σ_c fn(idx_c, w_c) over chunks of held-out rows: idx_c consecutive entries of ``order``,
    w_c = 1/holdout on held-out rows and 0 on the padded rest.

    ⌊holdout/big⌋ chunks of ``big`` rows, then ⌈(holdout mod big)/rows⌉ chunks of ``rows`` (or one more big
    chunk when that would be more than ``HOLDOUT_SMALL_MAX`` small ones): ``fori_loop``s with traced trip
    counts, so one program serves every hold-out size at a cost that grows with it (``big=0``: only chunks
    of ``rows``). ``fn`` returns a pytree (a loss and its gradient), summed leaf by leaf.
    """
    inv = 1.0 / holdout
    padded = jnp.concatenate([order, jnp.zeros(max(rows, big), order.dtype)])

    def chunks(first, count, size, acc):
        offsets = jnp.arange(size)

        def body(c, acc):
            start = first + c * size
            idx = jax.lax.dynamic_slice(padded, (start,), (size,))
            return jax.tree.map(jnp.add, acc, fn(idx, jnp.where(start + offsets < holdout, inv, 0.0)))

        return jax.lax.fori_loop(0, count, body, acc)

    if not big:
        return chunks(0, (holdout + rows - 1) // rows, rows, zero)
    small = (holdout % big + rows - 1) // rows
    extra = small > HOLDOUT_SMALL_MAX
    n_big = holdout // big + extra.astype(holdout.dtype)
    return chunks(n_big * big, jnp.where(extra, 0, small), rows, chunks(0, n_big, big, zero))


Predict = Callable[[object, Array, Array], Array]


Split = Callable[[Array, Array, Array], tuple[Array, Array]]


class Holdout(NamedTuple):
    """A run's hold-out training data: the points ``x``, ``y`` (n,) and the ``mask`` of the real ones, the
    ``holdout`` size k and the run's ``key`` (uint32[2])."""

    x: Array
    y: Array
    mask: Array
    holdout: Array
    key: Array


def holdout_objective(predict: Predict, data: Holdout, *, with_grad: bool = True,
                      chunks: tuple[int, int] = (HOLDOUT_ROWS, HOLDOUT_BLOCK),
                      split: Split = holdout_split) -> Callable[[object, Array], object]:
    """(params, step) ↦ (L, ∂L/∂params) for step ``step``'s hold-out set: L = (1/k) Σ_held (y_j − f̂_j)²
    (L alone with ``with_grad=False``).

    ``data.key`` is the run's key, split once per step as the post's ``train`` splits it
    (``kernelviz.data.post.step_keys``); step t's subkey draws its hold-out set (``split``: ``holdout_split``;
    training runs what the adapter chooses for it, ``kernelviz.runtime.train.fast``).

    ``predict(params, x_rows, available)`` gives f̂ at ``x_rows`` from the ``available`` keys. The loss and
    gradient of each chunk of held-out rows are summed (``chunked_sum`` with chunk sizes ``chunks``);
    nothing is differentiated through a loop (``tests/reference/plain_training.py`` predicts every padded
    row at once instead, the plain form ``benchmarks/bench_training.py`` times against the chunks).
    """

    def rows_loss(params, idx, row_weight, available):
        return jnp.sum(row_weight * jnp.square(predict(params, data.x[idx], available) - data.y[idx]))

    loss = jax.value_and_grad(rows_loss) if with_grad else rows_loss

    keys = post.step_keys(data.key, STEPS_MAX)

    def objective(params, step):
        order, available = split(keys[step], data.mask, data.holdout)
        zero = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params)) if with_grad else jnp.zeros(())
        return chunked_sum(lambda idx, w: loss(params, idx, w, available), order, data.holdout, zero,
                           *chunks)

    return objective


def holdout_chunks(holdout: int) -> tuple[int, int]:
    """Chunks one training step runs for a hold-out of k points: (chunks of ``HOLDOUT_BLOCK`` = 64 rows,
    chunks of ``HOLDOUT_ROWS`` = 4 rows) = (⌊k/64⌋, ⌈(k mod 64)/4⌉), or (⌊k/64⌋ + 1, 0) when the second
    count exceeds ``HOLDOUT_SMALL_MAX``."""
    k = int(holdout)
    small = -(-(k % HOLDOUT_BLOCK) // HOLDOUT_ROWS)
    if small > HOLDOUT_SMALL_MAX:
        return k // HOLDOUT_BLOCK + 1, 0
    return k // HOLDOUT_BLOCK, small


def holdout_bucket(holdout: int) -> int:
    """Kernel rows one training step computes for a hold-out of this size (``holdout_chunks``)."""
    big, small = holdout_chunks(holdout)
    return big * HOLDOUT_BLOCK + small * HOLDOUT_ROWS


train.register_fast(holdout_split, holdout_fast.holdout_split_fast)  # what training runs: tested equal
