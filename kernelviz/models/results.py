"""What training returns (``FitResult``), and runs that go on from where an earlier run stopped.

``kernelviz.models.training.run`` can start where an earlier run stopped (``training.Start``). Step t draws
the same hold-out set whatever the number of steps (``kernelviz.data.post.step_keys``) and Adam's step size
is constant, so the run of 100 steps continued to 150 is the run of 150 steps, number for number. A
``FitResult`` keeps what that needs as its ``TrainState``: the step it reached, its parameters and the
optimizer's state as the compiled loop holds them (standardised units), and a fingerprint of the data,
seed and settings it was trained with, so that a run only continues a run of its own kind.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import jax
import numpy as np

from kernelviz.models import training

__all__ = ["FitResult", "TrainState", "check_starts", "fingerprint", "joined", "starts", "state_of"]


class TrainState(NamedTuple):
    """Where a run stopped: ``step`` (its steps run), ``params`` and the optimizer state's leaves ``opt``
    after it, as the compiled loop holds them, and the ``fingerprint`` of what it was trained on."""

    step: int
    params: tuple[np.ndarray, ...]
    opt: tuple[np.ndarray, ...]
    fingerprint: str


@dataclass(frozen=True)
class FitResult:
    """A trained (multi-head) kernel smoother and the record of its training.

    ``lengthscales`` ℓ_h and ``mixing`` u_h have shape (heads,) in the Gaussian convention K = exp(−u²/2)
    (√2 ℓ is the blog post's). ``losses[t]`` is the loss at step t (before its update), ``trajectory[t]``
    the lengthscales after t updates (row 0 the start). A diverged run stops at its last finite parameters:
    ``losses`` and ``trajectory`` are then truncated to the ``steps_run`` completed steps, so they never
    hold NaN. ``method`` is "adam", "search" (kernels with a zero gradient in ℓ: the losses are those of the
    hold-out sets scored) or "sgd" (d2l's parametric pooling, whose losses are d2l's per-epoch Σ ½ error²);
    ``message`` is a sentence for the page, "" when there is nothing to say. ``state`` is where an Adam run
    stopped, which ``fit(..., start=result)`` continues to more steps.
    """

    lengthscales: np.ndarray
    mixing: np.ndarray
    losses: np.ndarray
    trajectory: np.ndarray
    method: str
    diverged: bool
    message: str
    steps_run: int
    kernel: str
    holdout: int
    learning_rate: float
    seed: int
    state: TrainState | None = None

    @property
    def heads(self) -> int:
        return int(self.lengthscales.shape[0])


def fingerprint(*parts: object) -> str:
    """SHA-256 over ``parts``: arrays by dtype and bytes, anything else by ``repr``."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            digest.update(part.dtype.str.encode() + np.ascontiguousarray(part).tobytes())
        else:
            digest.update(repr(part).encode())
        digest.update(b"\x00")
    return digest.hexdigest()


def check_starts(starts: Sequence[FitResult] | None, fingerprints: Sequence[str], steps: int) -> list:
    """The ``TrainState`` of each run to continue (None: a fresh run), one per seed; a ValueError when a
    start is not a run of the same data, seed and settings, or has run more than ``steps`` steps."""
    if starts is None:
        return [None] * len(fingerprints)
    if len(starts) != len(fingerprints):
        raise ValueError(f"give one run to continue per seed: {len(fingerprints)}, not {len(starts)}")
    states = [s.state for s in starts]
    for state, expected in zip(states, fingerprints, strict=True):
        if state is None or state.fingerprint != expected:
            raise ValueError("a run continues only a run of the same data, seed and settings (but steps)")
        if state.step > steps:
            raise ValueError(f"the run to continue has already run {state.step} steps, more than {steps}")
    return states


def starts(states: Sequence[TrainState | None], params0: tuple[np.ndarray, ...], slots: int,
           optimizer: str) -> training.Start:
    """``training.Start`` for ``slots`` runs (a leading axis on every leaf): each given state where there is
    one, step 0 (a fresh run from ``params0``) elsewhere."""
    leaves, tree = _optimizer_state(optimizer, tuple((np.shape(p), np.asarray(p).dtype.str) for p in params0))
    step = np.zeros(slots, np.int32)
    params = [np.zeros((slots, *np.shape(p)), np.asarray(p).dtype) for p in params0]
    opt = [np.zeros((slots, *leaf.shape), leaf.dtype) for leaf in leaves]
    for i, state in enumerate(states):
        if state is not None:
            step[i] = state.step
            for buf, value in zip([*params, *opt], [*state.params, *state.opt], strict=True):
                buf[i] = value
    return training.Start(step, tuple(params), jax.tree.unflatten(tree, opt))


@functools.lru_cache(maxsize=16)
def _optimizer_state(optimizer: str, params: tuple[tuple[tuple[int, ...], str], ...]) -> tuple[list, object]:
    """The leaves (shapes and dtypes) and structure of the optimizer's state for parameters of these shapes
    and dtypes (``jax.eval_shape``: traced once, nothing compiled)."""
    like = tuple(jax.ShapeDtypeStruct(shape, np.dtype(dtype)) for shape, dtype in params)
    return jax.tree.flatten(jax.eval_shape(training.OPTIMIZERS[optimizer](1.0).init, like))


def state_of(out: training.Trained, fingerprint_: str) -> TrainState:
    """The ``TrainState`` of one run's output (on the host)."""
    return TrainState(int(out.steps_run), tuple(np.asarray(p) for p in jax.tree.leaves(out.params)),
                      tuple(np.asarray(leaf) for leaf in jax.tree.leaves(out.opt)), fingerprint_)


def joined(earlier: FitResult | None, step: int, losses: np.ndarray,
           trajectory: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A continued run's record: ``earlier``'s losses of its first ``step`` steps and trajectory rows 0 …
    ``step``, then the new run's (``losses`` (steps run,) and ``trajectory`` (steps run + 1, H), whose
    earlier rows are ignored); the new run's own arrays when it started fresh (``earlier`` None)."""
    if earlier is None:
        return losses, trajectory
    return (np.concatenate([earlier.losses[:step], losses[step:]]),
            np.concatenate([earlier.trajectory[: step + 1], trajectory[step + 1:]]))
