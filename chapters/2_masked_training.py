"""Chapter 2 · Masked training: the blog post's GaussianKernel learns ℓ from held-out points; d2l's
parametric attention pooling trained as d2l (and its Kotlin/DJL port) train it."""

import math
from typing import NamedTuple

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz.app import defaults, ui, views
from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.questions import bank as question_bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel
from kernelviz.models import heads, loo, parametric, training
from kernelviz.models.holdout import holdout_objective, holdout_split
from kernelviz.runtime.i18n import _

CH = "2_masked_training"
SEEDS_RAN = ui.Ran(
    ui.TRAINED.line + " " + _("The seeds run one after another inside that one program, each with its own "
                              "hold-out sets.")
)
D2L, KT = defaults.D2L, defaults.D2L_KOTLIN
SQRT2, LEARNING_RATES = defaults.SQRT2, defaults.LEARNING_RATES
SEED_MAX = 99  # the seed slider of d2l's w₀
LOSS_HELP = _("kernelviz's readout: the mean squared error on the held-out points over the last {tail} steps "
              "(the post prints none).").format(tail=cache.TAIL)
EPOCHS_MAX = 200  # the epochs sliders of the d2l section
EPOCHS_SHOWN = 11  # values of w written out under the d2l loss (the start and ten epochs)


def kernel_box(label: str, key: str, container: object = None, help: str | None = None) -> str:
    return ui.control("selectbox", label, key, default=ps.MASKED.start.kernel, options=kv.KERNELS,
                      format_func=lambda k: get_kernel(k).label, container=container, help=help)


def seed_slider(label: str, key: str, default: int, container: object, help: str) -> int:
    return ui.control(
        "slider", label, key, default=default, min_value=0, max_value=SEED_MAX, container=container, help=help
    )


def masked_metrics(view: views.MaskedView, steps: int) -> None:
    """The learned ℓ, the exact optimum, the recent loss and the steps run."""
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Learned ℓ"), f"{view.learned:.4g}",
              help=_("Started at ℓ = {start:.3g}. The post's convention: √2 ℓ = {post:.4g}.").format(
                  start=view.start, post=view.learned * SQRT2))
    m2.metric(_("Exact leave-one-out optimum ℓ*"), _("none") if view.best is None else f"{view.best:.4g}")
    m3.metric(_("Hold-out loss (last {tail} steps)").format(tail=cache.TAIL), f"{view.tail_loss:.4g}",
              help=LOSS_HELP)
    m4.metric(_("Steps run"), f"{view.fit.steps_run:,} / {steps:,}")


def masked_fit(data: ui.Data, view: views.MaskedView, kernel: str, steps: int) -> ui.MaskedReplay | None:
    """Status, readouts and the fit with the learned ℓ and the exact optimum, its replay and x* explained
    when asked for (the replay returned)."""
    ui.show_status(view.status)
    ui.data_summary(data, training=True)
    masked_metrics(view, steps)
    curves = [kf.Curve(_("learned ℓ = {ell:.3g}").format(ell=view.learned), view.mean, kf.COLORS["fit"],
                       std=view.std, band_name=_("estimated band m(x) ± 2s(x)"))]
    if view.best_mean is not None:
        curves.append(kf.Curve(_("leave-one-out optimum ℓ* = {ell:.3g}").format(ell=view.best),
                               view.best_mean, kf.COLORS["optimum"], dash="dash", width=2.0))
    title = (_("Fit after search ({kernel} kernel)") if view.fit.method == "search"
             else _("Fit after training ({kernel} kernel)"))
    fig = kf.fit_figure(data.points(), curves, look=data.look(title.format(kernel=get_kernel(kernel).label)))
    chart = st.container()
    if (replay := ui.masked_replay(data, view.fit, steps, CH)) is not None:
        path = replay.path
        fig = kf.add_training_scrub(fig, curves[0], path.steps, path.lengthscales, path.means, replay.step)
    picked = explain.selection_controls("masked.", data)
    point = explain.point_weights(data, picked.x, view.learned, kernel) if picked.on else None
    if point is not None:
        kf.mark_point(fig, point.x, point.mean, data.ds.x, data.ds.y, point.weights)
    with chart:
        ui.show(fig, key="masked.fit", filename="kernelviz-masked-fit",
                on_select=explain.on_pick("masked.fit", "masked.", data))
    if point is not None:
        explain.formula_panel(data, point, view.learned, get_kernel(kernel).label, key="masked.formula")
    st.caption(ui.prose(CH, "fit_caption"))
    if cache.empty_share(data, view.learned, kernel) > 0:
        st.caption(ui.prose(CH, "fit_gaps"))
    ui.show_code(heads.model, holdout_objective, training.update,
                 ran=ui.trained_fast(pooling.scalar_heads, pooling.pooled_heads))
    return replay


