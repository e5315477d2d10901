"""Fits on a grid: data points, true mean and band, predicted curves with their bands, per-head fits.

``band_trace``, ``line_trace`` and ``data_trace`` are the traces every fit figure is made of; a ``Curve``
is one prediction to draw, ``Points`` the data it is drawn over, a ``Mixture`` several heads' fits.
``mixing_figure`` shows the weights that mix the heads' fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.animation import Frame, animated, trace_index
from kernelviz.app.figures.numbers import _single as _single
from kernelviz.app.figures.styling import (
    BAND_ALPHA,
    COLORS,
    DEFAULT_LOOK,
    Look,
    PanelGrid,
    head_color,
    head_labels,
    outer_axis_titles,
    rgba,
    style,
    subplot_grid,
    vec,
)
from kernelviz.runtime.i18n import _
from kernelviz.runtime.shapes import even_indices

PANEL_POINTS = 256  # data points drawn in each small-multiples panel (``small_multiples_figure``)
# the legend names of the data and the truth; ``describe`` finds the true mean and its band by these names
DATA = _("data (xᵢ, yᵢ)")
TRUE_MEAN = _("true mean f(x)")
TRUE_BAND = _("true band f(x) ± 2n(x)")


def band_polygon(x: object, lower: object, upper: object) -> tuple[list, list]:
    """A band as closed polygons, one per run of x where both edges are finite, separated by None.

    Plotly's ``fill="toself"`` closes each None-separated piece on its own, so an undefined stretch (NaN
    edges) is a gap in the band instead of a polygon drawn across it.
    """
    xs, lo, hi = vec(x), vec(lower), vec(upper)
    ok = np.isfinite(xs) & np.isfinite(lo) & np.isfinite(hi)
    px: list = []
    py: list = []
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(int), [0]])))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if px:
            px.append(None)
            py.append(None)
        seg = slice(start, stop)
        px.extend(np.concatenate([xs[seg], xs[seg][::-1], xs[seg][:1]]).tolist())
        py.extend(np.concatenate([hi[seg], lo[seg][::-1], hi[seg][:1]]).tolist())
    return px, py


def band_trace(x: object, lower: object, upper: object, name: str, color: str, **kw: object) -> go.Scatter:
    """A filled band between ``lower`` and ``upper`` (gaps where either is NaN)."""
    px, py = band_polygon(x, lower, upper)
    return go.Scatter(
        x=px,
        y=py,
        name=name,
        mode="lines",
        fill="toself",
        fillcolor=rgba(color, BAND_ALPHA),
        line={"width": 0, "color": rgba(color, 0.0)},
        hoverinfo="skip",
        connectgaps=False,
        **kw,
    )


@dataclass(frozen=True)
class Curve:
    """One predicted curve on a grid: its legend name, values, colour, dash, and optionally a ±2σ band.

    ``std`` (same shape as ``y``) draws m ± 2·std in the curve's colour, named ``band_name``.
    """

    name: str
    y: np.ndarray
    color: str
    dash: str = "solid"
    width: float = 2.5
    std: np.ndarray | None = None
    band_name: str | None = None

    @property
    def band_label(self) -> str:
        """The band's legend name: ``band_name``, else "<name> ± 2s(x)"."""
        return self.band_name or _("{name} ± 2s(x)").format(name=self.name)


def line_trace(x: object, curve: Curve, *, hover_name: str | None = None, **kw: object) -> go.Scatter:
    """``curve``'s line on ``x`` (its name, values, colour, dash and width; its band is ``band_trace``'s),
    broken where y is NaN (``connectgaps=False``), with an x/y hover label naming ``hover_name`` (else the
    curve); ``kw``: further properties of the Plotly trace (``legendgroup``, ``showlegend``, …)."""
    label = hover_name or curve.name
    return go.Scatter(
        x=vec(x),
        y=vec(curve.y),
        name=curve.name,
        mode="lines",
        line={"color": curve.color, "dash": curve.dash, "width": curve.width},
        connectgaps=False,
        hovertemplate=f"{label}<br>x = %{{x:.3g}}<br>y = %{{y:.3g}}<extra></extra>",
        **kw,
    )


