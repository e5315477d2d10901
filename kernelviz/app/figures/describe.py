"""A chart's text alternative, written from the numbers the figure was drawn from: its name (the title) and
what each curve, band, set of points, bar chart and heatmap shows now. ``ui.show`` passes it to
``st.plotly_chart(alt=…)``, so a screen reader reads it in place of the chart, and it changes whenever the
chart does.

Each kind of trace says what a reader would look for: a curve its range and where it peaks, a band where it
is widest, points how many there are, bars each value, a heatmap its size and its largest cell, a heatmap of
attention weights how many keys hold most of one query's weight, and where (the row x* marks, or the middle
one); and where a chart draws the true mean beside a band, at what share of the band's x the truth lies
inside it."""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.explain import ROW
from kernelviz.app.figures.fits import TRUE_BAND, TRUE_MEAN
from kernelviz.app.figures.heatmaps import WEIGHTS
from kernelviz.runtime.i18n import _, ngettext

__all__ = ["ROWS", "ChartText", "chart_tables", "describe"]

MOST_TRACES = 8  # traces described one by one; the rest are counted
SHARE = 0.8  # a row of attention weights is described by the fewest keys that hold this share of it
TYPES = {"scatter": _("scatter"), "bar": _("bar"), "heatmap": _("heatmap")}  # an unnamed trace's name


class ChartText(NamedTuple):
    """A chart's accessible name and the sentences that say what it shows."""

    name: str
    summary: str

    @property
    def alt(self) -> str:
        return f"{self.name}. {self.summary}".strip()


def _plain(text: object) -> str:
    """Plotly's title markup (``<b>``, ``<sub>``, ``<br>``) as plain text."""
    return " ".join(re.sub(r"<br\s*/?>", " ", re.sub(r"<(?!br)[^>]+>", "", str(text or ""))).split())


def _g(v: float) -> str:
    return f"{float(v):.3g}"


