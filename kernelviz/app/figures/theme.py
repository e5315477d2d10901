"""The charts' look in the app's light and dark themes, set in each figure's own layout (``themed``).

Streamlit's chart theme (``st.plotly_chart(theme="streamlit")``) gives each figure a template in the browser;
Plotly draws a chart again in full whenever its template is a new object, and Streamlit draws every chart it
mounts twice (hidden, then at its measured width), so each changed chart cost two full draws. A figure that
carries these values itself, sent with ``theme=None``, without a template and with its numbers as plain lists
(``compact``), is drawn the second time with little to recompute: 3–15 ms a chart on chapter 1
(``docs/benchmarks.md``, "The chart theme in the figure").

The values are Streamlit's chart theme for ``.streamlit/config.toml``'s two themes (the template the browser
builds, read from a chart), but for the muted text of ticks, axis titles and hover labels: Streamlit's grey
reads 3.7:1 on white, below WCAG's 4.5:1 for text, so the light theme's is darker in the same hue (5:1).
``tests/browser/test_theme.py`` checks that each chart's background is its page's, in both themes.

Two more layout values would change between the two draws, and each made the second a full one (25–55 ms a
chart, timed in the page): Streamlit sets ``SELECTABLE`` on a chart that takes clicks after mounting it, and
Plotly rewrites an axis's ``autorange: "reversed"`` (the heatmaps' query axes) to ``true`` once drawn. So a
chart that takes clicks carries ``SELECTABLE`` itself, and a reversed heatmap axis is sent as its range.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.narrow import phone_layout
from kernelviz.app.figures.numbers import compact
from kernelviz.app.figures.styling import AXIS, _merge, binary_arrays, unchecked


class ChartTheme(NamedTuple):
    """A theme's colours for a chart (``#RRGGBB`` or ``rgba(…)``)."""

    background: str  # the page's background, under the chart and its plot area
    title: str  # the chart's title
    legend: str  # the legend's entries
    muted: str  # ticks, axis and colour-bar titles, hover labels: at least 4.5:1 on background
    grid: str  # grid lines and zero lines
    hover_border: str  # the outline of a hover label
    colorway: tuple[str, ...]  # colours of traces that name none


THEMES: dict[str, ChartTheme] = {
    "light": ChartTheme(background="#FFFFFF", title="#1B2430", legend="#262730", muted="#6B6F80",
                        grid="#e6eaf1", hover_border="rgba(27, 36, 48, 0.2)",
                        colorway=("#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700",
                                  "#ffd16a", "#6d3fc0", "#d5dae5")),
    "dark": ChartTheme(background="#171614", title="#EDEBE8", legend="#fafafa", muted="#e6eaf1",
                       grid="#31333F", hover_border="rgba(237, 235, 232, 0.2)",
                       colorway=("#83c9ff", "#0068c9", "#ffabab", "#ff2b2b", "#7defa1", "#29b09d", "#ffd16a",
                                 "#ff8700", "#6d3fc0", "#d5dae5")),
}
SELECTABLE = {"clickmode": "event+select", "hovermode": "closest", "dragmode": "pan"}  # what Streamlit sets
# on a chart whose points take clicks (``selection_mode="points"``), unless the figure sets them itself
FONT = '"Source Sans", sans-serif'  # the page's own font
CLEAR = "rgba(0, 0, 0, 0)"  # "transparent", which Plotly.js reads and plotly.py refuses


def _layout(t: ChartTheme) -> dict:
    """Everything but the axes: fonts, title, legend, backgrounds, hover labels, trace colours."""
    return {
        "font": {"color": t.muted, "family": FONT, "size": 12, "weight": 400},
        "title": {"font": {"family": FONT, "size": 16, "color": t.title, "weight": 700}, "pad": {"l": 4},
                  "xanchor": "left", "x": 0},
        "legend": {"title": {"font": {"size": 12, "color": t.muted}, "side": "top"}, "valign": "top",
                   "bordercolor": CLEAR, "borderwidth": 0, "font": {"size": 12, "color": t.legend}},
        "paper_bgcolor": t.background,
        "plot_bgcolor": t.background,
        "margin": {"pad": 8, "r": 0, "l": 0},
        "hoverlabel": {"bgcolor": t.background, "bordercolor": t.hover_border,
                       "font": {"color": t.muted, "family": FONT, "size": 12}},
        "colorway": list(t.colorway),
    }


def _axis(t: ChartTheme, letter: str) -> dict:
    """An x or y axis: grid colour, muted labels, room for its title (``standoff``, px)."""
    common = {"zerolinecolor": t.grid, "gridcolor": t.grid, "tickfont": {"color": t.muted, "size": 12},
              "automargin": True}  # no tick colour: set in a figure, it turns tick marks on
    title = {"font": {"color": t.muted, "size": 14}}
    if letter == "x":
        return common | {"showgrid": False, "zeroline": False, "title": title | {"standoff": 20}}
    return common | {"ticklabelposition": "outside", "title": title | {"standoff": 24}}


def _colorbar(t: ChartTheme) -> dict:
    """A colour axis's colour bar: thin, three quarters of the plot's height, muted labels."""
    return {"thickness": 16, "xpad": 24, "ticklabelposition": "outside", "outlinecolor": CLEAR,
            "outlinewidth": 8, "len": 0.75, "y": 0.5745, "title": {"font": {"color": t.muted, "size": 14}},
            "tickfont": {"color": t.muted, "size": 12}}


