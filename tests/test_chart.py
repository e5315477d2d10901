"""kernelviz's chart element (``kernelviz/app/ui/chart.py`` and its script ``chart.js``): what the server
sends, how a click reads back, and what the script relies on in the installed Streamlit. The element in a
real browser: ``tests/browser/test_pages.py`` (one draw per changed chart, the theme) and
``tests/browser/test_click_replay.py`` (clicks, animation)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st
import streamlit.elements.lib.streamlit_plotly_theme as streamlit_theme

from kernelviz.app.ui import chart


def test_a_figure_is_named_by_its_json_so_that_an_unchanged_one_is_not_drawn_again():
    fig = go.Figure(go.Scatter(x=[0.0, 1.0], y=[1.0, 2.0], name="data"))
    text, rev = chart.spec(fig)
    assert json.loads(text)["data"][0]["y"] == [1.0, 2.0]
    assert chart.spec(go.Figure(fig))[1] == rev  # the same figure built again: the same name
    assert chart.spec(go.Figure(fig).update_traces(y=[1.0, 3.0]))[1] != rev
    assert chart.spec(go.Figure(fig).update_layout(title="other"))[1] != rev


def test_a_click_reads_back_as_its_points_and_anything_else_as_none():
    point = {"x": 0.5, "y": 1.2, "curve_number": 1, "point_index": 7}
    assert chart.points_of({"select": {"selection": {"points": [point]}}}) == [point]
    assert chart.points_of({"select": {"selection": {"points": []}}}) == []  # a click on the background
    for state in (None, {}, {"select": None}, {"select": {"selection": None}}, "text",
                  {"select": {"selection": {"points": "x"}}}):
        assert chart.points_of(state) == []


def test_plotly_comes_from_the_module_that_carries_streamlits_own_chart_element():
    """The script loads Plotly from that module and reads ``window.Plotly``, which Plotly sets as it loads:
    a Streamlit whose module is named or built otherwise fails here, not in a student's browser."""
    name = chart.plotly_module()
    assert re.fullmatch(r"PlotlyChart\.[\w-]+\.js", name)
    text = (Path(st.__file__).parent / "static" / "static" / "js" / name).read_text(encoding="utf-8")
    assert "window.Plotly=" in text


def test_the_script_colours_every_placeholder_of_streamlits_chart_template():
    """Streamlit's "streamlit" Plotly template (every kernelviz figure's) names the theme's colours
    #000001 … #000040; the script gives #000001–#000030 the theme's categorical, sequential and diverging
    colours and #000032–#000040 its single ones. A placeholder outside those would reach the page as a
    near-black colour."""
    placeholders = {v for k, v in vars(streamlit_theme).items()
                    if k.isupper() and isinstance(v, str) and re.fullmatch(r"#0000\d\d", v)}
    coloured = {f"#0000{n:02d}" for n in (*range(1, 31), *range(32, 41))}
    assert placeholders and placeholders <= coloured
    script = chart.JS.read_text(encoding="utf-8")
    assert "[[1, t.categorical], [11, t.sequential], [21, t.diverging]]" in script
    assert "slot(32 + i)" in script

