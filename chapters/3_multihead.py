"""Chapter 3 · Multi-head kernel regression: several lengthscales (heads) mixed by learned weights u_h."""

from functools import partial

import streamlit as st

from kernelviz.app import defaults, ui, views
from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.questions import bank as question_bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.ui.widgets.sidebar import native_sample
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.notches import replace
from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel
from kernelviz.models import heads, smoothing, training
from kernelviz.models.heads import FitResult
from kernelviz.models.holdout import holdout_objective, holdout_split
from kernelviz.runtime.i18n import _, ngettext

CHAPTER = "3_multihead"
MH = defaults.MULTIHEAD

LEARNING_RATES = defaults.LEARNING_RATES


def picked_point(data: ui.Data, result: FitResult, kernel: str) -> views_explain.HeadsPoint | None:
    """The heads and their mixture at the query x* the reader picked (a click on the fit, or typed), or
    None when none is."""
    picked = explain.selection_controls("mh.", data)
    if not picked.on:
        return None
    return explain.heads_point(data, picked.x, tuple(map(float, result.lengthscales)),
                               tuple(map(float, result.mixing)), kernel)


def fit_title(heads: int, method: str, kernel: str) -> str:
    """The title of the fit: its number of heads, found by search or by training, and its kernel."""
    if method == "search":
        title = ngettext("{n} head after search ({kernel} kernel)",
                         "{n} heads after search ({kernel} kernel)", heads)
    else:
        title = ngettext("{n} head after training ({kernel} kernel)",
                         "{n} heads after training ({kernel} kernel)", heads)
    return title.format(n=heads, kernel=kernel)


def own_fit(data: ui.Data, result: FitResult, view: views.HeadsView, kernel: str,
            steps: int) -> views_explain.HeadsPoint | None:
    """Readouts, the fit with every head and the band of the mixture; the heads at x* when one is picked
    (returned)."""
    K, n_heads = get_kernel(kernel), len(result.lengthscales)
    ui.show_status(cache_heads.status(data, result))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Heads H"), f"{n_heads}")
    m2.metric(_("Hold-out loss (last {tail} steps)").format(tail=vt.TAIL), f"{vt.last_loss(result):.4g}",
              help=_("kernelviz's readout: the mean squared error on the held-out points over the last "
                     "{tail} steps (the post prints none).").format(tail=vt.TAIL))
    m3.metric("Σₕ uₕ", f"{result.mixing.sum():.3g}", help=_("Not constrained to 1: any linear combination."))
    m4.metric(_("Steps run (of {steps:,})").format(steps=steps), f"{result.steps_run:,}")
    fig = kf.heads_fit_figure(
        data.points(view.grid), kf.Mixture(view.head_means, view.mean, view.std, vt.head_names(result)),
        look=data.look(fit_title(n_heads, result.method, K.label)),
    )
    chart = st.container()
    st.caption(ui.prose(CHAPTER, "fit_caption"))
    point = picked_point(data, result, kernel)
    if point is not None:
        kf.mark_heads(fig, point.x, point.head_means, point.mean, vt.head_names(result, with_mixing=False))
    with chart:
        ui.show(fig, key="mh.fit", filename="kernelviz-multihead-fit",
                on_select=explain.on_pick("mh.fit", "mh.", data))
    if point is not None:
        explain.heads_panel(point, vt.head_names(result, with_mixing=False), key="mh.formula")
    holes = vt.gaps(view, result)
    if holes is not None:
        st.info(ui.prose(CHAPTER, "gaps", gap=f"{holes[0]:.0%}", kernel=K.label, holes=holes[1]))
    ui.show_code(heads.model, holdout_objective, training.update, smoothing.heads_model, pooling.mix,
                 ran=ui.TRAINED_THEN_SERVED)
    ui.say(CHAPTER, "band")
    st.latex(ui.prose(CHAPTER, "band_formula"))
    st.caption(ui.prose(CHAPTER, "band_caption"))
    return point


PICTURES = {
    "weights": _(":material/grid_view: Each head's attention weights"),
    "mixing": _(":material/bar_chart: Mixing weights uₕ"),
    "loss": _(":material/show_chart: Loss at every step"),
}


