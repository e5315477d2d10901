"""kernelviz's chart element: a Plotly chart that stays in the page and is drawn once per changed figure.

``st.plotly_chart`` gives each chart an element id that hashes its figure, so a changed figure is a new
element: mounted afresh and drawn twice by Plotly in the browser, the second time in full
(``docs/benchmarks.md``, "The browser's part of a press"). This element (``chart.js``, an
``st.components.v2`` component) keeps its chart's div across reruns under its key, and redraws it with one
``Plotly.react`` only when the figure or the theme changed. It draws with Streamlit's own Plotly, in
Streamlit's chart theme (light or dark), with the modebar's PNG download, a fullscreen button and, for a
chart with ``on_select``, the clicked point in ``st.session_state[key]["select"]``, shaped as
``st.plotly_chart``'s selection: ``{"selection": {"points": [{"x": …, "y": …}, …]}}``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

__all__ = ["draw", "plotly_module", "points_of", "selected_points", "spec"]

JS = Path(__file__).with_name("chart.js")


def script() -> str:
    """``chart.js`` without its comment lines and indentation: Streamlit sends a component's script with
    every element of it, so with every changed chart."""
    lines = (line.strip() for line in JS.read_text(encoding="utf-8").splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


@functools.cache
def _element() -> Callable[..., Any]:
    """The component, registered once per process (on first use: importing this module registers nothing)."""
    return st.components.v2.component("kernelviz.chart", js=script(), isolate_styles=False)


@functools.cache
def plotly_module() -> str:
    """The file name of Streamlit's frontend module that carries its chart element and Plotly, which sets
    ``window.Plotly`` as it loads: the element loads Plotly from it."""
    static = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(static.glob("PlotlyChart.*.js"))
    if not found:
        raise RuntimeError(f"Streamlit's Plotly module is not in {static}")
    return found[0].name


def spec(fig: go.Figure) -> tuple[str, str]:
    """The figure's JSON (as ``st.plotly_chart`` sends it) and a short hash of it that names the figure."""
    text = pio.to_json(fig, validate=False)
    return text, hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def draw(fig: go.Figure, key: str, config: dict, on_select: Callable[[], None] | None = None) -> None:
    """Draw ``fig`` under ``key`` in the current container; ``config`` is Plotly's (the modebar's PNG
    options), ``on_select`` called after a click on a point or on the background."""
    text, rev = spec(fig)
    data = {"figure": text, "rev": rev, "config": config, "module": plotly_module(),
            "selectable": on_select is not None}
    callbacks = {"on_select_change": on_select} if on_select is not None else {}
    _element()(key=key, data=data, **callbacks)


def points_of(state: object) -> list[dict]:
    """The clicked points in a chart's session state (``{"select": {"selection": {"points": […]}}}`` in the
    run a click triggers), or none."""
    event = state.get("select") if isinstance(state, Mapping) else None
    selection = event.get("selection") if isinstance(event, Mapping) else None
    points = selection.get("points") if isinstance(selection, Mapping) else None
    return [p for p in points if isinstance(p, Mapping)] if isinstance(points, list) else []


def selected_points(key: str) -> list[dict]:
    """The points of the last click on chart ``key``: empty for a click on its background, or none yet."""
    return points_of(st.session_state.get(key))