def themed_spec(fig: go.Figure, kind: str | None, phone: bool = False, selectable: bool = False) -> dict:
    """``fig`` as it is sent, a new dict of plain values (``Sent`` hands it to Streamlit): in theme ``kind``
    ("light" or "dark"; None: light), without a template, its numbers short with a data revision
    (``compact``), and, for a ``phone``, its layout laid out for a narrow screen first (``phone_layout``);
    with ``SELECTABLE`` when its points take clicks (``selectable``), and a heatmap's reversed axis as its
    range (``reversed_as_range``; both keep Streamlit's second draw cheap, as the module says). Each value of
    the theme that the figure does not set itself is set on the layout, on every x and y axis and on every
    colour axis's colour bar, and scatter markers lose their outline (Streamlit's theme, as a template would
    apply it). Built in one step from dicts, without Plotly's property-by-property updates (which took
    about 30 ms a figure); the tests check that every builder's figure stays valid."""
    t = THEMES.get(kind or "light", THEMES["light"])
    data = [trace.to_plotly_json() for trace in fig.data]
    own = fig.layout.to_plotly_json()
    own.pop("template", None)
    if phone:
        phone_layout(own, [t["name"] for t in data if t.get("name") and t.get("showlegend") is not False])
    layout = _merge(_layout(t) | (SELECTABLE if selectable else {}), own)  # the figure's own values win
    for name in {"xaxis", "yaxis", *filter(AXIS.match, own)}:
        layout[name] = _merge(_axis(t, name[0]), own.get(name, {}))
    for name in (n for n in own if n.startswith("coloraxis")):
        layout[name] = own[name] | {"colorbar": _merge(_colorbar(t), own[name].get("colorbar", {}))}
    log_axes = frozenset(name[0] + name[5:] for name in own  # "yaxis2" → "y2", as a trace names it
                         if AXIS.match(name) and own[name].get("type") == "log")
    reversed_as_range(layout, data)
    layout["datarevision"] = compact(data, log_axes)
    for trace in data:
        if trace.get("type") == "scatter":
            trace["marker"] = _merge({"line": {"width": 0}}, trace.get("marker", {}))
    layout["template"] = None  # no template: Plotly's default one would come back (15 kB a chart)
    d = {"data": data, "layout": layout}
    if fig.frames:
        d["frames"] = [frame.to_plotly_json() for frame in fig.frames]
    return d


def themed(fig: go.Figure, kind: str | None, phone: bool = False, selectable: bool = False) -> go.Figure:
    """``themed_spec`` as a Plotly figure."""
    out = unchecked(themed_spec(fig, kind, phone, selectable))
    out.layout.template = None  # a figure built from a dict takes Plotly's default template for None
    return out


class Sent(go.Figure):
    """A figure as ``st.plotly_chart`` sends it: ``spec`` (``themed_spec``) itself. Streamlit reads a
    figure with ``to_dict``, which copies it whole and walks it for arrays, and a figure built from a dict
    copies it too; ``spec`` is already a fresh dict of lists, so it is handed over as it is (one copy of a
    chart's data in all instead of three). Replay frames keep their arrays binary, as ``to_dict`` sends
    them. That Streamlit reads a figure so is its own detail, named in ``kernelviz/app/ui/platform.py``: a
    figure built from ``spec`` (``themed``) sends the same figure, 2.2 times slower (7.5 against 16.8 ms for
    a fit of 2,000 points) and with its keys in another order."""

    def __init__(self, spec: dict) -> None:
        super().__init__()
        self._spec = spec

    def to_dict(self) -> dict:
        if "frames" in self._spec:
            binary_arrays(self._spec["frames"])
        return self._spec


def reversed_as_range(layout: dict, data: list[dict]) -> None:
    """Each y axis of ``layout`` with ``autorange: "reversed"`` that holds heatmaps given as its range,
    reversed, in place: from the outer edge of the last row to the outer edge of the first, as Plotly's
    autorange draws them (a row's edges halfway to its neighbours; numbered rows for rows of names or no
    ``y``). Lines inside those edges (a diagonal) may share the axis; any other trace leaves it as it is.
    The picture is the same; Plotly keeps a range as sent, where it rewrites "reversed" once drawn."""
    for name, axis in layout.items():
        if name[0] != "y" or not AXIS.match(name) or axis.get("autorange") != "reversed":
            continue
        on_axis = [t for t in data if t.get("yaxis", "y") == "y" + name[5:]]
        edges = [_row_edges(t) for t in on_axis if t.get("type") == "heatmap"]
        if not edges or None in edges:
            continue
        lo, hi = min(e[0] for e in edges), max(e[1] for e in edges)
        if all(_line_within(t, lo, hi) for t in on_axis if t.get("type") != "heatmap"):
            axis["range"], axis["autorange"] = [hi, lo], False


def _row_edges(heatmap: dict) -> tuple[float, float] | None:
    """The outer edges (low, high) of a heatmap's rows, or None when it has fewer than two."""
    y, z = heatmap.get("y"), heatmap.get("z")
    rows = len(y) if y is not None else len(z) if z is not None else 0
    if rows < 2:
        return None
    values = np.asarray(y) if y is not None else None
    if values is None or values.dtype.kind not in "fiu":
        return -0.5, rows - 0.5
    values = values.astype(np.float64)
    first, last = 1.5 * values[0] - 0.5 * values[1], 1.5 * values[-1] - 0.5 * values[-2]
    return min(first, last), max(first, last)


def _line_within(trace: dict, lo: float, hi: float) -> bool:
    """Whether ``trace`` is a line (no markers, which autorange pads) with every y in [lo, hi]."""
    y = np.asarray(trace.get("y") if trace.get("y") is not None else [], dtype=np.float64)
    y = y[np.isfinite(y)]
    return trace.get("mode") == "lines" and bool(np.all((y >= lo) & (y <= hi)))
