"""Weight matrices as heatmaps: queries down the side, keys along the bottom (as in d2l).

One matrix (``heatmap_figure``), two on one colour scale (``heatmap_pair_figure``, ``self_cross_figure``,
``score_transpose_figure``) or one per head (``head_heatmaps_figure``). Large matrices are thinned to evenly
spread rows and columns by ``thin_heatmap`` (``kernelviz.runtime.shapes``), which views use too, so both keep
the same cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.styling import (
    COLORBAR_MARGIN,
    DEFAULT_LOOK,
    HEATMAP_SCALE,
    Look,
    PanelGrid,
    head_color,
    head_labels,
    outer_axis_titles,
    style,
    subplot_grid,
    vec,
)
from kernelviz.runtime.i18n import _
from kernelviz.runtime.shapes import thin_heatmap

if TYPE_CHECKING:
    from kernelviz.app.views import Heatmap

HEAD_COLS = 4  # panels in a row of ``head_heatmaps_figure``
PANEL_PX = 250  # px, the height of a row of its panels
_WEIGHT_HOVER = _("query x = %{y:.3g}<br>key xᵢ = %{x:.3g}<br>weight wᵢ(x) = %{z:.3g}") + "<extra></extra>"


def _expect_shape(what: str, a: np.ndarray, expected: tuple[int | str, ...]) -> None:
    """Raise ``ValueError`` unless ``a`` has the ``expected`` shape; a name in it ("H") matches any
    length."""
    same = a.ndim == len(expected) and all(
        isinstance(e, str) or n == e for n, e in zip(a.shape, expected, strict=True)
    )
    if not same:
        raise ValueError(f"{what} have shape {a.shape}, expected ({', '.join(map(str, expected))})")


WEIGHTS = "weights"  # the ``meta`` of a heatmap whose rows are attention weights (``describe`` reads it)


def _heatmap(
    weights: np.ndarray,
    queries: np.ndarray,
    keys: np.ndarray,
    coloraxis: str = "coloraxis",
    hover: str = _WEIGHT_HOVER,
    name: str = _("attention weights"),
) -> go.Heatmap:
    """One heatmap of attention weights, a query per row, named ``name`` (a panel's title) and marked as
    weights for its text alternative; the cells travel as float32 (half the bytes of float64 to the
    browser, far more precision than a colour or a three-digit hover shows)."""
    return go.Heatmap(
        z=np.asarray(weights, dtype=np.float32),
        x=keys,
        y=queries,
        coloraxis=coloraxis,
        hovertemplate=hover,
        name=name,
        meta=WEIGHTS,
    )


def _color_axis(lo: float, hi: float, **extra: object) -> dict:
    """A colour axis from ``lo`` to ``hi`` (to ``lo + 1`` when there is no range), on the heatmap scale."""
    return {"colorscale": HEATMAP_SCALE, "cmin": lo, "cmax": hi if hi > lo else lo + 1.0, **extra}


def _colorbar(title: str) -> dict:
    return {"title": {"text": title}}


def heatmap_figure(weights: object, queries: object, keys: object, *, cells: tuple[int, int] = (160, 320),
                   look: Look = DEFAULT_LOOK) -> go.Figure:
    """Attention weights w_i(x) as a heatmap, queries down the side, keys along the bottom (as in d2l); by
    default untitled, 420 px, its axes titled as sorted training inputs (keys) and test inputs (queries).

    Queries and keys must be sorted. More than ``cells`` = (rows, columns) are thinned to evenly spread
    rows/columns (the colours are still the exact weights of the shown pairs). An all-zero row is a query
    whose window is empty.
    """
    w = np.asarray(weights, dtype=np.float64)
    q, k = vec(queries), vec(keys)
    _expect_shape("weights", w, (q.shape[0], k.shape[0]))
    fig = go.Figure(_heatmap(*thin_heatmap(w, q, k, *cells)))
    look = look.over(x_title=_("sorted training inputs xᵢ (keys)"),
                     y_title=_("sorted test inputs x (queries)"), height=420)
    coloraxis = {"colorscale": HEATMAP_SCALE, "cmin": 0.0, "colorbar": _colorbar("wᵢ(x)")}
    return style(fig, replace(look, showlegend=False), y_axes={"autorange": "reversed"},
                 layout={"coloraxis": coloraxis, "margin": {"r": COLORBAR_MARGIN}})


def _two_panels(
    panels: Sequence[Sequence[go.Heatmap | go.Scatter]],
    titles: Sequence[str],
    *,
    horizontal_spacing: float,
    shared_yaxes: bool = True,
) -> go.Figure:
    """Two panels side by side, the traces of ``panels[0]`` on the left and of ``panels[1]`` on the
    right."""
    grid = PanelGrid(1, 2, horizontal_spacing, shared_xaxes=False, shared_yaxes=shared_yaxes)
    fig = subplot_grid(grid, titles)
    for col, traces in enumerate(panels, start=1):
        for trace in traces:
            fig.add_trace(trace, row=1, col=col)
    return fig


def _finish_two_panels(fig: go.Figure, coloraxis: dict, x_title: str, y_title: str, height: int) -> go.Figure:
    """The layout of two heatmaps side by side: one colour axis, first row on top, y title on the left."""
    # short titles: two panels side by side must not run into each other in a narrow window
    titles = [{**a, "font": {**a.get("font", {}), "size": 13}}
              for a in fig.layout.to_plotly_json().get("annotations", [])]
    return style(fig, Look(x_title=x_title, y_title="", height=height, showlegend=False),
                 y_axes={"autorange": "reversed"},
                 layout={"coloraxis": coloraxis, "annotations": titles, "yaxis": {"title": {"text": y_title}},
                         "margin": {"t": 70, "r": COLORBAR_MARGIN}})


def heatmap_pair_figure(weights: object, queries: object, keys: object, titles: tuple[str, str], *,
                        cells: tuple[int, int] = (120, 200), height: int = 400) -> go.Figure:
    """Two weight matrices (``weights``: (2, q, n), the left one first) side by side on one colour scale, so
    'sharper' can be read off the colours; each thinned to at most ``cells`` = (rows, columns)."""
    q, k = vec(queries), vec(keys)
    a, b = (np.asarray(w, dtype=np.float64) for w in weights)
    for w in (a, b):
        _expect_shape("weights", w, (q.shape[0], k.shape[0]))
    (za, zb), qs, ks = thin_heatmap(np.stack([a, b]), q, k, *cells)
    panels = [[_heatmap(z, qs, ks, name=title)] for z, title in zip((za, zb), titles, strict=True)]
    fig = _two_panels(panels, titles, horizontal_spacing=0.05)
    top = float(max(np.nanmax(a, initial=0.0), np.nanmax(b, initial=0.0)))
    coloraxis = _color_axis(0.0, top, colorbar=_colorbar("wᵢ(x)"))
    return _finish_two_panels(fig, coloraxis, _("keys xᵢ (sorted)"), _("queries x (sorted)"), height)


def _add_head_panels(
    fig: go.Figure,
    weights: np.ndarray,
    queries: np.ndarray,
    keys: np.ndarray,
    names: Sequence[str],
    cols: int,
) -> dict:
    """One heatmap per head in a grid of ``cols`` columns, each on its own colour axis from 0 to its
    largest weight; returns the layout entries of those axes and of the panel titles (in the head's
    colour)."""
    layout: dict = {}
    for h, name in enumerate(names):
        axis = "coloraxis" if h == 0 else f"coloraxis{h + 1}"
        hover = _("{name}<br>query x = %{{y:.3g}}<br>key xᵢ = %{{x:.3g}}<br>weight = %{{z:.3g}}").format(
            name=name) + "<extra></extra>"
        panel = _heatmap(weights[h], queries, keys, axis, hover, name)
        fig.add_trace(panel, row=h // cols + 1, col=h % cols + 1)
        layout[axis] = _color_axis(0.0, float(np.nanmax(weights[h], initial=0.0)), showscale=False)
    titles = fig.layout.to_plotly_json().get("annotations", [])
    for h, ann in enumerate(titles[: len(names)]):
        ann["font"] = {"color": head_color(h), "size": 13}
    return layout | {"annotations": titles}


def head_heatmaps_figure(weights: object, queries: object, keys: object, titles: Sequence[str] | None = None,
                         *, cells: tuple[int, int] = (96, 160), look: Look = DEFAULT_LOOK) -> go.Figure:
    """Small multiples: the weight matrix wₕ(x, xᵢ) of every head, queries down, keys across (as d2l), in
    rows of at most ``HEAD_COLS`` panels; ``look`` gives the outer axis titles (sorted keys and queries by
    default) and the height (by default ``PANEL_PX`` a row of panels and 60 px).

    ``weights`` is (H, q, n) for sorted ``queries`` (q,) and ``keys`` (n,). Each panel has its own colour
    scale from 0 to that head's largest weight (a wide head's weights are all small, and would be invisible
    on a shared scale); the panel title is written in the head's colour and the hover gives exact values.
    Rows and columns beyond ``cells`` = (rows, columns) are thinned evenly.
    """
    w = np.asarray(weights, dtype=np.float64)
    q, k = vec(queries), vec(keys)
    _expect_shape("weights", w, ("H", q.shape[0], k.shape[0]))
    heads = w.shape[0]
    names = head_labels(titles, heads)
    if len(names) != heads:
        raise ValueError(f"{len(names)} titles for {heads} heads")
    cols = max(1, min(HEAD_COLS, heads))
    rows = -(-heads // cols)
    fig = subplot_grid(PanelGrid(rows, cols, 0.03, vertical_spacing=0.16 if rows > 1 else 0.1), names)
    layout = _add_head_panels(fig, *thin_heatmap(w, q, k, *cells), names, cols)
    look = look.over(x_title=_("sorted keys xᵢ"), y_title=_("sorted queries x"), height=PANEL_PX * rows + 60)
    axis_titles = outer_axis_titles(rows, cols, look.x_title, look.y_title)
    return style(fig, Look(height=look.height, showlegend=False), y_axes={"autorange": "reversed"},
                 layout=layout | axis_titles | {"margin": {"t": 50}})


def _diagonal(lo: float, hi: float) -> go.Scatter:
    """The dashed diagonal x = x′ from (lo, lo) to (hi, hi)."""
    lo, hi = float(lo), float(hi)
    return go.Scatter(
        x=[lo, hi],
        y=[lo, hi],
        mode="lines",
        line={"color": "rgba(255, 255, 255, 0.85)", "dash": "dash", "width": 1.5},
        name=_("diagonal x = x′"),
        hoverinfo="skip",
        showlegend=False,
    )


def score_transpose_figure(
    scores: object,
    grid: object,
    *,
    titles: tuple[str, str] = ("log K(x, x′) = s(x, x′)", _("transpose: log K(x′, x) = s(x′, x)")),
    colorbar_title: str = "log K",
    height: int = 420,
) -> go.Figure:
    """A learned kernel on a grid beside its transpose, the diagonal x = x′ dashed on both.

    ``scores`` is (g, g), row = query x, column = key x′, on a log scale (s = log K), since K = exp s spans
    many orders of magnitude. A symmetric kernel gives two identical panels; the difference between them is
    the asymmetry K(x, x′) ≠ K(x′, x) of dot-product attention. One colour scale for both.
    """
    s = np.asarray(scores, dtype=np.float64)
    g = vec(grid)
    _expect_shape("scores", s, (g.shape[0], g.shape[0]))
    hover = _("query x = %{y:.3g}<br>key x′ = %{x:.3g}<br>log K = %{z:.4g}") + "<extra></extra>"
    panels = [
        [go.Heatmap(z=z, x=g, y=g, coloraxis="coloraxis", hovertemplate=hover), _diagonal(g[0], g[-1])]
        for z in (s, s.T)
    ]
    fig = _two_panels(panels, titles, horizontal_spacing=0.06)
    finite = s[np.isfinite(s)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 1.0
    coloraxis = _color_axis(lo, hi, colorbar=_colorbar(colorbar_title))
    return _finish_two_panels(fig, coloraxis, _("key x′"), _("query x"), height)


def self_cross_figure(
    own: Heatmap,
    cross: Heatmap,
    *,
    titles: tuple[str, str] = (
        _("self-attention<br>queries = the data points xⱼ"),
        _("cross-attention<br>queries = new points x on a grid"),
    ),
    cells: tuple[int, int] = (120, 200),
    top_quantile: float = 0.995,
    height: int = 420,
) -> go.Figure:
    """Self- and cross-attention weights side by side, keys = the data points in both, one colour scale.

    ``own`` (``views.Heatmap`` of one head): the data points ``own.keys`` (n,) attend to each other (queries,
    keys and values from the same sequence), weights (n, n); ``cross``: queries from another sequence (here
    a grid, ``cross.queries`` (m,)) attend to the same data, weights (m, n). Each is thinned to at most
    ``cells`` = (rows, columns). The colour scale runs from 0 to the ``top_quantile`` of the drawn weights
    (brighter cells saturate), so a few very sharp rows at the edge of the data do not turn everything else
    dark; hover shows exact values. The two panels are the same size, each with its own query axis (the
    grid may reach past the data).
    """
    a, b = np.asarray(own.weights, dtype=np.float64), np.asarray(cross.weights, dtype=np.float64)
    xd, g = vec(own.keys), vec(cross.queries)
    _expect_shape("self weights", a, (xd.shape[0], xd.shape[0]))
    _expect_shape("cross weights", b, (g.shape[0], xd.shape[0]))
    za, qa, ka = thin_heatmap(a, xd, xd, *cells)
    zb, qb, kb = thin_heatmap(b, g, xd, *cells)
    # each panel its own query axis: the grid reaches past the data, and a shared axis would leave the
    # self-attention picture shorter than the cross-attention one
    panels = [[_heatmap(za, qa, ka, name=titles[0])], [_heatmap(zb, qb, kb, name=titles[1])]]
    fig = _two_panels(panels, titles, horizontal_spacing=0.08, shared_yaxes=False)
    shown = np.concatenate([za.ravel(), zb.ravel()])
    shown = shown[np.isfinite(shown)]
    top = float(np.quantile(shown, top_quantile)) if shown.size else 0.0
    coloraxis = _color_axis(0.0, top, colorbar=_colorbar(_("weight")))
    return _finish_two_panels(fig, coloraxis, _("keys: data points xᵢ (sorted)"), _("queries (sorted)"),
                              height)


def coverage_figure(counts: object, sources: Sequence[str], chapters: Sequence[str]) -> go.Figure:
    """How many of each source's figures, printed results and exercises (rows) each chapter shows
    (columns), as an annotated grid."""
    c = np.asarray(counts, dtype=np.float64)
    _expect_shape("counts", c, (len(sources), len(chapters)))
    fig = go.Figure(go.Heatmap(
        z=c, x=list(chapters), y=list(sources), colorscale=HEATMAP_SCALE, showscale=False,
        text=c.astype(int), texttemplate="%{text}", hovertemplate="%{y}<br>%{x}: %{z:.0f}<extra></extra>",
    ))
    look = Look(x_title=_("chapter"), y_title=_("source"), height=120 + 40 * len(sources), showlegend=False)
    # a wide left margin: the sources' names
    return style(fig, look, y_axes={"autorange": "reversed"}, layout={"margin": {"l": 145}})
