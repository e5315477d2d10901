"""Chapter 2's charts by name: the blog post's GaussianKernel trained by masked training (the fit with its
replay and x* explained, the loss, training's path on the leave-one-out curve CV(ℓ)), the post's four
hold-out sizes or the spread of the learned ℓ over seeds, and d2l's parametric attention pooling
f(x) = Σᵢ softmax(−½((x − xᵢ)w)²) yᵢ as d2l (or its Kotlin/DJL port) trains w, each a function of the data
and the chapter's ``Settings``."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from kernelviz.app import defaults, views
from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.charts import Book, Chart, Panel, Picture, picture_table
from kernelviz.app.ui.charts.kernel_regression import formula_at
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions import bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.ui.widgets.replay import MaskedReplay, Replay, masked_path, replay_table
from kernelviz.app.ui.widgets.text import busy
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.settings import Control, Controls
from kernelviz.core.kernels import KERNELS, get_kernel
from kernelviz.models import heads, parametric, training
from kernelviz.runtime.i18n import _

__all__ = ["BOOK", "PICTURE", "PICTURES", "POOLING", "SEEDS", "START", "D2lChoice",
           "Pooled", "PoolingSettings", "SeedSettings", "Settings", "d2l_choice", "d2l_view",
           "kotlin_validation", "point", "post_panels", "spread", "view"]

CH = "2_masked_training"
D2L, KT = defaults.D2L, defaults.D2L_KOTLIN
EPOCHS_MAX = 200  # the epochs sliders of the d2l section
SEED_MAX = 99  # the seed slider of d2l's w₀

PICTURES = {
    "post": _(":material/grid_view: The blog post's four hold-out sizes"),
    "seeds": _(":material/scatter_plot: Why hold-out 1 is noisy (seed spread)"),
}


PICTURE = picture_table("masked", PICTURES)


class SeedSettings(NamedTuple):
    """The seed spread's seeds per hold-out size (at most ``heads.SEEDS_MAX``, one compiled call)."""

    n: int = heads.SEEDS_MAX


SEEDS = Controls(SeedSettings(), "masked", {
    "n": Control(_("Seeds per hold-out size"), low=2, high=heads.SEEDS_MAX, url="nseeds"),
})


class Pooled(NamedTuple):
    """The context of the d2l section's epochs on the page: the data its pooling trains on."""

    data: Data