def data_trace(x: object, y: object, name: str = DATA, *, size: float = 5.0) -> go.Scatter:
    """The observed points; WebGL beyond 5,000 points so large data sets stay responsive."""
    xs, ys = vec(x), vec(y)
    cls = go.Scattergl if xs.shape[0] > 5000 else go.Scatter
    return cls(
        x=xs,
        y=ys,
        name=name,
        mode="markers",
        marker={"color": COLORS["data"], "size": size if xs.shape[0] <= 2000 else 3},
        hovertemplate="xᵢ = %{x:.3g}<br>yᵢ = %{y:.3g}<extra>" + _("data") + "</extra>",
    )


@dataclass(frozen=True)
class Points:
    """The data of a fit figure and where its curves are drawn: the points ``x``, ``y`` (n,), the ``grid``
    (g,) the curves are given on, and, when known, the true mean f(x) (``truth``) and the noise level n(x)
    (``noise_sd``) on that grid, (g,) each."""

    x: object
    y: object
    grid: object
    truth: object | None = None
    noise_sd: object | None = None


def fit_figure(points: Points, curves: Sequence[Curve] = (), *, look: Look = DEFAULT_LOOK) -> go.Figure:
    """The data points, the true mean f(x) with its true band f ± 2n (when ``points`` have both) and the
    predicted ``curves``, laid out as ``look`` says (by default x, y and 420 px).

    Bands are drawn first (underneath), then the data, then the curves. Every NaN in a curve or band is a
    gap, so a compact kernel's empty window shows as a missing piece of the fit. Without a title the legend
    sits above the plot in ``look.legend_rows`` rows (``style``).
    """
    g, truth = vec(points.grid), points.truth
    fig = go.Figure()
    if truth is not None and points.noise_sd is not None:
        f, n = vec(truth), vec(points.noise_sd)
        fig.add_trace(band_trace(g, f - 2 * n, f + 2 * n, TRUE_BAND, COLORS["truth"]))
    for c in curves:
        if c.std is not None:
            m, s = vec(c.y), vec(c.std)
            fig.add_trace(band_trace(g, m - 2 * s, m + 2 * s, c.band_label, c.color))
    fig.add_trace(data_trace(points.x, points.y))
    if truth is not None:
        fig.add_trace(line_trace(g, Curve(TRUE_MEAN, truth, COLORS["truth"], width=2.0)))
    for c in curves:
        fig.add_trace(line_trace(g, c))
    return style(fig, look.over(x_title="x", y_title="y", height=420))


def _panel_traces(points: Points, data_name: str, prediction: object, first: bool) -> list[go.Scatter]:
    """One small-multiples panel: the data, the true mean (when ``points`` have it) and the fit
    ``prediction`` on the grid; in the legend for the ``first`` panel only."""
    traces = [data_trace(points.x, points.y, data_name, size=4).update(showlegend=first, legendgroup="data")]
    if points.truth is not None:
        truth = Curve(TRUE_MEAN, points.truth, COLORS["truth"], width=1.8)
        traces.append(line_trace(points.grid, truth).update(showlegend=first, legendgroup="truth"))
    fit_line = line_trace(points.grid, Curve(_("fit m(x)"), prediction, COLORS["fit"]))
    traces.append(fit_line.update(showlegend=first, legendgroup="fit"))
    return traces


def even_points(x: object, y: object, most: int) -> tuple[np.ndarray, np.ndarray, str]:
    """At most ``most`` of the points (xᵢ, yᵢ), at the evenly spread positions
    i = round(k (n − 1)/(most − 1)), k = 0 … most − 1 (``even_indices``: the first and the last included),
    and their legend name, which says how many of the n points are drawn when not all of them are."""
    xs, ys = vec(x), vec(y)
    keep = even_indices(xs.shape[0], most)
    if keep.shape[0] == xs.shape[0]:
        return xs, ys, DATA
    return xs[keep], ys[keep], _("data (xᵢ, yᵢ): {shown:,} of {n:,} drawn").format(shown=keep.shape[0],
                                                                                  n=xs.shape[0])


