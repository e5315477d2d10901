"""Chapter 4 · Attention: the Gaussian smoother as an attention head, values and W_v, a trained multi-head
layer beside the kernels it generalises, and self-attention as a map of the sequence."""

from functools import partial

import plotly.graph_objects as go
import streamlit as st

import kernelviz as kv
from kernelviz.app import figures as kf
from kernelviz.app import ui, views
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.questions import bank as question_bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.replay import LayerPath
from kernelviz.core import pooling
from kernelviz.models import attention, training
from kernelviz.models.attention import AttentionFit, selfattention
from kernelviz.models.attention.selfattention import as_self_attention, multihead_self_attention
from kernelviz.models.attention.training import LayerRequest
from kernelviz.models.holdout import holdout_objective
from kernelviz.runtime.i18n import _, ngettext

CHAPTER = "4_attention"
COMPARISON_RAN = ui.Ran(_(
    "Each model is an attention layer (the smoother and chapter 3's heads through `gaussian_layer`), run by "
    "`kernelviz.runtime.serve`: at every point with that point's own key hidden, for the leave-one-out "
    "error, and on a grid across the data, for the error against the true mean and the band."
))
KERNEL_RAN = ui.Ran(_(
    "`dot_scores` of every pair of grid points, in one compiled program, in float64; log K_h adds to each "
    "row the constant c_h(x) = (A₀₁ − A₁₀) x̃ + (A₀₂ − A₂₀) x̃², which no weight sees."
))


@ui.fragment
def gaussian_section(data: ui.Data) -> None:
    """The Gaussian kernel as one attention head, at the section's own ℓ (its slider reruns this alone)."""
    ell = ui.lengthscale_control(
        _("Lengthscale ℓ"), "attn.lengthscale", data,
        help=_("The Gaussian kernel to rewrite as attention. Any ℓ works: the two panels below always "
               "agree."),
    )
    with ui.busy(_("Computing the Gaussian smoother and its attention head at ℓ = {ell:g}…").format(ell=ell)):
        check = cache_attention.gaussian_check(data, ell)
    ui.show(
        kf.heatmap_pair_figure(check.heatmap.weights, check.heatmap.queries, check.heatmap.keys,
                               (_("Gaussian kernel<br>ℓ = {ell:g}").format(ell=ell),
                                _("attention head<br>softmax(q·k/√2)")),
                               cells=views.PAIR_CELLS),
        key="attn.equivalence", filename="kernelviz-gaussian-as-attention",
    )
    st.caption(ui.prose(CHAPTER, "equivalence_caption", note=check.heatmap.note))
    v1, v2, v3 = st.columns(3)
    v1.metric(_("max |Δ weight|"), f"{check.weight_diff:.1e}",
              help=_("Largest |Gaussian weight − attention weight| over all query/key pairs."))
    v2.metric(_("max |Δ fit|"), f"{check.mean_diff:.1e}",
              help=_("Largest |Gaussian fit − attention fit| over the query grid."))
    v3.metric(_("query/key width d_qk"), str(question_bank.gaussian_d_qk()))
    ui.say(CHAPTER, "check_result", ell=f"{ell:g}", diff=f"{check.weight_diff:.0e}")
    ui.say(CHAPTER, "check_maps")
    ui.show_table(vt.maps_table(check))
    ui.show_code(attention.gaussian_attention_params, attention.gaussian_layer, attention.layer_model,
                 attention.attention_layer, ran=ui.SERVED)


def replay_path(data: ui.Data, s: LayerRequest) -> tuple[LayerPath | None, int]:
    """The layer at 50 steps of its training when "Replay training" is on (its controls, placed here), and
    the step its charts open at."""
    asked = ui.replay_controls("attn.", s.steps, CHAPTER)
    if not asked.on:
        return None, asked.step
    with ui.busy(_("Replaying training: the layer's fit and kernels at 50 of its steps…")):
        path = cache_attention.training_path(data, s)
    st.caption(ui.prose(CHAPTER, "replay_caption", frames=len(path.steps)))
    return path, asked.step


def layer_figure(data: ui.Data, s: LayerRequest, view: views.AttentionView,
                 path: LayerPath | None, opened: int) -> go.Figure:
    """The layer's fit, every head's part of it and its band, with the replay of training when asked."""
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


