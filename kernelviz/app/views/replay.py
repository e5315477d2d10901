"""Training replayed: the models at the parameter snapshots their compiled training kept
(``kernelviz.models.training.SNAPSHOTS`` evenly spaced steps, ``at_snapshot``), as the frames a chart
animates in the browser. Nothing is trained again: each frame is a prediction with a snapshot's params.

* chapter 4: ``LayerPath``, the layer's fit, every head's part and the learned kernels at each step;
* chapter 5: ``PretrainPath``, the learned kernels and window and the in-context error at each step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelviz.app import defaults
from kernelviz.app.views.incontext import kernel_view
from kernelviz.data.datasets import Dataset
from kernelviz.models.attention import AttentionFit, attention_kernel, attention_predict
from kernelviz.models.incontext import Pretrained
from kernelviz.models.incontext.evaluation import in_context_error

__all__ = ["LOSS_WINDOW", "LayerPath", "PretrainPath", "frame_indices", "layer_path", "pretrain_path",
           "recent_loss"]

LOSS_WINDOW = defaults.TAIL  # a frame's loss: the mean over the steps just before it, as the page's readout
KERNEL_STRIDE = 3  # the learned kernel's frames use every third grid point (a ninth of the cells)


def frame_indices(steps: np.ndarray) -> np.ndarray:
    """The snapshots that make frames: the first slot of each distinct step (a short run repeats steps)."""
    return np.unique(np.asarray(steps), return_index=True)[1]


def recent_loss(losses: np.ndarray, step: int, window: int = LOSS_WINDOW) -> float:
    """The mean of the ``window`` losses before ``step`` (NaN at step 0: no step taken yet)."""
    recent = np.asarray(losses)[max(0, step - window):step]
    return float(np.mean(recent)) if recent.size else float("nan")


@dataclass(frozen=True)
class LayerPath:
    """Chapter 4's training replayed at ``steps`` (T,): the layer's fit ``means`` (T, G) and each head's
    part ``head_outputs`` (T, H, G) on the fit chart's ``grid``, the mean hold-out ``losses`` (T,) before
    each step (``recent_loss``), and each head's learned kernel ``log_kernels`` (T, H, K, K) on ``kgrid``
    (every ``KERNEL_STRIDE``-th point of the still chart's). Arrays in float32."""

    steps: tuple[int, ...]
    losses: tuple[float, ...]
    grid: np.ndarray
    means: np.ndarray
    head_outputs: np.ndarray
    kgrid: np.ndarray
    log_kernels: np.ndarray


def layer_path(ds: Dataset, fit: AttentionFit, grid: np.ndarray, kgrid: np.ndarray) -> LayerPath:
    """The layer at each of its snapshots (``AttentionFit.at_snapshot``): f̂ and headₕ(x)·Uₕ on ``grid`` with
    the points of ``ds`` as keys and values (``attention_predict``), and log K_h on ``kgrid`` thinned
    (``attention_kernel`` on the full grid, the program the page already runs, then thinned). The last frame
    is the trained layer."""
    pick = frame_indices(fit.snapshot_steps)
    thin = slice(None, None, KERNEL_STRIDE)
    means, parts, kernels = [], [], []
    for j in pick:
        layer = fit.at_snapshot(int(j))
        p = attention_predict(layer, grid, ds.x, ds.y, with_weights=False)
        means.append(p.mean)
        parts.append(p.head_outputs)
        kernels.append(attention_kernel(layer, kgrid)[:, thin, thin])
    steps = tuple(int(fit.snapshot_steps[j]) for j in pick)
    return LayerPath(steps, tuple(recent_loss(fit.losses, k) for k in steps), np.asarray(grid),
                     np.asarray(means, np.float32), np.asarray(parts, np.float32), np.asarray(kgrid)[thin],
                     np.asarray(kernels, np.float32))


@dataclass(frozen=True)
class PretrainPath:
    """Chapter 5's pretraining replayed at ``steps`` (T,): each head's learned kernel ``kernels``
    (T, H, q, g) at the queries of ``kernel_view``, the layer's learned ``windows`` ℓ (T,) and its
    in-context ``errors`` (T,) on the fresh tasks the page scores it on."""

    steps: tuple[int, ...]
    kernels: np.ndarray
    windows: tuple[float, ...]
    errors: tuple[float, ...]


def pretrain_path(fit: Pretrained) -> PretrainPath:
    """The pretrained layer at each of its snapshots (``Pretrained.at_snapshot``): its kernels and window
    (``kernel_view``) and its error in context (``in_context_error``). The last frame is the layer."""
    pick = frame_indices(fit.snapshot_steps)
    layers = [fit.at_snapshot(int(j)) for j in pick]
    views = [kernel_view(layer) for layer in layers]
    return PretrainPath(tuple(int(fit.snapshot_steps[j]) for j in pick),
                        np.asarray([v.kernels for v in views], np.float32),
                        tuple(float(v.window) for v in views), tuple(map(in_context_error, layers)))
