"""Chapter 5 · In context: one attention layer pretrained on a family of small regression tasks can
become Nadaraya–Watson with a window suited to that family."""

from functools import partial

import numpy as np
import streamlit as st

from kernelviz.app import ui
from kernelviz.app.ui import charts
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.caching import incontext as ci
from kernelviz.app.ui.charts import incontext as icl
from kernelviz.app.views import incontext as vi
from kernelviz.app.views import page_settings as ps
from kernelviz.models import incontext, training
from kernelviz.models.incontext import evaluation as incontext_eval
from kernelviz.models.incontext import gradient as icg
from kernelviz.runtime.i18n import _

CHAPTER = icl.CHAPTER
ERROR_RAN = ui.Ran(_(
    "The layer's mean of (f̂(x_q) − f(x_q))² over the queries of fresh tasks drawn with a fixed seed, each "
    "task's context read as keys and values, in one compiled program."
))
SWEEP_RAN = ui.Ran(_(
    "For each setting of the table: one pretraining (the step above, run by "
    "`kernelviz.models.training.run`), its learned window, and the best fixed ℓ on fresh tasks of that "
    "setting."
))
HEADS_NOTE = _(
    "The same loss and gradient as above, computed head by head: f̂ = Σ_h u_h m_h is a sum of heads, so "
    "each step runs only the heads in use (one small program serves 1 to 8), and each head's gradient is "
    "written out by the chain rule: ∂L/∂s_hi = g u_h w_hi (y_i − m_h) with g = ∂L/∂f̂, summed into "
    "∂L/∂A_h = Σ ∂L/∂s_hi φ(x_q)ᵀφ(x_i). Tested equal to the plain gradient of the loss above, which "
    "computes all eight padded heads: with fewer heads it skips the work of those not in use."
)
TASK = icl.TABLES.shown.key("task")  # the task number's widget key, which "New task" steps


def next_task() -> None:
    """The "New task" button: the next fresh task (before the rerun draws the controls)."""
    st.session_state[TASK] = (int(st.session_state.get(TASK, 0)) + 1) % (icl.TASKS_MAX + 1)


def pretrained(s: icl.Settings) -> incontext.Pretrained:
    """The layer pretrained with these settings (cached), with a warning when pretraining diverged."""
    fit = icl.layer(s.layer)
    if fit.diverged:
        st.warning(_("Pretraining diverged after {steps:,} steps: the layer shown is where it "
                     "stopped.").format(steps=fit.steps_run), icon=":material/warning:")
    return fit


def window_section(data: ui.Data, s: icl.Settings) -> icl.Settings:
    """The learned kernels as windows (the chart titled, so that it starts high on a projector's first
    screen) with the replay's controls under them, the three widths and the error curve over ℓ."""
    chart = st.container()  # the replay's controls go under it
    s = s._replace(replay=ui.replay_controls("icl.", s.layer.steps, CHAPTER, what=icl.PRETRAINING))
    with chart:
        charts.put("icl.kernel", icl.kernel(data, s))
    if s.replay.on:
        st.caption(ui.prose(CHAPTER, "replay_caption", frames=len(ci.pretrain_path(s.layer).steps)))
    view, best, loo = icl.window(s.layer)
    if s.layer.kind == "linear":
        st.caption(ui.prose(CHAPTER, "kernels_linear"))
    dashes = ", ".join(f"{d} x = {x:g}" for d, x in zip((_("solid"), _("dashed"), _("dotted")), view.queries,
                                                            strict=False))
    ui.say(CHAPTER, "kernels", queries=dashes)
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Learned window"), f"{view.window:.3g}" if np.isfinite(view.window) else _("none"),
              help=_("ℓ = (−2c₂)^(−1/2) of the pretrained layer, in x units."))
    m2.metric(_("Best fixed ℓ (Nadaraya–Watson)"), f"{best.best:.3g}")
    m3.metric(_("Mean leave-one-out ℓ*"), f"{loo:.3g}")
    st.caption(ui.prose(CHAPTER, "metrics_caption"))
    charts.put("icl.lengthscales", icl.lengthscales(data, s))
    st.caption(ui.prose(CHAPTER, "error_curve"))
    ui.show_code(incontext_eval.learned_window, incontext_eval.learned_kernel,
                 incontext_eval.best_fixed_lengthscale, ran=ui.CALLED)
    return s


def task_section(data: ui.Data, s: icl.Settings) -> icl.Settings:
    """A fresh task: the prompt, the in-context prediction, Nadaraya–Watson, the truth and the weights."""
    st.header(_("A task the layer never saw"))
    ui.say(CHAPTER, "task", n=s.layer.n)
    c0, c1 = st.columns([1, 3])
    number = int(ui.field(icl.shown_controls(s.layer), "task", None, c0))
    c1.button(_("New task"), icon=":material/casino:", on_click=next_task)
    s = s._replace(shown=s.shown._replace(task=number))
    charts.put("icl.prediction", icl.prediction(data, s))
    st.caption(ui.prose(CHAPTER, "task_caption", ell=f"{icl.task(s).lengthscale:.3g}", task=number))
    charts.put("icl.heatmap", icl.heatmap(data, s))
    st.caption(ui.prose(CHAPTER, "heatmap_caption"))
    ui.show_code(incontext.prediction_model, incontext.head_scores, ran=ui.SERVED)
    return s


