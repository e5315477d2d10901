"""The home page's previews: one small picture per chapter, as the chapter opens on the current data.

``prepare`` computes what the previews of chapters 1 to 4 draw from a data set, ahead of the page."""

from __future__ import annotations

import plotly.graph_objects as go

from kernelviz.app import defaults
from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import incontext as cache_incontext
from kernelviz.app.ui.widgets.sidebar import Data
from kernelviz.app.views import MaskedView
from kernelviz.app.views.page_settings import IN_CONTEXT, MASKED
from kernelviz.models.smoothing import Smooth
from kernelviz.runtime.i18n import _

__all__ = ["attention", "in_context", "kernel_regression", "masked_training", "multihead", "prepare"]


def _fit(data: Data) -> Smooth:
    return cache.predict(data, cache.start_lengthscale(data), defaults.KERNEL_REGRESSION.kernel)


def _masked(data: Data) -> MaskedView:
    return cache.masked_view(data, MASKED.defaults(data))


def prepare(data: Data) -> None:
    """What the previews of chapters 1 to 4 draw from ``data``, into the caches."""
    for view in (_fit, _masked, cache.heads_preview, cache.attention_preview):
        view(data)


def kernel_regression(data: Data) -> go.Figure:
    """Chapter 1 as it opens: the Gaussian fit at the post's ℓ_post = 0.25 with its band."""
    s = _fit(data)
    fit = kf.Curve(_("fit m(x)"), s.mean, kf.COLORS["fit"], std=s.std, band_name="m(x) ± 2s(x)")
    fig = kf.fit_figure(data.points(), [fit])
    return kf.thumbnail(fig)


def masked_training(data: Data) -> go.Figure:
    """Chapter 2 as it opens: where masked training took ℓ on the exact leave-one-out curve."""
    return kf.thumbnail(kf.masked_loo_figure(_masked(data)))


def multihead(data: Data) -> go.Figure:
    """Chapter 3's default model: each head's fit and their mixture."""
    view = cache.heads_preview(data)
    names = [_("head {number}").format(number=h + 1) for h in range(view.head_means.shape[0])]
    fig = kf.heads_fit_figure(kf.Points(data.ds.x, data.ds.y, view.grid),
                              kf.Mixture(view.head_means, view.mean, None, names))
    return kf.thumbnail(fig)


def attention(data: Data) -> go.Figure:
    """Chapter 4's default layer: the first head's attention weights of grid queries over the keys."""
    heat = cache.attention_preview(data).cross
    fig = kf.heatmap_figure(heat.weights[0], heat.queries, heat.keys,
                            look=kf.Look(x_title=_("keys xᵢ"), y_title=_("queries x")))
    fig.update_layout(coloraxis_showscale=False)
    return kf.thumbnail(fig)


DEFAULT_IN_CONTEXT = IN_CONTEXT.start  # as chapter 5 opens


def in_context(data: Data) -> go.Figure:
    """Chapter 5 as it opens (its own tasks, whatever the data): the learned window at three queries beside
    Nadaraya–Watson's best fixed window, from the chapter's cached pretraining."""
    s = DEFAULT_IN_CONTEXT
    view = cache_incontext.kernels(s)
    best = cache_incontext.best_lengthscale(s.family, s.roughness, s.noise, s.n).best
    fig = kf.thumbnail(kf.learned_kernel_figure(view.offsets, view.queries, view.kernels, best))
    return fig.update_layout(margin={"r": 24})  # room for the last x tick label at the right edge
