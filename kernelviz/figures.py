"""Pure Plotly builders: NumPy arrays in, ``go.Figure`` out. No Streamlit, no JAX, no state.

Every figure in the dashboard is built here so that it can be tested without a browser and so that one
colour means one thing on every page:

* ``COLORS`` maps a *role* to a colour: ``data`` (observed points), ``truth`` (the true mean f(x) and its
  ±2n(x) band), ``fit`` (the model's prediction m(x) and its ±2s(x) band), ``average`` and ``knn``
  (baselines), ``optimum`` (an exact optimum marked on a curve), ``trajectory`` (where training went),
  ``loss`` (training loss). ``HEAD_COLORS`` gives one colour per attention head, in order.
* ``style(fig, ...)`` is the shared layout: axis titles, legend on top, hover, margins, height.
* ``png_config(name)`` is the ``config=`` for ``st.plotly_chart``: the modebar's camera saves a PNG.

Conventions that every builder keeps:

* NaN never becomes a line: lines use ``connectgaps=False`` so a NaN (an empty kernel window) is a gap,
  and bands are drawn as one closed polygon per finite run (``band_polygon``).
* Axis titles name the quantity ("lengthscale ℓ", "sorted training inputs xᵢ (keys)").
* Colours come from ``COLORS``/``HEAD_COLORS`` with transparency added by ``rgba``; the template is left
  to the caller (the app passes ``theme="streamlit"`` so figures follow the light or dark theme).

Adding a builder for a new chapter: take arrays, put the traces in with ``line_trace``/``band_trace``/
``data_trace``, finish with ``style(...)`` and return the figure; add a test in tests/test_figures.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = [
    "COLORS",
    "HEAD_COLORS",
    "Curve",
    "band_polygon",
    "band_trace",
    "data_trace",
    "even_indices",
    "fit_figure",
    "heatmap_figure",
    "heatmap_pair_figure",
    "kernel_shape_figure",
    "line_trace",
    "log_axis",
    "log_ticks",
    "loo_figure",
    "loss_figure",
    "png_config",
    "rgba",
    "seeds_figure",
    "small_multiples_figure",
    "style",
    "thin_heatmap",
    "thumbnail",
]

# Okabe–Ito colours: distinguishable with colour-blindness, readable on white and on Streamlit's dark theme.
COLORS: dict[str, str] = {
    "data": "#8C8C8C",
    "truth": "#D55E00",
    "fit": "#0072B2",
    "average": "#CC79A7",
    "knn": "#009E73",
    "optimum": "#E69F00",
    "trajectory": "#009E73",
    "loss": "#56B4E9",
    "before": "#8C8C8C",
}
HEAD_COLORS: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#8C564B",
)
HEATMAP_SCALE = "Viridis"
BAND_ALPHA = 0.18


def rgba(color: str, alpha: float) -> str:
    """``#RRGGBB`` with an opacity, as a Plotly ``rgba(r, g, b, a)`` string."""
    c = color.lstrip("#")
    r, g, b = (int(c[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha:g})"


def png_config(filename: str, scale: int = 2) -> dict:
    """``config=`` for ``st.plotly_chart``: the modebar camera saves ``<filename>.png`` at ``scale`` ×
    size."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": scale},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def style(
    fig: go.Figure,
    *,
    x_title: str,
    y_title: str,
    title: str | None = None,
    height: int = 380,
    showlegend: bool = True,
    log_x: bool = False,
    log_y: bool = False,
) -> go.Figure:
    """The shared layout: axis titles, a horizontal legend, closest-point hover, margins.

    The legend sits above the plot, or below the x-axis title when the figure has a title (so the two never
    overlap). Log axes (``log_x``/``log_y``) get ``log_axis``: every label a whole value (0.05, 10⁻⁴), never
    a bare mantissa or an SI prefix (100µ). Call ``style`` after adding the traces, since the ticks follow
    the data.
    """
    legend = (
        {"orientation": "h", "yanchor": "top", "y": -0.18, "xanchor": "left", "x": 0.0}
        if title
        else {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0.0}
    )
    fig.update_layout(
        title={"text": title} if title else None,
        height=height,
        margin={"l": 60, "r": 20, "t": 50 if title else 40, "b": 110 if title and showlegend else 50},
        hovermode="closest",
        showlegend=showlegend,
        legend=legend,
    )
    fig.update_xaxes(title_text=x_title, exponentformat="power")
    fig.update_yaxes(title_text=y_title, exponentformat="power")
    if log_x:
        log_axis(fig, "x")
    if log_y:
        log_axis(fig, "y")
    return fig


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(e: int) -> str:
    return "1" if e == 0 else "10" if e == 1 else "10" + str(e).translate(_SUPERSCRIPTS)


def _log_label(v: float, scientific: bool) -> str:
    """A tick value written out in full: ``0.05``, ``2`` or, when ``scientific``, ``10⁻⁴`` / ``2×10⁻⁴``."""
    if not scientific:
        return f"{v:.6g}"
    e = int(np.floor(np.log10(v) + 1e-9))
    m = float(f"{v / 10.0**e:.3g}")
    if m >= 10.0:  # rounding carried into the next decade
        m, e = m / 10.0, e + 1
    return _power_of_ten(e) if m == 1.0 else f"{m:g}×{_power_of_ten(e)}"


def log_ticks(values: object = (), *, min_ticks: int = 3, max_powers: int = 7) -> dict:
    """Axis properties for a log axis whose every label is a whole number, never a bare mantissa.

    Plotly's own log ticks label 2 and 5 between powers of ten as bare digits ("2 5 0.1 2 5 1"), which reads
    as 2, 5, 0.1 rather than 0.02, 0.05, 0.1. Here the labelled ticks are chosen from the finite positive
    ``values`` the axis shows, coarsest first, taking the first set with at least ``min_ticks`` ticks inside
    [min, max]:

    1. powers of ten 10ᵏ (every ``step``-th one when there are more than ``max_powers``);
    2. 1, 2, 5 × 10ᵏ (two ticks are enough when the values span more than a factor of four);
    3. 1, 2, …, 9 × 10ᵏ (two ticks are enough);
    4. an even linear step of 1, 2 or 5 × 10ᵏ (values within a factor of about 1.8 of each other).

    Labels are the value in full ("0.05", "2", "300") when every tick lies in [10⁻³, 10⁴), otherwise
    "10⁻⁴" / "2×10⁻⁴" for all of them. Faint unlabelled grid lines (minor ticks) mark the unlabelled
    digits, or the skipped powers. Ticks continue a few decades beyond the data, so zooming out keeps
    labels.
    Returns a dict for ``fig.update_xaxes``/``update_yaxes``: ``type="log"``, ``range`` (log10 of the data's
    extent, padded by 4 % of it), ``tickmode="array"``, ``tickvals``, ``ticktext`` and ``minor``.
    """
    v = _vec(values) if np.size(values) else np.array([], dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    lo, hi = (float(v.min()), float(v.max())) if v.size else (1e-2, 1e2)
    if hi <= lo * (1 + 1e-12):
        lo, hi = lo / 2.0, hi * 2.0
    k_lo, k_hi = int(np.floor(np.log10(lo))) - 3, int(np.ceil(np.log10(hi))) + 3
    decades = np.arange(k_lo, k_hi + 1)

    def inside(t: np.ndarray) -> int:
        return int(np.sum((t >= lo * (1 - 1e-9)) & (t <= hi * (1 + 1e-9))))

    def digits(ds: Sequence[int]) -> np.ndarray:
        return np.array(sorted(d * 10.0**k for k in decades for d in ds))

    span = float(np.log10(hi / lo))
    powers = 10.0 ** decades.astype(np.float64)
    step = max(1, -(-inside(powers) // max_powers))
    major = powers[decades % step == 0]
    minor: np.ndarray = np.array([])
    if inside(major) >= min_ticks:
        minor = powers[decades % step != 0] if step > 1 else digits(range(2, 10))
    else:
        # 1-2-5 is enough over more than a factor of four; every digit only when the values span less
        for ds, need in (((1, 2, 5), 2 if span >= 0.6 else min_ticks), (range(1, 10), 2)):
            major = digits(ds)
            if inside(major) >= need:
                minor = digits(sorted(set(range(1, 10)) - set(ds)))
                break
        else:
            width = hi - lo
            unit = 10.0 ** np.floor(np.log10(width / min_ticks))
            lin = next(m * unit for m in (1, 2, 5, 10) if width / (m * unit) <= 2 * min_ticks)
            lin = float(lin)
            start = np.floor(lo / 10 / lin) * lin
            major = np.arange(max(start, lin), hi * 10 + lin, lin)
            major = np.unique(np.round(major / lin) * lin)
            major = major[major > 0]
    scientific = bool(lo < 1e-3 * (1 - 1e-9) or hi >= 1e4)
    shown = major[(major >= lo / 1e3) & (major <= hi * 1e3)]
    if not scientific:
        near = shown[(shown >= lo / 1.5) & (shown <= hi * 1.5)]
        scientific = bool(near.size and (near.min() < 1e-3 * (1 - 1e-9) or near.max() >= 1e4))
    pad = max(0.04 * span, 0.03)  # in decades, so that markers at the ends are not cut in half
    return {
        "type": "log",
        "range": [float(np.log10(lo)) - pad, float(np.log10(hi)) + pad],
        "tickmode": "array",
        "tickvals": shown.tolist(),
        "ticktext": [_log_label(t, scientific) for t in shown],
        "minor": {
            "tickmode": "array",
            "tickvals": minor[(minor >= lo / 1e3) & (minor <= hi * 1e3)].tolist(),
            "ticks": "",  # faint grid lines, no marks: a lone tick mark beside the labels reads as a dash
            "showgrid": True,
            "gridcolor": "rgba(128, 128, 128, 0.12)",
        },
    }


def _axis_values(fig: go.Figure, axis: str) -> np.ndarray:
    """Every finite number a figure puts on its x or y axes: trace coordinates and line shapes."""
    out: list[np.ndarray] = []
    for t in fig.data:
        a = getattr(t, axis, None)
        if a is not None:
            arr = np.asarray([np.nan if e is None else e for e in np.ravel(np.asarray(a, dtype=object))])
            try:
                out.append(arr.astype(np.float64))
            except (TypeError, ValueError):  # category names, not numbers
                continue
    for shape in fig.layout.shapes:
        for end in (f"{axis}0", f"{axis}1"):
            ref = getattr(shape, f"{axis}ref", None)
            val = getattr(shape, end, None)
            if val is not None and not (ref and "domain" in str(ref)):
                out.append(np.array([float(val)]))
    return np.concatenate(out) if out else np.array([], dtype=np.float64)


def log_axis(fig: go.Figure, axis: str = "y", values: object | None = None) -> go.Figure:
    """Make every x (``axis="x"``) or y axis of ``fig`` a log axis labelled by ``log_ticks``.

    ``values`` are the numbers the axis must label; by default every finite coordinate the figure's traces
    and line shapes put on that axis.
    """
    props = log_ticks(_axis_values(fig, axis) if values is None else values)
    (fig.update_xaxes if axis == "x" else fig.update_yaxes)(**props)
    return fig


def thumbnail(fig: go.Figure, height: int = 200) -> go.Figure:
    """A small version of a figure for previews: no legend, no title, tight margins, axis titles kept."""
    fig.update_layout(
        height=height, showlegend=False, title=None, margin={"l": 40, "r": 10, "t": 10, "b": 35}
    )
    fig.update_xaxes(title_font={"size": 11})
    fig.update_yaxes(title_font={"size": 11})
    return fig


def _vec(a: object) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).reshape(-1)


def band_polygon(x: object, lower: object, upper: object) -> tuple[list, list]:
    """A band as closed polygons, one per run of x where both edges are finite, separated by None.

    Plotly's ``fill="toself"`` closes each None-separated piece on its own, so an undefined stretch (NaN
    edges) is a gap in the band instead of a polygon drawn across it.
    """
    xs, lo, hi = _vec(x), _vec(lower), _vec(upper)
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


def line_trace(
    x: object,
    y: object,
    name: str,
    color: str,
    *,
    dash: str = "solid",
    width: float = 2.5,
    hover_name: str | None = None,
    **kw: object,
) -> go.Scatter:
    """A curve that breaks where y is NaN (``connectgaps=False``), with an x/y hover label."""
    label = hover_name or name
    return go.Scatter(
        x=_vec(x),
        y=_vec(y),
        name=name,
        mode="lines",
        line={"color": color, "dash": dash, "width": width},
        connectgaps=False,
        hovertemplate=f"{label}<br>x = %{{x:.3g}}<br>y = %{{y:.3g}}<extra></extra>",
        **kw,
    )


def data_trace(x: object, y: object, name: str = "data (xᵢ, yᵢ)", *, size: float = 5.0) -> go.Scatter:
    """The observed points; WebGL beyond 5,000 points so large data sets stay responsive."""
    xs, ys = _vec(x), _vec(y)
    cls = go.Scattergl if xs.shape[0] > 5000 else go.Scatter
    return cls(
        x=xs,
        y=ys,
        name=name,
        mode="markers",
        marker={"color": rgba(COLORS["data"], 0.75), "size": size if xs.shape[0] <= 2000 else 3},
        hovertemplate="xᵢ = %{x:.3g}<br>yᵢ = %{y:.3g}<extra>data</extra>",
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


def fit_figure(
    x: object,
    y: object,
    grid: object,
    curves: Sequence[Curve] = (),
    *,
    truth: object | None = None,
    noise_sd: object | None = None,
    title: str | None = None,
    x_title: str = "x",
    y_title: str = "y",
    height: int = 420,
) -> go.Figure:
    """Data points, the true mean f(x) with its true band f ± 2n (when given) and predicted curves.

    Bands are drawn first (underneath), then the data, then the curves. Every NaN in a curve or band is a
    gap, so a compact kernel's empty window shows as a missing piece of the fit.
    """
    g = _vec(grid)
    fig = go.Figure()
    if truth is not None and noise_sd is not None:
        f, n = _vec(truth), _vec(noise_sd)
        fig.add_trace(band_trace(g, f - 2 * n, f + 2 * n, "true band f(x) ± 2n(x)", COLORS["truth"]))
    for c in curves:
        if c.std is not None:
            m, s = _vec(c.y), _vec(c.std)
            fig.add_trace(band_trace(g, m - 2 * s, m + 2 * s, c.band_name or f"{c.name} ± 2s(x)", c.color))
    fig.add_trace(data_trace(x, y))
    if truth is not None:
        fig.add_trace(line_trace(g, truth, "true mean f(x)", COLORS["truth"], width=2.0))
    for c in curves:
        fig.add_trace(line_trace(g, c.y, c.name, c.color, dash=c.dash, width=c.width))
    return style(fig, x_title=x_title, y_title=y_title, title=title, height=height)


def small_multiples_figure(
    x: object,
    y: object,
    grid: object,
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    truth: object | None = None,
    cols: int = 2,
    x_title: str = "x",
    y_title: str = "y",
    height: int = 560,
) -> go.Figure:
    """One panel per (title, prediction on ``grid``), shared axes, data and true mean in every panel."""
    rows = -(-len(panels) // cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        shared_xaxes=True,
        shared_yaxes=True,
        subplot_titles=[t for t, _ in panels],
        horizontal_spacing=0.06,
        vertical_spacing=0.12,
    )
    g = _vec(grid)
    for i, (_, pred) in enumerate(panels):
        r, c = i // cols + 1, i % cols + 1
        first = i == 0
        fig.add_trace(data_trace(x, y, size=4).update(showlegend=first, legendgroup="data"), row=r, col=c)
        if truth is not None:
            fig.add_trace(
                line_trace(g, truth, "true mean f(x)", COLORS["truth"], width=1.8).update(
                    showlegend=first, legendgroup="truth"
                ),
                row=r,
                col=c,
            )
        fig.add_trace(
            line_trace(g, pred, "fit m(x)", COLORS["fit"]).update(showlegend=first, legendgroup="fit"),
            row=r,
            col=c,
        )
    style(fig, x_title="", y_title="", height=height)
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text=x_title, row=rows, col=c)
    for r in range(1, rows + 1):
        fig.update_yaxes(title_text=y_title, row=r, col=1)
    # the legend sits above the panel titles, not on them
    fig.update_layout(margin={"t": 95}, legend={"y": 1.1})
    return fig


def even_indices(n: int, keep: int) -> np.ndarray:
    """At most ``keep`` evenly spread indices of range(n), always including the first and the last."""
    if n <= keep:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, keep)).astype(int))


def thin_heatmap(
    weights: object, queries: object, keys: object, max_rows: int, max_cols: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows and columns a heatmap builder draws: (weights[..., rows, cols], queries[rows], keys[cols]).

    ``weights`` is (…, q, n); at most ``max_rows`` queries and ``max_cols`` keys are kept, evenly spread
    (``even_indices``), exactly the cells the builders show with the same limits, so a cache can keep
    only these and the figure is unchanged.
    """
    w = np.asarray(weights)
    q, k = _vec(queries), _vec(keys)
    if w.shape[-2:] != (q.shape[0], k.shape[0]):
        raise ValueError(f"weights have shape {w.shape}, expected (…, {q.shape[0]}, {k.shape[0]})")
    ri, ci = even_indices(q.shape[0], max_rows), even_indices(k.shape[0], max_cols)
    return w[..., ri, :][..., ci], q[ri], k[ci]