def learned(result: FitResult) -> None:
    """The learned ℓ_h and u_h as a table."""
    st.subheader(_("What the heads learned"))
    ui.show_table(vt.heads_table(result))
    ui.say(CHAPTER, "learned", total=f"{result.mixing.sum():.3g}")
    ui.show_code(heads.model, pooling.mix, ran=ui.TRAINED)


@ui.fragment
def heads_pictures(result: FitResult, view: views.HeadsView, point: views_explain.HeadsPoint | None) -> None:
    """Each head's weights (x*'s row outlined when ``point``), the mixing weights or the loss, the one
    chosen (the choice reruns this alone; a move of the controls redraws only the picture shown)."""
    picture = ui.picture_control("mh.picture", PICTURES)
    if picture == "mixing":
        ui.show(kf.mixing_figure(result.mixing, result.lengthscales), key="mh.mixing",
                filename="kernelviz-mixing-weights")
        st.caption(ui.prose(CHAPTER, "mixing_caption"))
    elif picture == "weights":
        heat = view.heatmap
        fig = kf.head_heatmaps_figure(heat.weights, heat.queries, heat.keys,
                                      vt.head_names(result, with_mixing=False),
                                      cells=(views.HEAT_ROWS, views.HEAT_COLS))
        if point is not None:
            kf.mark_row(fig, views_explain.nearest_row(heat.queries, point.x), heat.queries,
                        panels=len(result.lengthscales))
        ui.show(fig, key="mh.heatmaps", filename="kernelviz-head-heatmaps")
        st.caption(ui.prose(CHAPTER, "heatmaps_caption", note=view.heatmap.note))
        ui.show_code(smoothing.heads_model, pooling.multihead, pooling.mix, ran=ui.SERVED)
    else:
        loss_picture(result)


def loss_picture(result: FitResult) -> None:
    """The loss at every step, or why there is none; and the code of the loss."""
    search = " " + ui.prose(CHAPTER, "loss_search") if result.method == "search" else ""
    caption = ui.prose(CHAPTER, "loss_caption") + search
    ui.loss_chart(result.losses, "mh.loss", "kernelviz-multihead-loss", caption)
    ui.show_code(holdout_objective, training.update, ran=ui.TRAINED)


@ui.fragment
def post_experiment(data: ui.Data, kernel: str) -> vt.MaskedSettings:
    """The blog post's four models (1, 2, 4 and 8 heads), its figure and its numbers beside ours (the learning
    rate and seed above the figure rerun this alone); returns how they are trained."""
    post = ui.draw(ps.POST_HEADS, data, ps.POST_HEADS_ROWS, base=replace(ps.POST_HEADS.start, kernel=kernel))
    lr, seed, label = post.learning_rate, post.seed, get_kernel(kernel).label
    busy = _("Training the blog post's four models ({panels} heads): {steps:,} steps each, hold-out "
             "{holdout}, {kernel} kernel…")
    with ui.busy(busy.format(panels=", ".join(map(str, MH.panels)), steps=MH.steps, holdout=MH.holdout,
                             kernel=label)):
        panels = cache_heads.panels(data, kernel, lr, seed)
    ui.show_status(vt.panels_status(panels))
    # the training points keep the figure light
    figure = kf.heads_panels_figure(data.points(train=True), panels, look=data.look())
    ui.show(figure, key="mh.panels", filename="kernelviz-multihead-post-panels")
    st.caption(ui.prose(CHAPTER, "post_caption"))
    ui.say(CHAPTER, "post_intro")
    if data.subsampled:
        st.caption(ui.prose(CHAPTER, "panels_subsample", shown=f"{len(data.train):,}", n=f"{data.n:,}"))
    ui.show_code(heads.post_model, heads.model, heads.initial_lengthscales, holdout_split,
                 training.update, smoothing.heads_model, pooling.mix, ran=ui.POST_TRAINED)
    ui.say(CHAPTER, "post_numbers")
    ui.show_table(vt.post_table(panels), two_decimals=vt.PRINTED)
    st.markdown(post_match(panels, at_post=data.key == ("blog", *native_sample("blog"))
                           and (kernel, lr, seed) == (MH.kernel, MH.learning_rate, MH.seed)))
    ui.say(CHAPTER, "post_numbers.seeds")
    return post


