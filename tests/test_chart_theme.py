"""How a figure is sent: its numbers as short decimals with a data revision (``figures/numbers.py``) and the
light or dark theme set in its own layout, under the figure's own values (``figures/theme.py``)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from kernelviz.app import figures as kf
from kernelviz.app.figures.numbers import SIGNIFICANT, SINGLE_TOL, compact, short_numbers


def digits(x: float) -> int:
    """Significant digits of ``x`` as Python (and JSON) writes it."""
    return len(repr(abs(x)).split("e")[0].replace(".", "").strip("0"))


def test_short_numbers_round_to_a_share_of_the_range_and_write_it_so() -> None:
    v = np.sin(np.linspace(0, 6, 2000)) * 0.2 + 0.1  # range 0.4: rounded to 1e-6
    out = short_numbers(v)
    assert all(isinstance(x, float) for x in out)
    np.testing.assert_allclose(out, v, rtol=0, atol=0.5 * SINGLE_TOL * np.ptp(v))
    assert max(len(repr(x)) for x in out) <= len("-0.123457")
    assert json.dumps(short_numbers(np.array([0.1234567891, 1e-7, 1.23e-5, 0.2]))) == \
        "[0.123457, 0.0, 1.2e-05, 0.2]"
    stamps = 1.6e9 + np.arange(50.0)  # seconds since 1970: neighbours stay apart
    assert short_numbers(stamps) == stamps.tolist()


def test_relative_short_numbers_keep_significant_digits() -> None:
    rng = np.random.default_rng(0)
    v = rng.normal(size=5000) * 10.0 ** rng.uniform(-9, 9, size=5000)  # a log axis's decades
    out = short_numbers(v, relative=True)
    np.testing.assert_allclose(out, v, rtol=0.5 * 10.0 ** (1 - SIGNIFICANT))
    assert max(digits(x) for x in out) <= SIGNIFICANT
    assert json.dumps(short_numbers(np.array([0.1234567891, 1e-7, 2.5]), relative=True)) == \
        "[0.123457, 1e-07, 2.5]"


def test_short_numbers_keep_gaps_zeros_extremes_and_shape() -> None:
    out = short_numbers(np.array([[np.nan, 0.0, np.inf], [-np.inf, 1.0, -0.0]]))
    assert np.array_equal(out, [[np.nan, 0.0, np.inf], [-np.inf, 1.0, -0.0]], equal_nan=True)
    assert short_numbers(np.array([])) == [] and short_numbers(np.zeros(3)) == [0.0, 0.0, 0.0]
    assert short_numbers(np.array([1e300, -1e300])) == [1e300, -1e300]  # no exact power of ten that far


def test_compact_keeps_significant_digits_on_log_axes_and_in_hover_data() -> None:
    small = np.array([2.0, 3.2e-5, 4e-6])
    data = [{"type": "scatter", "x": small.copy(), "y": small.copy(), "yaxis": "y2",
             "customdata": small.copy()}]
    compact(data, frozenset({"y2"}))
    assert data[0]["y"] == data[0]["customdata"] == [2.0, 3.2e-05, 4e-06]  # a log axis: no zero, no gap
    assert data[0]["x"] == [2.0, 3e-05, 0.0]  # a linear axis: to 1e-5 of the range


def test_compact_sends_lists_and_its_revision_follows_every_datum() -> None:
    def traces(y: np.ndarray, text: str = "a", color: int = 1) -> list[dict]:
        return [{"type": "scatter", "x": np.linspace(0, 1, y.size), "y": y.copy(), "text": [text] * y.size,
                 "marker": {"color": np.full(y.size, color)}}]

    y = np.sin(np.linspace(0, 3, 400))
    first = traces(y)
    revision = compact(first)
    assert isinstance(first[0]["x"], list) and isinstance(first[0]["y"], list)
    assert first[0]["text"] == ["a"] * 400  # not numbers: as they were
    assert compact(traces(y)) == revision
    moved = y.copy()
    moved[200] += 1e-9  # a change in the middle of a long array, below what is sent
    assert compact(traces(moved)) != revision
    assert compact(traces(y, text="b")) != revision
    assert compact(traces(y, color=2)) != revision


def two_panels() -> go.Figure:
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Scatter(x=np.linspace(0, 1, 50), y=np.linspace(1, 2, 50), mode="markers"), 1, 1)
    fig.add_trace(go.Heatmap(z=np.eye(4), coloraxis="coloraxis"), 1, 2)
    return fig.update_layout(coloraxis={"colorscale": "Viridis", "colorbar": {"title": {"text": "w"}}},
                             margin={"l": 50, "r": 20}, title={"text": "two panels"},
                             xaxis2={"title": {"text": "keys", "font": {"size": 11}}})


@pytest.mark.parametrize("kind", ["light", "dark"])
def test_themed_sets_the_theme_under_the_figures_own_values(kind: str) -> None:
    theme = kf.THEMES[kind]
    sent = json.loads(pio.to_json(kf.themed(two_panels(), kind)))
    layout = sent["layout"]
    assert layout["template"] is None and layout["datarevision"]
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == theme.background
    assert layout["font"]["color"] == theme.muted and layout["title"]["font"]["color"] == theme.title
    assert layout["title"]["text"] == "two panels"
    assert layout["margin"] == {"l": 50, "r": 20, "pad": 8}  # its own margins, the theme's padding
    for axis in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        assert layout[axis]["gridcolor"] == theme.grid and layout[axis]["tickfont"]["color"] == theme.muted
    assert layout["xaxis2"]["title"] == {"text": "keys", "font": {"size": 11, "color": theme.muted},
                                         "standoff": 20}
    bar = layout["coloraxis"]["colorbar"]
    assert bar["title"] == {"text": "w", "font": {"color": theme.muted, "size": 14}}
    assert sent["data"][0]["marker"]["line"]["width"] == 0
    go.Figure(sent)  # Plotly's own validation accepts it


def test_themed_leaves_the_figure_it_is_given_and_defaults_to_light() -> None:
    fig = two_panels()
    before = fig.to_json()
    sent = kf.themed(fig, None)
    assert fig.to_json() == before
    assert sent.layout.paper_bgcolor == kf.THEMES["light"].background
    assert kf.themed(two_panels(), "solarized").layout.paper_bgcolor == kf.THEMES["light"].background


def test_themed_keeps_animation_frames() -> None:
    fig = go.Figure(go.Scatter(x=[0.0, 1.0], y=[0.0, 1.0]),
                    frames=[go.Frame(name="1", data=[{"type": "scatter", "y": [1.0, 0.0]}])])
    assert [f.name for f in kf.themed(fig, "dark").frames] == ["1"]


def test_compact_leaves_no_typed_array_in_a_trace() -> None:
    steps = np.arange(60)
    trace = {"type": "scatter", "x": np.linspace(0, 1, 60), "y": np.linspace(0, 1, 60), "customdata": steps,
             "marker": {"color": steps, "size": np.full(60, 7.123456789)}}
    compact([trace])
    assert trace["customdata"] == trace["marker"]["color"] == list(range(60))
    assert trace["marker"]["size"] == [7.12346] * 60  # SIGNIFICANT digits
    assert all(isinstance(v, int) for v in trace["customdata"])


def test_themed_gives_a_reversed_heatmap_axis_its_range_as_plotly_draws_it() -> None:
    q = np.linspace(0.0, 2.0, 11)  # rows 0.2 apart: edges 0.1 beyond the first and the last
    sent = kf.themed(kf.heatmap_figure(np.ones((11, 5)), q, np.arange(5.0)), "light").layout.yaxis
    assert sent.autorange is False
    np.testing.assert_allclose(sent.range, [2.1, -0.1])
    uneven = np.array([0.0, 1.0, 4.0])  # outer edges halfway to the neighbour, mirrored: -0.5 and 5.5
    sent = kf.themed(kf.heatmap_figure(np.ones((3, 2)), uneven, np.arange(2.0)), "light").layout.yaxis
    np.testing.assert_allclose(sent.range, [5.5, -0.5])
    rows = go.Figure(go.Heatmap(z=np.ones((4, 2)))).update_yaxes(autorange="reversed")  # rows 0-3, no y
    assert kf.themed(rows, "light").layout.yaxis.range == (3.5, -0.5)
    names = kf.coverage_figure(np.ones((3, 2)), ["a", "b", "c"], ["1", "2"])
    assert kf.themed(names, "light").layout.yaxis.range == (2.5, -0.5)  # rows 0, 1, 2 of names
    assert names.layout.yaxis.autorange == "reversed"  # the figure given stays as it was


def test_a_reversed_axis_keeps_autorange_unless_it_holds_heatmaps_and_lines_inside_them() -> None:
    g = np.linspace(-1.0, 1.0, 9)
    pair = kf.themed(kf.score_transpose_figure(np.outer(g, g), g), "light").layout  # and a dashed diagonal
    for axis in (pair.yaxis, pair.yaxis2):
        np.testing.assert_allclose(axis.range, [1.125, -1.125])
    fig = kf.heatmap_figure(np.ones((9, 3)), g, np.arange(3.0))
    fig.add_trace(go.Scatter(x=[1.0], y=[0.0], mode="markers"))  # markers: autorange pads around them
    assert kf.themed(fig, "light").layout.yaxis.autorange == "reversed"
    fig = kf.heatmap_figure(np.ones((9, 3)), g, np.arange(3.0))
    fig.add_trace(go.Scatter(x=[0.0, 2.0], y=[-3.0, 3.0], mode="lines"))  # a line past the rows
    assert kf.themed(fig, "light").layout.yaxis.autorange == "reversed"


def test_a_chart_that_takes_clicks_carries_streamlits_click_and_drag_modes() -> None:
    modes = ("clickmode", "hovermode", "dragmode")
    sent = kf.themed(two_panels(), "light", selectable=True).layout
    assert [sent[m] for m in modes] == ["event+select", "closest", "pan"]
    assert kf.themed(two_panels(), "light").layout.clickmode is None
    own = two_panels().update_layout(dragmode="zoom", hovermode="x")
    sent = kf.themed(own, "light", selectable=True).layout
    assert [sent[m] for m in modes] == ["event+select", "x", "zoom"]  # the figure's own, as Streamlit keeps


def test_sent_hands_streamlit_the_themed_figure_as_it_is() -> None:
    from plotly.tools import return_figure_from_figure_or_data  # how st.plotly_chart reads a figure

    from kernelviz.app.ui.caching.scrub import Path

    g = np.linspace(0, 1, 30)
    curve = kf.Curve("fit", np.sin(g), kf.COLORS["fit"], std=np.full_like(g, 0.1))
    means = np.stack([np.sin(g / e) for e in (0.1, 0.2)])
    replay = kf.add_scrub(kf.fit_figure(kf.Points(g, np.cos(g), g), [curve]), curve,
                          Path(g, (0.1, 0.2), means, np.full_like(means, 0.1)), active=0, titles=["a", "b"])
    for fig in (two_panels(), replay):
        spec = kf.themed_spec(fig, "dark", selectable=True)
        sent = return_figure_from_figure_or_data(kf.Sent(spec), validate_figure=True)
        assert sent is spec  # not copied
        via_figure = return_figure_from_figure_or_data(kf.themed(fig, "dark", selectable=True), True)
        as_json = [json.loads(pio.to_json(f, validate=False)) for f in (sent, via_figure)]
        assert as_json[0] == as_json[1]
    assert "bdata" in json.dumps(spec["frames"][0]["data"][0]["y"])  # a replay's frames stay binary
