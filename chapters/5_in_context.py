"""Chapter 5 · In context: one attention layer pretrained on a family of small regression tasks can
become Nadaraya–Watson with a window suited to that family."""

from functools import partial

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from kernelviz.app import figures as kf
from kernelviz.app import ui
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.caching import incontext as ci
from kernelviz.app.ui.questions import bank as question_bank
from kernelviz.app.views import incontext as vi
from kernelviz.app.views import page_settings as ps
from kernelviz.models import incontext, training
from kernelviz.models.incontext import PretrainRequest
from kernelviz.models.incontext import evaluation as incontext_eval
from kernelviz.models.incontext import gradient as icg
from kernelviz.runtime.i18n import _

CHAPTER = "5_in_context"
ERROR_RAN = ui.Ran(_(
    "The layer's mean of (f̂(x_q) − f(x_q))² over the queries of fresh tasks drawn with a fixed seed, each "
    "task's context read as keys and values, in one compiled program."
))
SWEEP_RAN = ui.Ran(_(
    "For each setting of the table: one pretraining (the step above, run by "
    "`kernelviz.models.training.run`), its learned window, and the best fixed ℓ on fresh tasks of that "
    "setting."
))
KIND_NAMES = {"softmax": _("softmax"), "linear": _("linear")}  # a kind in a sentence ("the linear layer")
TASKS_MAX = 999
HEADS_NOTE = _(
    "The same loss and gradient as above, computed head by head: f̂ = Σ_h u_h m_h is a sum of heads, so "
    "each step runs only the heads in use (one small program serves 1 to 8), and each head's gradient is "
    "written out by the chain rule: ∂L/∂s_hi = g u_h w_hi (y_i − m_h) with g = ∂L/∂f̂, summed into "
    "∂L/∂A_h = Σ ∂L/∂s_hi φ(x_q)ᵀφ(x_i). Tested equal to the plain gradient of the loss above, which "
    "computes all eight padded heads: with fewer heads it skips the work of those not in use."
)


def next_task() -> None:
    """The "New task" button: the next fresh task (before the rerun draws the controls)."""
    st.session_state["icl.task"] = (int(st.session_state.get("icl.task", 0)) + 1) % (TASKS_MAX + 1)


def pretrained(s: PretrainRequest) -> incontext.Pretrained:
    """The layer pretrained with these settings (cached), with a status line while it runs."""
    text = ui.prose(CHAPTER, "pretrain_status", steps=f"{s.steps:,}", n=s.n, family=ps.FAMILIES[s.family],
                    roughness=f"{s.roughness:g}", noise=f"{s.noise:g}")
    with ui.busy(text):
        fit = ci.pretrain(s)
    if fit.diverged:
        st.warning(_("Pretraining diverged after {steps:,} steps: the layer shown is where it "
                     "stopped.").format(steps=fit.steps_run), icon=":material/warning:")
    return fit


def replayed(s: PretrainRequest, fig: go.Figure) -> go.Figure:
    """The learned kernels' chart with pretraining replayed under it when "Replay pretraining" is on."""
    asked = ui.replay_controls("icl.", s.steps, CHAPTER, what=_("pretraining"))
    if not asked.on:
        return fig
    with ui.busy(_("Replaying pretraining: the layer's kernels and its error in context at 50 of its "
                   "steps…")):
        path = ci.pretrain_path(s)
    st.caption(ui.prose(CHAPTER, "replay_caption", frames=len(path.steps)))
    return kf.add_pretrain_replay(fig, path, asked.step)


def window_section(s: PretrainRequest, fit: incontext.Pretrained) -> incontext_eval.LengthscaleSearch:
    """The learned kernels as windows (the chart titled, so that it starts high on a projector's first
    screen), the three widths and the error curve over ℓ."""
    with ui.busy(_("Reading the learned kernels and scoring every fixed ℓ on 256 fresh tasks…")):
        view = ci.kernels(s)
        best = ci.best_lengthscale(s.family, s.roughness, s.noise, s.n)
        loo = ci.loo_lengthscale(s.family, s.roughness, s.noise, s.n)
    chart = st.container()  # the replay's controls go under it
    fig = replayed(s, kf.learned_kernel_figure(view.offsets, view.queries, view.kernels, best.best,
                                               title=_("The window pretraining learned")))
    with chart:
        ui.show(fig, key="icl.kernel", filename="kernelviz-in-context-kernel")
    if s.kind == "linear":
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
    ui.show(kf.lengthscale_error_figure(best.lengthscales, best.errors, best.best, view.window, loo),
            key="icl.lengthscales", filename="kernelviz-in-context-lengthscales")
    st.caption(ui.prose(CHAPTER, "error_curve"))
    ui.show_code(incontext_eval.learned_window, incontext_eval.learned_kernel,
                 incontext_eval.best_fixed_lengthscale, ran=ui.CALLED)
    return best


