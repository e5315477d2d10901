"""Chapter 2 · Masked training: the blog post's GaussianKernel learns ℓ from held-out points; d2l's
parametric attention pooling trained as d2l (and its Kotlin/DJL port) train it."""

import math

import numpy as np
import streamlit as st

from kernelviz.app import defaults, ui, views
from kernelviz.app.ui import charts
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.charts import masked as mk
from kernelviz.app.ui.widgets import explain
from kernelviz.app.views import page_settings as ps
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
SQRT2 = defaults.SQRT2
LOSS_HELP = _("kernelviz's readout: the mean squared error on the held-out points over the last {tail} steps "
              "(the post prints none).").format(tail=cache.TAIL)
EPOCHS_SHOWN = 11  # values of w written out under the d2l loss (the start and ten epochs)


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


def masked_fit(data: ui.Data, s: mk.Settings) -> mk.Settings:
    """Status, readouts and the fit with the learned ℓ and the exact optimum, its replay and x* explained
    when asked for (the settings returned with the replay's and the selection's)."""
    view = mk.view(data, s.fit)
    ui.show_status(view.status)
    ui.data_summary(data, training=True)
    masked_metrics(view, s.fit.steps)
    chart = st.container()
    s = s._replace(replay=ui.masked_replay(data, view.fit, s.fit.steps, CH))
    s = s._replace(pick=explain.selection_controls("masked.", data))
    with chart:
        charts.put("masked.fit", mk.fit(data, s), on_select=explain.on_pick("masked.fit", "masked.", data))
    charts.put("masked.formula", mk.formula(data, s))
    st.caption(ui.prose(CH, "fit_caption"))
    if cache.empty_share(data, view.learned, s.fit.kernel) > 0:
        st.caption(ui.prose(CH, "fit_gaps"))
    ui.show_code(heads.model, holdout_objective, training.update,
                 ran=ui.trained_fast(pooling.scalar_heads, pooling.pooled_heads))
    return s


def loss_and_loo(data: ui.Data, s: mk.Settings) -> None:
    """The loss at every step and training's path on the exact leave-one-out curve, ℓ replayed on it when
    the fit's replay is on."""
    view = mk.view(data, s.fit)
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Loss at every step**"))
        charts.put_loss("masked.loss", mk.loss(data, s), ui.prose(CH, "loss_caption"))
    with right:
        st.markdown(_("**Where training went on the leave-one-out curve**"))
        charts.put("masked.loo", mk.loo(data, s))
        gap = ui.prose(CH, "loo_gap", kernel=get_kernel(s.fit.kernel).label) if math.inf in view.cv else ""
        st.caption(" ".join(t for t in (ui.prose(CH, "loo_caption"), gap) if t))
        ui.show_code(loo.curve_model, loo.loo_loss, ran=ui.Ran(f"{ui.SERVED.line} {ui.SEARCHED.line}"),
                     label=_("The code of the leave-one-out curve"))


def post_figure(data: ui.Data, s: mk.Settings) -> None:
    """The post's figure: one GaussianKernel trained per hold-out size 1, 10, n/2, 0.8 n."""
    sizes = cache.panel_holdouts(len(data.train))
    ui.say(CH, "post_intro", n=len(data.train), sizes=", ".join(map(str, sizes)))
    panels = mk.post_panels(data, s.fit)
    for p in panels:
        if p.status.level == "warning":
            ui.show_status(p.status, prefix=_("Hold-out {holdout}: ").format(holdout=p.holdout))
    charts.put("masked.post", mk.post(data, s))
    st.caption(ui.prose(CH, "post_caption"))
    differ = [p for p in panels if f"{SQRT2 * p.lengthscale:.2f}" != f"{SQRT2 * p.softmax_lengthscale:.2f}"]
    if differ:
        ui.say(CH, "post_softmax", holdouts=", ".join(str(p.holdout) for p in differ))
    ui.show_code(heads.post_model, heads.model, pooling.masked_softmax, holdout_split, ran=ui.POST_TRAINED)


@ui.fragment
def seed_spread(data: ui.Data, s: mk.Settings) -> None:
    """kernelviz's spread of the learned ℓ over seeds for the post's hold-out sizes (reruns on its own)."""
    ui.say(CH, "seeds_intro")
    s = s._replace(seeds=mk.SeedSettings(ui.field(mk.SEEDS, "n", data, st.columns([1, 2])[0])))
    spread = mk.spread(data, s)
    charts.put("masked.seeds", mk.seeds(data, s))
    sizes = ", ".join(map(str, spread.capped))
    capped = ui.prose(CH, "seeds_capped", sizes=sizes, n=f"{len(data.train):,}") if spread.capped else ""
    st.caption(ui.prose(CH, "seeds_caption", steps=spread.steps, capped=capped, first=s.fit.seed,
                        last=s.fit.seed + s.seeds.n - 1))
    ui.show_code(heads.model, holdout_objective, training.update, ran=SEEDS_RAN,
                 label=_("The code of the seed spread"))


@ui.fragment
def training_section(data: ui.Data) -> mk.Settings:
    """The post's model: controls, fit and loss. The hold-out size reruns this alone; the other controls
    redraw the page too, for the pictures below (this returns the settings the controls set)."""
    fit = ui.draw(ps.MASKED, data, ps.MASKED_ROWS)
    s = masked_fit(data, mk.START._replace(fit=fit))
    st.latex(ui.prose(CH, "formula"))
    scaled = "" if data.ds.name == "blog" else ui.prose(CH, "scaled")
    ui.say(CH, "model", start=f"{mk.view(data, fit).start:.3g}", scaled=scaled)
    loss_and_loo(data, s)
    return s


