"""Chapter 5's cached calls (in context).

The chapter draws its own tasks, so nothing here takes the sidebar's ``Data``: every call is keyed by the
page's settings (a ``PretrainRequest``, ``views.page_settings.IN_CONTEXT``) or by the task family's controls
alone. A layer is pretrained once per settings (``pretrain``, one compiled call) and shared by every visitor
of the server; the family's reference smoothers (``best_lengthscale``, ``loo_lengthscale``) depend on the
family, the roughness, the noise and n only, so a move of the heads, steps, kind or seed does not recompute
them. ``prepare`` computes into these caches everything the page draws at given settings: the page asks for it
one notch ahead (``kernelviz.app.ui.caching.ahead``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from kernelviz.app.ui.caching.cache import cached
from kernelviz.app.views import replay
from kernelviz.app.views.incontext import KernelView, TaskView, kernel_view, other_kind, task_view
from kernelviz.models import incontext
from kernelviz.models.incontext import PretrainRequest
from kernelviz.models.incontext import evaluation as incontext_eval
from kernelviz.models.incontext.evaluation import LengthscaleSearch, SweepRow

__all__ = [
    "AHEAD_NOTCHES",
    "SWEEP_NOISE",
    "SWEEP_ROUGHNESS",
    "SWEEP_STEPS",
    "best_lengthscale",
    "in_context_error",
    "kernels",
    "loo_lengthscale",
    "prepare",
    "pretrain",
    "pretrain_path",
    "sweep",
    "task",
]

AHEAD_NOTCHES = 3  # prepared ahead (ahead.prepare_next): a layer pretrains in 0.2-0.4 s, three keep up with a
# presenter pressing a slider in a row (benchmarks/bench_sliders.py --in-a-row 4 --chapter "In context")
SWEEP_STEPS = 500  # the sweep pretrains seven layers: a third of the default steps each keeps it to seconds
SWEEP_ROUGHNESS = (1.5, 3.0, 6.0, 10.0)  # at the base noise 0.1
SWEEP_NOISE = (0.0, 0.3, 1.0)  # at the base roughness 3
SWEEP_BASE = (3.0, 0.1)


@cached()
def pretrain(s: PretrainRequest) -> incontext.Pretrained:
    """``incontext.pretrain`` with the page's controls (its default learning rate)."""
    return incontext.pretrain(**dataclasses.asdict(s))


@cached()
def best_lengthscale(family: str, roughness: float, noise: float, n: int) -> LengthscaleSearch:
    """``incontext_eval.best_fixed_lengthscale``: the family's best fixed ℓ and the error curve over ℓ."""
    return incontext_eval.best_fixed_lengthscale(family, roughness, noise, n)


@cached()
def loo_lengthscale(family: str, roughness: float, noise: float, n: int) -> float:
    """The mean leave-one-out ℓ* of single fresh prompts (``incontext_eval.loo_window``)."""
    return float(np.mean(incontext_eval.loo_window(family, roughness, noise, n)))


@cached()
def in_context_error(s: PretrainRequest) -> float:
    """The pretrained layer's mean query error on fresh tasks (``incontext_eval.in_context_error``), on
    the same tasks as ``best_lengthscale`` scores Nadaraya–Watson."""
    return incontext_eval.in_context_error(pretrain(s))


@cached()
def kernels(s: PretrainRequest) -> KernelView:
    """``views_incontext.kernel_view`` of the pretrained layer."""
    return kernel_view(pretrain(s))


@cached()
def pretrain_path(s: PretrainRequest) -> replay.PretrainPath:
    """``views.replay.pretrain_path``: the pretrained layer at the steps its pretraining kept."""
    return replay.pretrain_path(pretrain(s))


@cached()
def task(s: PretrainRequest, number: int) -> TaskView:
    """Fresh task ``number`` (``views_incontext.task_view``), Nadaraya–Watson at the family's best ℓ."""
    best = best_lengthscale(s.family, s.roughness, s.noise, s.n).best
    return task_view(pretrain(s), best, number)


@cached()
def sweep(family: str, n: int, heads: int, seed: int) -> list[SweepRow]:
    """``incontext_eval.window_sweep`` of softmax layers at ``SWEEP_STEPS`` steps each: the learned window
    at each of ``SWEEP_ROUGHNESS`` and each of ``SWEEP_NOISE``, with the family's best fixed ℓ."""
    return incontext_eval.window_sweep(family, SWEEP_ROUGHNESS, SWEEP_NOISE, *SWEEP_BASE, n=n, heads=heads,
                                       steps=SWEEP_STEPS, seed=seed, kind="softmax")


def prepare(s: PretrainRequest, number: int, compare: bool) -> None:
    """Everything the page draws at ``s`` with its toggles off, into the caches: the layer, its kernels,
    the family's best fixed and leave-one-out ℓ, task ``number`` and the layer's error (and the other
    kind's layer and error when ``compare``)."""
    pretrain(s)
    kernels(s)
    best_lengthscale(s.family, s.roughness, s.noise, s.n)
    loo_lengthscale(s.family, s.roughness, s.noise, s.n)
    task(s, number)
    in_context_error(s)
    if compare:
        in_context_error(other_kind(s))
