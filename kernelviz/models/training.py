"""One training loop for every model of kernelviz: masked (hold-out) training with optax.

A model is a predictor of held-out rows from the remaining keys, ``predict(params, x_rows, available)``.
One step of masked training (the blog post's) holds out ``holdout`` random points, predicts them from
the others and moves the parameters down the hold-out squared error

    L = (1/k) Σ_{j held out} (y_j − f̂_{−held}(x_j))²,

with an optax optimizer (Adam for the post's models, SGD for d2l's). ``run`` is that loop, shared by the
multi-head kernel regression (``kernelviz.models.heads``), dot-product attention
(``kernelviz.models.attention``) and d2l's parametric pooling, whose objective is the full leave-one-out loss
(``kernelviz.models.loo.loo_loss``) instead of a random hold-out. Which parameters train is an argument (a
0/1 mask per parameter).

How it stays live:

* one ``jax.jit`` call per fit; the steps run in a ``lax.while_loop`` with a *traced* step count, writing
  into fixed buffers of ``STEPS_MAX`` losses and trajectory rows, and stopping at the first non-finite
  step (divergence) with the last finite parameters;
* hold-out sets are masks over the padded data, and the held-out rows run in chunks whose counts are
  traced loop bounds (``kernelviz.models.holdout``): one program serves every hold-out size;
* a run can go on from where an earlier one stopped (``Start``, ``kernelviz.models.results``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from kernelviz.runtime.i18n import _
from kernelviz.runtime.train import STEPS_MAX, TRAIN_MAX_POINTS, Prepared, check_data, prepare

__all__ = [
    "SNAPSHOTS",
    "STEPS_MAX",
    "TRAIN_MAX_POINTS",
    "Loop",
    "Prepared",
    "Settings",
    "Start",
    "Step",
    "Trained",
    "check_data",
    "diverged_message",
    "each_seed",
    "prepare",
    "run",
    "search",
    "snapshot_steps",
    "snapshots_kept",
    "update",
]

SNAPSHOTS = 50  # parameter snapshots a run keeps when asked: the start, the end and evenly spaced steps
OPTIMIZERS = {"adam": optax.adam, "sgd": optax.sgd}


def diverged_message(step: int, steps: int, learning_rate: float, what: str | None = None) -> str:
    """The sentence a page shows when ``run`` stopped at a non-finite step; ``what`` names the parameters
    by their symbol (e.g. "w"), None: "parameters"."""
    if what is None:
        text = _("Training diverged at step {step} of {steps} (the learning rate {rate:g} is too high for "
                 "this loss); the fit stops at the last finite parameters, after {done} steps.")
    else:
        text = _("Training diverged at step {step} of {steps} (the learning rate {rate:g} is too high for "
                 "this loss); the fit stops at the last finite {what}, after {done} steps.")
    return text.format(step=step + 1, steps=steps, rate=learning_rate, what=what, done=step)


# ---------------------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------------------


def snapshot_steps(steps: object) -> np.ndarray | Array:
    """The step whose parameters slot j of ``Trained.snapshots`` keeps: round(j · steps/(SNAPSHOTS − 1)),
    j = 0 … SNAPSHOTS − 1 (halves up, in integers), so slot 0 is the start and the last slot the end.
    ``steps`` may be traced."""
    j = np.arange(SNAPSHOTS)
    return (2 * j * steps + SNAPSHOTS - 1) // (2 * (SNAPSHOTS - 1))


def snapshots_kept(out: Trained, steps: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """A run's snapshots on the host: (the step each slot holds, ``snapshot_steps(steps)`` capped at the
    steps run, (SNAPSHOTS,); the params' leaves, each with its leading (SNAPSHOTS,) axis)."""
    at = np.minimum(snapshot_steps(int(steps)), int(out.steps_run))
    return at, [np.asarray(a) for a in jax.tree.leaves(out.snapshots)]


class Trained(NamedTuple):
    """What ``run`` returns: final ``params``, ``losses`` (STEPS_MAX,), ``trajectory`` (STEPS_MAX + 1, T)
    of ``record(params)`` after each step (row 0 the start), ``steps_run``, ``diverged`` and, when asked,
    ``snapshots``: the params at ``snapshot_steps(steps)``, each leaf with a leading (SNAPSHOTS,) axis
    (slots past a divergence keep the last finite params); ``opt`` the optimizer's state after the last
    step (None for ``search``)."""

    params: object
    losses: Array
    trajectory: Array
    steps_run: Array
    diverged: Array
    snapshots: object = None
    opt: object = None


