"""The training adapter, serving's twin (``kernelviz.runtime.serve``): checks, padding, mask, scaling, jit,
float64 and slicing, once for every trainer of kernelviz.

A trainer is a program written over padded arrays with a mask, ``program(data, params0, trainable, *args)
-> Trained`` (the loop ``kernelviz.models.training.run``, its outputs (``params``, ``losses``,
``trajectory``, ``steps_run``, ``diverged``, ``snapshots``) with a leading seed axis or without).
The adapter does the rest, the same way for every trainer:

1. checks: the data are finite vectors of one length, three points and two distinct x (``check_data``), and
   the loop's settings (``check_loop``);
2. padding: above ``TRAIN_MAX_POINTS`` points a random subsample; the points padded to a bucket with the mask
   of the real ones (``prepare``); each parameter padded to its slots (heads, widths) with a mask of what
   trains (``param``, ``Param``), so no control ever changes a compiled shape;
3. scaling: y divided by max |y| (``Prepared.scale``) and x standardised (``Prepared.xt``), the losses and
   recorded values multiplied back (``Readout``);
4. compiling: one ``jax.jit`` of each trainer (``lean_jit`` for the large ones), run in float64 (``fit``);
5. slicing: the parameters, snapshots, losses and trajectory cut to the real slots and steps (``cut``).

It also chooses what training runs in the place of a formula shown on the pages: the formula's fast form,
registered beside it and tested equal (``register_fast``, ``fast``; the hold-out split,
``kernelviz.models.holdout_fast``); ``fast_forms(False)`` runs the formulas, for the benchmarks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import jax
import numpy as np

from kernelviz.runtime.i18n import _
from kernelviz.runtime.jax_setup import float64, lean_jit
from kernelviz.runtime.shapes import (
    Param,
    bucket,
    check_int,
    check_positive,
    corner,
    pad,
    paired,
    param,
    unslot,
    value_scale,
)

__all__ = [
    "STEPS_MAX",
    "TRAIN_MAX_POINTS",
    "Fitted",
    "Loop",
    "Param",
    "Prepared",
    "Readout",
    "call",
    "check_data",
    "check_loop",
    "compiled",
    "cut",
    "fast",
    "fast_forms",
    "fit",
    "param",
    "prepare",
    "register_fast",
    "seeds_of",
    "starts",
]

STEPS_MAX = 2000  # size of the loss and trajectory buffers; steps may be 1 … STEPS_MAX
# Above this many points training uses a random subsample of this size: the smallest padded size, so
# training on any data set runs the programs the warm-up compiled, and a slider move stays live.
TRAIN_MAX_POINTS = 256


class Prepared(NamedTuple):
    """Training data, padded to a bucket: ``x`` as given, ``xt`` = (x − center)/span (so ℓ̃ = ℓ/span inside
    the compiled loop), ``y`` divided by ``scale`` = max |y| (1 unscaled), ``mask`` the n real points;
    ``note`` says when a subsample was drawn."""

    x: np.ndarray
    xt: np.ndarray
    y: np.ndarray
    mask: np.ndarray
    n: int
    scale: float
    span: float
    note: str

    @property
    def real(self) -> tuple[np.ndarray, np.ndarray]:
        """The n real points (x, y), y as the program sees it (divided by ``scale``)."""
        return self.x[: self.n], self.y[: self.n]


def check_data(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """x and y as finite float arrays of one length, at least 3 points and 2 distinct x, or a ValueError."""
    xs, ys = paired(x, y, 3, "training needs at least three points (one to hold out, two to predict from)")
    if float(np.ptp(xs)) <= 0:
        raise ValueError("training needs at least two distinct x values")
    return xs, ys


def prepare(xs: np.ndarray, ys: np.ndarray, seed: int, *, scaled: bool = True) -> Prepared:
    """Subsample (above ``TRAIN_MAX_POINTS``), pad, scale y (``scaled=False``: y as given) and standardise x
    for a training run."""
    note = ""
    if xs.shape[0] > TRAIN_MAX_POINTS:
        pick = np.sort(np.random.default_rng(seed).choice(xs.shape[0], TRAIN_MAX_POINTS, replace=False))
        note = _("Trained on a random subsample of {m} of the {n} points.").format(m=TRAIN_MAX_POINTS,
                                                                                   n=xs.shape[0])
        xs, ys = xs[pick], ys[pick]
    n, size = xs.shape[0], bucket(xs.shape[0])
    scale = value_scale(ys) if scaled else 1.0
    xp = pad(xs, size, xs[0])  # padded keys sit at a real x: no huge distance, and they are masked anyway
    center, span = 0.5 * (float(np.max(xs)) + float(np.min(xs))), float(np.ptp(xs))
    mask = np.arange(size) < n
    return Prepared(xp, (xp - center) / span, pad(ys / scale if scaled else ys, size), mask, n, scale, span,
                    note)


class Loop(NamedTuple):
    """A run's checked loop settings: ``steps`` (1 … ``STEPS_MAX``) and the ``learning_rate`` (> 0)."""

    steps: int
    learning_rate: float


def check_loop(steps: object, learning_rate: object) -> Loop:
    """``steps`` and ``learning_rate`` checked (a ValueError names the one out of range)."""
    return Loop(check_int("steps", steps, 1, STEPS_MAX), check_positive("the learning rate", learning_rate))


