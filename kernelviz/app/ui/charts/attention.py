"""Chapter 4's charts by name: the Gaussian smoother beside the attention head that is it, the trained
layer's fit (with its replay of training and the layer at x*), and the pictures inside the layer (every
head's weights, W_O, a head's learned kernel, its sequence map, self- vs cross-attention, the loss), each a
function of the data and the chapter's ``Settings``."""

from __future__ import annotations

from typing import Any, NamedTuple

import plotly.graph_objects as go

from kernelviz.app import figures as kf
from kernelviz.app import views
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.charts import Book, Chart, Panel, picture_field
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions import bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.ui.widgets.replay import Replay, replay_table
from kernelviz.app.ui.widgets.text import busy
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views.replay import LayerPath
from kernelviz.app.views.settings import Control, Controls
from kernelviz.app.views.values import lengthscale_choice, lengthscale_options
from kernelviz.models.attention import AttentionFit
from kernelviz.models.attention.training import LayerRequest
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.runtime.i18n import _, ngettext

__all__ = ["BOOK", "GAUSSIAN", "INSIDE", "ONE_HEAD", "PICTURES", "START", "GaussianSettings", "Inside",
           "Settings", "Shown", "head_names", "point", "replay_path", "trained", "viewed"]

CHAPTER = "4_attention"


class GaussianSettings(NamedTuple):
    """The first section's Gaussian kernel: its ℓ, span/24 of the data's x-range (0.25 on the post's span
    6), snapped to the ℓ slider's choices."""

    lengthscale: float = 0.25


GAUSSIAN = Controls(GaussianSettings(), "attn", {
    "lengthscale": Control(_("Lengthscale ℓ"), "select_slider", names=lambda v: f"{v:g}",
                           options=lambda d: lengthscale_options(d.ds.span), notched=False,
                           opens_at=lambda d: lengthscale_choice(d.ds.span / 24.0, d.ds.span),
                           help=_("The Gaussian kernel to rewrite as attention. Any ℓ works: the two panels "
                                  "below always agree.")),
})

PICTURES = {
    "heads": _(":material/grid_view: Every head"),
    "wo": _(":material/call_merge: Joining heads: $W_O$"),
    "kernel": _(":material/blur_on: Learned kernel"),
    "sequence": _(":material/timeline: Sequence map"),
    "selfcross": _(":material/compare_arrows: Self vs cross"),
    "loss": _(":material/show_chart: Loss"),
}
ONE_HEAD = ("kernel", "sequence", "selfcross")  # the pictures that show the head chosen under "Head shown"


class Inside(NamedTuple):
    """"Inside the trained layer": the picture drawn, and the head the one-head pictures show (1-based)."""

    picture: str = "heads"
    head: int = 1


class Shown(NamedTuple):
    """The page's context for "Head shown": the layer's number of heads and the picture chosen."""

    heads: int
    picture: str


def _head_options(context: Any) -> tuple[int, ...]:
    """Heads 1 … H of the page's layer; every head a layer may have for a scene (read with the data)."""
    return tuple(range(1, (context.heads if isinstance(context, Shown) else HEADS_MAX) + 1))


def _every_head_shown(context: Any) -> bool:
    """Whether the page's picture shows every head (and "Head shown" is off); never for a scene."""
    return isinstance(context, Shown) and context.picture not in ONE_HEAD


INSIDE = Controls(Inside(), "attn", {
    "picture": picture_field(PICTURES),
    "head": Control(_("Head shown"), "radio", options=_head_options, notched=False,
                    names=lambda k: _("head {h}").format(h=k), disabled=_every_head_shown,
                    help=_("The head the learned kernel, the sequence map and self- vs cross-attention "
                           "show.")),
})


class Settings(NamedTuple):
    """Chapter 4's settings: the Gaussian section's ℓ, the trained layer, its replay, the query it explains
    and the picture inside it."""

    gaussian: GaussianSettings
    layer: LayerRequest
    replay: Replay
    pick: explain.Selection
    inside: Inside


TABLES = Settings(GAUSSIAN, ps.LAYER, replay_table("attn", CHAPTER), explain.selection_table("attn"), INSIDE)
START = Settings(*(table.start for table in TABLES))  # every part at its table's start