def picked_point(data: ui.Data, s: LayerRequest) -> views_explain.LayerPoint | None:
    """The x* controls, and the layer at x* (scores, weights, values) when one is picked."""
    picked = explain.selection_controls("attn.", data)
    return cache_attention.layer_point(data, s, picked.x) if picked.on else None


def layer_readouts(data: ui.Data, s: LayerRequest, fit: AttentionFit) -> None:
    """How training went: its status, where it started, the data and three readouts."""
    ui.show_status(cache_heads.status(data, fit))  # the one rule of views.training_status
    ells = ", ".join(f"{v:.3g}" for v in fit.start_lengthscales) or _("none, the maps are random")
    ui.say(CHAPTER, "start", ells=ells)
    ui.say(CHAPTER, "decay")
    ui.data_summary(data, training=True)
    m1, m2, m3 = st.columns(3)
    m1.metric(_("Hold-out loss"), f"{float(fit.losses[-25:].mean()):.4g}" if fit.losses.size else "–",
              help=_("kernelviz's readout: the mean squared error on the held-out points, averaged over "
                     "the last 25 training steps."))
    m2.metric(_("Parameters"), f"{s.heads * (6 * s.d_qk + 5 * s.d_v):,}",
              help=_("H × (6 d_qk + 5 d_v): per head W_q and W_k (3 × d_qk each), W_v (4 × d_v) and U_h "
                     "(d_v × 1)."))
    m3.metric(_("Steps run (of {steps:,})").format(steps=s.steps), f"{fit.steps_run:,}")


def layer_fit(data: ui.Data, s: LayerRequest, fit: AttentionFit, view: views.AttentionView,
              ) -> tuple[views_explain.LayerPoint | None, tuple[LayerPath | None, int]]:
    """The readouts and the layer's fit with every head's part of it, its replay and x* under it when asked
    (returned: the layer at x*, and the replay with the step it opens at)."""
    layer_readouts(data, s, fit)
    chart = st.container()
    st.caption(ui.prose(CHAPTER, "fit_caption"))
    path, opened = replay_path(data, s)
    fig = layer_figure(data, s, view, path, opened)
    point, names = picked_point(data, s), [_("head {h}").format(h=h + 1) for h in range(s.heads)]
    if point is not None:
        kf.mark_heads(fig, point.x, point.head_outputs, point.mean, names)
    with chart:
        ui.show(fig, key="attn.fit", filename="kernelviz-attention-fit",
                on_select=explain.on_pick("attn.fit", "attn.", data))
    if point is not None:
        explain.layer_panel(point, names, data.ds.x, key="attn.formula")
    ui.show_code(attention.layer_output, attention.dot_scores, holdout_objective, training.update,
                 ran=ui.trained_fast(pooling.summed_heads, pooling.pooled_sum))
    return point, (path, opened)


def layer_scores(data: ui.Data, s: LayerRequest) -> None:
    """The layer against the best Gaussian and chapter 3's heads."""
    with ui.busy(_("Scoring the layer, the best Gaussian and chapter 3's heads by leave-one-out error…")):
        comp = cache_attention.comparison(data, s)
    ui.say(CHAPTER, "compare")
    ui.show_table(vt.comparison_table(comp))
    st.markdown(vt.comparison_sentence(comp))
    ui.show_code(attention.gaussian_layer, attention.layer_model, attention.attention_layer,
                 ran=COMPARISON_RAN)


def notes_self_attention(data: ui.Data, s: LayerRequest) -> None:
    """The notes' PyTorch SelfAttention as the JAX it equals, checked on the trained layer's weights."""
    ui.say(CHAPTER, "notes")
    with ui.busy(_("Running the notes' SelfAttention on the trained layer's weights…")):
        heads, joined = cache_attention.notes_check(data, s)
    ui.say(CHAPTER, "notes_check", heads=f"{heads:.0e}", joined=f"{joined:.0e}")
    ui.show_code(kv.self_attention, selfattention.softmax_attention, selfattention.attention_weights,
                 multihead_self_attention, as_self_attention,
                 ran=ui.CALLED, label=_("The notes' SelfAttention and multi-head attention, in JAX"))


