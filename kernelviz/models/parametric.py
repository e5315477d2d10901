"""d2l's parametric attention pooling, trained as d2l trains it (and as its Kotlin/DJL port does).

    f(x) = Σ_i softmax_i(−((x − x_i) w)²/2) y_i,        w = 1/ℓ learnable,

d2l (the PyTorch/MXNet chapter) trains it by SGD (learning rate 0.5, 5 epochs, w from U(0, 1)) on the
full-batch loss Σ_i ½(y_i − f_{−i}(x_i))²: each training input is predicted from the key–value pairs of
all the other examples. The Kotlin/DJL port starts from w = 1 and takes SGD steps at learning rate 3 on
batches of 10 points in order (no shuffling), 10 epochs, with DJL's L2Loss (the mean over the batch of
½ error²), and each query's own pair is among its keys (``include_self=True``). The loop is
``kernelviz.models.training.run``, the same as masked training's; whether a point sees itself and the batch
size are traced arguments, so both procedures run one compiled program per data size.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from kernelviz.core import pooling
from kernelviz.core.kernels import Kernel, get_kernel, kernel_index, kernel_scores
from kernelviz.models import training
from kernelviz.models.heads import OUTSIDE, FitResult
from kernelviz.runtime import serve, train
from kernelviz.runtime.i18n import _
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import bucketed, check_int, paired, param, vector

__all__ = [
    "batch_count",
    "batch_rows",
    "fit_parametric",
    "parametric_loss",
    "validation_errors",
    "validation_losses",
]

W_LIMIT = 1e300  # |w| beyond this counts as diverged


def batch_rows(step: jax.Array, mask: jax.Array, batch_size: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Training step ``step``'s batch B as a mask of rows, and its factor c: every real point with c = 1
    (``batch_size`` 0, d2l's summed loss), or the points b·s … b·s + b − 1 (b the batch size, s = step mod
    the number of batches, points in their given order) with c = 1/|B| (DJL's L2Loss, the batch mean)."""
    index, n = jnp.arange(mask.shape[0]), jnp.sum(mask)
    batched, width = batch_size > 0, jnp.maximum(batch_size, 1)
    batch = step % jnp.where(batched, (n + width - 1) // width, 1)
    rows = mask & jnp.where(batched, index // width == batch, True)
    return rows, jnp.where(batched, 1.0 / jnp.maximum(jnp.sum(rows), 1), 1.0)


class Batches(NamedTuple):
    """d2l's training data as the loss reads it: the points ``x``, ``y`` (n,) and the ``mask`` of the real
    ones, the ``kernel``'s index, whether a point sees its own pair (``include_self``) and the
    ``batch_size`` (0: the full batch)."""

    x: jax.Array
    y: jax.Array
    mask: jax.Array
    kernel: jax.Array
    include_self: jax.Array
    batch_size: jax.Array


def parametric_loss(w: jax.Array, step: jax.Array, data: Batches) -> jax.Array:
    """The loss of training step ``step``: Σ_{i ∈ B} c ½(y_i − f(x_i))² over the step's batch B
    (``batch_rows``), f(x_i) = Σ_j softmax_j(log K((x_i − x_j) w)) y_j.

    f(x_i) pools the values of the other real points (``include_self`` false, d2l) or of all of them
    (true, the Kotlin port). Every row of the pairwise scores is computed (at most a few hundred points),
    so one program serves every batch size.
    """
    x, y, mask = data.x, data.y, data.mask
    rows, c = batch_rows(step, mask, data.batch_size)
    index = jnp.arange(x.shape[0])
    available = mask[None, :] & (data.include_self | (index[:, None] != index[None, :]))
    scores = kernel_scores(x, x, 1.0 / w, data.kernel, OUTSIDE)  # w = 1/ℓ
    mean = pooling.pool(scores, y, available).mean
    return c * jnp.sum(jnp.where(rows, 0.5 * jnp.square(mean - y), 0.0))


def _inverse(w):
    return jnp.reshape(1.0 / jnp.maximum(jnp.abs(w), 1e-300), (1,))


def _parametric_run(data: Batches, params0: tuple[jax.Array], trainable: tuple[jax.Array], loop: train.Loop,
                    *, optimizer: str) -> training.Trained:
    """``optimizer`` on ``parametric_loss`` from params0 = (w0,), in one while loop (``training.run``)."""
    objective = jax.value_and_grad(lambda p, step: parametric_loss(p[0], step, data))
    settings = training.Settings(optimizer, loop.learning_rate, loop.steps, W_LIMIT, lambda p: _inverse(p[0]))
    return training.run(objective, params0, trainable, settings)


def _message(diverged: bool, run: int, loop: train.Loop, k: Kernel, note: str) -> str:
    """What the page says about a run: divergence, a kernel without a gradient, a subsample."""
    sentences = [training.diverged_message(run, loop.steps, loop.learning_rate, "w")] if diverged else []
    if not k.differentiable:
        sentences.append(_("The {kernel} kernel's loss is flat in w almost everywhere (its gradient is "
                           "zero), so w stays where it starts.").format(kernel=k.label))
    return " ".join(sentences + ([note] if note else []))


def batch_count(n: int, batch_size: int | None) -> int:
    """Batches in one epoch of n points: 1 for the full batch (None), else ⌈n/batch_size⌉ (the last may be
    smaller: DJL keeps it)."""
    return 1 if batch_size is None else -(-int(n) // int(batch_size))


def _start(w0: float | None, seed: int) -> float:
    start = float(np.random.default_rng(int(seed)).uniform()) if w0 is None else float(w0)
    if not (math.isfinite(start) and start != 0):
        raise ValueError(f"w0 must be a finite non-zero number, not {w0!r}")
    return start


@float64
def fit_parametric(
    x: object,
    y: object,
    kernel: str = "gaussian",
    steps: int = 5,
    learning_rate: float = 0.5,
    w0: float | None = None,
    seed: int = 0,
    optimizer: str = "sgd",
    *,
    include_self: bool = False,
    batch_size: int | None = None,
) -> FitResult:
    """d2l's parametric attention pooling f(x) = Σ_i softmax_i(log K((x − x_i) w)) y_i, trained as d2l does.

    w plays 1/ℓ (ℓ = 1/|w|). It starts at ``w0``, or like d2l's ``torch.rand`` at a uniform draw from
    [0, 1) (``seed``), and takes ``steps`` steps of SGD (or ``optimizer="adam"``) on ``parametric_loss``.
    By default (d2l) each step is an epoch on the full batch, loss Σ_i ½(y_i − f_{−i}(x_i))², every training
    input predicted from the key–value pairs of all the others. ``batch_size`` b makes each step one batch
    of b points in order (⌈n/b⌉ steps an epoch), loss the batch mean of ½ error², and ``include_self``
    puts each point's own pair among its keys: with w0=1, learning_rate=3, batch_size=10, 10 epochs
    (steps=50) and include_self=True this is the Kotlin/DJL port. ``losses`` are each step's loss before
    its update. Data above ``TRAIN_MAX_POINTS`` points use a random subsample. One compiled call.
    """
    k = get_kernel(kernel)
    xs, ys = train.check_data(x, y)
    loop = train.check_loop(steps, learning_rate)
    if optimizer not in training.OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(training.OPTIMIZERS)}, not {optimizer!r}")
    p = train.prepare(xs, ys, int(seed), scaled=False)  # d2l's losses are in the data's units
    batch = 0 if batch_size is None else check_int("batch_size", batch_size, 1, p.n)
    data = Batches(p.x, p.y, p.mask, kernel_index(k.name), bool(include_self), batch)
    params = (train.Param(np.float64(_start(w0, seed)), ()),)
    f = train.cut(train.fit(_parametric_run, data, params, loop, static={"optimizer": optimizer}, lean=False),
                  train.Readout(params, loop.steps))
    return FitResult(
        lengthscales=np.array([1.0 / max(abs(float(f.params[0])), 1e-300)]),
        mixing=np.array([1.0]),
        losses=f.losses,
        trajectory=f.trajectory,
        method=optimizer,
        diverged=f.diverged,
        message=_message(f.diverged, f.steps_run, loop, k, p.note),
        steps_run=f.steps_run,
        kernel=k.name,
        holdout=0 if include_self else 1,
        learning_rate=loop.learning_rate,
        seed=int(seed),
    )


def validation_losses(x: object, y: object, x_val: object, y_val: object, ws: object,
                      kernel: str = "gaussian", batch_size: int | None = None) -> np.ndarray:
    """The Kotlin/DJL port's validation loss at each w of ``ws``: the pooling over all training pairs,

        f_w(x) = Σ_i softmax_i(log K((x − x_i) w)) y_i,     e_j(w) = ½(y_val,j − f_w(x_val,j))²,

    scored like DJL's ``EasyTrain.fit`` scores its validation set after an epoch: L2Loss (the batch mean of
    e_j) on batches of ``batch_size`` validation points in order, averaged over the batches (the last may
    be smaller: DJL keeps it); ``batch_size`` None is one batch, the mean of all e_j. The port's set is
    x_val = arange(0, 5, 0.1), y_val = f(x_val) without noise, batches of 10. A validation point with no
    training input inside a compact kernel's window has no prediction: its loss is NaN.
    """
    xs, ys = training.check_data(x, y)
    xv, yv = paired(x_val, y_val, 1, "the validation set needs at least one point")
    w = vector("ws", ws)
    k = get_kernel(kernel)
    p = serve.problem(xv, xs, ys, scaled=False)  # the validation points are the queries
    e = serve.call(validation_errors, bucketed(w, 1.0), p.queries, param(yv, p.queries.shape[0]), p.keys,
                   p.values, p.available, kernel_index(k.name))
    e, nv = serve.cut(e, (w.shape[0], p.nq)), p.nq
    size = nv if batch_size is None else check_int("batch_size", batch_size, 1, nv)
    starts = range(0, nv, size)
    return np.mean([e[:, b : b + size].mean(axis=1) for b in starts], axis=0)


def validation_errors(ws: jax.Array, xv: jax.Array, yv: jax.Array, xs: jax.Array, ys: jax.Array,
                      mask: jax.Array, kernel: jax.Array) -> jax.Array:
    """e_j(w) = ½(y_val,j − f_w(x_val,j))² for every w (rows) and validation point (columns), f_w the
    pooling over the training pairs (x_i, y_i) of ``mask`` with kernel scores at ℓ = 1/w."""

    def errors(wk: jax.Array) -> jax.Array:
        return 0.5 * jnp.square(pooling.pool(kernel_scores(xv, xs, 1.0 / wk, kernel), ys, mask).mean - yv)

    return jax.lax.map(errors, ws)  # one w at a time: temporaries (validation × training), not × w