def _kotlin_epochs(context: Any) -> int:
    """The most epochs of the port's training: at most 2,000 batches on the data the pooling trains on
    (``Pooled``); read from a scene's values (the sidebar's data as the context), any the section's
    slider has (``d2l_choice`` clamps them to the data trained on)."""
    if not isinstance(context, Pooled):
        return EPOCHS_MAX
    batches = parametric.batch_count(len(context.data.train), KT.batch_size)
    return min(EPOCHS_MAX, training.STEPS_MAX // batches)


class PoolingSettings(NamedTuple):
    """d2l's section: whose data (the sidebar's, or d2l's own set), whose training (the Kotlin port's or
    d2l's), the kernel, the epochs of each training and the seed of d2l's w₀."""

    own: bool = False
    kotlin: bool = False
    kernel: str = ps.MASKED.start.kernel
    epochs: int = D2L.steps
    kotlin_epochs: int = KT.epochs
    seed: int = D2L.seed


POOLING = Controls(PoolingSettings(), "masked", {
    "own": Control(_("Use the sidebar's data"), "toggle", url="d2l_sidebar", notched=False,
                   help=_("Off: d2l's data set (50 points from d2l's formula; kernelviz draws them with seed "
                          "0, d2l sets no seed), as d2l trains on it.")),
    "kotlin": Control(_("Kotlin/DJL port's training"), "toggle", notched=False,
                      help=_("Off: d2l's training. On: the port's (w = 1, SGD 3, batches of 10, "
                             "each point among its own keys).")),
    "kernel": Control(_("Kernel of the pooling"), "selectbox", options=KERNELS, names=ps.KERNEL_NAMES,
                      url="d2l_kernel", notched=False,
                      help=_("d2l's is the Gaussian; kernelviz adds the others (d2l's exercise 4).")),
    "epochs": Control(_("Epochs"), low=1, high=EPOCHS_MAX, url="d2l_epochs", help=_("d2l trains 5 epochs.")),
    "kotlin_epochs": Control(_("Epochs"), low=1, high=_kotlin_epochs, help=_("The port trains 10 epochs.")),
    "seed": Control(_("Seed of w₀"), low=0, high=SEED_MAX, url="d2l_seed",
                    help=_("d2l draws w₀ uniformly from [0, 1); this seed picks it.")),
})


class Settings(NamedTuple):
    """Chapter 2's settings: the post's model's, its replay, the query it explains, the picture of what the
    hold-out size does, the seed spread's, d2l's section."""

    fit: vt.MaskedSettings
    replay: Replay
    pick: explain.Selection
    picture: Picture
    seeds: SeedSettings
    d2l: PoolingSettings


TABLES = Settings(ps.MASKED, replay_table("masked", CH), explain.selection_table("masked"), PICTURE,
                  SEEDS, POOLING)
START = Settings(*(table.start for table in TABLES))  # every part at its table's start

# ---------------------------------------------------------------------------------------------------------
# The post's model: ℓ learned by predicting held-out points
# ---------------------------------------------------------------------------------------------------------


def view(data: Data, f: vt.MaskedSettings) -> views.MaskedView:
    """The run of masked training at ``f`` (``cache.masked_view``): Adam on log ℓ, ``f.holdout`` points
    hidden and predicted from the rest at each step, with the leave-one-out curve it is drawn on."""
    label = get_kernel(f.kernel).label
    with busy(_("Training ℓ: {steps} steps of Adam, {holdout} held-out point(s) per step, {kernel} "
                "kernel…").format(steps=f.steps, holdout=f.holdout, kernel=label)):
        return cache.masked_view(data, f)


def _replay(data: Data, v: views.MaskedView, s: Settings) -> MaskedReplay | None:
    """Training's path when the replay is on (``masked_path``)."""
    return masked_path(data, v.fit, s.fit.steps, s.replay)


def point(data: Data, s: Settings) -> views_explain.PointWeights | None:
    """The fit with the learned ℓ at the explained query x*, with its weights; None when none is explained."""
    if not s.pick.on:
        return None
    return explain.point_weights(data, s.pick.x, view(data, s.fit).learned, s.fit.kernel)


def fit(data: Data, s: Settings) -> Chart:
    """The fit m(x) with the learned ℓ and its band, the fit with the exact leave-one-out optimum ℓ*, its
    replay through training when asked for and, at x*, each point's weight."""
    v = view(data, s.fit)
    curves = [kf.Curve(_("learned ℓ = {ell:.3g}").format(ell=v.learned), v.mean, kf.COLORS["fit"],
                       std=v.std, band_name=_("estimated band m(x) ± 2s(x)"))]
    if v.best_mean is not None:
        curves.append(kf.Curve(_("leave-one-out optimum ℓ* = {ell:.3g}").format(ell=v.best),
                               v.best_mean, kf.COLORS["optimum"], dash="dash", width=2.0))
    title = (_("Fit after search ({kernel} kernel)") if v.fit.method == "search"
             else _("Fit after training ({kernel} kernel)"))
    look = data.look(title.format(kernel=get_kernel(s.fit.kernel).label))
    fig = kf.fit_figure(data.points(), curves, look=look)
    if (path := _replay(data, v, s)) is not None:
        p = path.path
        fig = kf.add_training_scrub(fig, curves[0], p.steps, p.lengthscales, p.means, path.step)
    if (at := point(data, s)) is not None:
        kf.mark_point(fig, at.x, at.mean, data.ds.x, data.ds.y, at.weights)
    return Chart(fig, "kernelviz-masked-fit")


def formula(data: Data, s: Settings) -> Panel | None:
    """The sum at x* written out with its numbers, at the learned ℓ; None when no query is explained."""
    at = point(data, s)
    return None if at is None else formula_at(data, at, view(data, s.fit).learned, s.fit.kernel)

def loss(data: Data, s: Settings) -> Chart | None:
    """The hold-out loss at every step (``kf.loss_figure``); None for a run that diverged at its first step
    (it has no loss)."""
    losses = view(data, s.fit).fit.losses
    return Chart(kf.loss_figure(losses), "kernelviz-masked-loss") if losses.size else None


def loo(data: Data, s: Settings) -> Chart:
    """CV(ℓ), the exact leave-one-out error against ℓ, with training's path of ℓ on it and the learned ℓ;
    ℓ replayed along it when the fit's replay is on."""
    v = view(data, s.fit)
    fig = kf.masked_loo_figure(v)
    if (path := _replay(data, v, s)) is not None:
        p = path.path
        fig = kf.add_loo_replay(fig, v.learned, p.steps, p.lengthscales, (v.ells, v.cv), path.step)
    return Chart(fig, "kernelviz-loo-curve")


# ---------------------------------------------------------------------------------------------------------
# What the hold-out size does: the post's figure, or the spread over seeds
# ---------------------------------------------------------------------------------------------------------


def post_panels(data: Data, f: vt.MaskedSettings) -> list[views.HoldoutPanel]:
    """The post's figure's runs: one GaussianKernel trained per hold-out size 1, 10, n/2, 0.8 n, at the
    model's kernel, steps, learning rate and seed."""
    sizes = cache.panel_holdouts(len(data.train))
    with busy(_("Training ℓ for the hold-out sizes {sizes} ({steps} steps each)…").format(
            sizes=", ".join(map(str, sizes)), steps=f.steps)):
        return [cache.holdout_panel(data, f.kernel, k, f.steps, f.learning_rate, f.seed) for k in sizes]


def post(data: Data, s: Settings) -> Chart | None:
    """The post's figure: the fit with the ℓ each hold-out size learned, one panel per size, titled with
    it; None when the seed spread is the picture shown."""
    if s.picture.picture != "post":
        return None
    panels = post_panels(data, s.fit)
    titles = [vt.holdout_panel_title(p) for p in panels]
    means = list(zip(titles, [p.mean for p in panels], strict=True))
    figure = kf.small_multiples_figure(data.points(), means, look=data.look())
    return Chart(figure, "kernelviz-masked-holdouts")


def spread(data: Data, s: Settings) -> views.SeedSpread:
    """The ℓ learned with each of ``s.seeds.n`` seeds from the model's seed on, for hold-out 1, 10 and n/2."""
    f, n = s.fit, s.seeds.n
    with busy(_("Training {n} seeds for each of the hold-out sizes 1, 10 and n/2…").format(n=n)):
        return cache.seed_spread(data, f.kernel, f.steps, f.learning_rate, n, f.seed)


def seeds(data: Data, s: Settings) -> Chart | None:
    """kernelviz's spread of the learned ℓ over seeds for each hold-out size, against the exact
    leave-one-out optimum ℓ*; None when the post's figure is the picture shown."""
    if s.picture.picture != "seeds":
        return None
    figure = kf.seeds_figure(spread(data, s).groups, optimum=cache.loo_optimum(data, s.fit.kernel))
    return Chart(figure, "kernelviz-seed-spread")


# ---------------------------------------------------------------------------------------------------------
# d2l's parametric attention pooling: w = 1/ℓ trained by SGD
# ---------------------------------------------------------------------------------------------------------


class D2lChoice(NamedTuple):
    """What d2l's section trains: on which data, with which kernel, whose training (the Kotlin port's or
    d2l's), for how many epochs, from which seed of w₀ (the port's is fixed)."""

    data: Data
    kernel: str
    kotlin: bool
    epochs: int
    seed: int


def d2l_choice(data: Data, s: Settings) -> D2lChoice:
    """The section's settings made a run: the sidebar's data or d2l's own set, the port's epochs within
    what it trains on that data (``_kotlin_epochs``), d2l's epochs and seed otherwise."""
    d = s.d2l
    pdata = data if d.own else cache.d2l_source()
    if d.kotlin:
        epochs = POOLING.spec("kotlin_epochs", Pooled(pdata)).coerce(d.kotlin_epochs)
        return D2lChoice(pdata, d.kernel, True, int(epochs), D2L.seed)
    return D2lChoice(pdata, d.kernel, False, d.epochs, d.seed)


def d2l_view(data: Data, s: Settings) -> vt.ParametricView:
    """w trained as d2l (or the port) trains it (``cache.parametric_view``), drawn as d2l draws it."""
    d = d2l_choice(data, s)
    with busy(_("Training w for {epochs} epochs of SGD…").format(epochs=d.epochs)):
        return cache.parametric_view(d.data, d.kernel, d.kotlin, d.epochs, d.seed)


def kotlin_validation(data: Data, s: Settings) -> np.ndarray | None:
    """The port's validation loss after each epoch (``cache_d2l.kotlin_validation``); None for d2l's
    training, or for data without a true curve."""
    d = d2l_choice(data, s)
    return cache_d2l.kotlin_validation(d.data, d.kernel, d.epochs) if d.kotlin else None


def d2l_loss(data: Data, s: Settings) -> Chart:
    """The loss per epoch: d2l's Σᵢ ½(f(xᵢ) − yᵢ)², or the port's mean L2Loss of the epoch's batches beside
    its validation loss."""
    v, kotlin = d2l_view(data, s), s.d2l.kotlin
    y_title = _("L2Loss, mean over the epoch's batches") if kotlin else _("loss Σᵢ ½(f(xᵢ) − yᵢ)²")
    return Chart(kf.epoch_loss_figure(v.epoch_losses, y_title, kotlin_validation(data, s)),
                 "kernelviz-d2l-loss")


def d2l_fit(data: Data, s: Settings) -> Chart:
    """The parametric pooling with the learned w and the nonparametric one (w = 1) at d2l's test inputs."""
    v = d2l_view(data, s)
    curves = [
        kf.Curve(_("parametric, learned w = {w:.3g}").format(w=v.w), v.learned, kf.COLORS["fit"]),
        kf.Curve(_("nonparametric, w = 1"), v.fixed, kf.COLORS["average"], dash="dash"),
    ]
    look = d2l_choice(data, s).data.look(legend_rows=2)
    return Chart(kf.fit_figure(kf.Points(v.x, v.y, v.queries, truth=v.truth), curves, look=look),
                 "kernelviz-d2l-fit")


def d2l_heatmaps(data: Data, s: Settings) -> Chart:
    """The attention weights of sorted test inputs against sorted training inputs, at w = 1 and at the
    learned w."""
    v = d2l_view(data, s)
    heat = v.heatmap
    pair = kf.heatmap_pair_figure(heat.weights, heat.queries, heat.keys,
                                  (_("w = 1 (nonparametric)"), _("learned w = {w:.3g}").format(w=v.w)))
    return Chart(pair, "kernelviz-d2l-heatmaps")


BOOK = Book(TABLES, {
    "masked.fit": fit, "masked.formula": formula, "masked.loss": loss, "masked.loo": loo, "masked.post": post,
    "masked.seeds": seeds, "masked.d2l_loss": d2l_loss, "masked.d2l_fit": d2l_fit,
    "masked.d2l_heatmaps": d2l_heatmaps,
}, {"masked.largest_holdout": lambda data, s: bank.largest_holdout(data, s.fit)},
    picks={"masked.fit": "masked."})
