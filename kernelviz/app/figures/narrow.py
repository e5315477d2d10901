"""Charts laid out again for a phone's narrow screen (``phone_layout``).

A figure is built for a page about 820 px wide; on a phone a chart is 330–360 px wide (``PHONE_PX``, a
360 px phone's), and a grid of panels leaves each panel 60–120 px, less than its title. Plotly does not lay
a figure out again for its width, and the server does not know the screen's, so the app asks for this
layout when the browser says it is a phone's (``kernelviz.app.ui.widgets.access.on_phone``): ``themed``
asks for it, on the layout it sends, before the theme goes under it. On the figure's layout alone:

* a colour bar is made thin and its margin narrow (``_thin_colorbars``);
* a grid whose panels would be narrower than ``PANEL_MIN_PX`` gets fewer columns (``_fewer_columns``): four
  heads in two, a pair of heatmaps beside a colour bar one above the other; each panel keeps its height,
  the figure grows, the titles and the axes' tick labels and titles move with their panels;
* an x-axis title repeated under every panel of the bottom row, wider than a panel, is written once,
  centred under the row (``_one_x_title``);
* when a panel's title is wider than its panel, every panel's title is broken into more lines (after a
  comma, an arrow, a colon or an equals sign, or before a parenthesis), in a smaller type, with room made
  above them (``_wrap_titles``);
* a legend under the plot moves a little lower, clear of the x axis's title, with a bottom margin that
  holds the rows it wraps into (``_legend_lower``); a legend under a replay's controls stays there.

``tests/browser/test_phone_charts.py`` checks, on every page on phones of 390 and 360 px and at 1280 × 720,
that no two tick labels, titles, axis titles, legend entries or replay controls' labels of a chart overlap
and none runs off the chart.
"""

from __future__ import annotations

import math
import re

from kernelviz.app.figures.styling import AXIS, COLORBAR_MARGIN, LEGEND_DROP, LEGEND_ROW_PX

__all__ = ["PHONE_PX", "phone_layout"]

PHONE_PX = 328  # a chart's width on a 360 px phone (the page's padding is 16 px each side); 390 px is common
PANEL_MIN_PX = 95  # px, the narrowest panel of a grid on a phone: a title in short lines, tick labels
CHAR_PX = 6.6  # about one character of 12 px text (Source Sans)
TITLE_SIZE = 12  # px, a wrapped panel title
LINE_PX = 16  # px, a line of it
COLUMN_GAP = 0.06  # between the columns of a grid laid out again, a fraction of the plot's width
TICKS_PX = 42  # px under a panel of a grid laid out again for its x tick labels, above the next row's title
LEGEND_GAP_PX = 8  # px, a legend under the plot moves down by this much
ENTRY_PX = 44  # px of a legend entry besides its text: the symbol and the gap after it
PHONE_COLORBAR = {"thickness": 10, "xpad": 6}
PHONE_COLORBAR_MARGIN = 76  # right margin of a thin colour bar: its tick labels and its title above it
_BREAKS = re.compile(r"(?<=, )|(?<= → )|(?<=: )|(?<= = )|(?= \()")
_TAGS = re.compile(r"<[^>]+>")


def _text_px(text: str, size: float = TITLE_SIZE) -> float:
    """About how wide ``text`` is drawn at ``size`` px: its longest line, tags left out."""
    lines = _TAGS.sub("", text.replace("<br>", "\n")).split("\n")
    return max(len(line) for line in lines) * CHAR_PX * size / TITLE_SIZE


def _width(axis: dict) -> float:
    """The width of an x axis's domain, a fraction of the plot's."""
    return axis["domain"][1] - axis["domain"][0]


def _panels(layout: dict) -> list[tuple[str, str]]:
    """(x axis, y axis) names of the grid's panels, in the order their axes are numbered."""
    xs = sorted((n for n in layout if AXIS.match(n) and n[0] == "x" and "domain" in layout[n]),
                key=lambda n: int(n[5:] or 1))
    return [(x, "yaxis" + layout[x].get("anchor", "y")[1:]) for x in xs]


def _plot_px(layout: dict) -> tuple[float, float]:
    """The width and height (px) of the plot area on a phone: the chart less its margins."""
    m = layout.get("margin", {})
    width = PHONE_PX - m.get("l", 80) - m.get("r", 80)
    return width, layout.get("height", 450) - m.get("t", 100) - m.get("b", 80)


