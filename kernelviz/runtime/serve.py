"""The one adapter between a model's formula and the caller: checks, padding, mask, jit, scaling, slicing.

A model is written for one regression problem, as its page's formula, over arrays with a mask::

    model(queries (q,), keys (n,), values (n,), available (n,), *params) → (mean (…, q), var (…, q), …)

``available`` says which keys are real, so the model runs unchanged on padded arrays. ``serve`` does the
rest, the same way for every model:

1. checks: queries, keys and values are finite vectors, keys and values of one length, at least one pair;
2. padding: queries and keys padded to a few bucket sizes (``shapes.bucket``) with the mask, so a slider
   never changes a compiled shape;
3. scaling: values divided by max |v| (``shapes.value_scale``), so (v − m)² cannot overflow, and the mean
   and std multiplied back;
4. compiling: one ``jax.jit`` of the model per model (``compiled``), parameters traced;
5. slicing: the outputs cut back to the real queries, keys and heads, as NumPy arrays.

The same steps serve a model over a grid of one parameter (``Grid``, ``over``: the lengthscales of a path or
a leave-one-out curve, padded to a block multiple), a model that streams over key blocks (``streamed``:
queries padded to whole query blocks, keys to a power-of-two count of key blocks), and programs that read no
regression problem: ``call`` (outputs cut with ``cut``), ``elementwise`` (arrays padded to a bucket, the
outputs cut back) and ``sized`` (a program that makes n values, n traced, in the slots of a bucket).

The caller's public function (``nadaraya_watson``, ``knn_average``, ``predict_heads`` …) checks its own
parameters, runs inside ``jax_setup.float64`` and hands the rest to ``serve``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import numpy as np

from kernelviz.runtime.shapes import bucket, corner, pad, unslot, value_scale, vector

__all__ = ["Grid", "Problem", "Served", "call", "compiled", "cut", "elementwise", "over", "problem", "read",
           "run", "serve", "sized", "streamed"]


class Problem(NamedTuple):
    """One regression problem, padded: ``queries`` (qp,), ``keys`` and ``values`` (kp,) with the values
    divided by ``scale``, ``available`` (kp,) true on the ``nk`` real keys; ``nq`` real queries."""

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    available: np.ndarray
    nq: int
    nk: int
    scale: float


class Served(NamedTuple):
    """A model's output on the real problem, in the data's units: ``mean`` and ``std`` (…, q), the heads'
    own means and stds when the model returns them (its second pair, cut to the real heads; else None), and
    the weights (…, q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    head_means: np.ndarray | None
    head_stds: np.ndarray | None
    weights: np.ndarray | None


def problem(queries: object, keys: object, values: object, *, scaled: bool = True) -> Problem:
    """Check and pad one problem (steps 1–3 above). Padded keys repeat the first key, padded queries are 0;
    the mask keeps the keys out, and the padded queries' rows are cut off. ``scaled=False`` leaves the
    values as they are (a model that is not linear in them, such as an attention layer reading tokens)."""
    q, k, v = vector("queries", queries), vector("keys", keys), vector("values", values)
    if k.shape != v.shape:
        raise ValueError(f"keys and values must have the same length, got {k.shape[0]} and {v.shape[0]}")
    if k.shape[0] == 0:
        raise ValueError("kernel regression needs at least one (key, value) pair")
    scale = value_scale(v) if scaled else 1.0
    nq, nk = q.shape[0], k.shape[0]
    kp = bucket(nk)
    return Problem(pad(q, bucket(nq)), pad(k, kp, k[0]), pad(v / scale, kp), np.arange(kp) < nk,
                   nq, nk, scale)


@functools.cache
def compiled(model: Callable, static: Sequence[str] = ()) -> Callable:
    """The model compiled once (``jax.jit``; ``static`` names the arguments that choose a program)."""
    return jax.jit(model, static_argnames=tuple(static))


def call(program: Callable, *args: object, static: dict[str, object] | None = None) -> object:
    """``program(*args, **static)`` compiled once (step 4), its outputs as NumPy arrays: for a program that
    reads no regression problem (a grid of scores, an error over many prompts). ``shapes.Param`` arguments
    are passed padded."""
    static = static or {}
    return jax.tree.map(np.asarray, compiled(program, tuple(static))(*unslot(args), **static))


def run(model: Callable, p: Problem, *params: object, static: dict[str, object] | None = None
        ) -> list[np.ndarray]:
    """``model(p.queries, p.keys, p.values, p.available, *params, **static)``, compiled once (step 4), its
    outputs as NumPy arrays, still padded and scaled: for a model whose outputs are not means and variances
    at the queries (a loss over the points, say). A ``shapes.Param`` among ``params`` (a parameter in its
    head or width slots) is passed padded."""
    static = static or {}
    out = compiled(model, tuple(static))(p.queries, p.keys, p.values, p.available, *unslot(params), **static)
    return [np.asarray(a) for a in out]


def serve(model: Callable, p: Problem, *params: object, pairs: int = 1, heads: int | None = None,
          head_axis: int = 0, weights: bool = True, static: dict[str, object] | None = None) -> Served:
    """Run ``model(p.queries, p.keys, p.values, p.available, *params, **static)`` (steps 4–5 above).

    The model returns ``pairs`` (1 or 2) pairs (mean, variance): the mixture's, then the heads', and the
    weights after them if it returns one more array. ``heads`` cuts the head axis (``head_axis`` of the
    heads' pair, the first of the weights) to the real heads; ``weights=False`` drops the weights.
    """
    if pairs not in (1, 2):
        raise ValueError(f"a served model returns one or two (mean, variance) pairs, not {pairs}")
    return read(run(model, p, *params, static=static), p, pairs=pairs, heads=heads, head_axis=head_axis,
                weights=weights)


def read(out: Sequence[np.ndarray], p: Problem, *, pairs: int = 1, heads: int | None = None,
         head_axis: int = 0, weights: bool = True) -> Served:
    """A served model's padded, scaled outputs (``run``, ``over``) as a ``Served`` (step 5, see ``serve``):
    the means and stds cut to the real queries (last axis) and multiplied back into the data's units."""
    cut_heads = slice(heads)
    means = [a[..., : p.nq] * p.scale for a in out[0 : 2 * pairs : 2]]
    stds = [np.sqrt(a[..., : p.nq]) * p.scale for a in out[1 : 2 * pairs : 2]]
    on_heads = (slice(None),) * head_axis + (cut_heads,)
    head_means, head_stds = (means[1][on_heads], stds[1][on_heads]) if pairs == 2 else (None, None)
    w = np.array(out[2 * pairs][..., : p.nq, : p.nk][cut_heads]) if weights and len(out) > 2 * pairs else None
    return Served(means[0], stds[0], head_means, head_stds, w)


def cut(a: object, real: Sequence[int], lead: int = 0) -> np.ndarray:
    """A padded output cut to its ``real`` leading corner (the real heads, widths, points), after ``lead``
    axes kept whole, as a NumPy array of its own."""
    return corner(np.asarray(a), tuple(real), lead)


class Grid(NamedTuple):
    """The values (G,) of one parameter a model maps over (``lax.map``: lengthscales), padded with ``fill``
    to a multiple of ``block`` so that few grid lengths compile; ``chunks`` runs the padded grid one block
    per call (one compiled shape for every G) instead of in one call."""

    values: np.ndarray
    block: int
    fill: float = 1.0
    chunks: bool = False


def over(model: Callable, p: Problem, grid: Grid, *params: object) -> list[np.ndarray]:
    """``model(p.queries, p.keys, p.values, p.available, g, *params)`` for the padded grid g (``Grid``), its
    outputs' leading axis cut to the grid's G values: (G, …) each, still padded in the queries and scaled
    (``read`` cuts and scales a mean and a variance)."""
    count = grid.values.shape[0]
    size = -(-count // grid.block) * grid.block
    padded = pad(grid.values, size, grid.fill)
    parts = [padded[i : i + grid.block] for i in range(0, size, grid.block)] if grid.chunks else [padded]
    outs = [run(model, p, part, *params) for part in parts]
    return [np.concatenate(column)[:count] for column in zip(*outs, strict=True)]


def streamed(model: Callable, p: Problem, *params: object, query_block: int, key_block: int) -> Served:
    """``model(queries, keys, values, available, *params, sizes=(qb, kb))`` for a model that pools key blocks
    of kb keys one at a time over query blocks of qb queries, without weights: the queries padded to whole
    query blocks, the keys to a power-of-two count of key blocks (few compiled shapes), each block no larger
    than the padded data; the mean and std served as ``serve`` serves them."""
    qb, kb = min(query_block, bucket(p.nq)), min(key_block, bucket(p.nk))
    qp, kp = -(-p.nq // qb) * qb, bucket(-(-p.nk // kb), 1, 2) * kb
    q, k, v = (corner(a, (m,)) for a, m in ((p.queries, p.nq), (p.keys, p.nk), (p.values, p.nk)))
    blocked = Problem(pad(q, qp), pad(k, kp), pad(v, kp), np.arange(kp) < p.nk, p.nq, p.nk, p.scale)
    return serve(model, blocked, *params, weights=False, static={"sizes": (qb, kb)})


def elementwise(program: Callable, *arrays: np.ndarray) -> list[np.ndarray]:
    """``program(*arrays)`` for a program that maps arrays (n,) entry by entry, compiled once per bucket: the
    arrays padded with zeros (in their own dtype) to ``bucket(n)``, each output cut back to its first n."""
    n = arrays[0].shape[0]
    size = bucket(n)
    padded = [np.concatenate([a, np.zeros(size - n, a.dtype)]) for a in arrays]
    return [corner(np.asarray(a), (n,)) for a in jax.tree.leaves(compiled(program)(*padded))]


def sized(program: Callable, n: int, *args: object) -> np.ndarray:
    """``program(*args, n, size=bucket(n))`` for a program that makes n values (n traced) in the first n of
    ``size`` slots, compiled once per bucket: its output cut to the n values."""
    return corner(np.asarray(compiled(program, ("size",))(*args, n, size=bucket(n))), (n,))
