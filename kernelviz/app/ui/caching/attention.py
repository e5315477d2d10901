"""Chapter 4's cached calls (attention).

The chapter's layer is ``kv.fit_attention``: H heads with query/key maps on the position part of a token
t = (1, x̃, x̃², ỹ), a value map W_v^h on the whole token and the output blocks U_h, trained by masked training
from a start ``STARTS`` names. Every call takes the ``Data`` first and the layer's ``LayerRequest``
(``kernelviz.app.views.training``, with ``Comparison`` and its table); the layer is trained once per settings
(``fit_attention``) and everything drawn from it comes from ``view`` and ``comparison``, both cached.
``prepare`` computes them for the page one notch ahead (``kernelviz.app.ui.caching.ahead``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import kernelviz as kv
from kernelviz.app import defaults, views
from kernelviz.app.ui.caching.cache import cached, loo_optimum
from kernelviz.app.ui.widgets.sidebar import Data
from kernelviz.app.views import explain
from kernelviz.app.views.replay import LayerPath, layer_path
from kernelviz.app.views.training import Comparison, holdout_within
from kernelviz.models.attention import (
    AttentionFit,
    attention_loo_error,
    attention_predict,
    gaussian_layer,
)
from kernelviz.models.attention.selfattention import (
    as_self_attention,
    notes_outputs,
)
from kernelviz.models.attention.training import LayerRequest
from kernelviz.runtime.i18n import _, ngettext

__all__ = [
    "AHEAD_NOTCHES",
    "comparison",
    "fit_attention",
    "gaussian_check",
    "layer_point",
    "notes_check",
    "prepare",
    "training_path",
    "view",
]

MH = defaults.MULTIHEAD
AHEAD_NOTCHES = 3  # the layer's sliders prepared ahead (ahead.prepare_next): a layer trains in 0.1-0.3 s, so
# three keep up with a presenter pressing in a row (benchmarks/bench_sliders.py --in-a-row 4 --chapter
# Attention). The sidebar's n: ahead.DATA_AHEAD data sets, of at most ahead.DATA_AHEAD_MOST points.


@cached(heavy=True)
def gaussian_check(data: Data, lengthscale: float) -> views.GaussianCheck:
    """``views.gaussian_check``: the Gaussian smoother and the attention head that is it, on the same keys."""
    return views.gaussian_check(data.ds, lengthscale)


@cached()
def fit_attention(data: Data, s: LayerRequest) -> AttentionFit:
    """``kv.fit_attention`` (masked training of the multi-head layer) on the training points."""
    return kv.fit_attention(data.train.x, data.train.y, **dataclasses.asdict(s))


@cached(heavy=True)
def view(data: Data, s: LayerRequest) -> views.AttentionView:
    """``views.attention_view`` of the layer ``fit_attention`` trains with the same settings (trained
    once)."""
    return views.attention_view(data.ds, fit_attention(data, s))


@cached()
def layer_point(data: Data, s: LayerRequest, x_star: float) -> explain.LayerPoint:
    """``views.explain.layer_point``: the trained layer at x* on the whole data set."""
    return explain.layer_point(fit_attention(data, s), data.ds.x, data.ds.y, x_star)


@cached(heavy=True)
def training_path(data: Data, s: LayerRequest) -> LayerPath:
    """``views.replay.layer_path``: the layer ``fit_attention`` trained, at the steps its training kept,
    on the grids of ``view``'s fit and learned kernel."""
    still = view(data, s)
    return layer_path(data.ds, fit_attention(data, s), still.grid, still.kgrid)