def _heatmap(weights: np.ndarray, queries: np.ndarray, keys: np.ndarray, coloraxis: str) -> go.Heatmap:
    """One heatmap trace; the cells travel as float32 (half the bytes of float64 to the browser, far more
    precision than a colour or a three-digit hover shows)."""
    return go.Heatmap(
        z=np.asarray(weights, dtype=np.float32),
        x=keys,
        y=queries,
        coloraxis=coloraxis,
        hovertemplate="query x = %{y:.3g}<br>key xᵢ = %{x:.3g}<br>weight wᵢ(x) = %{z:.3g}<extra></extra>",
    )


def heatmap_figure(
    weights: object,
    queries: object,
    keys: object,
    *,
    title: str | None = None,
    max_rows: int = 160,
    max_cols: int = 320,
    x_title: str = "sorted training inputs xᵢ (keys)",
    y_title: str = "sorted test inputs x (queries)",
    height: int = 420,
) -> go.Figure:
    """Attention weights w_i(x) as a heatmap, queries down the side, keys along the bottom (as in d2l).

    Queries and keys must be sorted. More than ``max_rows``/``max_cols`` are thinned to evenly spread
    rows/columns (the colours are still the exact weights of the shown pairs). An all-zero row is a query
    whose window is empty.
    """
    w = np.asarray(weights, dtype=np.float64)
    q, k = _vec(queries), _vec(keys)
    if w.shape != (q.shape[0], k.shape[0]):
        raise ValueError(f"weights have shape {w.shape}, expected ({q.shape[0]}, {k.shape[0]})")
    fig = go.Figure(_heatmap(*thin_heatmap(w, q, k, max_rows, max_cols), "coloraxis"))
    fig.update_layout(
        coloraxis={"colorscale": HEATMAP_SCALE, "cmin": 0.0, "colorbar": {"title": {"text": "wᵢ(x)"}}}
    )
    style(fig, x_title=x_title, y_title=y_title, title=title, height=height, showlegend=False)
    fig.update_yaxes(autorange="reversed")
    return fig