class Start(NamedTuple):
    """Where ``run`` continues a run from: the ``step`` it reached (0: from ``params0``, as a fresh run), its
    ``params`` and its optimizer state ``opt`` there (``Trained.steps_run``, ``params`` and ``opt``)."""

    step: Array
    params: object
    opt: object


class Loop(NamedTuple):
    """The training loop's state after a step: the next ``step``, whether that step was finite (``ok``), the
    ``params`` and the optimizer's state ``opt``, the ``losses`` (STEPS_MAX,) and the ``trajectory``
    (STEPS_MAX + 1, T) so far."""

    step: Array
    ok: Array
    params: object
    opt: object
    losses: Array
    trajectory: Array


def _finite(tree: object, limit: float) -> Array:
    ok = jnp.asarray(True)
    for leaf in jax.tree.leaves(tree):
        ok = ok & jnp.all(jnp.isfinite(leaf)) & jnp.all(jnp.abs(leaf) < limit)
    return ok


class Step(NamedTuple):
    """One training step's outcome: the ``loss`` before it, the (masked) ``grads``, the new ``params`` and
    the optimizer's new state ``opt``."""

    loss: Array
    grads: object
    params: object
    opt: object


def update(objective: Callable[[object, Array], tuple[Array, object]],
           optimizer: optax.GradientTransformation, trainable: object, params: object, opt: object,
           step: Array) -> Step:
    """One step of masked training: the loss L and its gradient ∂L/∂θ on step ``step``'s hold-out set
    (``objective``), the gradient of each frozen parameter set to 0 (``trainable``: 1 trains, 0 freezes),
    then the optimizer's move θ ← θ + Δθ (Adam or SGD, ``optax``)."""
    loss, grads = objective(params, step)
    grads = jax.tree.map(jnp.multiply, grads, trainable)
    moves, opt = optimizer.update(grads, opt, params)
    return Step(loss, grads, optax.apply_updates(params, moves), opt)


class Settings(NamedTuple):
    """What ``run`` repeats the step with: the ``optimizer`` ("adam" or "sgd") at ``learning_rate`` (a
    number, or a function of the step), ``steps`` steps (traced), the bound ``limit`` on |params|, and
    ``record(params)``, the row the trajectory keeps after each step."""

    optimizer: str
    learning_rate: Array | Callable[[Array], Array]
    steps: Array
    limit: float
    record: Callable[[object], Array]


def run(objective: Callable[[object, Array], tuple[Array, object]], params0: object, trainable: object,
        settings: Settings, *, snapshots: bool = False, start: Start | None = None) -> Trained:
    """``settings.steps`` optimizer steps on ``objective(params, step) -> (loss, grads)``, in one while loop.

    Gradients are multiplied by ``trainable`` (a 0/1 pytree shaped like ``params0``), so frozen and padded
    parameters never move. A step whose loss, gradient or new parameters are not finite, or whose
    parameters leave (−``limit``, ``limit``), is not taken: the loop stops there (``diverged``) with the
    last finite parameters. ``losses[t]`` is step t's loss before its update. With ``snapshots`` the loop
    also keeps the parameters at ``snapshot_steps(steps)`` (``Trained.snapshots``). With ``start`` the loop
    continues an earlier run from its step, parameters and optimizer state (``_first``): step t draws
    the same hold-out set whatever the number of steps, so a run of 100 steps continued to 150 is the run
    of 150 steps; ``losses`` and ``trajectory`` then hold only the rows from ``start.step`` on. Call inside
    ``jax.jit``.
    """
    opt = OPTIMIZERS[settings.optimizer](settings.learning_rate)
    steps, record = settings.steps, settings.record

    def step(s: Loop) -> Loop:
        t = update(objective, opt, trainable, s.params, s.opt, s.step)
        good = jnp.isfinite(t.loss) & _finite(t.grads, jnp.inf) & _finite(t.params, settings.limit)
        keep = jax.tree.map(lambda a, b: jnp.where(good, a, b), (t.params, t.opt), (s.params, s.opt))
        params, opt_state = keep
        return Loop(jnp.where(good, s.step + 1, s.step), good, params, opt_state,
                    s.losses.at[s.step].set(jnp.where(good, t.loss, 0.0)),
                    s.trajectory.at[s.step + 1].set(jnp.where(good, record(params), 0.0)))

    first = _first(params0, opt.init(params0), record, start)
    end, snaps = (_in_segments(step, first, steps) if snapshots else
                  (jax.lax.while_loop(lambda s: (s.step < steps) & s.ok, step, first), None))
    return Trained(end.params, end.losses, end.trajectory, end.step, ~end.ok, snaps, end.opt)


