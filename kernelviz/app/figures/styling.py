"""Colours, the shared layout and the small pieces every builder uses.

``COLORS`` maps a *role* to a colour and ``HEAD_COLORS`` gives one colour per attention head; ``style`` is
the layout every figure ends with, ``thumbnail`` its preview size, ``png_config`` the ``config=`` for
``st.plotly_chart``; a ``Look`` is what ``style`` lays out. ``subplot_grid`` (of a ``PanelGrid``) and
``outer_axis_titles`` lay out small multiples.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go
from _plotly_utils.utils import convert_to_base64
from plotly.subplots import make_subplots

from kernelviz.app.figures.log_axes import log_props
from kernelviz.runtime.i18n import _

# Okabe–Ito colours, the light ones (orange, sky blue, yellow) darkened to the same hue until a line stands
# 3:1 against white as well as against the dark theme's background (WCAG 1.4.11), and the yellow head replaced
# by grey; they stay apart for deuteranopia and protanopia (``tests/test_palette.py`` checks both).
COLORS: dict[str, str] = {
    "data": "#8C8C8C",
    "truth": "#A54900",
    "fit": "#0072B2",
    "average": "#CC79A7",
    "knn": "#009E73",
    "optimum": "#C28600",
    "trajectory": "#009E73",
    "loss": "#1D98DD",
    "before": "#8C8C8C",
}
HEAD_COLORS: tuple[str, ...] = (
    "#0072B2",
    "#C28600",
    "#009E73",
    "#CC79A7",
    "#1D98DD",
    "#A54900",
    "#6F6F6F",
    "#8C564B",
)
HEATMAP_SCALE = "Viridis"
BAND_ALPHA = 0.18


def vec(a: object) -> np.ndarray:
    """``a`` as a flat float64 array."""
    return np.asarray(a, dtype=np.float64).reshape(-1)


def rgba(color: str, alpha: float) -> str:
    """``#RRGGBB`` with an opacity, as a Plotly ``rgba(r, g, b, a)`` string."""
    c = color.lstrip("#")
    r, g, b = (int(c[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha:g})"


def head_color(h: int) -> str:
    """The colour of head ``h`` (0-based), cycling through ``HEAD_COLORS``."""
    return HEAD_COLORS[h % len(HEAD_COLORS)]


def head_labels(names: Sequence[str] | None, heads: int) -> list[str]:
    """``names`` as a list, or "head 1", "head 2", … for ``heads`` heads when there are none."""
    return list(names) if names is not None else [_("head {h}").format(h=h + 1) for h in range(heads)]


def png_config(filename: str, scale: int = 2) -> dict:
    """``config=`` for ``st.plotly_chart``: the modebar camera saves ``<filename>.png`` at ``scale`` ×
    size."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": scale},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def _merge(base: dict, patch: dict) -> dict:
    """``patch`` merged into ``base`` key by key (nested dicts merged, anything else replaced)."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


AXIS = re.compile(r"^[xy]axis\d*$")  # the layout's x and y axes: xaxis, yaxis2, …


# Plotly's internals, named in ``kernelviz/app/ui/platform.py`` with the tests that guard them: no public
# option builds a figure without checking it property by property, or writes arrays as typed arrays.


def unchecked(d: dict, kind: type[go.Figure] = go.Figure) -> go.Figure:
    """A figure (of class ``kind``) from plain dict ``d`` as it is, without Plotly's validation of every
    property (``_validate=False``; about 5x faster to build). The tests check every builder's figure."""
    return kind(d, _validate=False)


def binary_arrays(d: dict | list) -> None:
    """Every NumPy array in ``d`` (in place) as the typed array Plotly's ``to_dict`` sends
    (``{"dtype", "bdata"}``)."""
    convert_to_base64(d)


def with_layout(fig: go.Figure, layout: dict, axes: dict[str, dict] | None = None,
                frames: list[dict] | None = None) -> go.Figure:
    """A new figure: ``fig``'s traces and its layout with ``axes["x"]``, ``axes["y"]`` merged into every x, y
    axis, then ``layout`` merged in; its animation frames, or ``frames`` (plain dicts) when given. It is
    built in one step from the merged dict, without Plotly's property-by-property updates (about 5x
    faster, ``unchecked``); the tests check that every builder's figure is valid. A grid of panels stays
    one (``Panels``: ``add_trace(..., row=, col=)`` still works)."""
    d = {"data": [t.to_plotly_json() for t in fig.data], "layout": fig.layout.to_plotly_json()}
    if frames is not None or fig.frames:
        d["frames"] = frames if frames is not None else [f.to_plotly_json() for f in fig.frames]
    lay = d["layout"]
    for letter, props in (axes or {}).items():
        for name in {f"{letter}axis", *(k for k in lay if AXIS.match(k) and k[0] == letter)}:
            lay[name] = _merge(lay.get(name) or {}, copy.deepcopy(props))
    _merge(lay, layout)
    return Panels.of(d, *fig._shape) if isinstance(fig, Panels) else unchecked(d)


# Streamlit's chart theme turns on Plotly's automargin and stands axis titles off the ticks, so a 60 px
# margin grows to about 67–76 px once the labels are measured, and Plotly then draws the whole figure a
# second time. Margins that already hold the labels save that drawing (repaints 1.33x faster when measured,
# ``docs/benchmarks.md``).
MARGIN = {"l": 76, "r": 24, "b": 75}
TITLED_MARGIN = {"t": 50, "b": 110}  # a titled figure's top (its title) and bottom (axis title, then legend)
LEGEND_DROP = 44  # px from the plot's bottom edge to a legend below it: under the x axis's ticks and title
LEGEND_ROW_PX = 19  # px, a row of a horizontal legend
COLORBAR_MARGIN = 130  # right margin of a figure with a colour bar
DEFAULT_HEIGHT = 380  # px, of a figure whose look gives no height


LABEL_CHARS = 4  # the longest tick label MARGIN["l"] holds beside the y-axis title ("0.01")
CHAR_PX = 7  # about one character of a tick label


def _left_margin(y_axis: dict) -> int:
    """MARGIN["l"], widened by ``CHAR_PX`` for every character of the y axis's longest tick label (within its
    range) beyond ``LABEL_CHARS``: "0.005" on a log axis needs some 7 px more, and Plotly would otherwise
    widen the margin itself and draw the figure again. Axes other than ``log_props``' keep MARGIN["l"]."""
    texts, values, span = y_axis.get("ticktext"), y_axis.get("tickvals"), y_axis.get("range")
    if y_axis.get("type") != "log" or not texts or not values or not span:
        return MARGIN["l"]
    lo, hi = 10.0 ** span[0], 10.0 ** span[1]
    longest = max((len(t) for t, v in zip(texts, values, strict=True) if lo <= v <= hi), default=0)
    return MARGIN["l"] + CHAR_PX * max(0, longest - LABEL_CHARS)


def _top_margin(showlegend: bool, legend_rows: int) -> int:
    """The top margin of a figure without a title: room for ``legend_rows`` rows of legend above the plot."""
    return max(40, 28 + LEGEND_ROW_PX * legend_rows) if showlegend else 40


@dataclass(frozen=True)
class Look:
    """How a figure is laid out: its ``title`` (None: untitled), the axis titles, its ``height`` in px, the
    rows its legend wraps into above the plot (``legend_rows``), whether it has a legend, and which axes are
    logarithmic. A field left None takes the figure's own default (``over``); ``style`` draws it."""

    title: str | None = None
    x_title: str | None = None
    y_title: str | None = None
    height: int | None = None
    legend_rows: int = 1
    showlegend: bool = True
    log_x: bool = False
    log_y: bool = False

    def over(self, **defaults: object) -> Look:
        """This look with each of its fields that is None taken from ``defaults`` (a builder's own title,
        axis titles and height)."""
        return replace(self, **{k: v for k, v in defaults.items() if getattr(self, k) is None})


DEFAULT_LOOK = Look()  # every builder's own title, axis titles and height


def style(fig: go.Figure, look: Look, *, y_axes: dict | None = None, layout: dict | None = None) -> go.Figure:
    """The shared layout: axis titles, a horizontal legend, closest-point hover, margins (``look``; no axis
    title where it is None, ``DEFAULT_HEIGHT`` px without a height), then ``y_axes`` merged into every y axis
    and a builder's own ``layout`` (one new figure, ``with_layout``).

    The legend sits above the plot, or below the x-axis title when the figure has a title (so the two never
    overlap: ``legend_below``); above the plot, the top margin holds ``look.legend_rows`` rows of it (how
    many it wraps into in the page's column), so that Plotly need not widen it and draw again (``MARGIN``).

    Log axes (``look.log_x``/``look.log_y``) get ``log_props``: every label a whole value (0.05, 10⁻⁴),
    never a bare mantissa or an SI prefix (100µ). Call ``style`` after adding the traces, since the ticks
    follow the data.
    """
    title, height = look.title, look.height or DEFAULT_HEIGHT
    axes = {a: {"title": {"text": t or ""}, "exponentformat": "power"}
            for a, t in (("x", look.x_title), ("y", look.y_title))}
    axes["y"].update(y_axes or {})
    for letter, log in (("x", look.log_x), ("y", look.log_y)):
        if log:
            axes[letter].update(log_props(fig, letter))
    legend = (
        {"orientation": "h", "yanchor": "top", "y": legend_below(height), "xanchor": "left", "x": 0.0}
        if title
        else {"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "left", "x": 0.0}
    )
    shared = {
        "height": height,
        "margin": {**MARGIN, "l": _left_margin(axes["y"]),
                   "t": TITLED_MARGIN["t"] if title else _top_margin(look.showlegend, look.legend_rows),
                   "b": TITLED_MARGIN["b"] if title and look.showlegend else MARGIN["b"]},
        "hovermode": "closest",
        "showlegend": look.showlegend,
        "legend": legend,
    }
    if title:
        shared["title"] = {"text": title}
    return with_layout(fig, _merge(shared, layout or {}), axes)


def legend_below(height: int, top: int = TITLED_MARGIN["t"], bottom: int = TITLED_MARGIN["b"]) -> float:
    """The legend's y (a fraction of the plot's height, negative: below it) that puts it ``LEGEND_DROP`` px
    under the plot of a titled figure of total ``height`` and these margins (px), whatever the height (a
    lesson's stage draws charts lower than the page)."""
    return -LEGEND_DROP / max(height - top - bottom, 1)


CONTROLS_PX = 100  # px from the top of an animation's slider and buttons to the legend under them


def controls_at(fig: go.Figure) -> tuple[float, dict]:
    """Where the slider and buttons go (a fraction of the plot's height, under its x axis's title) and, for
    a legend below the plot, where it moves to: under them, so that a legend that wraps to several rows on
    a phone runs down into the room they leave rather than over them."""
    m = fig.layout.margin
    plot_px = max((fig.layout.height or 420) - (m.t or 0) - (m.b or 50), 1)
    y = -LEGEND_DROP / plot_px
    below = fig.layout.legend.y is not None and fig.layout.legend.y < 0
    return y, ({"legend": {"y": y - CONTROLS_PX / plot_px}} if below else {})


def at_height(fig: go.Figure, height: int) -> go.Figure:
    """A copy of ``fig`` ``height`` px tall; a legend ``style`` put below a titled plot (anchored at its top)
    keeps its ``LEGEND_DROP`` under the plot at the new height (``legend_below``), and an animation's slider
    and buttons stay right under the x axis's title, the legend under them (``controls_at``)."""
    out = go.Figure(fig).update_layout(height=height)
    if out.layout.sliders:
        y, below = controls_at(out)
        out.update_layout(**below)
        out.update_layout(sliders=[{"y": y}] * len(out.layout.sliders),
                          updatemenus=[{"y": y}] * len(out.layout.updatemenus))
    elif out.layout.title.text and out.layout.legend.yanchor == "top":
        margin = out.layout.margin
        out.update_layout(legend_y=legend_below(height, margin.t or 0, margin.b or 0))
    return out


def thumbnail(fig: go.Figure, height: int = 200) -> go.Figure:
    """A small version of a figure for previews: no legend, no title, tight margins, axis titles kept."""
    fig.update_layout(
        height=height, showlegend=False, title=None, margin={"l": 70, "r": 10, "t": 14, "b": 70}
    )
    fig.update_xaxes(title_font={"size": 11})
    fig.update_yaxes(title_font={"size": 11})
    return fig


class PanelGrid(NamedTuple):
    """The shape of a grid of small panels: ``rows`` × ``cols``, the gaps between them (fractions of the
    figure's width and height) and whether the panels share their x and y axes."""

    rows: int
    cols: int
    horizontal_spacing: float
    vertical_spacing: float = 0.1
    shared_xaxes: bool = True
    shared_yaxes: bool = True


class Panels(go.Figure):
    """A grid of panels (``subplot_grid``), whose ``add_trace(trace, row=, col=)`` puts a
    trace on panel (row, col)'s axes by their names, as ``make_subplots`` names them (``axis_number``)."""

    _shape = (1, 1)  # (rows, columns)

    @classmethod
    def of(cls, d: dict, rows: int, cols: int) -> Panels:
        """The figure ``d`` (a plain dict, ``unchecked``) as a grid of ``rows`` × ``cols`` panels."""
        fig = unchecked(d, cls)
        fig._shape = (rows, cols)
        return fig

    def add_trace(self, trace: object, row: int | None = None, col: int | None = None,
                  secondary_y: bool | None = None, exclude_empty_subplots: bool = False) -> Panels:
        """``go.Figure.add_trace``, on panel (``row``, ``col``) when given (1-based)."""
        if row is None or col is None or secondary_y:
            return super().add_trace(trace, row, col, secondary_y, exclude_empty_subplots)
        rows, cols = self._shape
        if not (1 <= row <= rows and 1 <= col <= cols):
            raise ValueError(f"no panel ({row}, {col}) in a grid of {rows} × {cols}")
        super().add_trace(trace, exclude_empty_subplots=exclude_empty_subplots)
        k = axis_number(row, col, cols)
        self.data[-1].update(xaxis=f"x{k}", yaxis=f"y{k}")
        return self


def axis_number(row: int, col: int, cols: int) -> str:
    """The number in the names of panel (``row``, ``col``)'s axes in a grid of ``cols`` columns, as
    ``make_subplots`` names them ("" for the first: ``xaxis``, then ``xaxis2``, …)."""
    k = (row - 1) * cols + col
    return str(k) if k > 1 else ""


@functools.lru_cache(maxsize=32)
def _grid(grid: PanelGrid, titles: int) -> dict:
    """The layout dict of ``make_subplots`` with placeholder titles: a grid's layout depends only on its
    shape, so it is built once per shape (``make_subplots`` takes 10–35 ms)."""
    fig = make_subplots(rows=grid.rows, cols=grid.cols, shared_xaxes=grid.shared_xaxes,
                        shared_yaxes=grid.shared_yaxes, subplot_titles=[f"title {i}" for i in range(titles)],
                        horizontal_spacing=grid.horizontal_spacing, vertical_spacing=grid.vertical_spacing)
    return fig.to_dict()["layout"]


def subplot_grid(grid: PanelGrid, titles: Sequence[str]) -> Panels:
    """An empty grid of panels of the shape ``grid`` (``make_subplots``), one title per panel."""
    layout = copy.deepcopy(_grid(grid, len(titles)))
    for annotation, text in zip(layout.get("annotations", ()), titles, strict=False):
        annotation["text"] = text
    return Panels.of({"layout": layout}, grid.rows, grid.cols)


def outer_axis_titles(rows: int, cols: int, x_title: str, y_title: str) -> dict:
    """Layout entries that title the outer panels of a ``subplot_grid`` only: x along the bottom row, y down
    the first column (panel (r, c) has axes number (r − 1)·cols + c, the first without a number)."""
    def name(letter: str, r: int, c: int) -> str:
        return f"{letter}axis{axis_number(r, c, cols)}"

    return ({name("x", rows, c): {"title": {"text": x_title}} for c in range(1, cols + 1)}
            | {name("y", r, 1): {"title": {"text": y_title}} for r in range(1, rows + 1)})
