"""Chapter 3 · Multi-head kernel regression: several lengthscales (heads) mixed by learned weights u_h."""

from functools import partial

import streamlit as st

from kernelviz.app import defaults, ui
from kernelviz.app.ui import charts
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.charts import heads as mh
from kernelviz.app.ui.widgets import explain
from kernelviz.app.ui.widgets.sidebar import native_sample
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.notches import replace
from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel
from kernelviz.models import heads, smoothing, training
from kernelviz.models.heads import FitResult
from kernelviz.models.holdout import holdout_objective, holdout_split
from kernelviz.runtime.i18n import _

CHAPTER = "3_multihead"
MH = defaults.MULTIHEAD

LEARNING_RATES = defaults.LEARNING_RATES


def own_fit(data: ui.Data, s: mh.Settings) -> mh.Settings:
    """Readouts, the fit with every head and the band of the mixture; the heads at x* when one is picked
    (the settings returned with the query explained)."""
    result, view = mh.trained(data, s), mh.view(data, s)
    K, n_heads, steps = get_kernel(s.post.kernel), len(result.lengthscales), s.own.steps
    ui.show_status(cache_heads.status(data, result))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Heads H"), f"{n_heads}")
    m2.metric(_("Hold-out loss (last {tail} steps)").format(tail=vt.TAIL), f"{vt.last_loss(result):.4g}",
              help=_("kernelviz's readout: the mean squared error on the held-out points over the last "
                     "{tail} steps (the post prints none).").format(tail=vt.TAIL))
    m3.metric("Σₕ uₕ", f"{result.mixing.sum():.3g}", help=_("Not constrained to 1: any linear combination."))
    m4.metric(_("Steps run (of {steps:,})").format(steps=steps), f"{result.steps_run:,}")
    chart = st.container()
    st.caption(ui.prose(CHAPTER, "fit_caption"))
    s = s._replace(pick=explain.selection_controls("mh.", data))
    with chart:
        charts.put("mh.fit", mh.fit(data, s), on_select=explain.on_pick("mh.fit", "mh.", data))
    charts.put("mh.formula", mh.formula(data, s))
    holes = vt.gaps(view, result)
    if holes is not None:
        st.info(ui.prose(CHAPTER, "gaps", gap=f"{holes[0]:.0%}", kernel=K.label, holes=holes[1]))
    ui.show_code(heads.model, holdout_objective, training.update, smoothing.heads_model, pooling.mix,
                 ran=ui.TRAINED_THEN_SERVED)
    ui.say(CHAPTER, "band")
    st.latex(ui.prose(CHAPTER, "band_formula"))
    st.caption(ui.prose(CHAPTER, "band_caption"))
    return s


def learned(result: FitResult) -> None:
    """The learned ℓ_h and u_h as a table."""
    st.subheader(_("What the heads learned"))
    ui.show_table(vt.heads_table(result))
    ui.say(CHAPTER, "learned", total=f"{result.mixing.sum():.3g}")
    ui.show_code(heads.model, pooling.mix, ran=ui.TRAINED)


@ui.fragment
def heads_pictures(data: ui.Data, s: mh.Settings) -> None:
    """Each head's weights (x*'s row outlined when one is explained), the mixing weights or the loss, the
    one chosen (the choice reruns this alone; a move of the controls redraws only the picture shown)."""
    s = s._replace(picture=charts.picture_control(mh.PICTURE, data))
    picture = s.picture.picture
    if picture == "mixing":
        charts.put("mh.mixing", mh.mixing(data, s))
        st.caption(ui.prose(CHAPTER, "mixing_caption"))
    elif picture == "weights":
        charts.put("mh.heatmaps", mh.heatmaps(data, s))
        st.caption(ui.prose(CHAPTER, "heatmaps_caption", note=mh.view(data, s).heatmap.note))
        ui.show_code(smoothing.heads_model, pooling.multihead, pooling.mix, ran=ui.SERVED)
    else:
        loss_picture(data, s)


def loss_picture(data: ui.Data, s: mh.Settings) -> None:
    """The loss at every step, or why there is none; and the code of the loss."""
    search = " " + ui.prose(CHAPTER, "loss_search") if mh.trained(data, s).method == "search" else ""
    charts.put_loss("mh.loss", mh.loss(data, s), ui.prose(CHAPTER, "loss_caption") + search)
    ui.show_code(holdout_objective, training.update, ran=ui.TRAINED)


@ui.fragment
def post_experiment(data: ui.Data, s: mh.Settings) -> vt.MaskedSettings:
    """The blog post's four models (1, 2, 4 and 8 heads), its figure and its numbers beside ours (the learning
    rate and seed above the figure rerun this alone); returns how they are trained."""
    s = s._replace(post=ui.draw(ps.POST_HEADS, data, ps.POST_HEADS_ROWS, base=s.post))
    post, panels = s.post, mh.post_panels(data, s)
    ui.show_status(vt.panels_status(panels))
    charts.put("mh.panels", mh.panels(data, s))
    st.caption(ui.prose(CHAPTER, "post_caption"))
    ui.say(CHAPTER, "post_intro")
    if data.subsampled:
        st.caption(ui.prose(CHAPTER, "panels_subsample", shown=f"{len(data.train):,}", n=f"{data.n:,}"))
    ui.show_code(heads.post_model, heads.model, heads.initial_lengthscales, holdout_split,
                 training.update, smoothing.heads_model, pooling.mix, ran=ui.POST_TRAINED)
    ui.say(CHAPTER, "post_numbers")
    ui.show_table(vt.post_table(panels), two_decimals=vt.PRINTED)
    st.markdown(post_match(panels, at_post=data.key == ("blog", *native_sample("blog"))
                           and (post.kernel, post.learning_rate, post.seed)
                           == (MH.kernel, MH.learning_rate, MH.seed)))
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
def own_model(data: ui.Data, s: mh.Settings) -> vt.HeadsSettings:
    """The reader's own model: any number of heads (its controls rerun this alone); returns its settings."""
    st.subheader(_("Your own model: any number of heads"))
    ui.say(CHAPTER, "explore_intro")
    s = s._replace(own=ui.draw(ps.OWN_HEADS, data, ps.OWN_HEADS_ROWS, base=s.own))
    s = own_fit(data, s)
    learned(mh.trained(data, s))
    heads_pictures(data, s)
    ui.ask(mh.BOOK.questions["mh.largest_mixing"](data, s))
    return s.own


data = ui.current_data()

ui.chapter_header(_("3 · Multi-head kernel regression"), lead=ui.prose(CHAPTER, "lead"),
                  source=ui.prose(CHAPTER, "source"))
kernel = ui.field(ps.POST_HEADS, "kernel", data, container=st.columns(3)[0])
start = mh.Settings(replace(ps.POST_HEADS.start, kernel=kernel), replace(ps.OWN_HEADS.start, kernel=kernel),
                    explain.Selection(), mh.PICTURE.start)

st.subheader(_("The blog post's experiment: 1, 2, 4 and 8 heads"))
post = post_experiment(data, start)
st.subheader(_("The model"))
st.latex(ui.prose(CHAPTER, "formula"))
ui.say(CHAPTER, "training")
ui.say(CHAPTER, "shared_controls")
ui.data_summary(data, training=True)
own = own_model(data, start)

st.subheader(_("Conventions"))
ui.say(CHAPTER, "conventions")

ui.try_this([ui.prose(CHAPTER, f"try_{i}") for i in (1, 2, 3)])
ahead.prepare_next_data("mh", data, partial(cache_heads.prepare, post=post, own=own),
                        context=(post, own))  # a teacher stepping the number of points finds the next ready
