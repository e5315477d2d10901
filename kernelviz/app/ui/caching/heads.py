"""Chapter 3's cached calls (multi-head kernel regression) and the small helpers its page draws with.

Every model of the chapter is the blog post's MultiheadGaussianKernel, for every H including 1
(``kv.fit(..., multihead=True)``): the heads start at ℓ_post = linspace(0.1, 3, H) (ℓ = ℓ_post/√2, scaled
by span/6 off the post's data) with u_h = 1/H, and Adam trains log ℓ_h and u_h on the hold-out loss. The
prediction is f̂(x) = Σ_h u_h m_h(x), each m_h a Nadaraya–Watson smoother with lengthscale ℓ_h.

``panel`` is one panel of the post's figure (hold-out 1, 1,000 steps: ``defaults.MULTIHEAD``);
``fit_multihead`` and ``heads_view`` serve the page's own model of H heads; ``prepare`` computes all of it
for a data set ahead of the page. The panels' tables are in ``kernelviz.app.views.training``.
"""

from __future__ import annotations

import numpy as np

import kernelviz as kv
from kernelviz.app import defaults, views
from kernelviz.app.ui.caching.cache import cached
from kernelviz.app.ui.caching.continuing import continued
from kernelviz.app.ui.widgets.sidebar import Data
from kernelviz.app.views.training import HeadsSettings, MaskedSettings, Panel, holdout_within
from kernelviz.models.heads import FitResult

__all__ = ["fit_multihead", "heads_view", "panel", "panels", "prepare", "status"]

MH = defaults.MULTIHEAD


@cached()
def fit_multihead(data: Data, heads: int, s: MaskedSettings, arithmetic: str = "kernelviz") -> FitResult:
    """``kv.fit(..., multihead=True)`` on the training points: the post's MultiheadGaussianKernel with H
    heads, f̂ = Σ_h u_h m_h, log ℓ_h and u_h trained by Adam on the hold-out squared error at the settings
    ``s``, with kernelviz's softmax or as the post computes it (``arithmetic``), continuing the longest
    shorter run of the same settings the server has kept (``continued``)."""
    train = data.train

    def run(start: FitResult | None) -> FitResult:
        return kv.fit(train.x, train.y, heads=heads, kernel=s.kernel, holdout=s.holdout, steps=s.steps,
                      learning_rate=s.learning_rate, seed=s.seed, multihead=True, arithmetic=arithmetic,
                      start=start)

    setting = ("fit_multihead", data.key, heads, s.kernel, s.holdout, s.learning_rate, s.seed, arithmetic)
    return continued(setting, s.steps, run)


@cached(heavy=True)
def heads_view(data: Data, lengthscales: np.ndarray, mixing: np.ndarray, kernel: str) -> views.HeadsView:
    """``views.heads_view`` on all the data: f̂ = Σ_h u_h m_h with its band, every head, thinned heatmaps."""
    return views.heads_view(data.ds, tuple(map(float, lengthscales)), tuple(map(float, mixing)), kernel)


def status(data: Data, result: FitResult) -> views.Status:
    """``views.training_status`` with the span of the training points."""
    return views.training_status(result, data.train.span)


@cached()
def panel(data: Data, heads: int, kernel: str, learning_rate: float, seed: int) -> Panel:
    """The post's experiment for H = ``heads``: ``fit_multihead`` with hold-out ``MULTIHEAD.holdout`` and
    ``MULTIHEAD.steps`` steps, computed as the post computes it (float32, K/(ΣK + 1e-16)), then
    f̂(x) = Σ_h u_h m_h(x) on the grid, predicting from all the data."""
    post = MaskedSettings(kernel, MH.holdout, MH.steps, learning_rate, seed)
    result = fit_multihead(data, heads, post, "post")
    ds = data.ds
    pred = kv.predict_heads(ds.grid(defaults.GRID_POINTS), ds.x, ds.y, result.lengthscales, result.mixing,
                            kernel, with_weights=False)
    return Panel(heads, result.trajectory[0], result.lengthscales, result.mixing, pred.mean,
                 status(data, result))


def panels(data: Data, kernel: str, learning_rate: float, seed: int) -> list[Panel]:
    """The post's four panels (H = 1, 2, 4, 8), one cached call each."""
    return [panel(data, h, kernel, learning_rate, seed) for h in MH.panels]


def prepare(data: Data, post: MaskedSettings, own: HeadsSettings) -> None:
    """Everything chapter 3 draws from ``data``, into the caches: the post's four panels at ``post``'s
    kernel, learning rate and seed, and the reader's own model ``own`` (its hold-out size within the data's
    range) with its view."""
    panels(data, post.kernel, post.learning_rate, post.seed)
    s = holdout_within(own.training, len(data.train))
    result = fit_multihead(data, own.heads, s)
    heads_view(data, result.lengthscales, result.mixing, s.kernel)