@ui.fragment
def holdout_pictures(data: ui.Data, s: mk.Settings) -> None:
    """The post's figure or kernelviz's seed spread, the one chosen (the choice reruns this alone; a move of
    the controls above redraws only the picture shown)."""
    st.subheader(_("What the hold-out size does"))
    s = s._replace(picture=charts.picture_control(mk.PICTURE, data))
    if s.picture.picture == "post":
        post_figure(data, s)
    else:
        seed_spread(data, s)


def d2l_controls(data: ui.Data) -> mk.PoolingSettings:
    """The d2l section's controls: whose data, whose training, the kernel, epochs and the seed of w₀."""
    c1, c2, c3, c4 = st.columns([1.9, 1.2, 1.3, 1.1])
    own, kotlin = ui.field(mk.POOLING, "own", data, c1), ui.field(mk.POOLING, "kotlin", data, c1)
    d = mk.POOLING.start._replace(own=own, kotlin=kotlin, kernel=ui.field(mk.POOLING, "kernel", data, c2))
    if kotlin:  # epochs of the port's training: at most 2,000 batches of the data it trains on
        pooled = mk.Pooled(data if own else cache.d2l_source())
        return d._replace(kotlin_epochs=ui.field(mk.POOLING, "kotlin_epochs", pooled, c3))
    return d._replace(epochs=ui.field(mk.POOLING, "epochs", data, c3),
                      seed=ui.field(mk.POOLING, "seed", data, c4))


@ui.fragment
def d2l_section(data: ui.Data) -> None:
    """d2l's parametric attention pooling as d2l (or the Kotlin port) trains it, drawn as d2l draws it."""
    st.subheader(_("d2l's parametric attention pooling: w = 1/ℓ"))
    ui.say(CH, "d2l_intro")
    st.latex(ui.prose(CH, "d2l_formula"))
    s = mk.START._replace(d2l=d2l_controls(data))
    d, view = mk.d2l_choice(data, s), mk.d2l_view(data, s)
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
    d2l_figures(data, s)


def d2l_loss(data: ui.Data, s: mk.Settings) -> None:
    """The loss per epoch (d2l's, or the port's beside its validation loss) and w after every epoch."""
    charts.put("masked.d2l_loss", mk.d2l_loss(data, s))
    shown = [f"{w:.4g}" for w in mk.d2l_view(data, s).w_epochs]
    if len(shown) > EPOCHS_SHOWN:
        shown = [*shown[: EPOCHS_SHOWN - 1], "…", shown[-1]]
    st.caption(ui.prose(CH, "d2l_loss_caption", ws=" → ".join(shown)))


def kotlin_validation(data: ui.Data, s: mk.Settings) -> None:
    """What the port's validation set is and what its loss did here (none without a true curve)."""
    validation = mk.kotlin_validation(data, s)
    if validation is None:
        ui.say(CH, "kotlin_validation_none")
        return
    view, epochs = mk.d2l_view(data, s), mk.d2l_choice(data, s).epochs
    ui.say(CH, "kotlin_validation")
    best = int(np.nanargmin(validation)) if np.isfinite(validation).any() else 0
    ui.say(CH, "kotlin_validation_result", epochs=epochs, first=f"{validation[0]:.4g}",
           last=f"{validation[-1]:.4g}", best=f"{validation[best]:.4g}", best_epoch=best + 1,
           train_first=f"{view.epoch_losses[0]:.4g}", train_last=f"{view.epoch_losses[-1]:.4g}")
    ui.show_code(parametric.validation_errors, ran=ui.CALLED)


def d2l_figures(data: ui.Data, s: mk.Settings) -> None:
    """d2l's three pictures: the loss per epoch, the fits, the attention weights before and after."""
    left, right = st.columns([2, 3])
    with left:
        d2l_loss(data, s)
    with right:
        charts.put("masked.d2l_fit", mk.d2l_fit(data, s))
        st.caption(ui.prose(CH, "d2l_fit_caption"))
    charts.put("masked.d2l_heatmaps", mk.d2l_heatmaps(data, s))
    st.caption(ui.prose(CH, "d2l_heat_caption"))
    if s.d2l.kotlin:
        kotlin_validation(data, s)
        view, epochs = mk.d2l_view(data, s), mk.d2l_choice(data, s).epochs
        ui.say(CH, "kotlin_why")
        ui.say(CH, "kotlin_here", epochs=epochs, w=f"{view.w:.3g}", own=f"{view.self_weight:.0%}")
    ui.show_code(parametric.parametric_loss, parametric.batch_rows, training.update, ran=ui.TRAINED)


data = ui.current_data()
ui.chapter_header(_("2 · Masked training"), lead=ui.prose(CH, "lead"), source=ui.prose(CH, "source"))
settings = training_section(data)
holdout_pictures(data, settings)
ui.ask(mk.BOOK.questions["masked.largest_holdout"](data, settings))
ui.say(CH, "caveats")
d2l_section(data)
ui.try_this([ui.prose(CH, f"try.{i}") for i in (1, 2, 3)])