def small_multiples_figure(
    points: Points,
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    look: Look = DEFAULT_LOOK,
    cols: int = 2,
    most_points: int = PANEL_POINTS,
) -> go.Figure:
    """One panel per (title, prediction on ``points.grid``) in ``cols`` columns, shared axes, the data and
    the true mean in every panel; ``look`` gives the outer axis titles and the height (by default x, y and
    560 px).

    Each panel draws at most ``most_points`` of the points (``even_points``; the legend says so): the
    browser draws an SVG marker per point, and four panels of 1,000 points took it 0.2 s against 0.07 s
    for four of 256 (measured when the budget was set, ``docs/benchmarks.md``). The predictions are
    computed from all the data.
    """
    rows = -(-len(panels) // cols)
    xs, ys, data_name = even_points(points.x, points.y, most_points)
    shown = replace(points, x=xs, y=ys, grid=vec(points.grid))
    fig = subplot_grid(PanelGrid(rows, cols, horizontal_spacing=0.06, vertical_spacing=0.12),
                       [title for title, _pred in panels])
    for i, (_title, pred) in enumerate(panels):
        for trace in _panel_traces(shown, data_name, pred, first=i == 0):
            fig.add_trace(trace, row=i // cols + 1, col=i % cols + 1)
    look = look.over(x_title="x", y_title="y", height=560)
    # the legend sits above the panel titles, not on them
    return style(fig, Look(height=look.height),
                 layout=outer_axis_titles(rows, cols, look.x_title, look.y_title)
                 | {"margin": {"t": 95}, "legend": {"y": 1.1}})


def _head_curves(head_means: object, grid: np.ndarray, head_names: Sequence[str]) -> list[Curve]:
    """One dotted curve per head, in its head colour; ``head_means`` must be (len(head_names), grid)."""
    hm = np.asarray(head_means, dtype=np.float64)
    if hm.ndim != 2 or hm.shape[1] != grid.shape[0] or hm.shape[0] != len(head_names):
        raise ValueError(f"head_means have shape {hm.shape}, expected ({len(head_names)}, {grid.shape[0]})")
    return [Curve(name, hm[h], head_color(h), dash="dot", width=1.8) for h, name in enumerate(head_names)]


def _legend_below(fig: go.Figure, entries: int) -> go.Figure:
    """A horizontal legend under the plot, with room for two rows when there are many ``entries``."""
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.16, "xanchor": "left", "x": 0.0},
        margin={"b": 155 if entries > 4 else 130},
    )
    return fig


@dataclass(frozen=True)
class Mixture:
    """Several heads' fits on a grid and their mixture: every head's fit f̂ₕ (``head_means``, (H, g)), one
    legend name per head (``head_names``), the mixture f̂ = Σₕ uₕ f̂ₕ (``mean``, (g,)) with its s(x)
    (``std``, (g,); None: no band), and the legend names of the mixture and of its band."""

    head_means: object
    mean: object
    std: object | None
    head_names: Sequence[str]
    name: str = _("mixture f̂(x) = Σₕ uₕ f̂ₕ(x)")
    band_name: str = _("mixture band f̂(x) ± 2s(x)")


def heads_fit_figure(points: Points, mixture: Mixture, *, look: Look = DEFAULT_LOOK) -> go.Figure:
    """Each head's own fit f̂ₕ(x) (dotted, in its head colour) and the mixture Σₕ uₕ f̂ₕ(x) with its ±2s band,
    over the data of ``points`` (``fit_figure``; by default 460 px).

    ``mixture.head_means`` is (H, grid), one legend entry per head. The mixture is drawn last, on top, solid
    and wider; NaN anywhere is a gap (``fit_figure``).
    """
    m = mixture
    curves = _head_curves(m.head_means, vec(points.grid), m.head_names)
    band_std = None if m.std is None else vec(m.std)
    curves.append(Curve(m.name, vec(m.mean), COLORS["fit"], width=3.2, std=band_std, band_name=m.band_name))
    fig = fit_figure(points, curves, look=look.over(height=460))
    # up to ten legend entries: below the plot, so they never cover the title or the curves
    return _legend_below(fig, len(m.head_names))