def _corner(shape: tuple[int, ...], real: tuple[int, ...]) -> np.ndarray:
    mask = np.zeros(shape)
    mask[tuple(slice(s) for s in real)] = 1.0
    return mask


def starts(params: Sequence[Param]) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """(params0, trainable): the padded starts and the 0/1 masks of the real entries that train, each in
    its parameter's ``dtype``."""
    params0 = tuple(p.start.astype(p.dtype) for p in params)
    trainable = tuple((_corner(p.start.shape, p.real) * p.trains).astype(p.dtype) for p in params)
    return params0, trainable


@functools.cache
def compiled(program: Callable, static: tuple[str, ...] = (), lean: bool = True) -> Callable:
    """``program`` compiled once (``lean_jit``, or ``jax.jit`` with XLA's defaults when not ``lean``;
    ``static`` names the arguments that choose a program)."""
    return (lean_jit if lean else jax.jit)(program, static_argnames=static)


@float64
def call(program: Callable, *args: object, static: dict[str, object] | None = None, lean: bool = True) -> Any:
    """``program(*args, **static)`` compiled once (step 4), in float64, its output on the host (NumPy
    leaves, still padded)."""
    static = static or {}
    return jax.tree.map(np.asarray, compiled(program, tuple(static), lean)(*unslot(args), **static))


def fit(program: Callable, data: object, params: Sequence[Param], *args: object,
        static: dict[str, object] | None = None, lean: bool = True) -> Any:
    """``program(data, params0, trainable, *args, **static)`` by ``call``: ``params0`` and ``trainable``
    from ``params`` (step 2, ``starts``)."""
    params0, trainable = starts(params)
    return call(program, data, params0, trainable, *args, static=static, lean=lean)


class Readout(NamedTuple):
    """How a run's output reads in the data's units: its ``params`` (their real shapes), the ``steps`` asked
    for, the losses times ``loss_scale``, the trajectory times ``record_scale`` and cut to ``record_cols``
    columns (None: all)."""

    params: Sequence[Param]
    steps: int
    loss_scale: float = 1.0
    record_scale: float = 1.0
    record_cols: int | None = None


class Fitted(NamedTuple):
    """One run on the host, cut to its real slots and steps (step 5): ``params`` (real shapes), ``losses``
    (steps_run,), ``trajectory`` (steps_run + 1, …), ``steps_run``, ``diverged``, the step each snapshot
    holds and the ``snapshots`` (each with its leading (SNAPSHOTS,) axis; () when none were kept), and
    ``out``, the run's output as the loop left it (padded: where a continued run starts)."""

    params: tuple[np.ndarray, ...]
    losses: np.ndarray
    trajectory: np.ndarray
    steps_run: int
    diverged: bool
    snapshot_steps: np.ndarray
    snapshots: tuple[np.ndarray, ...]
    out: Any


def cut(out: Any, r: Readout, snapshot_steps: Callable[[int], np.ndarray] | None = None) -> Fitted:
    """One run's output (no seed axis) cut to its real slots and steps, in the data's units (step 5);
    ``snapshot_steps(steps)`` names the step each kept snapshot holds."""
    run, leaves = int(out.steps_run), jax.tree.leaves(out.params)
    reals = [p.real for p in r.params]
    params = tuple(corner(np.asarray(a, np.float64), real) for a, real in zip(leaves, reals, strict=True))
    cols = (slice(None),) if r.record_cols is None else (slice(None), slice(r.record_cols))
    trajectory = np.array(np.asarray(out.trajectory, np.float64)[: run + 1][cols]) * r.record_scale
    snaps: tuple[np.ndarray, ...] = ()
    at = np.zeros(0, int)
    if out.snapshots is not None and snapshot_steps is not None:
        at = np.minimum(snapshot_steps(int(r.steps)), run)
        snaps = tuple(corner(np.asarray(a), real, 1)
                      for a, real in zip(jax.tree.leaves(out.snapshots), reals, strict=True))
    return Fitted(params, np.array(np.asarray(out.losses)[:run]) * r.loss_scale, trajectory, run,
                  bool(out.diverged), at, snaps, out)


def seeds_of(out: Any, count: int) -> list[Any]:
    """The first ``count`` runs of an output with a leading seed axis, one output each."""
    return [jax.tree.map(lambda a, i=i: a[i], out) for i in range(count)]


_FAST: dict[Callable, Callable] = {}
_ON = [True]


def register_fast(formula: Callable, fast_form: Callable) -> None:
    """Record ``fast_form`` as what training runs in the place of ``formula`` (tested equal to it)."""
    _FAST[formula] = fast_form


def fast(formula: Callable) -> Callable:
    """What training runs for ``formula``: its registered fast form, or the formula itself (none, or the
    fast forms switched off)."""
    return _FAST.get(formula, formula) if _ON[0] else formula


@contextmanager
def fast_forms(on: bool) -> Iterator[None]:
    """Training programs traced inside run the fast forms (True) or the formulas (False)."""
    before, _ON[0] = _ON[0], bool(on)
    try:
        yield
    finally:
        _ON[0] = before