def errors_section(s: icl.Settings) -> icl.Settings:
    """The layer's in-context error beside Nadaraya–Watson's at the best ℓ, and linear attention's."""
    st.header(_("How well it predicts in context"))
    best = icl.window(s.layer).best
    with ui.busy(_("Scoring the layer on 256 fresh tasks…")):
        err = ci.in_context_error(s.layer)
    e1, e2, e3 = st.columns(3)
    e1.metric(_("In-context error"), f"{err:.4g}",
              help=_("The {kind} layer, on 256 fresh tasks.").format(kind=icl.KIND_NAMES[s.layer.kind]))
    e2.metric(_("Nadaraya–Watson at best ℓ"), f"{best.error:.4g}")
    e3.metric(_("Ratio"), f"{err / best.error:.3g}×")
    st.caption(ui.prose(CHAPTER, "errors_caption"))
    ui.say(CHAPTER, "linear")
    s = s._replace(shown=s.shown._replace(compare=ui.field(icl.shown_controls(s.layer), "compare", None)))
    if s.shown.compare:
        compare_kinds(s.layer, err)
    else:
        other = vi.other_kind(s.layer)
        st.info(ui.prose(CHAPTER, "compare_off", other=icl.KIND_NAMES[other.kind]), icon=":material/info:")
    ui.show_code(incontext.layer_output, incontext.linear_weights, ran=ERROR_RAN)
    return s


def compare_kinds(s: incontext.PretrainRequest, err: float) -> None:
    """Softmax and linear attention's errors side by side: this page's layer (``err``) and the other kind
    pretrained with the same controls."""
    other = vi.other_kind(s)
    with ui.busy(_("Pretraining the {kind} layer with the same controls…").format(
            kind=icl.KIND_NAMES[other.kind])):
        other_err = ci.in_context_error(other)
    soft, lin = (err, other_err) if s.kind == "softmax" else (other_err, err)
    l1, l2, l3 = st.columns(3)
    l1.metric(_("Softmax attention"), f"{soft:.4g}")
    l2.metric(_("Linear attention"), f"{lin:.4g}")
    l3.metric(_("Linear ÷ softmax"), f"{lin / soft:.3g}×")


def loss_section(data: ui.Data, s: icl.Settings) -> None:
    """The pretraining loss at every step, or why there is none."""
    st.subheader(_("Pretraining loss"))
    charts.put_loss("icl.loss", icl.loss(data, s), ui.prose(CHAPTER, "loss_caption"))
    ui.show_code(incontext.layer_output, incontext.pretraining_loss, training.update,
                 ran=ui.TRAINED._replace(fast=(icg.loss_by_heads, icg.heads_forward, icg.score_gradients,
                                               icg.head_weights), note=HEADS_NOTE))


def sweep_section(data: ui.Data, s: icl.Settings) -> icl.Settings:
    """The learned window against roughness and noise, pretrained only when the student asks."""
    st.header(_("Rough, smooth and noisy families"))
    (rough, noise), layers = ci.SWEEP_BASE, len(ci.SWEEP_ROUGHNESS) + len(ci.SWEEP_NOISE)
    ui.say(CHAPTER, "sweep", steps=ci.SWEEP_STEPS, family=ps.FAMILIES[s.layer.family], layers=layers,
           roughs=len(ci.SWEEP_ROUGHNESS), noises=len(ci.SWEEP_NOISE), rough=f"{rough:g}", noise=f"{noise:g}")
    s = s._replace(shown=s.shown._replace(sweep=ui.field(icl.shown_controls(s.layer), "sweep", None)))
    if not s.shown.sweep:
        st.info(ui.prose(CHAPTER, "sweep_off"), icon=":material/info:")
        return s
    narrows, widens = vi.direction(icl.sweep_rows(s.layer), *ci.SWEEP_BASE)
    ui.say(CHAPTER, "sweep_result", narrows=_("yes") if narrows else _("no"),
           widens=_("yes") if widens else _("no"))
    c0, c1 = st.columns(2)
    with c0:
        charts.put("icl.sweep_roughness", icl.sweep_roughness(data, s))
    with c1:
        charts.put("icl.sweep_noise", icl.sweep_noise(data, s))
    st.caption(ui.prose(CHAPTER, "sweep_caption"))
    ui.show_code(incontext.pretraining_loss, training.update, incontext_eval.learned_window,
                 incontext_eval.best_fixed_lengthscale, ran=SWEEP_RAN)
    return s


ui.chapter_header(_("5 · In context"), lead=ui.prose(CHAPTER, "lead"), source=ui.prose(CHAPTER, "source"))

data = ui.current_data()  # the sidebar's, which this chapter leaves aside: it draws its own tasks
layer = ui.draw(ps.IN_CONTEXT, None, ps.IN_CONTEXT_ROWS)  # no range of chapter 5 depends on the data
settings = icl.Settings(layer, icl.TABLES.replay.start, icl.Shown())
pretrained(settings)
settings = window_section(data, settings)
ui.ask(icl.BOOK.questions["icl.rough_window"](data, settings))

st.header(_("Prompts, a layer, and pretraining"))
ui.say(CHAPTER, "prompt")
st.latex(ui.prose(CHAPTER, "prompt_formula"))
ui.say(CHAPTER, "layer")
st.latex(ui.prose(CHAPTER, "score_formula"))
ui.say(CHAPTER, "pretraining")
ui.say(CHAPTER, "compare")
ui.say(CHAPTER, "window")
st.latex(ui.prose(CHAPTER, "window_formula"))
ui.say(CHAPTER, "window_text")

settings = task_section(data, settings)
settings = errors_section(settings)
loss_section(data, settings)
settings = sweep_section(data, settings)

ui.try_this([ui.prose(CHAPTER, "try_rough"), ui.prose(CHAPTER, "try_linear"), ui.prose(CHAPTER, "try_steps")])
number, compare = settings.shown.task, settings.shown.compare
ahead.prepare_next("icl", layer, ps.IN_CONTEXT.notches(None),
                   partial(ci.prepare, number=number, compare=compare), context=(number, compare),
                   depth=ci.AHEAD_NOTCHES)  # a slider stepped: the next ready
