"""Chapter 3's charts by name: the blog post's four multi-head models, and the reader's own model of H heads
(f̂(x) = Σₕ uₕ mₕ(x), each mₕ a kernel smoother with its own ℓₕ) with its mixing weights, each head's
attention weights and its loss, each a function of the data and the chapter's ``Settings``."""

from __future__ import annotations

from typing import NamedTuple

from kernelviz.app import defaults, views
from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.charts import Book, Chart, Panel, Picture, picture_table
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions import bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.ui.widgets.text import busy
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.training import HeadsSettings, MaskedSettings
from kernelviz.core.kernels import get_kernel
from kernelviz.models.heads import FitResult
from kernelviz.runtime.i18n import _, ngettext

__all__ = ["BOOK", "PICTURE", "PICTURES", "Settings", "fit_title", "own", "point",
           "post_panels", "trained", "view"]

MH = defaults.MULTIHEAD

PICTURES = {
    "weights": _(":material/grid_view: Each head's attention weights"),
    "mixing": _(":material/bar_chart: Mixing weights uₕ"),
    "loss": _(":material/show_chart: Loss at every step"),
}


PICTURE = picture_table("mh", PICTURES)


class Settings(NamedTuple):
    """Chapter 3's settings: the post's four models' (its kernel is every model's on the page), the own
    model's, the query it explains, the picture shown."""

    post: MaskedSettings
    own: HeadsSettings
    pick: explain.Selection
    picture: Picture


TABLES = Settings(ps.POST_HEADS, ps.OWN_HEADS, explain.selection_table("mh"), PICTURE)


def own(s: Settings) -> HeadsSettings:
    """The own model's settings, with the page's kernel (drawn once, beside the post's controls)."""
    return s.own._replace(kernel=s.post.kernel)


def fit_title(heads: int, method: str, kernel: str) -> str:
    """The title of the fit: its number of heads, found by search or by training, and its kernel."""
    if method == "search":
        title = ngettext("{n} head after search ({kernel} kernel)",
                         "{n} heads after search ({kernel} kernel)", heads)
    else:
        title = ngettext("{n} head after training ({kernel} kernel)",
                         "{n} heads after training ({kernel} kernel)", heads)
    return title.format(n=heads, kernel=kernel)


def post_panels(data: Data, s: Settings) -> list[vt.Panel]:
    """The post's four models (H = 1, 2, 4, 8), each trained for ``MULTIHEAD.steps`` steps at hold-out
    ``MULTIHEAD.holdout`` with the post's learning rate and seed, f̂ drawn on the grid."""
    post = s.post
    text = _("Training the blog post's four models ({panels} heads): {steps:,} steps each, hold-out "
             "{holdout}, {kernel} kernel…")
    with busy(text.format(panels=", ".join(map(str, MH.panels)), steps=MH.steps, holdout=MH.holdout,
                          kernel=get_kernel(post.kernel).label)):
        return cache_heads.panels(data, post.kernel, post.learning_rate, post.seed)


def trained(data: Data, s: Settings) -> FitResult:
    """The own model: H heads, log ℓₕ and uₕ trained by Adam on the hold-out loss (``fit_multihead``)."""
    o = own(s)
    t = o.training
    text = ngettext("Training {n} head: {steps:,} steps of masked training, {holdout} held-out point(s) "
                    "per step, {kernel} kernel…",
                    "Training {n} heads: {steps:,} steps of masked training, {holdout} held-out point(s) "
                    "per step, {kernel} kernel…", o.heads)
    with busy(text.format(n=o.heads, steps=t.steps, holdout=t.holdout, kernel=get_kernel(t.kernel).label)):
        return cache_heads.fit_multihead(data, o.heads, t)


def view(data: Data, s: Settings) -> views.HeadsView:
    """The own model on all the data: f̂ = Σₕ uₕ mₕ with its band, every head mₕ, thinned heatmaps."""
    result = trained(data, s)
    with busy(_("Predicting with every head and with the mixture…")):
        return cache_heads.heads_view(data, result.lengthscales, result.mixing, s.post.kernel)


def point(data: Data, s: Settings) -> views_explain.HeadsPoint | None:
    """The heads and their mixture at the explained query x*; None when none is explained."""
    if not s.pick.on:
        return None
    result = trained(data, s)
    return explain.heads_point(data, s.pick.x, tuple(map(float, result.lengthscales)),
                               tuple(map(float, result.mixing)), s.post.kernel)


def panels(data: Data, s: Settings) -> Chart:
    """The post's figure: its four models side by side, over the training points (they keep it light)."""
    figure = kf.heads_panels_figure(data.points(train=True), post_panels(data, s), look=data.look())
    return Chart(figure, "kernelviz-multihead-post-panels")


def fit(data: Data, s: Settings) -> Chart:
    """The own model's fit f̂ with every head mₕ and the mixture's band; at x*, each head's prediction."""
    result, v = trained(data, s), view(data, s)
    n_heads, label = len(result.lengthscales), get_kernel(s.post.kernel).label
    fig = kf.heads_fit_figure(
        data.points(v.grid), kf.Mixture(v.head_means, v.mean, v.std, vt.head_names(result)),
        look=data.look(fit_title(n_heads, result.method, label)),
    )
    at = point(data, s)
    if at is not None:
        kf.mark_heads(fig, at.x, at.head_means, at.mean, vt.head_names(result, with_mixing=False))
    return Chart(fig, "kernelviz-multihead-fit")


def formula(data: Data, s: Settings) -> Panel | None:
    """f̂(x*) = Σₕ uₕ mₕ(x*) written out with its numbers; None when no query is explained."""
    at = point(data, s)
    if at is None:
        return None
    names = vt.head_names(trained(data, s), with_mixing=False)
    return Panel(lambda: explain.heads_text(at, names))


def mixing(data: Data, s: Settings) -> Chart | None:
    """The learned mixing weights uₕ, one bar per head (ℓₕ on hover); None unless that picture is shown."""
    if s.picture.picture != "mixing":
        return None
    result = trained(data, s)
    return Chart(kf.mixing_figure(result.mixing, result.lengthscales), "kernelviz-mixing-weights")


def heatmaps(data: Data, s: Settings) -> Chart | None:
    """Each head's attention weights wₕᵢ(x), sorted queries against sorted keys, x*'s row outlined; None
    unless that picture is shown."""
    if s.picture.picture != "weights":
        return None
    result, heat = trained(data, s), view(data, s).heatmap
    fig = kf.head_heatmaps_figure(heat.weights, heat.queries, heat.keys,
                                  vt.head_names(result, with_mixing=False),
                                  cells=(views.HEAT_ROWS, views.HEAT_COLS))
    at = point(data, s)
    if at is not None:
        kf.mark_row(fig, views_explain.nearest_row(heat.queries, at.x), heat.queries,
                    panels=len(result.lengthscales))
    return Chart(fig, "kernelviz-head-heatmaps")


def loss(data: Data, s: Settings) -> Chart | None:
    """The hold-out loss at every training step; None unless that picture is shown, or when training
    diverged at its first step (no loss)."""
    if s.picture.picture != "loss":
        return None
    losses = trained(data, s).losses
    return Chart(kf.loss_figure(losses), "kernelviz-multihead-loss") if losses.size else None


BOOK = Book(TABLES, {
    "mh.panels": panels, "mh.fit": fit, "mh.formula": formula, "mh.mixing": mixing, "mh.heatmaps": heatmaps,
    "mh.loss": loss,
}, {"mh.largest_mixing": lambda data, s: bank.largest_mixing(trained(data, s))}, picks={"mh.fit": "mh."})
