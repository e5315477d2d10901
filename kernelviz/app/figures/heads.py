"""Figures of multi-head models and the attention layer: the post's panels for H = 1, 2, 4, 8 heads, the
weight each attention head gives its average of y, and self-attention as a map of the sequence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.fits import (
    Curve,
    Points,
    data_trace,
    line_trace,
    mixing_figure,
    small_multiples_figure,
)
from kernelviz.app.figures.styling import (
    COLORS,
    DEFAULT_LOOK,
    Look,
    PanelGrid,
    head_color,
    style,
    subplot_grid,
)
from kernelviz.runtime.i18n import _

if TYPE_CHECKING:
    from kernelviz.app.views import AttentionView
    from kernelviz.app.views.training import Panel

__all__ = ["heads_panels_figure", "sequence_figure", "y_weights_figure"]

FIT_NAME = _("fit f̂(x) = Σₕ uₕ f̂ₕ(x)")
TOKEN_NAMES = ("1", "x̃ᵢ", "x̃ᵢ²")  # the position part of a token, drawn as lines


def heads_panels_figure(points: Points, shown: Sequence[Panel], *, look: Look = DEFAULT_LOOK) -> go.Figure:
    """The post's figure: one panel per H with the data, the true mean (when known) and the fit f̂ of the
    ``shown`` panels (``views_training.Panel``), as ``small_multiples_figure`` lays them out (``look``); pass
    the training points, so the figure stays light."""
    panels = [(_("Heads = {heads}").format(heads=p.heads), p.mean) for p in shown]
    fig = small_multiples_figure(points, panels, look=look)
    # the panels' fits, found by their legend group (a key), not by their name (words)
    return fig.update_traces(selector={"legendgroup": "fit"}, name=FIT_NAME,
                             hovertemplate=FIT_NAME + "<br>x = %{x:.3g}<br>y = %{y:.3g}<extra></extra>")


def y_weights_figure(v: AttentionView) -> go.Figure:
    """One bar per head: (W_v^h U_h)_y, the weight the layer gives head h's average of y (chapter 3's u_h
    for Gaussian heads), titled with their sum."""
    fig = mixing_figure(v.y_weights, y_title="(W<sub>v</sub><sup>h</sup> U<sub>h</sub>)<sub>y</sub>")
    return fig.update_layout(title_text=f"Σₕ (W<sub>v</sub><sup>h</sup> U<sub>h</sub>)<sub>y</sub> = "
                                        f"{float(np.sum(v.y_weights)):.3g}")


def sequence_figure(v: AttentionView, head: int, x_title: str) -> go.Figure:
    """Self-attention as a map of the sequence: the input tokens t_i (left; ỹ_i as points, the position
    part as lines) and head ``head``'s values v_i = t_i W_v (dotted) and outputs x′_i = Σ_j w_ij v_j (solid),
    each of its d_v components against x_i (right), one y axis in token units."""
    x, t = v.seq_x, v.seq_tokens
    fig = subplot_grid(PanelGrid(1, 2, horizontal_spacing=0.06),
                       [_("input sequence: tokens tᵢ = (1, x̃ᵢ, x̃ᵢ², ỹᵢ)"),
                        _("head {h}: values vᵢ = tᵢW<sub>v</sub> → outputs x′ᵢ").format(h=head + 1)])
    fig.add_trace(data_trace(x, t[:, 3], "ỹᵢ = yᵢ / max|y|", size=4), row=1, col=1)
    for f, (name, dash) in enumerate(zip(TOKEN_NAMES, ("solid", "dash", "dot"), strict=True)):
        fig.add_trace(line_trace(x, Curve(name, t[:, f], COLORS["data"], dash=dash, width=1.5)), row=1, col=1)
    for c in range(v.seq_values.shape[2]):
        values, outputs = _("value vᵢ, component {c}"), _("output x′ᵢ, component {c}")
        value = Curve(values.format(c=c + 1), v.seq_values[head, :, c], head_color(c), width=1.0)
        output = Curve(outputs.format(c=c + 1), v.seq_outputs[head, :, c], head_color(c))
        dots = line_trace(x, value).update(mode="markers", marker={"size": 4, "symbol": "circle-open"})
        fig.add_trace(dots, row=1, col=2)
        fig.add_trace(line_trace(x, output), row=1, col=2)
    return style(fig, Look(x_title=x_title, y_title="", height=440),
                 layout={"yaxis": {"title": {"text": _("token units")}}, "margin": {"t": 90},
                         "legend": {"y": 1.16}})