def loss_and_loo(view: views.MaskedView, kernel: str, replay: ui.MaskedReplay | None) -> None:
    """The loss at every step and training's path on the exact leave-one-out curve, ℓ replayed on it when
    the fit's replay is on."""
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Loss at every step**"))
        ui.loss_chart(view.fit.losses, "masked.loss", "kernelviz-masked-loss", ui.prose(CH, "loss_caption"))
    with right:
        st.markdown(_("**Where training went on the leave-one-out curve**"))
        fig = kf.masked_loo_figure(view)
        if replay is not None:
            p, curve = replay.path, (view.ells, view.cv)
            fig = kf.add_loo_replay(fig, view.learned, p.steps, p.lengthscales, curve, replay.step)
        ui.show(fig, key="masked.loo", filename="kernelviz-loo-curve")
        gap = ui.prose(CH, "loo_gap", kernel=get_kernel(kernel).label) if math.inf in view.cv else ""
        st.caption(" ".join(t for t in (ui.prose(CH, "loo_caption"), gap) if t))
        ui.show_code(loo.curve_model, loo.loo_loss, ran=ui.Ran(f"{ui.SERVED.line} {ui.SEARCHED.line}"),
                     label=_("The code of the leave-one-out curve"))


def post_figure(data: ui.Data, s: vt.MaskedSettings) -> None:
    """The post's figure: one GaussianKernel trained per hold-out size 1, 10, n/2, 0.8 n."""
    sizes = cache.panel_holdouts(len(data.train))
    ui.say(CH, "post_intro", n=len(data.train), sizes=", ".join(map(str, sizes)))
    with ui.busy(_("Training ℓ for the hold-out sizes {sizes} ({steps} steps each)…").format(
            sizes=", ".join(map(str, sizes)), steps=s.steps)):
        panels = [cache.holdout_panel(data, s.kernel, k, s.steps, s.learning_rate, s.seed) for k in sizes]
    for p in panels:
        if p.status.level == "warning":
            ui.show_status(p.status, prefix=_("Hold-out {holdout}: ").format(holdout=p.holdout))
    titles = [vt.holdout_panel_title(p) for p in panels]
    ui.show(
        kf.small_multiples_figure(data.points(), list(zip(titles, [p.mean for p in panels], strict=True)),
                                  look=data.look()),
        key="masked.post",
        filename="kernelviz-masked-holdouts",
    )
    st.caption(ui.prose(CH, "post_caption"))
    differ = [p for p in panels if f"{SQRT2 * p.lengthscale:.2f}" != f"{SQRT2 * p.softmax_lengthscale:.2f}"]
    if differ:
        ui.say(CH, "post_softmax", holdouts=", ".join(str(p.holdout) for p in differ))
    ui.show_code(heads.post_model, heads.model, pooling.masked_softmax, holdout_split, ran=ui.POST_TRAINED)


@ui.fragment
def seed_spread(data: ui.Data, s: vt.MaskedSettings) -> None:
    """kernelviz's spread of the learned ℓ over seeds for the post's hold-out sizes (reruns on its own)."""
    ui.say(CH, "seeds_intro")
    n_seeds = ui.control(
        "slider",
        _("Seeds per hold-out size"),
        "masked.nseeds",
        default=heads.SEEDS_MAX,
        min_value=2,
        max_value=heads.SEEDS_MAX,
        container=st.columns([1, 2])[0],
    )
    with ui.busy(_("Training {n} seeds for each of the hold-out sizes 1, 10 and n/2…").format(n=n_seeds)):
        spread = cache.seed_spread(data, s.kernel, s.steps, s.learning_rate, n_seeds, s.seed)
    best = cache.loo_optimum(data, s.kernel)
    ui.show(
        kf.seeds_figure(spread.groups, optimum=best), key="masked.seeds", filename="kernelviz-seed-spread"
    )
    sizes = ", ".join(map(str, spread.capped))
    capped = ui.prose(CH, "seeds_capped", sizes=sizes, n=f"{len(data.train):,}") if spread.capped else ""
    st.caption(ui.prose(CH, "seeds_caption", steps=spread.steps, capped=capped, first=s.seed,
                        last=s.seed + n_seeds - 1))
    ui.show_code(heads.model, holdout_objective, training.update, ran=SEEDS_RAN,
                 label=_("The code of the seed spread"))


