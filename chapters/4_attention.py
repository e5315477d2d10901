"""Chapter 4 · Attention: the Gaussian smoother as an attention head, values and W_v, a trained multi-head
layer beside the kernels it generalises, and self-attention as a map of the sequence."""

from functools import partial

import streamlit as st

import kernelviz as kv
from kernelviz.app import ui
from kernelviz.app.ui import charts
from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.charts import attention as attn
from kernelviz.app.ui.questions import bank as question_bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.core import pooling
from kernelviz.models import attention, training
from kernelviz.models.attention import AttentionFit, selfattention
from kernelviz.models.attention.selfattention import as_self_attention, multihead_self_attention
from kernelviz.models.attention.training import LayerRequest
from kernelviz.models.holdout import holdout_objective
from kernelviz.runtime.i18n import _

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
    ell = ui.field(attn.GAUSSIAN, "lengthscale", data)
    s = attn.START._replace(gaussian=attn.GaussianSettings(ell))
    charts.put("attn.equivalence", attn.equivalence(data, s))
    check = cache_attention.gaussian_check(data, ell)
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


def replay_path(data: ui.Data, s: attn.Settings) -> attn.Settings:
    """The replay's controls, placed here, and when "Replay training" is on the caption of the layer at 50
    steps of its training (returned: ``s`` with the replay asked for)."""
    s = s._replace(replay=ui.replay_controls("attn.", s.layer.steps, CHAPTER))
    path = attn.replay_path(data, s)
    if path is not None:
        st.caption(ui.prose(CHAPTER, "replay_caption", frames=len(path.steps)))
    return s


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


def layer_fit(data: ui.Data, s: attn.Settings, fit: AttentionFit) -> attn.Settings:
    """The readouts and the layer's fit with every head's part of it, its replay and x* under it when asked
    (returned: ``s`` with the replay and the query asked for)."""
    layer_readouts(data, s.layer, fit)
    chart = st.container()
    st.caption(ui.prose(CHAPTER, "fit_caption"))
    s = replay_path(data, s)
    s = s._replace(pick=explain.selection_controls("attn.", data))
    with chart:
        charts.put("attn.fit", attn.fit(data, s), on_select=explain.on_pick("attn.fit", "attn.", data))
    charts.put("attn.formula", attn.formula(data, s))
    ui.show_code(attention.layer_output, attention.dot_scores, holdout_objective, training.update,
                 ran=ui.trained_fast(pooling.summed_heads, pooling.pooled_sum))
    return s


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
    s = attn.START._replace(layer=ui.draw(ps.LAYER, data, ps.LAYER_ROWS))
    attn.viewed(data, s.layer)
    s = layer_fit(data, s, cache_attention.fit_attention(data, s.layer))
    layer_scores(data, s.layer)
    ui.ask(attn.BOOK.questions["attn.beats_gaussian"](data, s))
    notes_self_attention(data, s.layer)
    inside_layer(data, s)
    ahead.prepare_next("attn", s.layer, ps.LAYER.notches(data),
                       partial(cache_attention.prepare, data), context=data.key,
                       depth=cache_attention.AHEAD_NOTCHES)  # the next steps, ready
    ahead.prepare_next_data("attn", data, partial(cache_attention.prepare, s=s.layer),
                            context=s.layer)  # the next n


def every_head(data: ui.Data, s: attn.Settings) -> None:
    """Every head's weights side by side, x*'s row outlined when one is picked."""
    charts.put("attn.heatmaps", attn.heatmaps(data, s))
    view = cache_attention.view(data, s.layer)
    st.caption(ui.prose(CHAPTER, "heads_caption", note=view.cross.note,
                        offsets=", ".join(f"{v:.3f}" for v in view.offsets),
                        widths=", ".join(f"{v:.3f}" for v in view.widths)))


def joining_heads(data: ui.Data, s: attn.Settings) -> None:
    """How W_O concatenates the heads: the weight each head gives its average of y."""
    ui.say(CHAPTER, "wo")
    st.latex(ui.prose(CHAPTER, "wo_formula"))
    charts.put("attn.wo", attn.wo(data, s))
    st.caption(ui.prose(CHAPTER, "wo_caption"))
    ui.show_code(attention.attention_layer, ran=ui.SERVED)


def learned_kernel(data: ui.Data, s: attn.Settings) -> None:
    """The head shown's learned kernel log K(x, x′) beside its transpose, replayed through training when
    asked."""
    h = attn.shown_head(s)
    ui.say(CHAPTER, "kernel", asym=f"{cache_attention.view(data, s.layer).asymmetry[h]:.3g}")
    drawn = attn.kernel(data, s)
    if s.replay.on:
        st.caption(ui.prose(CHAPTER, "kernel_replay", head=h + 1))
    charts.put("attn.kernel", drawn)
    ui.show_code(attention.dot_scores, attention.score_matrices, ran=KERNEL_RAN)


def one_head_map(data: ui.Data, s: attn.Settings, picture: str) -> None:
    """The head shown's self-attention as a map of the sequence (``picture`` "sequence": its values and
    outputs at every point) or its weights with the points as queries beside those with grid points as
    queries ("selfcross"), with its caption and code."""
    ui.say(CHAPTER, picture)
    charts.put(f"attn.{picture}", attn.BOOK.charts[f"attn.{picture}"](data, s))
    weights = cache_attention.view(data, s.layer)
    note = (weights.self_ if picture == "sequence" else weights.cross).note
    st.caption(ui.prose(CHAPTER, f"{picture}_caption", head=attn.shown_head(s) + 1, note=note))
    ui.show_code(attention.layer_model, attention.attention_layer, ran=ui.SERVED)


def loss_picture(data: ui.Data, s: attn.Settings) -> None:
    """The hold-out loss at every step of the training, or why there is none."""
    charts.put_loss("attn.loss", attn.loss(data, s), ui.prose(CHAPTER, "loss_caption"))
    ui.show_code(holdout_objective, training.update, ran=ui.TRAINED)


PICTURES = {"heads": every_head, "wo": joining_heads, "kernel": learned_kernel,
            "sequence": partial(one_head_map, picture="sequence"),
            "selfcross": partial(one_head_map, picture="selfcross"), "loss": loss_picture}  # each picture's


@ui.fragment
def inside_layer(data: ui.Data, s: attn.Settings) -> None:
    """One picture of the trained layer at a time, the one chosen (the picture and head choices rerun this
    alone; a move of the layer's controls redraws only the picture shown)."""
    st.subheader(_("Inside the trained layer"))
    ui.say(CHAPTER, "inside")
    picture = ui.field(attn.INSIDE, "picture", data)
    head = ui.field(attn.INSIDE, "head", attn.Shown(s.layer.heads, picture))
    s = s._replace(inside=attn.Inside(picture, head))
    PICTURES[picture](data, s)


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
