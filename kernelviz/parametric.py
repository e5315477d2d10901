"""d2l's parametric attention pooling, trained as d2l trains it.

    f(x) = Σ_i softmax_i(−((x − x_i) w)²/2) y_i,        w = 1/ℓ learnable,

trained by SGD (learning rate 0.5, 5 epochs, w from U(0, 1)) on the full-batch leave-one-out loss
Σ_i ½(y_i − f_{−i}(x_i))² (``kernelviz.loo.loo_loss``): each training input is predicted from the key–value
pairs of all the other examples. The loop is ``kernelviz.training.run``, the same as masked training's.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from kernelviz import training
from kernelviz.heads import OUTSIDE, FitResult
from kernelviz.kernels import get_kernel, kernel_index
from kernelviz.loo import loo_loss
from kernelviz.shapes import check_int, check_positive

__all__ = ["fit_parametric"]

W_LIMIT = 1e300  # |w| beyond this counts as diverged


def _d2l_objective(x, y, mask, kernel):
    """w ↦ (Σ_i ½(y_i − f_{−i}(x_i))², its gradient): d2l's summed L2 loss, every point predicted from
    all the others."""
    n = jnp.sum(mask)
    return jax.value_and_grad(lambda w: 0.5 * n * loo_loss(w, x, y, mask, kernel, OUTSIDE))


def _inverse(w):
    return jnp.reshape(1.0 / jnp.maximum(jnp.abs(w), 1e-300), (1,))


@partial(jax.jit, static_argnames=("optimizer",))
def _parametric_run(x, y, mask, w0, kernel, steps, learning_rate, optimizer):
    value_and_grad = _d2l_objective(x, y, mask, kernel)
    return training.run(lambda w, step: value_and_grad(w), w0, 1.0, optimizer=optimizer,
                        learning_rate=learning_rate, steps=steps, limit=W_LIMIT, record=_inverse)


def fit_parametric(
    x: object,
    y: object,
    kernel: str = "gaussian",
    steps: int = 5,
    learning_rate: float = 0.5,
    w0: float | None = None,
    seed: int = 0,
    optimizer: str = "sgd",
) -> FitResult:
    """d2l's parametric attention pooling f(x) = Σ_i softmax_i(log K((x − x_i) w)) y_i, trained as d2l does.

    w plays 1/ℓ (ℓ = 1/|w|). It starts at ``w0``, or like d2l's ``torch.rand`` at a uniform draw from
    [0, 1) (``seed``), and takes ``steps`` full-batch steps (d2l's epochs) of SGD (or ``optimizer="adam"``)
    on d2l's loss Σ_i ½(y_i − f_{−i}(x_i))², each training input predicted from the key–value pairs of
    all the others; ``losses`` are that loss per epoch, before the epoch's update, as d2l prints it. Data
    above ``TRAIN_MAX_POINTS`` points use a random subsample. One compiled call.
    """
    k = get_kernel(kernel)
    xs, ys = training.check_data(x, y)
    st = check_int("steps", steps, 1, training.STEPS_MAX)
    lr = check_positive("the learning rate", learning_rate)
    if optimizer not in training.OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {', '.join(training.OPTIMIZERS)}, not {optimizer!r}")
    start = float(np.random.default_rng(int(seed)).uniform()) if w0 is None else float(w0)
    if not (math.isfinite(start) and start != 0):
        raise ValueError(f"w0 must be a finite non-zero number, not {w0!r}")
    p = training.prepare(xs, ys, int(seed))
    out = jax.tree.map(np.asarray, _parametric_run(p.x, p.y * p.scale, p.mask, start, kernel_index(k.name),
                                                    st, lr, optimizer))
    run = int(out.steps_run)
    sentences = [training.diverged_message(run, st, lr, "w")] if bool(out.diverged) else []
    if not k.differentiable:
        sentences.append(f"The {k.label} kernel's loss is flat in w almost everywhere (its gradient is "
                         "zero), so w stays where it starts.")
    sentences += [p.note] if p.note else []
    return FitResult(
        lengthscales=np.array([1.0 / max(abs(float(out.params)), 1e-300)]),
        mixing=np.array([1.0]),
        losses=np.array(out.losses[:run]),
        trajectory=np.array(out.trajectory[: run + 1]).reshape(-1, 1),
        method=optimizer,
        diverged=bool(out.diverged),
        message=" ".join(sentences),
        steps_run=run,
        kernel=k.name,
        holdout=1,
        learning_rate=lr,
        seed=int(seed),
    )
