"""A selected query x* drawn on the figures it explains: the kernel's window on the data, the heatmap row.

``mark_point`` adds to a fit figure a dotted line at x*, the fit's point (x*, m(x*)) and every data point
with a marker whose area is proportional to its weight wᵢ(x*); ``mark_heads`` adds the heads' values and
the mixture's at x* to a multi-head fit; ``mark_row`` outlines one row of a weights heatmap.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.styling import head_color, rgba, vec
from kernelviz.runtime.i18n import _

__all__ = ["WEIGHT_MARKER_MAX", "mark_heads", "mark_point", "mark_row", "weight_sizes"]

WEIGHT_MARKER_MAX = 26.0  # marker diameter (px) of the largest weight
MIN_MARKER = 0.5  # px: smaller weight markers are left out (w below 0.04 % of the largest)
SELECTED = "#AA3377"  # x* on a fit (Paul Tol's purple: apart from the fit's blue and the truth's vermillion)
ROW = "#F0E442"  # x*'s row on a heatmap (Okabe–Ito yellow: it shows on Viridis' dark purples)


def weight_sizes(weights: object) -> np.ndarray:
    """Marker diameters whose areas are proportional to the weights: d_i = D √(w_i / max w) (0 for w_i = 0;
    all 0 when every weight is)."""
    w = np.clip(vec(weights), 0.0, None)
    top = float(np.max(w)) if w.size else 0.0
    return np.zeros_like(w) if top <= 0 else WEIGHT_MARKER_MAX * np.sqrt(w / top)


def mark_point(fig: go.Figure, x_star: float, mean: float, x: object, y: object,
               weights: object) -> go.Figure:
    """``fig`` (a fit figure) with x* marked: a dotted vertical line, the fit's value m(x*) (a ring, named in
    its hover but not in the legend, which a scrub's slider leaves no room to grow; none for an empty
    window) and a trace "weights wᵢ(x*)" over the data points, each point's marker area proportional to its
    weight (points outside the window, or whose marker would be under ``MIN_MARKER``, get none). Returns
    ``fig``."""
    xs, ys, w = vec(x), vec(y), vec(weights)
    sizes = weight_sizes(w)
    keep = sizes >= MIN_MARKER  # a weight too small to draw is not sent
    fig.add_trace(go.Scatter(
        x=xs[keep], y=ys[keep], mode="markers", name=_("weights wᵢ(x*) (marker area)"),
        marker={"size": sizes[keep], "color": rgba(SELECTED, 0.35),
                "line": {"color": SELECTED, "width": 1}},
        customdata=w[keep], hovertemplate="xᵢ = %{x:.3g}<br>yᵢ = %{y:.3g}<br>wᵢ(x*) = %{customdata:.3g}"
        "<extra>" + _("weight") + "</extra>",
    ))
    _ring(fig, x_star, mean, "m(x*)", size=13)
    return _vline(fig, x_star)


def mark_row(fig: go.Figure, i: int, queries: object, panels: int = 1) -> go.Figure:
    """``fig`` (a weights heatmap, or ``panels`` of them in a subplot grid, axes numbered in order) with row
    ``i`` outlined across each: a rectangle from halfway to the row above to halfway to the row below
    (``queries``: the rows drawn, sorted)."""
    q = vec(queries)
    below = (q[i] - q[i - 1]) / 2 if i > 0 else (q[1] - q[0]) / 2 if q.size > 1 else 0.5
    above = (q[i + 1] - q[i]) / 2 if i + 1 < q.size else below
    rects = [{"type": "rect", "xref": f"x{n} domain", "yref": f"y{n}", "x0": 0, "x1": 1, "y0": q[i] - below,
              "y1": q[i] + above, "line": {"color": ROW, "width": 2.5}, "fillcolor": "rgba(0,0,0,0)"}
             for n in ("", *map(str, range(2, panels + 1)))]
    fig.update_layout(shapes=[*fig.layout.shapes, *rects])
    return fig


def mark_heads(fig: go.Figure, x_star: float, head_means: object, mean: float, names: list[str]) -> go.Figure:
    """``fig`` (a multi-head fit) with x* marked: a dotted vertical line, each head's value mₕ(x*) as a dot
    in its colour and the mixture's f̂(x*) as a ring (named in their hover, not in the legend)."""
    for h, (m, name) in enumerate(zip(vec(head_means), names, strict=True)):
        if np.isfinite(m):
            dot = {"size": 10, "color": head_color(h), "line": {"width": 1, "color": "white"}}
            hover = f"{name}: m(x*) = %{{y:.4g}}<extra></extra>"
            at = _("{name} at x*").format(name=name)
            fig.add_trace(go.Scatter(x=[x_star], y=[m], mode="markers", name=at, marker=dot,
                                     showlegend=False, hovertemplate=hover))
    _ring(fig, x_star, mean, "f̂(x*)", size=15)
    return _vline(fig, x_star)


def _ring(fig: go.Figure, x_star: float, value: float, name: str, size: int) -> None:
    """The model's value at x* as a ring named ``name`` in its hover, not in the legend (none when NaN)."""
    if np.isfinite(value):
        fig.add_trace(go.Scatter(
            x=[x_star], y=[value], mode="markers", name=name, showlegend=False,
            marker={"size": size, "symbol": "circle-open", "color": SELECTED, "line": {"width": 3}},
            hovertemplate=f"x* = %{{x:.4g}}<br>{name} = %{{y:.4g}}<extra></extra>",
        ))


def _vline(fig: go.Figure, x_star: float) -> go.Figure:
    line = {"type": "line", "xref": "x", "yref": "paper", "x0": x_star, "x1": x_star, "y0": 0, "y1": 1,
            "line": {"color": SELECTED, "width": 1.5, "dash": "dot"}}
    fig.update_layout(shapes=[*fig.layout.shapes, line])
    return fig