@ui.fragment
def layer_section(data: ui.Data) -> None:
    """The trained layer: its controls and everything drawn from it (they rerun this alone)."""
    st.header(_("A trained attention layer"))
    ui.say(CHAPTER, "layer")
    s = ui.draw(ps.LAYER, data, ps.LAYER_ROWS)
    busy = ngettext("Training {n} attention head (d_qk = {d_qk}, d_v = {d_v}, start: {start}): {steps:,} "
                    "steps, {holdout} held-out point(s) per step…",
                    "Training {n} attention heads (d_qk = {d_qk}, d_v = {d_v}, start: {start}): {steps:,} "
                    "steps, {holdout} held-out point(s) per step…", s.heads)
    with ui.busy(busy.format(n=s.heads, d_qk=s.d_qk, d_v=s.d_v, start=ps.STARTS[s.start], steps=s.steps,
                             holdout=s.holdout)):
        fit = cache_attention.fit_attention(data, s)
    with ui.busy(_("Evaluating the trained layer: fit, attention weights, learned kernels, the sequence "
                   "map…")):
        view = cache_attention.view(data, s)
    point, replay = layer_fit(data, s, fit, view)
    layer_scores(data, s)
    ui.ask(question_bank.beats_gaussian(data, s))
    notes_self_attention(data, s)
    inside_layer(view, fit, s.heads, data.ds.x_label, replay, None if point is None else point.x)
    ahead.prepare_next("attn", s, ps.LAYER.notches(data),
                       partial(cache_attention.prepare, data), context=data.key,
                       depth=cache_attention.AHEAD_NOTCHES)  # the next steps, ready
    ahead.prepare_next_data("attn", data, partial(cache_attention.prepare, s=s), context=s)  # the next n


PICTURES = {
    "heads": _(":material/grid_view: Every head"),
    "wo": _(":material/call_merge: Joining heads: $W_O$"),
    "kernel": _(":material/blur_on: Learned kernel"),
    "sequence": _(":material/timeline: Sequence map"),
    "selfcross": _(":material/compare_arrows: Self vs cross"),
    "loss": _(":material/show_chart: Loss"),
}
ONE_HEAD = ("kernel", "sequence", "selfcross")  # the pictures that show the head chosen under "Head shown"


def every_head(view: views.AttentionView, x_star: float | None) -> None:
    """Every head's weights side by side, x*'s row outlined when one is picked."""
    names = [_("head {h}: (W_v U)_y = {u:+.2f}").format(h=k + 1, u=u) for k, u in enumerate(view.y_weights)]
    heat = view.cross
    fig = kf.head_heatmaps_figure(heat.weights, heat.queries, heat.keys, names)
    if x_star is not None:
        kf.mark_row(fig, views_explain.nearest_row(heat.queries, x_star), heat.queries, len(names))
    ui.show(fig, key="attn.heatmaps", filename="kernelviz-attention-heads")
    st.caption(ui.prose(CHAPTER, "heads_caption", note=view.cross.note,
                        offsets=", ".join(f"{v:.3f}" for v in view.offsets),
                        widths=", ".join(f"{v:.3f}" for v in view.widths)))


def joining_heads(view: views.AttentionView) -> None:
    """How W_O concatenates the heads: the weight each head gives its average of y."""
    ui.say(CHAPTER, "wo")
    st.latex(ui.prose(CHAPTER, "wo_formula"))
    ui.show(kf.y_weights_figure(view), key="attn.wo", filename="kernelviz-w-o")
    st.caption(ui.prose(CHAPTER, "wo_caption"))
    ui.show_code(attention.attention_layer, ran=ui.SERVED)


def learned_kernel(view: views.AttentionView, h: int, replay: tuple[LayerPath | None, int]) -> None:
    """Head h's learned kernel log K(x, x′) beside its transpose, replayed through training when asked."""
    ui.say(CHAPTER, "kernel", asym=f"{view.asymmetry[h]:.3g}")
    titles = (_("head {h}<br>log K(x, x′)").format(h=h + 1),
              _("head {h}, transpose<br>log K(x′, x)").format(h=h + 1))
    fig = kf.score_transpose_figure(view.log_kernel[h], view.kgrid, titles=titles)
    path, opened = replay
    if path is not None:
        fig = kf.add_kernel_replay(fig, path, h, opened)
        st.caption(ui.prose(CHAPTER, "kernel_replay", head=h + 1))
    ui.show(fig, key="attn.kernel", filename="kernelviz-learned-kernel")
    ui.show_code(attention.dot_scores, attention.score_matrices, ran=KERNEL_RAN)