def task_section(s: PretrainRequest) -> None:
    """A fresh task: the prompt, the in-context prediction, Nadaraya–Watson, the truth and the weights."""
    st.header(_("A task the layer never saw"))
    ui.say(CHAPTER, "task", n=s.n)
    c0, c1 = st.columns([1, 3])
    number = ui.control("number", _("Task number"), "icl.task", default=0, min_value=0, max_value=TASKS_MAX,
                        container=c0, help=_("Which fresh task to draw; the button draws the next one."))
    c1.button(_("New task"), icon=":material/casino:", on_click=next_task)
    with ui.busy(_("Predicting in context and with Nadaraya–Watson…")):
        t = ci.task(s, int(number))
    curves = [kf.Curve(_("in-context f̂(x)"), t.mean, kf.COLORS["fit"], std=t.std, band_name="f̂(x) ± 2s(x)"),
              kf.Curve(_("Nadaraya–Watson, ℓ = {ell:.3g}").format(ell=t.lengthscale), t.nw_mean,
                       kf.COLORS["knn"], dash="dash")]
    ui.show(kf.fit_figure(kf.Points(t.x, t.y, t.queries, truth=t.truth), curves,
                          look=kf.Look(x_title="x", y_title="y", legend_rows=2)),
            key="icl.prediction", filename="kernelviz-in-context-task")
    st.caption(ui.prose(CHAPTER, "task_caption", ell=f"{t.lengthscale:.3g}", task=int(number)))
    ui.show(kf.in_context_weights_figure(t.weights, t.queries, t.x, t.mixing), key="icl.heatmap",
            filename="kernelviz-in-context-weights")
    st.caption(ui.prose(CHAPTER, "heatmap_caption"))
    ui.show_code(incontext.prediction_model, incontext.head_scores, ran=ui.SERVED)


def errors_section(s: PretrainRequest, best: incontext_eval.LengthscaleSearch) -> None:
    """The layer's in-context error beside Nadaraya–Watson's at the best ℓ, and linear attention's."""
    st.header(_("How well it predicts in context"))
    with ui.busy(_("Scoring the layer on 256 fresh tasks…")):
        err = ci.in_context_error(s)
    e1, e2, e3 = st.columns(3)
    e1.metric(_("In-context error"), f"{err:.4g}",
              help=_("The {kind} layer, on 256 fresh tasks.").format(kind=KIND_NAMES[s.kind]))
    e2.metric(_("Nadaraya–Watson at best ℓ"), f"{best.error:.4g}")
    e3.metric(_("Ratio"), f"{err / best.error:.3g}×")
    st.caption(ui.prose(CHAPTER, "errors_caption"))
    ui.say(CHAPTER, "linear")
    other = vi.other_kind(s)
    if ui.control("toggle", _("Compare with the other attention"), "icl.compare", default=False,
                  help=_("Pretrains a {kind} layer with the same controls: each move of them then takes "
                         "about twice as long.").format(kind=KIND_NAMES[other.kind])):
        compare_kinds(s, err)
    else:
        st.info(ui.prose(CHAPTER, "compare_off", other=KIND_NAMES[other.kind]), icon=":material/info:")
    ui.show_code(incontext.layer_output, incontext.linear_weights, ran=ERROR_RAN)


def compare_kinds(s: PretrainRequest, err: float) -> None:
    """Softmax and linear attention's errors side by side: this page's layer (``err``) and the other kind
    pretrained with the same controls."""
    other = vi.other_kind(s)
    with ui.busy(_("Pretraining the {kind} layer with the same controls…").format(
            kind=KIND_NAMES[other.kind])):
        other_err = ci.in_context_error(other)
    soft, lin = (err, other_err) if s.kind == "softmax" else (other_err, err)
    l1, l2, l3 = st.columns(3)
    l1.metric(_("Softmax attention"), f"{soft:.4g}")
    l2.metric(_("Linear attention"), f"{lin:.4g}")
    l3.metric(_("Linear ÷ softmax"), f"{lin / soft:.3g}×")