@cached()
def notes_check(data: Data, s: LayerRequest) -> tuple[float, float]:
    """(max |Δ x′|, max |Δ f̂|): the trained layer with the training points as queries, keys and values
    (``attention_predict``) against the notes' SelfAttention per head and MultiHead = Concat(heads) W_O on
    the same weights (``as_self_attention``, then ``notes_outputs``: ``kv.self_attention`` per head and
    ``multihead_self_attention``)."""
    fit, points = fit_attention(data, s), data.train
    notes = notes_outputs(as_self_attention(fit, points.x, points.y))
    layer = attention_predict(fit, points.x, points.x, points.y, with_weights=False)
    joined = notes.joined[:, 0] * fit.y_scale
    return float(np.max(np.abs(notes.heads - layer.head_vectors))), float(np.max(np.abs(joined - layer.mean)))


def _scores(data: Data, layer: AttentionFit) -> tuple[float, float, float]:
    """(leave-one-out error on the training points, mean squared error against the true mean on
    ``GRID_POINTS`` points across the data's range (NaN for user data), mean band width 4s̄) of a layer."""
    tr, ds = data.train, data.ds
    grid = np.linspace(*ds.domain, defaults.GRID_POINTS)
    truth = ds.true_mean(grid) if ds.true_mean is not None else np.full(grid.shape, np.nan)
    p = attention_predict(layer, grid, ds.x, ds.y, with_weights=False)
    return (attention_loo_error(layer, tr.x, tr.y), float(np.mean(np.square(p.mean - truth))),
            float(np.mean(4.0 * p.std)))


@cached()
def _gaussian_scores(data: Data) -> tuple[float, tuple[float, float, float]]:
    """(ℓ*, ``_scores``) of the Gaussian smoother at its exact leave-one-out optimum ℓ* (chapter 2's cached
    ``loo_optimum``): depends on the data only, so a move of the layer's controls does not recompute it."""
    ell = loo_optimum(data, "gaussian")
    return ell, _scores(data, gaussian_layer([ell], [1.0], data.train.x, data.train.y))


@cached()
def _chapter3_scores(data: Data, heads: int, seed: int) -> tuple[float, float, float]:
    """``_scores`` of chapter 3's model with ``heads`` heads, trained as chapter 3 trains it with ``seed``:
    depends on the data, the number of heads and the seed only."""
    tr = data.train
    ch3 = kv.fit(tr.x, tr.y, heads=heads, holdout=MH.holdout, steps=MH.steps,
                 learning_rate=MH.learning_rate, seed=seed, multihead=True)
    return _scores(data, gaussian_layer(ch3.lengthscales, ch3.mixing, tr.x, tr.y))


@cached()
def comparison(data: Data, s: LayerRequest) -> Comparison:
    """Attention (``fit_attention``), the Gaussian smoother at its exact leave-one-out optimum ℓ* and
    chapter 3's model with as many heads (``kv.fit(..., multihead=True)``, hold-out 1, 1,000 steps, Adam 0.2,
    the same seed), all three as attention layers (``gaussian_layer``), scored on the one core
    (``_scores``): the leave-one-out error (``attention_loo_error``), the error against the true mean and
    the band width, on ``GRID_POINTS`` points across the data's range (predicting from all the data)."""
    ell, gaussian = _gaussian_scores(data)
    rows = (_scores(data, fit_attention(data, s)), gaussian, _chapter3_scores(data, s.heads, s.seed))
    loo, err, band = (np.array(column) for column in zip(*rows, strict=True))
    names = (_("attention: {heads} trained heads").format(heads=s.heads),
             _("Gaussian smoother at ℓ* = {ell:.3g}").format(ell=ell),
             ngettext("chapter 3: {heads} Gaussian head (ℓₕ, uₕ trained)",
                      "chapter 3: {heads} Gaussian heads (ℓₕ, uₕ trained)", s.heads).format(heads=s.heads))
    return Comparison(names, loo, err, band, ell)


def prepare(data: Data, s: LayerRequest) -> None:
    """Everything the page's layer section draws at ``s`` (its hold-out size within the data's range) with
    nothing picked and the replay off, into the caches: the layer, its view, its comparison and the notes'
    check."""
    s = holdout_within(s, len(data.train))
    fit_attention(data, s)
    view(data, s)
    comparison(data, s)
    notes_check(data, s)