@ui.fragment
def training_section(data: ui.Data) -> vt.MaskedSettings:
    """The post's model: controls, fit and loss. The hold-out size reruns this alone; the other controls
    redraw the page too, for the pictures below (this returns the controls' settings)."""
    s = ui.draw(ps.MASKED, data, ps.MASKED_ROWS)
    label = get_kernel(s.kernel).label
    with ui.busy(_("Training ℓ: {steps} steps of Adam, {holdout} held-out point(s) per step, {kernel} "
                   "kernel…").format(steps=s.steps, holdout=s.holdout, kernel=label)):
        view = cache.masked_view(data, s)
    replay = masked_fit(data, view, s.kernel, s.steps)
    st.latex(ui.prose(CH, "formula"))
    scaled = "" if data.ds.name == "blog" else ui.prose(CH, "scaled")
    ui.say(CH, "model", start=f"{view.start:.3g}", scaled=scaled)
    loss_and_loo(view, s.kernel, replay)
    return s


PICTURES = {
    "post": _(":material/grid_view: The blog post's four hold-out sizes"),
    "seeds": _(":material/scatter_plot: Why hold-out 1 is noisy (seed spread)"),
}


@ui.fragment
def holdout_pictures(data: ui.Data, s: vt.MaskedSettings) -> None:
    """The post's figure or kernelviz's seed spread, the one chosen (the choice reruns this alone; a move of
    the controls above redraws only the picture shown)."""
    st.subheader(_("What the hold-out size does"))
    picture = ui.picture_control("masked.picture", PICTURES)
    if picture == "post":
        post_figure(data, s)
    else:
        seed_spread(data, s)


class D2lChoice(NamedTuple):
    """The d2l section's settings: whose data, the kernel, whose training (the Kotlin port's or d2l's),
    the epochs and the seed of w₀."""

    data: ui.Data
    kernel: str
    kotlin: bool
    epochs: int
    seed: int


def d2l_controls(data: ui.Data) -> D2lChoice:
    """The d2l section's controls: whose data, whose training, the kernel, epochs and the seed of w₀."""
    c1, c2, c3, c4 = st.columns([1.9, 1.2, 1.3, 1.1])
    own = ui.control(
        "toggle",
        _("Use the sidebar's data"),
        "masked.d2l_sidebar",
        default=False,
        container=c1,
        help=_("Off: d2l's data set (50 points from d2l's formula; kernelviz draws them with seed 0, "
               "d2l sets no seed), as d2l trains on it."),
    )
    kotlin = ui.control(
        "toggle",
        _("Kotlin/DJL port's training"),
        "masked.kotlin",
        default=False,
        container=c1,
        help=_("Off: d2l's training. On: the port's (w = 1, SGD 3, batches of 10, "
               "each point among its own keys)."),
    )
    kernel = kernel_box(
        _("Kernel of the pooling"),
        "masked.d2l_kernel",
        c2,
        help=_("d2l's is the Gaussian; kernelviz adds the others (d2l's exercise 4)."),
    )
    pdata = data if own else cache.d2l_source()
    epochs = epochs_slider(pdata, kotlin, c3)
    if kotlin:
        return D2lChoice(pdata, kernel, True, epochs, D2L.seed)
    seed = seed_slider(_("Seed of w₀"), "masked.d2l_seed", D2L.seed, c4,
                       _("d2l draws w₀ uniformly from [0, 1); this seed picks it."))
    return D2lChoice(pdata, kernel, False, epochs, seed)


def epochs_slider(pdata: ui.Data, kotlin: bool, container: object) -> int:
    """Epochs of d2l's training (5 by default) or of the Kotlin port's (10; at most 2,000 batches)."""
    if kotlin:
        most = min(EPOCHS_MAX, training.STEPS_MAX // parametric.batch_count(len(pdata.train), KT.batch_size))
        key, default, say = "masked.kotlin_epochs", min(KT.epochs, most), _("The port trains 10 epochs.")
    else:
        most, key, default, say = EPOCHS_MAX, "masked.d2l_epochs", D2L.steps, _("d2l trains 5 epochs.")
    return ui.control("slider", _("Epochs"), key, default=default, min_value=1, max_value=most,
                      container=container, help=say)


@ui.fragment
def d2l_section(data: ui.Data) -> None:
    """d2l's parametric attention pooling as d2l (or the Kotlin port) trains it, drawn as d2l draws it."""
    st.subheader(_("d2l's parametric attention pooling: w = 1/ℓ"))
    ui.say(CH, "d2l_intro")
    st.latex(ui.prose(CH, "d2l_formula"))
    d = d2l_controls(data)
    with ui.busy(_("Training w for {epochs} epochs of SGD…").format(epochs=d.epochs)):
        view = cache.parametric_view(d.data, d.kernel, d.kotlin, d.epochs, d.seed)
    ui.say(CH, "kotlin_runs" if d.kotlin else "d2l_runs", epochs=d.epochs, seed=d.seed,
           w0=f"{view.w_path[0]:.3g}")
    ui.show_status(view.status)
    ui.data_summary(d.data, training=True)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Learned w after {epochs} epochs").format(epochs=d.epochs), f"{view.w:.4g}",
              help=_("Started at w₀ = {w0:.3g}.").format(w0=view.w_path[0]))
    m2.metric("ℓ = 1/w", f"{1.0 / view.w:.4g}")
    m3.metric(
        _("Optimum w* = 1/ℓ*"),
        _("none") if view.w_star is None else f"{view.w_star:.4g}",
        help=_("kernelviz adds it: the w whose leave-one-out error is least (1/kv.loo_lengthscale)."),
    )
    m4.metric(_("Weight on its own pair"), f"{view.self_weight:.0%}",
              help=_("kernelviz's measure: the weight a training point gives its own pair (mean over the "
                     "training points), with the learned w."))
    validation = cache_d2l.kotlin_validation(d.data, d.kernel, d.epochs) if d.kotlin else None
    d2l_figures(d.data, view, d.kotlin, d.epochs, validation)