def _first(params0: object, opt0: object, record: Callable[[object], Array], start: Start | None) -> Loop:
    """The loop's first state: step 0 at ``params0`` and the optimizer state ``opt0``, or, when ``start`` is
    given and past step 0, its step, params and optimizer state; the ``record`` of those params in the
    trajectory's row of that step."""
    step, params, opt = jnp.asarray(0, jnp.int32), params0, opt0
    if start is not None:
        on = start.step > 0
        params, opt = jax.tree.map(lambda a, b: jnp.where(on, a, b), (start.params, start.opt),
                                   (params0, opt0))
        step = jnp.asarray(start.step, jnp.int32)
    trajectory = jnp.zeros((STEPS_MAX + 1, *record(params).shape)).at[step].set(record(params))
    return Loop(step, jnp.asarray(True), params, opt, jnp.zeros(STEPS_MAX), trajectory)


def _in_segments(step: Callable[[Loop], Loop], start: Loop, steps: Array) -> tuple[Loop, object]:
    """The loop of ``run`` as SNAPSHOTS − 1 segments, segment j taking the steps up to
    at[j] = ``snapshot_steps(steps)[j]``, and the params after each (slot 0 the start): the loop itself is
    unchanged and a snapshot costs one copy of the params per segment. After a divergence the segments
    take no step, so their slots keep the last finite params; a segment of no step (steps <
    SNAPSHOTS − 1) repeats the slot before."""
    at = jnp.asarray(snapshot_steps(steps))
    snaps0 = jax.tree.map(lambda a: jnp.zeros((SNAPSHOTS, *jnp.shape(a))).at[0].set(a), start.params)

    def segment(j: Array, carry: tuple[Loop, object]) -> tuple[Loop, object]:
        s = jax.lax.while_loop(lambda s: (s.step < at[j]) & s.ok, step, carry[0])
        return s, jax.tree.map(lambda buf, leaf: buf.at[j].set(leaf), carry[1], s.params)

    return jax.lax.fori_loop(1, SNAPSHOTS, segment, (start, snaps0))


def search(objective: Callable[[object, Array], Array], candidates: object, sets: Array,
           record: Callable[[object], Array]) -> Trained:
    """The candidate with the least loss summed over the hold-out sets of steps 0 … ``sets`` − 1.

    For models whose loss has no useful gradient (the boxcar kernel's is flat almost everywhere): every
    candidate (a pytree with a leading candidate axis) is scored on the same hold-out sets Adam's steps
    would draw. ``losses[t]`` is set t's loss of the best candidate so far, ``trajectory[t + 1]`` that
    candidate's ``record``. Call inside ``jax.jit``.
    """
    first = jax.tree.map(lambda a: a[0], candidates)

    def body(i, c):
        total, losses, traj = c
        per = jax.vmap(lambda p: objective(p, i))(candidates)
        total = total + per
        k = jnp.argmin(total)
        best = jax.tree.map(lambda a: a[k], candidates)
        return total, losses.at[i].set(per[k]), traj.at[i + 1].set(record(best))

    size = jax.tree.leaves(candidates)[0].shape[0]
    traj0 = jnp.zeros((STEPS_MAX + 1, *record(first).shape)).at[0].set(record(first))
    total, losses, traj = jax.lax.fori_loop(0, sets, body, (jnp.zeros(size), jnp.zeros(STEPS_MAX), traj0))
    best = jax.tree.map(lambda a: a[jnp.argmin(total)], candidates)
    return Trained(best, losses, traj, jnp.asarray(sets, jnp.int32), jnp.asarray(False))


def each_seed(fn: Callable[[object], object], seeds: object, n_seeds: Array) -> object:
    """``fn(seed)`` for the first ``n_seeds`` of ``seeds``, one after another inside the program, stacked on
    a leading (len(seeds),) axis (rows past ``n_seeds`` stay 0): one program for one seed or several.
    ``seeds`` may be a pytree whose leaves share that leading axis (a seed's key and its ``Start``)."""

    def pick(k: object) -> object:
        return jax.tree.map(lambda a: a[k], seeds)

    size = jax.tree.leaves(seeds)[0].shape[0]
    shapes = jax.eval_shape(fn, pick(0))
    bufs0 = jax.tree.map(lambda s: jnp.zeros((size, *s.shape), s.dtype), shapes)

    def body(k, bufs):
        return jax.tree.map(lambda b, o: b.at[k].set(o), bufs, fn(pick(k)))

    return jax.lax.fori_loop(0, n_seeds, body, bufs0)