def heatmap_pair_figure(
    left: object,
    right: object,
    queries: object,
    keys: object,
    titles: tuple[str, str],
    *,
    max_rows: int = 120,
    max_cols: int = 200,
    height: int = 400,
) -> go.Figure:
    """Two weight matrices side by side on one colour scale, so 'sharper' can be read off the colours."""
    q, k = _vec(queries), _vec(keys)
    a, b = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    for w in (a, b):
        if w.shape != (q.shape[0], k.shape[0]):
            raise ValueError(f"weights have shape {w.shape}, expected ({q.shape[0]}, {k.shape[0]})")
    (za, zb), qs, ks = thin_heatmap(np.stack([a, b]), q, k, max_rows, max_cols)
    fig = make_subplots(
        rows=1, cols=2, shared_yaxes=True, subplot_titles=list(titles), horizontal_spacing=0.05
    )
    fig.add_trace(_heatmap(za, qs, ks, "coloraxis"), row=1, col=1)
    fig.add_trace(_heatmap(zb, qs, ks, "coloraxis"), row=1, col=2)
    top = float(max(np.nanmax(a, initial=0.0), np.nanmax(b, initial=0.0)))
    fig.update_layout(
        coloraxis={
            "colorscale": HEATMAP_SCALE,
            "cmin": 0.0,
            "cmax": top if top > 0 else 1.0,
            "colorbar": {"title": {"text": "wᵢ(x)"}},
        }
    )
    style(fig, x_title="", y_title="", height=height, showlegend=False)
    # short titles: two panels side by side must not run into each other in a narrow window
    fig.update_annotations(font_size=13)
    fig.update_layout(margin={"t": 70})
    fig.update_xaxes(title_text="keys xᵢ (sorted)")
    fig.update_yaxes(title_text="queries x (sorted)", autorange="reversed", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    return fig


def kernel_shape_figure(
    u: object,
    shapes: Mapping[str, object],
    highlight: str,
    *,
    height: int = 300,
) -> go.Figure:
    """K(u) against u = (x − x′)/ℓ: the highlighted kernel in the fit colour, the others faint for
    comparison."""
    uu = _vec(u)
    if highlight not in shapes:
        raise ValueError(f"{highlight!r} is not one of the shapes given")
    fig = go.Figure()
    for name, values in shapes.items():
        if name == highlight:
            continue
        fig.add_trace(line_trace(uu, values, name, rgba(COLORS["data"], 0.55), width=1.3))
    fig.add_trace(line_trace(uu, shapes[highlight], highlight, COLORS["fit"], width=3.0))
    return style(fig, x_title="u = (x − x′)/ℓ", y_title="K(u)", height=height)


def _running_mean(v: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``window`` finite values at each step (NaN where none is finite)."""
    ok = np.isfinite(v)
    c = np.concatenate([[0.0], np.cumsum(np.where(ok, v, 0.0))])
    k = np.concatenate([[0], np.cumsum(ok)])
    idx = np.arange(1, v.shape[0] + 1)
    lo = np.maximum(idx - window, 0)
    count = k[idx] - k[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (c[idx] - c[lo]) / np.maximum(count, 1), np.nan)


def loss_figure(
    losses: object,
    *,
    window: int = 25,
    y_title: str = "hold-out mean squared error",
    height: int = 320,
) -> go.Figure:
    """The loss of every training step (faint) and its running mean over ``window`` steps, log y axis."""
    v = _vec(losses)
    steps = np.arange(1, v.shape[0] + 1)
    v_plot = np.where(np.isfinite(v) & (v > 0), v, np.nan)
    fig = go.Figure()
    fig.add_trace(line_trace(steps, v_plot, "loss at each step", rgba(COLORS["loss"], 0.45), width=1.0))
    fig.add_trace(
        line_trace(steps, _running_mean(v_plot, window), f"mean of last {window} steps", COLORS["fit"])
    )
    fig.update_traces(hovertemplate="step %{x}<br>loss = %{y:.4g}<extra></extra>")
    return style(fig, x_title="training step", y_title=y_title, height=height, log_y=True)


def loo_figure(
    lengthscales: object,
    cv: object,
    *,
    optimum: float | None = None,
    trajectory: object | None = None,
    trajectory_cv: object | None = None,
    learned: float | None = None,
    learned_cv: float | None = None,
    height: int = 380,
) -> go.Figure:
    """The leave-one-out error CV(ℓ) on a log ℓ axis, training's path over it and the exact optimum.

    +∞ (some point's window empty) and NaN are gaps. ``trajectory`` / ``trajectory_cv`` are ℓ and CV(ℓ)
    along training (markers coloured by step); ``optimum`` is the exact minimiser, ``learned`` the end of
    training.
    """
    ells, c = _vec(lengthscales), _vec(cv)
    c = np.where(np.isfinite(c), c, np.nan)
    fig = go.Figure()
    fig.add_trace(
        line_trace(ells, c, "leave-one-out error CV(ℓ)", COLORS["fit"]).update(
            hovertemplate="ℓ = %{x:.3g}<br>CV(ℓ) = %{y:.4g}<extra></extra>"
        )
    )
    if trajectory is not None and trajectory_cv is not None:
        t, tc = _vec(trajectory), _vec(trajectory_cv)
        ok = np.isfinite(t) & np.isfinite(tc) & (t > 0)
        steps = np.arange(t.shape[0])
        fig.add_trace(
            go.Scatter(
                x=t[ok],
                y=tc[ok],
                name="training path (colour = step)",
                mode="lines+markers",
                line={"color": rgba(COLORS["trajectory"], 0.5), "width": 1},
                marker={
                    "size": 6,
                    "color": steps[ok],
                    "colorscale": "Greens",
                    "showscale": False,
                    "line": {"width": 0.5, "color": COLORS["trajectory"]},
                },
                customdata=steps[ok],
                hovertemplate="step %{customdata}<br>ℓ = %{x:.3g}<br>CV(ℓ) = %{y:.4g}<extra></extra>",
            )
        )
    if learned is not None and learned_cv is not None and np.isfinite(learned_cv):
        fig.add_trace(
            go.Scatter(
                x=[learned],
                y=[learned_cv],
                name=f"learned ℓ = {learned:.3g}",
                mode="markers",
                marker={"symbol": "diamond", "size": 13, "color": COLORS["trajectory"]},
                hovertemplate="learned ℓ = %{x:.4g}<br>CV(ℓ) = %{y:.4g}<extra></extra>",
            )
        )
    if optimum is not None:
        fig.add_vline(x=optimum, line={"color": COLORS["optimum"], "dash": "dash", "width": 2})
        finite = c[np.isfinite(c)]
        y0 = float(np.interp(np.log(optimum), np.log(ells), np.where(np.isfinite(c), c, np.nanmax(c))))
        fig.add_trace(
            go.Scatter(
                x=[optimum],
                y=[y0 if finite.size else None],
                name=f"exact LOO optimum ℓ* = {optimum:.3g}",
                mode="markers",
                marker={"symbol": "star", "size": 16, "color": COLORS["optimum"]},
                hovertemplate="ℓ* = %{x:.4g}<extra>exact optimum</extra>",
            )
        )
    return style(
        fig, x_title="lengthscale ℓ (log scale)", y_title="leave-one-out MSE CV(ℓ)", height=height, log_x=True
    )


def seeds_figure(
    groups: Mapping[str, object],
    *,
    optimum: float | None = None,
    y_title: str = "learned lengthscale ℓ",
    height: int = 340,
) -> go.Figure:
    """Learned values per group (e.g. per hold-out size), one dot per seed, with a box; optimum as a line."""
    fig = go.Figure()
    for i, (label, values) in enumerate(groups.items()):
        v = _vec(values)
        v = v[np.isfinite(v) & (v > 0)]
        fig.add_trace(
            go.Box(
                y=v,
                name=label,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker={"color": HEAD_COLORS[i % len(HEAD_COLORS)], "size": 7},
                line={"color": HEAD_COLORS[i % len(HEAD_COLORS)]},
                fillcolor=rgba(HEAD_COLORS[i % len(HEAD_COLORS)], 0.1),
                hovertemplate="ℓ = %{y:.4g}<extra>%{x}</extra>",
            )
        )
    if optimum is not None:
        fig.add_hline(y=optimum, line={"color": COLORS["optimum"], "dash": "dash", "width": 2})
        # on a log axis an annotation's y is log10 of the value (add_hline's own label would land at 10^ℓ*)
        fig.add_annotation(
            x=1.0,
            xref="paper",
            y=float(np.log10(optimum)),
            yref="y",
            text=f"exact LOO optimum ℓ* = {optimum:.3g}",
            showarrow=False,
            xanchor="right",
            yanchor="bottom",
            font={"color": COLORS["optimum"]},
        )
    return style(fig, x_title="", y_title=y_title, height=height, showlegend=False, log_y=True)


# ---------------------------------------------------------------------------------------------------------
# Chapters 3 and 4: multi-head kernel regression and attention
# ---------------------------------------------------------------------------------------------------------

__all__ += [
    "head_color",
    "head_heatmaps_figure",
    "heads_fit_figure",
    "mixing_figure",
    "score_transpose_figure",
    "self_cross_figure",
]


def head_color(h: int) -> str:
    """The colour of head ``h`` (0-based), cycling through ``HEAD_COLORS``."""
    return HEAD_COLORS[h % len(HEAD_COLORS)]


def heads_fit_figure(
    x: object,
    y: object,
    grid: object,
    head_means: object,
    mean: object,
    std: object | None,
    head_names: Sequence[str],
    *,
    mixture_name: str = "mixture f̂(x) = Σₕ uₕ f̂ₕ(x)",
    band_name: str = "mixture band f̂(x) ± 2s(x)",
    truth: object | None = None,
    noise_sd: object | None = None,
    title: str | None = None,
    x_title: str = "x",
    y_title: str = "y",
    height: int = 460,
) -> go.Figure:
    """Each head's own fit f̂ₕ(x) (dotted, in its head colour) and the mixture Σₕ uₕ f̂ₕ(x) with its ±2s band.

    ``head_means`` is (H, grid); ``head_names`` one legend entry per head. The mixture is drawn last, on
    top, solid and wider; NaN anywhere is a gap (``fit_figure``).
    """
    hm = np.asarray(head_means, dtype=np.float64)
    g = _vec(grid)
    if hm.ndim != 2 or hm.shape[1] != g.shape[0] or hm.shape[0] != len(head_names):
        raise ValueError(f"head_means have shape {hm.shape}, expected ({len(head_names)}, {g.shape[0]})")
    curves = [Curve(name, hm[h], head_color(h), dash="dot", width=1.8) for h, name in enumerate(head_names)]
    curves.append(
        Curve(
            mixture_name,
            _vec(mean),
            COLORS["fit"],
            width=3.2,
            std=None if std is None else _vec(std),
            band_name=band_name,
        )
    )
    fig = fit_figure(
        x,
        y,
        g,
        curves,
        truth=truth,
        noise_sd=noise_sd,
        title=title,
        x_title=x_title,
        y_title=y_title,
        height=height,
    )
    # up to ten legend entries: below the plot, so they never cover the title or the curves
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.16, "xanchor": "left", "x": 0.0},
        margin={"b": 150 if len(head_names) > 4 else 120},
    )
    return fig


def mixing_figure(
    mixing: object,
    lengthscales: object | None = None,
    *,
    head_names: Sequence[str] | None = None,
    y_title: str = "mixing weight uₕ",
    height: int = 280,
) -> go.Figure:
    """One bar per head: its mixing weight uₕ (may be negative), in the head's colour, with a zero line.

    With ``lengthscales`` the hover also gives ℓₕ. The title states Σₕ uₕ, which need not be 1.
    """
    u = _vec(mixing)
    names = list(head_names) if head_names is not None else [f"head {h + 1}" for h in range(u.shape[0])]
    if len(names) != u.shape[0]:
        raise ValueError(f"{len(names)} head names for {u.shape[0]} mixing weights")
    ells = _vec(lengthscales) if lengthscales is not None else None
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
    return style(
        fig, x_title="", y_title=y_title, title=f"Σₕ uₕ = {total:.3g}", height=height, showlegend=False
    )


def head_heatmaps_figure(
    weights: object,
    queries: object,
    keys: object,
    titles: Sequence[str] | None = None,
    *,
    cols: int = 4,
    max_rows: int = 96,
    max_cols: int = 160,
    x_title: str = "sorted keys xᵢ",
    y_title: str = "sorted queries x",
    panel_height: int = 250,
) -> go.Figure:
    """Small multiples: the weight matrix wₕ(x, xᵢ) of every head, queries down, keys across (as d2l).

    ``weights`` is (H, q, n) for sorted ``queries`` (q,) and ``keys`` (n,). Each panel has its own colour
    scale from 0 to that head's largest weight (a wide head's weights are all small, and would be invisible
    on a shared scale); the panel title is written in the head's colour and the hover gives exact values.
    Rows and columns beyond ``max_rows``/``max_cols`` are thinned evenly.
    """
    w = np.asarray(weights, dtype=np.float64)
    q, k = _vec(queries), _vec(keys)
    if w.ndim != 3 or w.shape[1:] != (q.shape[0], k.shape[0]):
        raise ValueError(f"weights have shape {w.shape}, expected (H, {q.shape[0]}, {k.shape[0]})")
    heads = w.shape[0]
    names = list(titles) if titles is not None else [f"head {h + 1}" for h in range(heads)]
    if len(names) != heads:
        raise ValueError(f"{len(names)} titles for {heads} heads")
    cols = max(1, min(cols, heads))
    rows = -(-heads // cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        shared_xaxes=True,
        shared_yaxes=True,
        subplot_titles=names,
        horizontal_spacing=0.03,
        vertical_spacing=0.16 if rows > 1 else 0.1,
    )
    shown, qs, ks = thin_heatmap(w, q, k, max_rows, max_cols)
    layout: dict = {}
    for h in range(heads):
        axis = "coloraxis" if h == 0 else f"coloraxis{h + 1}"
        sub = shown[h]
        top = float(np.nanmax(sub, initial=0.0))
        trace = _heatmap(sub, qs, ks, axis)
        trace.update(
            hovertemplate=f"{names[h]}<br>query x = %{{y:.3g}}<br>key xᵢ = %{{x:.3g}}"
            "<br>weight = %{z:.3g}<extra></extra>"
        )
        fig.add_trace(trace, row=h // cols + 1, col=h % cols + 1)
        layout[axis] = {
            "colorscale": HEATMAP_SCALE,
            "cmin": 0.0,
            "cmax": top if top > 0 else 1.0,
            "showscale": False,
        }
    fig.update_layout(**layout)
    for h, ann in enumerate(fig.layout.annotations[:heads]):
        ann.font = {"color": head_color(h), "size": 13}
    style(fig, x_title="", y_title="", height=panel_height * rows + 60, showlegend=False)
    fig.update_yaxes(autorange="reversed")
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text=x_title, row=rows, col=c)
    for r in range(1, rows + 1):
        fig.update_yaxes(title_text=y_title, row=r, col=1)
    fig.update_layout(margin={"t": 50})
    return fig


def _diagonal(lo: float, hi: float) -> go.Scatter:
    return go.Scatter(
        x=[lo, hi],
        y=[lo, hi],
        mode="lines",
        line={"color": "rgba(255, 255, 255, 0.85)", "dash": "dash", "width": 1.5},
        name="diagonal x = x′",
        hoverinfo="skip",
        showlegend=False,
    )


def score_transpose_figure(
    scores: object,
    grid: object,
    *,
    titles: tuple[str, str] = ("log K(x, x′) = s(x, x′)", "transpose: log K(x′, x) = s(x′, x)"),
    colorbar_title: str = "log K",
    height: int = 420,
) -> go.Figure:
    """A learned kernel on a grid beside its transpose, the diagonal x = x′ dashed on both.

    ``scores`` is (g, g), row = query x, column = key x′, on a log scale (s = log K), since K = exp s spans
    many orders of magnitude. A symmetric kernel gives two identical panels; the difference between them is
    the asymmetry K(x, x′) ≠ K(x′, x) of dot-product attention. One colour scale for both.
    """
    s = np.asarray(scores, dtype=np.float64)
    g = _vec(grid)
    if s.shape != (g.shape[0], g.shape[0]):
        raise ValueError(f"scores have shape {s.shape}, expected ({g.shape[0]}, {g.shape[0]})")
    fig = make_subplots(
        rows=1, cols=2, shared_yaxes=True, subplot_titles=list(titles), horizontal_spacing=0.06
    )
    hover = "query x = %{y:.3g}<br>key x′ = %{x:.3g}<br>log K = %{z:.4g}<extra></extra>"
    for col, z in ((1, s), (2, s.T)):
        fig.add_trace(go.Heatmap(z=z, x=g, y=g, coloraxis="coloraxis", hovertemplate=hover), row=1, col=col)
        fig.add_trace(_diagonal(float(g[0]), float(g[-1])), row=1, col=col)
    finite = s[np.isfinite(s)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 1.0
    fig.update_layout(
        coloraxis={
            "colorscale": HEATMAP_SCALE,
            "cmin": lo,
            "cmax": hi if hi > lo else lo + 1.0,
            "colorbar": {"title": {"text": colorbar_title}},
        }
    )
    style(fig, x_title="", y_title="", height=height, showlegend=False)
    fig.update_annotations(font_size=13)
    fig.update_layout(margin={"t": 70})
    fig.update_xaxes(title_text="key x′")
    fig.update_yaxes(title_text="query x", autorange="reversed", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    return fig


def self_cross_figure(
    self_weights: object,
    data_x: object,
    cross_weights: object,
    grid: object,
    *,
    titles: tuple[str, str] = (
        "self-attention<br>queries = the data points xⱼ",
        "cross-attention<br>queries = new points x on a grid",
    ),
    max_rows: int = 120,
    max_cols: int = 200,
    top_quantile: float = 0.995,
    height: int = 420,
) -> go.Figure:
    """Self- and cross-attention weights side by side, keys = the data points in both, one colour scale.

    ``self_weights`` (n, n): the data points attend to each other (queries, keys and values from the same
    sequence); ``cross_weights`` (m, n): queries from another sequence (here a grid) attend to the data.
    The colour scale runs from 0 to the ``top_quantile`` of the drawn weights (brighter cells saturate), so
    a few very sharp rows at the edge of the data do not turn everything else dark; hover shows exact values.
    The two panels are the same size, each with its own query axis (the grid may reach past the data).
    """
    a, b = np.asarray(self_weights, dtype=np.float64), np.asarray(cross_weights, dtype=np.float64)
    xd, g = _vec(data_x), _vec(grid)
    if a.shape != (xd.shape[0], xd.shape[0]):
        raise ValueError(f"self weights have shape {a.shape}, expected ({xd.shape[0]}, {xd.shape[0]})")
    if b.shape != (g.shape[0], xd.shape[0]):
        raise ValueError(f"cross weights have shape {b.shape}, expected ({g.shape[0]}, {xd.shape[0]})")
    # each panel its own query axis: the grid reaches past the data, and a shared axis would leave the
    # self-attention picture shorter than the cross-attention one
    fig = make_subplots(rows=1, cols=2, subplot_titles=list(titles), horizontal_spacing=0.08)
    ci = even_indices(xd.shape[0], max_cols)
    ra, rb = even_indices(xd.shape[0], max_rows), even_indices(g.shape[0], max_rows)
    za, zb = a[np.ix_(ra, ci)], b[np.ix_(rb, ci)]
    fig.add_trace(_heatmap(za, xd[ra], xd[ci], "coloraxis"), row=1, col=1)
    fig.add_trace(_heatmap(zb, g[rb], xd[ci], "coloraxis"), row=1, col=2)
    shown = np.concatenate([za.ravel(), zb.ravel()])
    shown = shown[np.isfinite(shown)]
    top = float(np.quantile(shown, top_quantile)) if shown.size else 0.0
    fig.update_layout(
        coloraxis={
            "colorscale": HEATMAP_SCALE,
            "cmin": 0.0,
            "cmax": top if top > 0 else 1.0,
            "colorbar": {"title": {"text": "weight"}},
        }
    )
    style(fig, x_title="", y_title="", height=height, showlegend=False)
    fig.update_annotations(font_size=13)
    fig.update_layout(margin={"t": 70})
    fig.update_xaxes(title_text="keys: data points xᵢ (sorted)")
    fig.update_yaxes(title_text="queries (sorted)", autorange="reversed", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    return fig
