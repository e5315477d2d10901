"""The one adapter between a model's formula and the caller: checks, padding, mask, jit, scaling, slicing.

A model is written for one regression problem, as its page's formula, over arrays with a mask, and returns
its outputs by name, as a ``Pooled`` record::

    model(queries (q,), keys (n,), values (n,), available (n,), *params)
        → Pooled(mean (…, q), var (…, q), head_means (…, H, q), head_vars (…, H, q), weights (…, [H,] q, n))

(the heads' fields and the weights None where the model has none). ``available`` says which keys are real,
so the model runs unchanged on padded arrays. ``serve`` does the rest, the same way for every model:

1. checks: queries, keys and values are finite vectors, keys and values of one length, at least one pair;
2. padding: queries and keys padded to a few bucket sizes (``shapes.bucket``) with the mask, so a slider
   never changes a compiled shape;
3. scaling: values divided by max |v| (``shapes.value_scale``), so (v − m)² cannot overflow, and the means
   and stds multiplied back;
4. compiling: one ``jax.jit`` of the model per model (``compiled``), parameters traced;
5. slicing: each field of the record cut back to the real queries, keys and heads where ``FIELDS`` says its
   axes are (counted from the end, so a leading axis of a grid or of a token's components stays whole), as
   NumPy arrays; a model that returns anything but a ``Pooled`` record is refused with a TypeError.

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
from typing import Any, NamedTuple

import jax
import numpy as np
from jax import Array

from kernelviz.runtime.shapes import bucket, corner, pad, unslot, value_scale, vector

__all__ = ["FIELDS", "Axes", "Grid", "Pooled", "Problem", "Served", "call", "compiled", "cut", "elementwise",
           "over", "problem", "read", "run", "serve", "sized", "streamed"]


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


class Pooled(NamedTuple):
    """What a served model returns, by name (also what ``kernelviz.core.pooling.pool`` returns): at the
    queries, the ``mean`` m and variance ``var`` s² (q,) (the mixture's, for several heads), the heads' own
    ``head_means`` and ``head_vars`` (…, H, q), and the ``weights`` (q, n), or the heads' (H, q, n) in a
    record with heads; None where the model has none. ``FIELDS`` says where each keeps its axes."""

    mean: Array
    var: Array
    head_means: Array | None = None
    head_vars: Array | None = None
    weights: Array | None = None


def _times(a: np.ndarray, scale: float) -> np.ndarray:
    return a * scale


def _std(a: np.ndarray, scale: float) -> np.ndarray:
    return np.sqrt(a) * scale


def _copy(a: np.ndarray, scale: float) -> np.ndarray:
    return np.array(a)


class Axes(NamedTuple):
    """Where one field of ``Pooled`` keeps its ``heads``, ``queries`` and ``keys``, counted from the end
    (None: no such axis; the axes before them are kept whole), and how ``read`` gives it: its name in
    ``Served`` and its ``unit``, (cut array, value scale) → array in the data's units."""

    served: str
    unit: Callable[[np.ndarray, float], np.ndarray]
    heads: int | None
    queries: int
    keys: int | None = None


# Means times the value scale, variances as stds √s² times the scale, weights as they are. The weights' head
# axis is read only in a record with heads, whose weights are the heads' (H, q, n).
FIELDS = {
    "mean": Axes("mean", _times, heads=None, queries=-1),
    "var": Axes("std", _std, heads=None, queries=-1),
    "head_means": Axes("head_means", _times, heads=-2, queries=-1),
    "head_vars": Axes("head_stds", _std, heads=-2, queries=-1),
    "weights": Axes("weights", _copy, heads=-3, queries=-2, keys=-1),
}


class Served(NamedTuple):
    """A model's output on the real problem, in the data's units (``read`` of its ``Pooled`` record):
    ``mean`` and ``std`` (…, q), the heads' own means and stds (…, H, q, cut to the real heads; None without
    heads), and the weights (…, [H,] q, n) or None."""

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


def run(model: Callable, p: Problem, *params: object, static: dict[str, object] | None = None) -> Any:
    """``model(p.queries, p.keys, p.values, p.available, *params, **static)``, compiled once (step 4), its
    outputs as NumPy arrays in the structure the model returns them (a ``Pooled`` record, a tuple), still
    padded and scaled: for a model whose outputs are not means and variances at the queries (a loss over
    the points, say), or for ``read``. A ``shapes.Param`` among ``params`` (a parameter in its head or width
    slots) is passed padded."""
    static = static or {}
    out = compiled(model, tuple(static))(p.queries, p.keys, p.values, p.available, *unslot(params), **static)
    return jax.tree.map(np.asarray, out)


def serve(model: Callable, p: Problem, *params: object, heads: int | None = None, weights: bool = True,
          static: dict[str, object] | None = None) -> Served:
    """Run ``model(p.queries, p.keys, p.values, p.available, *params, **static)`` (steps 4–5 above) and
    ``read`` its ``Pooled`` record: ``heads``, the real heads of a record with heads, cuts their axis;
    ``weights=False`` drops the weights."""
    return read(run(model, p, *params, static=static), p, heads=heads, weights=weights, model=model)


def _name(model: object) -> str:
    return getattr(model, "__qualname__", None) or "the served model"


def read(out: Pooled, p: Problem, *, heads: int | None = None, weights: bool = True,
         model: object = None) -> Served:
    """A served model's padded, scaled ``Pooled`` record (``run``, ``over``) as a ``Served`` (step 5), field
    by field where ``FIELDS`` says its axes are: means × scale and stds √s² × scale cut to the real
    queries, the weights to the real queries and keys, and, in a record with heads, every head axis to the
    ``heads`` real heads (``heads`` is given exactly when the record has heads). Anything but a ``Pooled``
    record is a TypeError, a field whose axes are not the padded problem's a ValueError, each naming
    ``model``."""
    name = _name(model)
    if not isinstance(out, Pooled) or out.mean is None or out.var is None:
        raise TypeError(f"{name} must return a serve.Pooled record (its outputs by name, mean and var at "
                        f"least), not {type(out).__name__}")
    has_heads = out.head_means is not None or out.head_vars is not None
    if has_heads != (heads is not None):
        raise ValueError(f"{name} returns {'the' if has_heads else 'no'} heads' moments: serve it "
                         f"{'with' if has_heads else 'without'} heads=, the count of real heads")
    kept = out if weights else out._replace(weights=None)
    return Served(**{FIELDS[field].served: _read_field(name, field, a, p, heads)
                     for field, a in kept._asdict().items()})


def _read_field(name: str, field: str, a: np.ndarray | None, p: Problem, heads: int | None
                ) -> np.ndarray | None:
    """One field of a ``Pooled`` record cut to the real queries, keys and heads (``FIELDS``), in the data's
    units; a ValueError when it lacks an axis or an axis is not the padded problem's size."""
    if a is None:
        return None
    axes = FIELDS[field]
    index = [slice(None)] * a.ndim
    for axis, real, size in ((axes.queries, p.nq, p.queries.shape[0]), (axes.keys, p.nk, p.keys.shape[0]),
                             (axes.heads, heads, None)):
        if axis is None or real is None:
            continue
        fits = a.ndim >= -axis and (a.shape[axis] >= real if size is None else a.shape[axis] == size)
        if not fits:
            want = f"at least {real}" if size is None else size
            raise ValueError(f"{name}'s {field} has shape {a.shape}: its axis {axis} should hold {want} "
                             "padded entries")
        index[axis] = slice(real)
    return axes.unit(a[tuple(index)], p.scale)


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


def over(model: Callable, p: Problem, grid: Grid, *params: object) -> Any:
    """``model(p.queries, p.keys, p.values, p.available, g, *params)`` for the padded grid g (``Grid``), its
    outputs' leading axis cut to the grid's G values: (G, …) each, in the structure the model returns them
    (a ``Pooled`` record, which ``read`` cuts and scales; a tuple), still padded in the queries and
    scaled."""
    count = grid.values.shape[0]
    size = -(-count // grid.block) * grid.block
    padded = pad(grid.values, size, grid.fill)
    parts = [padded[i : i + grid.block] for i in range(0, size, grid.block)] if grid.chunks else [padded]
    outs = [run(model, p, part, *params) for part in parts]
    return jax.tree.map(lambda *column: np.concatenate(column)[:count], *outs)


def streamed(model: Callable, p: Problem, *params: object, query_block: int, key_block: int) -> Served:
    """``model(queries, keys, values, available, *params, sizes=(qb, kb))`` for a model that pools key blocks
    of kb keys one at a time over query blocks of qb queries, without weights: the queries padded to whole
    query blocks, the keys to a power-of-two count of key blocks (few compiled shapes), each block no larger
    than the padded data; its ``Pooled`` record read as ``serve`` reads it."""
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