def sequence_map(view: views.AttentionView, h: int, x_title: str) -> None:
    """Self-attention as a map of the sequence: head h's values and outputs at every point."""
    ui.say(CHAPTER, "sequence")
    ui.show(kf.sequence_figure(view, h, x_title), key="attn.sequence",
            filename="kernelviz-self-attention-sequence")
    st.caption(ui.prose(CHAPTER, "sequence_caption", head=h + 1, note=view.self_.note))
    ui.show_code(attention.layer_model, attention.attention_layer, ran=ui.SERVED)


def self_cross(view: views.AttentionView, h: int) -> None:
    """Head h's weights with the points as queries beside those with grid points as queries."""
    ui.say(CHAPTER, "selfcross")
    ui.show(kf.self_cross_figure(view.self_.panel(h), view.cross.panel(h)), key="attn.selfcross",
            filename="kernelviz-self-cross")
    st.caption(ui.prose(CHAPTER, "selfcross_caption", head=h + 1, note=view.cross.note))
    ui.show_code(attention.layer_model, attention.attention_layer, ran=ui.SERVED)


def loss_picture(fit: AttentionFit) -> None:
    """The hold-out loss at every step of the training, or why there is none."""
    ui.loss_chart(fit.losses, "attn.loss", "kernelviz-attention-loss", ui.prose(CHAPTER, "loss_caption"))
    ui.show_code(holdout_objective, training.update, ran=ui.TRAINED)


@ui.fragment
def inside_layer(view: views.AttentionView, fit: AttentionFit, heads: int, x_title: str,
                 replay: tuple[LayerPath | None, int], x_star: float | None) -> None:
    """One picture of the trained layer at a time, the one chosen (the picture and head choices rerun this
    alone; a move of the layer's controls redraws only the picture shown)."""
    st.subheader(_("Inside the trained layer"))
    ui.say(CHAPTER, "inside")
    picture = ui.picture_control("attn.picture", PICTURES)
    head = ui.control("radio", _("Head shown"), "attn.head", default=1, options=tuple(range(1, heads + 1)),
                      format_func=lambda k: _("head {h}").format(h=k), disabled=picture not in ONE_HEAD,
                      help=_("The head the learned kernel, the sequence map and self- vs cross-attention "
                             "show."))
    if picture == "heads":
        every_head(view, x_star)
    elif picture == "wo":
        joining_heads(view)
    elif picture == "kernel":
        learned_kernel(view, head - 1, replay)
    elif picture == "sequence":
        sequence_map(view, head - 1, x_title)
    elif picture == "selfcross":
        self_cross(view, head - 1)
    else:
        loss_picture(fit)


data = ui.current_data()
ds, train = data.ds, data.train

ui.chapter_header(_("4 · Attention"), lead=ui.prose(CHAPTER, "lead"), source=ui.prose(CHAPTER, "source"))

# ------------------------------------------------------------------------------------------- from kernel
st.header(_("From kernel to dot product"))
gaussian_section(data)
st.latex(ui.prose(CHAPTER, "formula"))
ui.say(CHAPTER, "kernel_intro")
st.latex(ui.prose(CHAPTER, "kernel_formula"))
ui.say(CHAPTER, "dot_product")
st.latex(ui.prose(CHAPTER, "dot_formula"))
st.caption(ui.prose(CHAPTER, "check_caption"))


# ------------------------------------------------------------------------------------------- values
st.header(_("Tokens, values and $W_v$"))
ui.say(CHAPTER, "tokens")
st.latex(ui.prose(CHAPTER, "tokens_formula"))

# ------------------------------------------------------------------------------------------- trained layer
layer_section(data)

ui.try_this([ui.prose(CHAPTER, "try_start"), ui.prose(CHAPTER, "try_dqk"), ui.prose(CHAPTER, "try_dv")])