def mixing_figure(
    mixing: object,
    lengthscales: object | None = None,
    *,
    head_names: Sequence[str] | None = None,
    y_title: str = _("mixing weight uₕ"),
    height: int = 280,
) -> go.Figure:
    """One bar per head: its mixing weight uₕ (may be negative), in the head's colour, with a zero line.

    With ``lengthscales`` the hover also gives ℓₕ. The title states Σₕ uₕ, which need not be 1.
    """
    u = vec(mixing)
    names = head_labels(head_names, u.shape[0])
    if len(names) != u.shape[0]:
        raise ValueError(f"{len(names)} head names for {u.shape[0]} mixing weights")
    ells = vec(lengthscales) if lengthscales is not None else None
    if ells is not None and ells.shape != u.shape:
        raise ValueError(f"{ells.shape[0]} lengthscales for {u.shape[0]} mixing weights")
    custom = ells if ells is not None else np.full(u.shape, np.nan)
    hover = "%{x}<br>uₕ = %{y:.4g}" + ("<br>ℓₕ = %{customdata:.4g}" if ells is not None else "")
    fig = go.Figure(
        go.Bar(
            x=names,
            y=u,
            marker={"color": [head_color(h) for h in range(u.shape[0])]},
            customdata=custom,
            hovertemplate=hover + "<extra></extra>",
            name="uₕ",
        )
    )
    fig.add_hline(y=0.0, line={"color": rgba(COLORS["data"], 0.9), "width": 1})
    total = float(np.sum(u)) if u.size else 0.0
    return style(fig, Look(title=f"Σₕ uₕ = {total:.3g}", x_title="", y_title=y_title, height=height,
                           showlegend=False))


def _gapped(values: list) -> np.ndarray:
    """A ``band_polygon`` coordinate list as floats, its None separators as NaN (sent as binary data)."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


class Frames(Protocol):
    """The fits a scrub animates (``scrub.Path`` is one): m_ℓ(x) and s_ℓ(x) on ``grid`` (g,) for each ℓ of
    ``lengthscales`` (L), as ``means`` and ``stds`` (L, g)."""

    grid: np.ndarray
    lengthscales: Sequence[float]
    means: np.ndarray
    stds: np.ndarray


def add_scrub(fig: go.Figure, curve: Curve, frames: Frames, *, active: int,
              titles: Sequence[str] | None = None) -> go.Figure:
    """Let the reader scrub ℓ in the browser: one animation frame per ℓ of ``frames`` replaces the line of
    ``curve`` (found by its name) by that ℓ's mean on the frames' grid and, when the curve has a band, the
    band by mean ± 2 std; a slider under the plot (starting at ``active``) and Play / Pause buttons drive
    them (``animated``); ``titles``: the figure's title at each frame. Returns a new figure: the frames are
    built as plain data, float32 where nothing visible changes (``compact``), without Plotly's validation
    (about 10x faster; the tests validate them)."""
    mean_trace = trace_index(fig, curve.name)
    band_trace = None if curve.std is None else trace_index(fig, curve.band_label)
    g, m = vec(frames.grid), np.asarray(frames.means, dtype=np.float64)
    still = fig.data[mean_trace]
    same_x = still.x is not None and np.array_equal(g, np.asarray(still.x, dtype=np.float64))
    made = []
    for i, ell in enumerate(frames.lengthscales):  # on the still line's own x, a frame sends y alone
        data = [{"type": "scatter", "y": _single(m[i])} | ({} if same_x else {"x": _single(g)})]
        if band_trace is not None:
            sd = np.asarray(frames.stds[i], dtype=np.float64)
            px, py = band_polygon(g, m[i] - 2 * sd, m[i] + 2 * sd)
            data.append({"type": "scatter", "x": _single(_gapped(px)), "y": _single(_gapped(py))})
        made.append(Frame(f"{ell:.6g}", f"{ell:.3g}", data,
                          [mean_trace] + ([] if band_trace is None else [band_trace]),
                          None if titles is None else titles[i]))
    return animated(fig, made, active=active, prefix=_("scrub ℓ = "))