def post_match(panels: list[vt.Panel], at_post: bool) -> str:
    """Which of the post's runs the panels reprint, digit for digit, but one digit, or not, from the numbers
    themselves; why digits drift, when some do; and a warning when the settings are not the post's."""
    found = vt.agreements(panels)
    lines = [match_line(a) for a in found]
    ours, post = vt.sum_of_mixing(panels)
    text = ui.prose(CHAPTER, "post_match", total=sum(a.total for a in found),
                    agree=sum(a.agree for a in found), panels="\n".join(f"- {line}" for line in lines),
                    ours=ours, post=post)
    if any(a.differ for a in found):
        text += "\n\n" + ui.prose(CHAPTER, "post_match.why")
    return text if at_post else ui.prose(CHAPTER, "post_match.other") + "\n\n" + text


def match_line(a: vt.Agreement) -> str:
    """One panel's agreement with the post's printout, as a sentence of ``post_match``."""
    if not a.differ:
        return ui.prose(CHAPTER, "post_match.all", heads=a.heads)
    if len(a.differ) == 1:
        (one,) = a.differ
        return ui.prose(CHAPTER, "post_match.one", heads=a.heads, what=one.name, here=f"{one.here:.2f}",
                        printed=f"{one.printed:.2f}")
    return ui.prose(CHAPTER, "post_match.drift", heads=a.heads, agree=a.agree, total=a.total,
                    du=f"{a.du:.2f}", widest=f"{a.widest:.2f}", post_widest=f"{a.post_widest:.2f}")


@ui.fragment
def own_model(data: ui.Data, kernel: str) -> vt.HeadsSettings:
    """The reader's own model: any number of heads (its controls rerun this alone); returns its settings."""
    st.subheader(_("Your own model: any number of heads"))
    ui.say(CHAPTER, "explore_intro")
    own = ui.draw(ps.OWN_HEADS, data, ps.OWN_HEADS_ROWS, base=replace(ps.OWN_HEADS.start, kernel=kernel))
    s, label = own.training, get_kernel(kernel).label
    busy = ngettext("Training {n} head: {steps:,} steps of masked training, {holdout} held-out point(s) "
                    "per step, {kernel} kernel…",
                    "Training {n} heads: {steps:,} steps of masked training, {holdout} held-out point(s) "
                    "per step, {kernel} kernel…", own.heads)
    with ui.busy(busy.format(n=own.heads, steps=s.steps, holdout=s.holdout, kernel=label)):
        result = cache_heads.fit_multihead(data, own.heads, s)
    with ui.busy(_("Predicting with every head and with the mixture…")):
        view = cache_heads.heads_view(data, result.lengthscales, result.mixing, kernel)
    point = own_fit(data, result, view, kernel, s.steps)
    learned(result)
    heads_pictures(result, view, point)
    ui.ask(question_bank.largest_mixing(result))
    return own


data = ui.current_data()

ui.chapter_header(_("3 · Multi-head kernel regression"), lead=ui.prose(CHAPTER, "lead"),
                  source=ui.prose(CHAPTER, "source"))
kernel = ui.field(ps.POST_HEADS, "kernel", data, container=st.columns(3)[0])

st.subheader(_("The blog post's experiment: 1, 2, 4 and 8 heads"))
post = post_experiment(data, kernel)
st.subheader(_("The model"))
st.latex(ui.prose(CHAPTER, "formula"))
ui.say(CHAPTER, "training")
ui.say(CHAPTER, "shared_controls")
ui.data_summary(data, training=True)
own = own_model(data, kernel)

st.subheader(_("Conventions"))
ui.say(CHAPTER, "conventions")

ui.try_this([ui.prose(CHAPTER, f"try_{i}") for i in (1, 2, 3)])
ahead.prepare_next_data("mh", data, partial(cache_heads.prepare, post=post, own=own),
                        context=(post, own))  # a teacher stepping the number of points finds the next ready