def d2l_loss(view: vt.ParametricView, kotlin: bool, validation: np.ndarray | None) -> None:
    """The loss per epoch (d2l's, or the port's beside its validation loss) and w after every epoch."""
    y_title = _("L2Loss, mean over the epoch's batches") if kotlin else _("loss Σᵢ ½(f(xᵢ) − yᵢ)²")
    ui.show(kf.epoch_loss_figure(view.epoch_losses, y_title, validation), key="masked.d2l_loss",
            filename="kernelviz-d2l-loss")
    shown = [f"{w:.4g}" for w in view.w_epochs]
    if len(shown) > EPOCHS_SHOWN:
        shown = [*shown[: EPOCHS_SHOWN - 1], "…", shown[-1]]
    st.caption(ui.prose(CH, "d2l_loss_caption", ws=" → ".join(shown)))


def kotlin_validation(view: vt.ParametricView, validation: np.ndarray | None, epochs: int) -> None:
    """What the port's validation set is and what its loss did here (none without a true curve)."""
    if validation is None:
        ui.say(CH, "kotlin_validation_none")
        return
    ui.say(CH, "kotlin_validation")
    best = int(np.nanargmin(validation)) if np.isfinite(validation).any() else 0
    ui.say(CH, "kotlin_validation_result", epochs=epochs, first=f"{validation[0]:.4g}",
           last=f"{validation[-1]:.4g}", best=f"{validation[best]:.4g}", best_epoch=best + 1,
           train_first=f"{view.epoch_losses[0]:.4g}", train_last=f"{view.epoch_losses[-1]:.4g}")
    ui.show_code(parametric.validation_errors, ran=ui.CALLED)


def d2l_figures(pdata: ui.Data, view: vt.ParametricView, kotlin: bool, epochs: int,
                validation: np.ndarray | None) -> None:
    """d2l's three pictures: the loss per epoch, the fits, the attention weights before and after."""
    left, right = st.columns([2, 3])
    with left:
        d2l_loss(view, kotlin, validation)
    with right:
        curves = [
            kf.Curve(_("parametric, learned w = {w:.3g}").format(w=view.w), view.learned, kf.COLORS["fit"]),
            kf.Curve(_("nonparametric, w = 1"), view.fixed, kf.COLORS["average"], dash="dash"),
        ]
        ui.show(
            kf.fit_figure(kf.Points(view.x, view.y, view.queries, truth=view.truth), curves,
                          look=pdata.look(legend_rows=2)),
            key="masked.d2l_fit",
            filename="kernelviz-d2l-fit",
        )
        st.caption(ui.prose(CH, "d2l_fit_caption"))
    heat = view.heatmap
    pair = kf.heatmap_pair_figure(heat.weights, heat.queries, heat.keys,
                                  (_("w = 1 (nonparametric)"), _("learned w = {w:.3g}").format(w=view.w)))
    ui.show(pair, key="masked.d2l_heatmaps", filename="kernelviz-d2l-heatmaps")
    st.caption(ui.prose(CH, "d2l_heat_caption"))
    if kotlin:
        kotlin_validation(view, validation, epochs)
        ui.say(CH, "kotlin_why")
        ui.say(CH, "kotlin_here", epochs=epochs, w=f"{view.w:.3g}", own=f"{view.self_weight:.0%}")
    ui.show_code(parametric.parametric_loss, parametric.batch_rows, training.update, ran=ui.TRAINED)


data = ui.current_data()
ui.chapter_header(_("2 · Masked training"), lead=ui.prose(CH, "lead"), source=ui.prose(CH, "source"))
settings = training_section(data)
holdout_pictures(data, settings)
ui.ask(question_bank.largest_holdout(data, settings))
ui.say(CH, "caveats")
d2l_section(data)
ui.try_this([ui.prose(CH, f"try.{i}") for i in (1, 2, 3)])