def head_names(heads: int) -> list[str]:
    """"head 1", …, "head H"."""
    return [_("head {h}").format(h=h + 1) for h in range(heads)]


def trained(data: Data, s: LayerRequest) -> AttentionFit:
    """The layer trained at ``s`` (``cache_attention.fit_attention``)."""
    text = ngettext("Training {n} attention head (d_qk = {d_qk}, d_v = {d_v}, start: {start}): {steps:,} "
                    "steps, {holdout} held-out point(s) per step…",
                    "Training {n} attention heads (d_qk = {d_qk}, d_v = {d_v}, start: {start}): {steps:,} "
                    "steps, {holdout} held-out point(s) per step…", s.heads)
    with busy(text.format(n=s.heads, d_qk=s.d_qk, d_v=s.d_v, start=ps.STARTS[s.start], steps=s.steps,
                          holdout=s.holdout)):
        return cache_attention.fit_attention(data, s)


def viewed(data: Data, s: LayerRequest) -> views.AttentionView:
    """Everything drawn from the layer trained at ``s``: its fit, weights, kernels and sequence map."""
    trained(data, s)
    with busy(_("Evaluating the trained layer: fit, attention weights, learned kernels, the sequence "
                "map…")):
        return cache_attention.view(data, s)


def replay_path(data: Data, s: Settings) -> LayerPath | None:
    """The layer at 50 steps of its training when the replay is on; None when it is off."""
    if not s.replay.on:
        return None
    with busy(_("Replaying training: the layer's fit and kernels at 50 of its steps…")):
        return cache_attention.training_path(data, s.layer)


def point(data: Data, s: Settings) -> views_explain.LayerPoint | None:
    """The layer at the explained query x* (scores, weights, values); None when none is explained."""
    return cache_attention.layer_point(data, s.layer, s.pick.x) if s.pick.on else None


def _fit_figure(data: Data, s: LayerRequest, view: views.AttentionView, path: LayerPath | None,
                opened: int) -> go.Figure:
    """f̂(x) = Σₕ headₕ(x) Uₕ, every head's part of it and its band f̂(x) ± 2s(x), with the replay of
    training opened at step ``opened`` when ``path`` is given."""
    title = ngettext("Dot-product attention: {n} head, d<sub>qk</sub> = {d_qk}, d<sub>v</sub> = {d_v}",
                     "Dot-product attention: {n} heads, d<sub>qk</sub> = {d_qk}, d<sub>v</sub> = {d_v}",
                     s.heads).format(n=s.heads, d_qk=s.d_qk, d_v=s.d_v)
    heads = [_("head {h}: headₕ(x)·Uₕ").format(h=h + 1) for h in range(s.heads)]
    mixture, band = _("attention f̂(x) = Σₕ headₕ(x) Uₕ"), _("band f̂(x) ± 2s(x)")
    fig = kf.heads_fit_figure(
        data.points(view.grid), kf.Mixture(view.head_outputs, view.mean, view.std, heads, mixture, band),
        look=data.look(title),
    )
    return fig if path is None else kf.add_layer_replay(fig, path, mixture, heads, band, opened)


def fit(data: Data, s: Settings) -> Chart:
    """The layer's fit with every head's part and its band, replayed through training when asked, and at
    x* each head's part headₕ(x*)·Uₕ (dots) and their sum f̂(x*) (a ring)."""
    view = viewed(data, s.layer)
    path = replay_path(data, s)
    fig = _fit_figure(data, s.layer, view, path, s.replay.at(s.layer.steps).step)
    at = point(data, s)
    if at is not None:
        kf.mark_heads(fig, at.x, at.head_outputs, at.mean, head_names(s.layer.heads))
    return Chart(fig, "kernelviz-attention-fit")


def formula(data: Data, s: Settings) -> Panel | None:
    """The layer at x* written out: f̂(x*) = Σₕ headₕ(x*)·Uₕ, each head's scores, softmax weights and
    values; None when no query is explained."""
    at = point(data, s)
    if at is None:
        return None
    return Panel(lambda: explain.layer_text(at, head_names(s.layer.heads), data.ds.x))