def loss_section(fit: incontext.Pretrained) -> None:
    st.subheader(_("Pretraining loss"))
    ui.loss_chart(fit.losses, "icl.loss", "kernelviz-in-context-loss", ui.prose(CHAPTER, "loss_caption"),
                  y_title=_("query mean squared error"))
    ui.show_code(incontext.layer_output, incontext.pretraining_loss, training.update,
                 ran=ui.TRAINED._replace(fast=(icg.loss_by_heads, icg.heads_forward, icg.score_gradients,
                                               icg.head_weights), note=HEADS_NOTE))


def sweep_section(s: PretrainRequest) -> None:
    """The learned window against roughness and noise, pretrained only when the student asks."""
    st.header(_("Rough, smooth and noisy families"))
    (rough, noise), layers = ci.SWEEP_BASE, len(ci.SWEEP_ROUGHNESS) + len(ci.SWEEP_NOISE)
    ui.say(CHAPTER, "sweep", steps=ci.SWEEP_STEPS, family=ps.FAMILIES[s.family], layers=layers,
           roughs=len(ci.SWEEP_ROUGHNESS), noises=len(ci.SWEEP_NOISE), rough=f"{rough:g}", noise=f"{noise:g}")
    if not ui.control("toggle", _("Run the sweep"), "icl.sweep", default=False):
        st.info(ui.prose(CHAPTER, "sweep_off"), icon=":material/info:")
        return
    with ui.busy(_("Pretraining {layers} softmax layers of {steps} steps on {family}…").format(
            layers=layers, steps=ci.SWEEP_STEPS, family=ps.FAMILIES[s.family])):
        rows = ci.sweep(s.family, s.n, s.heads, s.seed)
    narrows, widens = vi.direction(rows, *ci.SWEEP_BASE)
    ui.say(CHAPTER, "sweep_result", narrows=_("yes") if narrows else _("no"),
           widens=_("yes") if widens else _("no"))
    by_r = [r for r in rows if r.noise == ci.SWEEP_BASE[1]]
    by_s = sorted((r for r in rows if r.roughness == ci.SWEEP_BASE[0]), key=lambda r: r.noise)
    c0, c1 = st.columns(2)
    with c0:
        ui.show(kf.window_sweep_figure([r.roughness for r in by_r], [r.window for r in by_r],
                                       [r.best_lengthscale for r in by_r], _("task roughness r"),
                                       s.roughness),
                key="icl.sweep_roughness", filename="kernelviz-window-against-roughness")
    with c1:
        ui.show(kf.window_sweep_figure([r.noise for r in by_s], [r.window for r in by_s],
                                       [r.best_lengthscale for r in by_s], _("label noise σ"), s.noise),
                key="icl.sweep_noise", filename="kernelviz-window-against-noise")
    st.caption(ui.prose(CHAPTER, "sweep_caption"))
    ui.show_code(incontext.pretraining_loss, training.update, incontext_eval.learned_window,
                 incontext_eval.best_fixed_lengthscale, ran=SWEEP_RAN)


ui.chapter_header(_("5 · In context"), lead=ui.prose(CHAPTER, "lead"), source=ui.prose(CHAPTER, "source"))

settings = ui.draw(ps.IN_CONTEXT, None, ps.IN_CONTEXT_ROWS)  # no range of chapter 5 depends on the data
layer = pretrained(settings)
best_search = window_section(settings, layer)
ui.ask(question_bank.rough_window(settings))

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

task_section(settings)
errors_section(settings, best_search)
loss_section(layer)
sweep_section(settings)

ui.try_this([ui.prose(CHAPTER, "try_rough"), ui.prose(CHAPTER, "try_linear"), ui.prose(CHAPTER, "try_steps")])
number, compare = int(st.session_state.get("icl.task", 0)), bool(st.session_state.get("icl.compare", False))
ahead.prepare_next("icl", settings, ps.IN_CONTEXT.notches(None),
                   partial(ci.prepare, number=number, compare=compare), context=(number, compare),
                   depth=ci.AHEAD_NOTCHES)  # a slider stepped: the next ready