def _finite(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``x`` and ``y`` where both are finite numbers."""
    ys = np.asarray(y if y is not None else [], dtype=float).reshape(-1)
    xs = np.asarray(x, dtype=float).reshape(-1) if x is not None else np.arange(ys.size, dtype=float)
    n = min(xs.size, ys.size)
    keep = np.isfinite(xs[:n]) & np.isfinite(ys[:n])
    return xs[:n][keep], ys[:n][keep]


def _edges(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A closed band (x forward, then back, perhaps back to its first point) as (x, lower, upper); None for
    any other shape."""
    if x.size % 2:
        x, y = x[:-1], y[:-1]
    m = x.size // 2
    if not m or not np.allclose(x[:m], x[m:][::-1]):
        return None
    return x[:m], np.minimum(y[:m], y[m:][::-1]), np.maximum(y[:m], y[m:][::-1])


def _band(name: str, x: np.ndarray, y: np.ndarray) -> str:
    """A band: where it is widest, as ± half its width."""
    edges = _edges(x, y)
    if edges is None:
        return _("{name}: shaded from x = {lo} to {hi}").format(name=name, lo=_g(x.min()), hi=_g(x.max()))
    bx, lo, hi = edges
    i = int(np.argmax(hi - lo))
    return _("{name}: widest, ±{half}, near x = {x}").format(name=name, half=_g((hi[i] - lo[i]) / 2.0),
                                                             x=_g(bx[i]))


def _xy(trace: go.Scatter, name: str) -> str:
    x, y = _finite(trace.x, trace.y)
    if x.size == 0:
        return _("{name}: no values").format(name=name)
    if trace.fill == "toself":
        return _band(name, x, y)
    if x.size == 1:
        return _("{name}: at x = {x}, y = {y}").format(name=name, x=_g(x[0]), y=_g(y[0]))
    if "lines" not in str(trace.mode or "lines"):
        return ngettext("{name}: {n} point, y from {lo} to {hi}", "{name}: {n} points, y from {lo} to {hi}",
                        x.size).format(name=name, n=x.size, lo=_g(y.min()), hi=_g(y.max()))
    top = int(np.argmax(y))
    curve = _("{name}: from x = {x_lo} to {x_hi}, y between {y_lo} and {y_hi} (highest at x = {x_top})")
    return curve.format(name=name, x_lo=_g(x.min()), x_hi=_g(x.max()), y_lo=_g(y.min()), y_hi=_g(y.max()),
                        x_top=_g(x[top]))


def _bar(trace: go.Bar, name: str) -> str:
    labels = list(trace.x if trace.x is not None else range(len(trace.y)))
    values = np.asarray(trace.y, dtype=float).reshape(-1)
    return f"{name}: " + ", ".join(f"{_plain(k)} {_g(v)}" for k, v in zip(labels, values, strict=False))


def _heatmap(trace: go.Heatmap, name: str, at: float | None) -> str:
    z = np.asarray(trace.z, dtype=float)
    if z.ndim != 2 or not np.isfinite(z).any():
        return _("{name}: no values").format(name=name)
    rows, cols = _axes(trace, z)
    if trace.meta == WEIGHTS:
        return _("{name}: {queries} queries by {keys} keys; {row}").format(
            name=name, queries=z.shape[0], keys=z.shape[1], row=_weight_row(z, rows, cols, at))
    r, c = np.unravel_index(int(np.nanargmax(z)), z.shape)
    cells = _("{name}: {rows} rows by {columns} columns; largest {value} at row {row}, column {column}")
    return cells.format(name=name, rows=z.shape[0], columns=z.shape[1], value=_g(z[r, c]),
                        row=_label(rows[r]), column=_label(cols[c]))


def _weight_row(z: np.ndarray, rows: list, cols: list, at: float | None) -> str:
    """Row ``at`` of a weights heatmap (the middle row when None): the fewest keys that hold ``SHARE`` of
    its weight, how many and from where to where (of the keys drawn, when a large matrix is thinned)."""
    q, k = np.asarray(rows, dtype=float), np.asarray(cols, dtype=float)
    i = int(np.nanargmin(np.abs(q - at))) if at is not None else q.size // 2
    w = np.nan_to_num(z[i], nan=0.0).clip(min=0.0)
    if w.sum() <= 0:
        return _("row x = {x} has no weight (no key in its window)").format(x=_g(q[i]))
    order = np.argsort(w)[::-1]
    m = min(int(np.searchsorted(np.cumsum(w[order]) / w.sum(), SHARE - 1e-12)) + 1, w.size)
    held = k[order[:m]]
    return _("row x = {x}: {share:.0%} of its weight on {held} of the {keys} keys, from {lo} to {hi}").format(
        x=_g(q[i]), share=SHARE, held=m, keys=k.size, lo=_g(held.min()), hi=_g(held.max()))


def _marked_row(fig: go.Figure) -> float | None:
    """The query of the row outlined on a heatmap (``explain.mark_row``), if one is."""
    for shape in fig.layout.shapes:
        if shape.type == "rect" and shape.line.color == ROW and shape.y0 is not None:
            return (float(shape.y0) + float(shape.y1)) / 2.0
    return None


def _axes(trace: go.Heatmap, z: np.ndarray) -> tuple[list, list]:
    """A heatmap's row and column values (its y and x; their indices where it has none)."""
    rows = list(trace.y) if trace.y is not None else list(range(z.shape[0]))
    cols = list(trace.x) if trace.x is not None else list(range(z.shape[1]))
    return rows, cols


def _label(v: object) -> str:
    """An axis value: a number to three digits, a category as it reads."""
    try:
        return _g(float(v))
    except (TypeError, ValueError):
        return _plain(v)


def _name(trace: object) -> str:
    """A trace's name as plain text; an unnamed one's kind ("heatmap")."""
    return _plain(getattr(trace, "name", None)) or TYPES.get(trace.type, trace.type)


def _trace(trace: object, at: float | None = None) -> str | None:
    name = _name(trace)
    if trace.visible is False:
        return None
    if isinstance(trace, go.Scatter):
        return _xy(trace, name)
    if isinstance(trace, go.Bar):
        return _bar(trace, name)
    if isinstance(trace, go.Heatmap):
        return _heatmap(trace, name, at)
    return None


def _inside(fig: go.Figure) -> list[str]:
    """For each band other than the true one: at what share of its x the (first) true mean drawn lies
    inside it. The true mean and its band are found by their names, ``fits.TRUE_MEAN`` and ``TRUE_BAND``
    (the same words in every language)."""
    said = []
    bands = [t for t in fig.data if isinstance(t, go.Scatter) and t.fill == "toself"
             and _plain(t.name) != _plain(TRUE_BAND)]  # the true band holds the true mean by its making
    truths = [t for t in fig.data if isinstance(t, go.Scatter) and t.fill != "toself"
              and _plain(t.name) == _plain(TRUE_MEAN)]
    tx, ty = _finite(truths[0].x, truths[0].y) if truths else (np.zeros(0), np.zeros(0))
    for band in bands if tx.size > 1 else []:
        edges = _edges(*_finite(band.x, band.y))
        if edges is not None:
            bx, lo, hi = edges
            at = np.interp(bx, tx, ty)
            share = float(np.mean((lo <= at) & (at <= hi)))
            said.append(_("the true mean lies inside {band} at {share:.0%} of its x").format(
                band=_plain(band.name), share=share))
    return said


def describe(fig: go.Figure, fallback: str = _("Chart")) -> ChartText:
    """The text alternative of ``fig``: its title (or ``fallback``), its panels' titles, and one clause per
    trace from the trace's own numbers (``MOST_TRACES`` at most, the rest counted)."""
    name = _plain(fig.layout.title.text) or fallback
    panels = [_plain(a.text) for a in fig.layout.annotations if _plain(a.text)]
    said, alike, at = [], {}, _marked_row(fig)
    for trace in fig.data:  # a name that comes back (a panel's fit, the other kernels) is said once
        key = _name(trace)
        alike[key] = alike.get(key, 0) + 1
        if alike[key] == 1 and (clause := _trace(trace, at)):
            said.append(clause)
    parts = []
    if len(panels) > 1:
        titled = ngettext("{n} panel: {titles}", "{n} panels: {titles}", len(panels))
        parts.append(titled.format(n=len(panels), titles="; ".join(panels)))
    parts += said[:MOST_TRACES] + _inside(fig)
    if len(said) > MOST_TRACES:
        more = len(said) - MOST_TRACES
        parts.append(ngettext("and {n} more", "and {n} more", more).format(n=more))
    return ChartText(name, ". ".join(parts) + ("." if parts else ""))


ROWS = 25  # rows of a chart's table at most, evenly spread over its points


def _rows(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, ROWS)).round().astype(int)) if n else np.arange(0)