def equivalence(data: Data, s: Settings) -> Chart:
    """The Gaussian kernel's weights at ℓ beside those of the attention head softmax(q·k/√2) that is it."""
    ell = s.gaussian.lengthscale
    with busy(_("Computing the Gaussian smoother and its attention head at ℓ = {ell:g}…").format(ell=ell)):
        check = cache_attention.gaussian_check(data, ell)
    heat = check.heatmap
    fig = kf.heatmap_pair_figure(heat.weights, heat.queries, heat.keys,
                                 (_("Gaussian kernel<br>ℓ = {ell:g}").format(ell=ell),
                                  _("attention head<br>softmax(q·k/√2)")),
                                 cells=views.PAIR_CELLS)
    return Chart(fig, "kernelviz-gaussian-as-attention")


def shown_head(s: Settings) -> int:
    """The 0-based head the one-head pictures show: "Head shown", at most the layer's last head."""
    return min(int(s.inside.head), s.layer.heads) - 1


def heatmaps(data: Data, s: Settings) -> Chart | None:
    """Every head's weights side by side, each titled by its weight (W_v U)_y on y, x*'s row outlined when
    one is explained (picture "Every head" only)."""
    if s.inside.picture != "heads":
        return None
    view = viewed(data, s.layer)
    names = [_("head {h}: (W_v U)_y = {u:+.2f}").format(h=k + 1, u=u) for k, u in enumerate(view.y_weights)]
    heat = view.cross
    fig = kf.head_heatmaps_figure(heat.weights, heat.queries, heat.keys, names)
    at = point(data, s)
    if at is not None:
        kf.mark_row(fig, views_explain.nearest_row(heat.queries, at.x), heat.queries, len(names))
    return Chart(fig, "kernelviz-attention-heads")


def wo(data: Data, s: Settings) -> Chart | None:
    """W_O joining the heads: the weight each head gives its average of y (picture "Joining heads")."""
    if s.inside.picture != "wo":
        return None
    return Chart(kf.y_weights_figure(viewed(data, s.layer)), "kernelviz-w-o")


def kernel(data: Data, s: Settings) -> Chart | None:
    """The shown head's learned kernel log K(x, x′) beside its transpose log K(x′, x), replayed through
    training when asked (picture "Learned kernel")."""
    if s.inside.picture != "kernel":
        return None
    view, h = viewed(data, s.layer), shown_head(s)
    titles = (_("head {h}<br>log K(x, x′)").format(h=h + 1),
              _("head {h}, transpose<br>log K(x′, x)").format(h=h + 1))
    fig = kf.score_transpose_figure(view.log_kernel[h], view.kgrid, titles=titles)
    path = replay_path(data, s)
    if path is not None:
        fig = kf.add_kernel_replay(fig, path, h, s.replay.at(s.layer.steps).step)
    return Chart(fig, "kernelviz-learned-kernel")


def sequence(data: Data, s: Settings) -> Chart | None:
    """Self-attention as a map of the sequence: the shown head's values and outputs at every point (picture
    "Sequence map")."""
    if s.inside.picture != "sequence":
        return None
    figure = kf.sequence_figure(viewed(data, s.layer), shown_head(s), data.ds.x_label)
    return Chart(figure, "kernelviz-self-attention-sequence")


def selfcross(data: Data, s: Settings) -> Chart | None:
    """The shown head's weights with the points as queries beside those with grid points as queries
    (picture "Self vs cross")."""
    if s.inside.picture != "selfcross":
        return None
    view, h = viewed(data, s.layer), shown_head(s)
    return Chart(kf.self_cross_figure(view.self_.panel(h), view.cross.panel(h)), "kernelviz-self-cross")


def loss(data: Data, s: Settings) -> Chart | None:
    """The hold-out loss at every training step (picture "Loss"); None for a run that diverged at its first
    step (it has no loss)."""
    if s.inside.picture != "loss":
        return None
    losses = trained(data, s.layer).losses
    return Chart(kf.loss_figure(losses), "kernelviz-attention-loss") if losses.size else None


BOOK = Book(TABLES, {
    "attn.equivalence": equivalence, "attn.fit": fit, "attn.formula": formula, "attn.heatmaps": heatmaps,
    "attn.wo": wo, "attn.kernel": kernel, "attn.sequence": sequence, "attn.selfcross": selfcross,
    "attn.loss": loss,
}, {"attn.beats_gaussian": lambda data, s: bank.beats_gaussian(data, s.layer)}, picks={"attn.fit": "attn."})
