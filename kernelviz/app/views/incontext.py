"""Chapter 5's views: what a pretrained in-context layer (``kernelviz.models.incontext``) draws on the page.

Frozen NumPy containers and pure functions of a ``Pretrained`` layer, no streamlit:

* ``other_kind``, the page's settings (a ``PretrainRequest``, ``page_settings.IN_CONTEXT``) with the other
  attention;
* ``KernelView``, each head's learned kernel K_h(x, x + δ) at a few queries, as a function of δ = x′ − x;
* ``TaskView``, one fresh task the layer never saw: its context, the true f on sorted queries, the layer's
  prediction with its band, Nadaraya–Watson at a given ℓ and the attention weights;
* ``direction``, whether a sweep's windows move the way the theory says.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kernelviz.app.views.notches import replace
from kernelviz.data import tasks
from kernelviz.models.incontext import Pretrained, PretrainRequest, in_context_predict
from kernelviz.models.incontext.evaluation import EVAL_SEED, SweepRow, learned_kernel, learned_window
from kernelviz.models.smoothing import nadaraya_watson

__all__ = [
    "KERNEL_QUERIES",
    "OFFSET_POINTS",
    "TASK_QUERIES",
    "KernelView",
    "TaskView",
    "direction",
    "kernel_view",
    "other_kind",
    "task_view",
]

KERNEL_QUERIES = (-0.6, 0.0, 0.6)  # the queries x at which the page draws each head's kernel
OFFSET_POINTS = 161  # offsets δ = x′ − x on [−OFFSET_SPAN, OFFSET_SPAN]
OFFSET_SPAN = 0.5
TASK_QUERIES = 96  # sorted query points of the fresh task's figure and heatmap rows
TASK_SEED = 2 * EVAL_SEED  # fresh tasks of the figure: keys neither pretraining nor the error readouts use


def other_kind(s: PretrainRequest) -> PretrainRequest:
    """The same settings with the other attention: softmax ↔ linear."""
    return replace(s, kind="linear" if s.kind == "softmax" else "softmax")


class KernelView(NamedTuple):
    """``offsets`` δ (g,), the ``queries`` x (q,), each head's K_h(x, x + δ) = exp(s_h(x, x + δ) − s_h(x,
    x)) (H, q, g), each head's window ``lengthscales`` ℓ_h(x) (H, q) and the layer's ``window``."""

    offsets: np.ndarray
    queries: np.ndarray
    kernels: np.ndarray
    lengthscales: np.ndarray
    window: float


def kernel_view(fit: Pretrained, queries: tuple[float, ...] = KERNEL_QUERIES) -> KernelView:
    """The learned kernels of ``fit`` as functions of δ = x′ − x at ``queries`` (``learned_kernel``),
    normalised to 1 at δ = 0, with the widths ``learned_window`` reads from the scores."""
    offsets = np.linspace(-OFFSET_SPAN, OFFSET_SPAN, OFFSET_POINTS)
    log_k = learned_kernel(fit, queries, offsets)
    window = learned_window(fit, queries)
    kernels = np.exp(np.clip(log_k, -60.0, 60.0))
    return KernelView(offsets, np.asarray(queries, float), kernels, window.lengthscales,
                      learned_window(fit).window)


class TaskView(NamedTuple):
    """A fresh task: the context ``x``, ``y`` (n,, sorted by x), ``queries`` (q,, sorted) with the true f
    there (``truth``), the layer's ``mean`` and ``std`` (√var), Nadaraya–Watson's ``nw_mean`` at
    ``lengthscale``, the layer's attention ``weights`` (H, q, n) and the head mixing ``mixing`` (H,)."""

    x: np.ndarray
    y: np.ndarray
    queries: np.ndarray
    truth: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    nw_mean: np.ndarray
    lengthscale: float
    weights: np.ndarray
    mixing: np.ndarray


def task_view(fit: Pretrained, lengthscale: float, task: int = 0) -> TaskView:
    """Task number ``task`` of the family ``fit`` was pretrained on (drawn from keys pretraining never used,
    ``TASK_SEED`` + task): the first ``fit.n`` of ``tasks.N_MAX`` points drawn as the context, and
    ``TASK_QUERIES`` query points on which the true f is known; the layer's in-context prediction
    (``in_context_predict``) beside Nadaraya–Watson at ``lengthscale`` on the same context."""
    family = tasks.Task(fit.family, fit.roughness, fit.noise)
    # the first n of N_MAX points: n is no shape to compile
    p = tasks.sample_prompts(family, tasks.N_MAX, 1, TASK_SEED + int(task), queries=TASK_QUERIES)
    order, qorder = np.argsort(p.x[0, : fit.n]), np.argsort(p.xq[0])
    x, y, q, f = p.x[0, : fit.n][order], p.y[0, : fit.n][order], p.xq[0][qorder], p.fq[0][qorder]
    pred = in_context_predict(fit, x, y, q)
    nw = nadaraya_watson(q, x, y, lengthscale, with_weights=False)
    return TaskView(x, y, q, f, pred.mean, pred.std, np.asarray(nw.mean),
                    float(lengthscale), pred.weights, fit.mixing.copy())


def direction(rows: list[SweepRow], base_roughness: float, base_noise: float) -> tuple[bool, bool]:
    """(the window narrows as roughness rises at ``base_noise``, it widens as the label noise rises at
    ``base_roughness``), read from ``window_sweep``'s rows by their two ends: the roughest (noisiest) task's
    learned window against the smoothest (least noisy) one's. Chapter 5's readout and its question's reveal
    both use this one reading."""
    by_r = sorted({(r.roughness, r.window) for r in rows if r.noise == base_noise})
    by_s = sorted({(r.noise, r.window) for r in rows if r.roughness == base_roughness})
    return by_r[-1][1] < by_r[0][1], by_s[-1][1] > by_s[0][1]