def _is_title(a: dict) -> bool:
    """Whether annotation ``a`` is a panel's title as ``make_subplots`` places them."""
    return (a.get("xref") == "paper" and a.get("yref") == "paper" and a.get("yanchor") == "bottom"
            and a.get("xanchor", "center") == "center" and not a.get("showarrow", True))


def _title_of(layout: dict, x: str, y: str) -> dict | None:
    """The title annotation over the panel of axes ``x``, ``y``, if any."""
    (x0, x1), top = layout[x]["domain"], layout[y]["domain"][1]
    for a in layout.get("annotations", []):
        if _is_title(a) and abs(a["x"] - (x0 + x1) / 2) < 1e-6 and abs(a["y"] - top) < 1e-6:
            return a
    return None


def _columns(layout: dict, cols: int) -> int:
    """How many columns the grid gets on a phone: as many of at least ``PANEL_MIN_PX`` as its plot holds
    (after ``_thin_colorbars``), at most ``cols`` (the columns it has), at least one."""
    plot_w, _ = _plot_px(layout)
    return max(1, min(cols, int((plot_w + COLUMN_GAP * plot_w) // (PANEL_MIN_PX + COLUMN_GAP * plot_w))))


def _fewer_columns(layout: dict) -> None:
    """A grid whose panels a phone leaves narrower than ``PANEL_MIN_PX`` laid out again in fewer columns
    (``_columns``), panel by panel in order (row by row); each panel keeps its height, the figure grows."""
    panels = _panels(layout)
    old = len({tuple(layout[x]["domain"]) for x, _ in panels})
    cols = _columns(layout, old)
    if len(panels) < 2 or cols == old:
        return
    rows = math.ceil(len(panels) / cols)
    _, plot_h = _plot_px(layout)
    y0, y1 = layout[panels[0][1]]["domain"]
    panel_px = (y1 - y0) * plot_h
    titles = [_title_of(layout, x, y) for x, y in panels]
    lines = max((t["text"].count("<br>") + 1 for t in titles if t is not None), default=0)
    gap_px = TICKS_PX + LINE_PX * (lines + 1)  # a title may gain a line (``_wrap_titles``)
    new_h = rows * panel_px + (rows - 1) * gap_px
    layout["height"] = layout.get("height", 450) + new_h - plot_h
    x_title = next((t for x, _ in panels if (t := layout[x].get("title", {}).get("text"))), "")
    y_title = next((t for _, y in panels if (t := layout[y].get("title", {}).get("text"))), "")
    width = (1 - COLUMN_GAP * (cols - 1)) / cols
    for k, ((x, y), title) in enumerate(zip(panels, titles, strict=True)):
        row, col = divmod(k, cols)
        left, top = col * (width + COLUMN_GAP), 1 - row * (panel_px + gap_px) / new_h
        layout[x]["domain"] = [round(left, 6), round(left + width, 6)]
        layout[y]["domain"] = [max(0.0, round(top - panel_px / new_h, 6)), round(top, 6)]
        layout[x]["showticklabels"] = True
        layout[x]["title"] = {"text": x_title if row == rows - 1 else ""}
        layout[y]["showticklabels"] = col == 0
        layout[y]["title"] = {"text": y_title if col == 0 else ""}
        if title is not None:
            title["x"], title["y"] = left + width / 2, top


def _thin_colorbars(layout: dict) -> None:
    """Every colour bar shown made thin, and a colour bar's wide right margin narrow."""
    shown = [n for n in layout if n.startswith("coloraxis") and layout[n].get("showscale", True)]
    for name in shown:
        layout[name]["colorbar"] = {**layout[name].get("colorbar", {}), **PHONE_COLORBAR}
    margin = layout.get("margin", {})
    if shown and margin.get("r", 0) >= COLORBAR_MARGIN:
        margin["r"] = PHONE_COLORBAR_MARGIN


def _one_x_title(layout: dict) -> None:
    """The bottom row's x titles, all the same and each wider than its panel, as one title under the row."""
    panels = _panels(layout)
    if len(panels) < 2:
        return
    bottom = min(layout[y]["domain"][0] for _, y in panels)
    row = [x for x, y in panels if layout[y]["domain"][0] == bottom]
    texts = {layout[x].get("title", {}).get("text", "") for x in row}
    plot_w, _ = _plot_px(layout)
    text = texts.pop() if len(texts) == 1 else ""
    if len(row) < 2 or not text or _text_px(text, 14) < _width(layout[row[0]]) * plot_w:
        return
    for x in row:
        layout[x]["title"] = {"text": ""}
    left, right = min(layout[x]["domain"][0] for x in row), max(layout[x]["domain"][1] for x in row)
    layout.setdefault("annotations", []).append(
        {"text": text, "xref": "paper", "yref": "paper", "x": (left + right) / 2, "y": bottom, "yshift": -32,
         "xanchor": "center", "yanchor": "top", "showarrow": False, "font": {"size": 14}})


def _split(line: str) -> str:
    """``line`` in two, broken where the longer part is shortest (after a comma, an arrow, a colon or an
    equals sign, or before a parenthesis); as it is when it has no such place."""
    cuts = [m.start() for m in _BREAKS.finditer(line) if 0 < m.start() < len(line)]
    if not cuts:
        return line
    best = min(cuts, key=lambda c: max(len(_TAGS.sub("", line[:c])), len(_TAGS.sub("", line[c:]))))
    return f"{line[:best].rstrip()}<br>{line[best:].lstrip()}"


def _wrapped(text: str, width: float) -> str:
    """``text`` with each line wider than ``width`` px at ``TITLE_SIZE`` broken in two (``_split``), and a
    title of one line broken in any case (its grid's titles then look alike)."""
    lines = text.split("<br>")
    return "<br>".join(_split(line) if len(lines) == 1 or _text_px(line) > width else line for line in lines)


def _wrap_titles(layout: dict) -> None:
    """When a panel title is wider than its panel, every panel title of the grid wrapped (``_wrapped``) in a
    smaller type; the figure's top margin (and a legend above the plot) moves up by the lines a title of
    the top row gained."""
    plot_w, plot_h = _plot_px(layout)
    titled = [(x, y, t) for x, y in _panels(layout) if (t := _title_of(layout, x, y)) is not None]
    if not any(_text_px(t["text"], t.get("font", {}).get("size", 16)) >= _width(layout[x]) * plot_w
               for x, _, t in titled):
        return
    grew = 0
    for x, y, title in titled:
        lines = title["text"].count("<br>")
        title["text"] = _wrapped(title["text"], _width(layout[x]) * plot_w)
        title["font"] = {**title.get("font", {}), "size": TITLE_SIZE}
        if layout[y]["domain"][1] > 0.999:
            grew = max(grew, title["text"].count("<br>") - lines)
    if grew:
        margin = layout.setdefault("margin", {})
        margin["t"] = margin.get("t", 100) + grew * LINE_PX
        legend = layout.get("legend", {})
        if legend.get("y", 0) > 1:
            legend["y"] = 1 + ((legend["y"] - 1) * plot_h + grew * LINE_PX) / (plot_h - grew * LINE_PX)


def _legend_rows(names: list[str], width: float) -> int:
    """The rows a horizontal legend of entries ``names`` wraps into in ``width`` px (``ENTRY_PX`` for each
    entry's symbol and gap, and its text)."""
    rows, used = 1, 0.0
    for name in names:
        px = ENTRY_PX + _text_px(name)
        if used and used + px > width:
            rows, used = rows + 1, 0.0
        used += px
    return rows


def _legend_lower(layout: dict, names: list[str]) -> None:
    """A legend under the plot ``LEGEND_GAP_PX`` lower, with a bottom margin that holds every row it wraps
    into on a phone: else Plotly widens the margin itself, the plot gets shorter and the legend, placed as
    a fraction of the plot's height, rises into the x axis's title."""
    legend = layout.get("legend", {})
    margin = layout.setdefault("margin", {})
    if not names or legend.get("y", 1) >= 0 or layout.get("sliders") or layout.get("updatemenus"):
        return  # a legend under a replay's controls was placed there with them (``controls_at``)
    rows = _legend_rows(names, PHONE_PX - margin.get("l", 80))
    margin["b"] = max(margin.get("b", 80), LEGEND_DROP + LEGEND_GAP_PX + rows * LEGEND_ROW_PX + 12)
    _, plot_h = _plot_px(layout)
    legend["y"] = -(LEGEND_DROP + LEGEND_GAP_PX) / max(plot_h, 1.0)


def phone_layout(layout: dict, legend: list[str]) -> dict:
    """A figure's ``layout`` (a dict, changed in place and returned) laid out for a phone's narrow screen
    (see the module docstring); ``legend``: the names of the entries in its legend."""
    _thin_colorbars(layout)
    _fewer_columns(layout)
    _one_x_title(layout)
    _wrap_titles(layout)
    _legend_lower(layout, legend)
    return layout
