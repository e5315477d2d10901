"""A faster form of ``kernelviz.models.holdout.holdout_split``, the hold-out set training draws each step.

The formula sorts the slots stably by their 32-bit random keys; this form sorts 64-bit integers instead
(key above index: no stable sort needed), and for hold-out 1, the sources' setting, takes an argmin with no
sort at all. ``tests/test_training.py`` checks it equal to the formula on the held-out points and the mask;
``python -m benchmarks.bench_training`` prints, in one run, what it buys in a training run (about 2x at
hold-out 1, where a step computes 4 kernel rows and the sort was most of it).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import Array

from kernelviz.data import post

__all__ = ["holdout_split_fast"]


def holdout_split_fast(key: Array, mask: Array, holdout: Array) -> tuple[Array, Array]:
    """``holdout_split`` without its stable sort: the same held-out points first and the same keys left
    available, and what training runs.

    Each slot's 64-bit sort key is its random key above its index, and padded slots sort last; one sort of
    plain integers gives the post's permutation, and the points whose key is above the ``holdout``-th are
    the ones left available.

    Hold-out 1 (the sources' setting) needs no sort: the held-out slot is the argmin of the keys
    (``lax.cond`` on ``holdout == 1``), the slot the sort would put first. Every entry of that order is the
    held-out slot: the rows after the first, which carry weight 0 in the loss, repeat it.
    """
    size = mask.shape[0]
    index_bits = max(1, (size - 1).bit_length())
    u64 = jnp.uint64
    bits = post.permutation_keys(key, jnp.sum(mask), size).astype(u64)
    index = jnp.arange(size, dtype=u64)
    keys = jnp.where(mask, bits << u64(index_bits), u64(1) << u64(63)) | index

    def by_sort(keys: Array) -> tuple[Array, Array]:
        ordered = jnp.sort(keys)
        return (ordered & u64((1 << index_bits) - 1)).astype(jnp.int32), ordered[holdout - 1]

    def smallest(keys: Array) -> tuple[Array, Array]:
        first = jnp.argmin(keys)
        return jnp.full(size, first, jnp.int32), keys[first]

    order, last = jax.lax.cond(holdout == 1, smallest, by_sort, keys)
    return order, mask & (keys > last)