def _num(v: object) -> float | str:
    """A value for a table: a number to three significant digits, a category as it reads."""
    try:
        return float(f"{float(v):.3g}")
    except (TypeError, ValueError):
        return _plain(v)


def _column(values: np.ndarray) -> list[float | str]:
    return [_num(v) for v in values[_rows(values.size)]]


def _heatmap_table(trace: go.Heatmap) -> dict[str, list]:
    """A heatmap row by row (at most ``ROWS`` rows): its largest cell and that cell's column."""
    z = np.asarray(trace.z, dtype=float)
    rows, cols = _axes(trace, z)
    pick = [i for i in _rows(z.shape[0]) if np.isfinite(z[i]).any()]
    best = [int(np.nanargmax(z[i])) for i in pick]
    return {_("row"): [_num(rows[i]) for i in pick],
            _("largest"): [_num(z[i, j]) for i, j in zip(pick, best, strict=True)],
            _("at column"): [_num(cols[j]) for j in best]}


def chart_tables(fig: go.Figure) -> list[tuple[str, dict[str, list]]]:
    """The numbers of ``fig`` as small tables, (caption, columns): the curves that share the first curve's
    x, side by side; each set of points; each bar chart; and each heatmap row by row (its largest cell).
    At most ``ROWS`` rows a table, evenly spread; a name that comes back (another panel's) is left out."""
    tables: list[tuple[str, dict[str, list]]] = []
    curves: dict[str, list] = {}
    seen: set[str] = set()
    for trace in fig.data:
        name = _name(trace)
        if name in seen or trace.visible is False:
            continue
        seen.add(name)
        if isinstance(trace, go.Heatmap) and np.asarray(trace.z, dtype=float).ndim == 2:
            tables.append((_("{name}, row by row").format(name=name), _heatmap_table(trace)))
        elif isinstance(trace, go.Bar):
            labels = list(trace.x if trace.x is not None else range(len(trace.y)))
            tables.append((name, {"": [_plain(k) for k in labels], name: [_num(v) for v in trace.y]}))
        elif isinstance(trace, go.Scatter) and trace.fill != "toself":
            x, y = _finite(trace.x, trace.y)
            shares_x = curves.get("x", _column(x)) == _column(x)
            if "lines" in str(trace.mode or "lines") and x.size > 1 and shares_x:
                curves["x"] = _column(x)
                curves[name] = _column(y)
            elif x.size:
                tables.append((name, {"x": _column(x), "y": _column(y)}))
    return ([(_("curves"), curves)] if curves else []) + tables
