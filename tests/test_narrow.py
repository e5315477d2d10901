"""Charts laid out for a phone (``kf.themed(..., phone=True)``, ``kernelviz/app/figures/narrow.py``): grids
in fewer columns, titles wrapped, one x title under a row, thin colour bars, a legend under the plot clear of
the x title; the figure stays valid and the one given is left as it was. The browser test
``tests/browser/test_phone_charts.py`` checks the drawn result on every page."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from kernelviz.app import figures as kf
from kernelviz.app.figures import narrow

RNG = np.random.default_rng(0)
QUERIES = np.linspace(-3, 3, 12)
KEYS = np.linspace(-3, 3, 20)


def heads(h: int) -> go.Figure:
    weights = RNG.uniform(size=(h, QUERIES.size, KEYS.size))
    return kf.head_heatmaps_figure(weights, QUERIES, KEYS, [f"head {k + 1}: ℓ = {0.1 * (k + 1):.3f}"
                                                            for k in range(h)])


def panels(layout: dict) -> list[tuple[str, str]]:
    return narrow._panels(layout)


def titles(layout: dict) -> list[dict]:
    return [a for a in layout.get("annotations", []) if narrow._is_title(a)]


def phone(fig: go.Figure) -> go.Figure:
    """``fig`` as the app sends it to a phone."""
    return kf.themed(fig, "light", phone=True)


def valid(fig: go.Figure) -> dict:
    """The figure's layout, after Plotly's own validation of the whole figure."""
    return go.Figure(fig.to_dict()).layout.to_plotly_json()


@pytest.mark.parametrize("h, rows", [(4, 2), (3, 2), (8, 4)])
def test_a_grid_of_heads_becomes_two_columns(h: int, rows: int) -> None:
    fig = heads(h)
    before = json.dumps(fig.to_plotly_json(), sort_keys=True, default=str)
    sent = phone(fig)
    out = valid(sent)
    assert json.dumps(fig.to_plotly_json(), sort_keys=True, default=str) == before  # the input is kept
    assert isinstance(sent.to_plotly_json()["data"][0]["z"], list)  # numbers still as short decimals
    grid = panels(out)
    assert len(grid) == h
    assert len({tuple(out[x]["domain"]) for x, _ in grid}) == 2
    assert len({tuple(out[y]["domain"]) for _, y in grid}) == rows
    assert out["height"] > fig.layout.height
    for k, (x, y) in enumerate(grid):
        left = k % 2 == 0
        bottom = out[y]["domain"][0] == min(out[yy]["domain"][0] for _, yy in grid)
        assert out[y]["showticklabels"] is left
        assert bool(out[y]["title"]["text"]) is left
        assert not out[x].get("title", {}).get("text") or bottom  # x titles under the bottom row only
        title = narrow._title_of(out, x, y)  # each title still over its own panel, in the head's colour
        assert title is not None and title["font"]["color"] == kf.head_color(k)
    under = [out[x]["title"]["text"] for x, _ in grid if out[x].get("title", {}).get("text")]
    once = [a["text"] for a in out.get("annotations", []) if not narrow._is_title(a)]
    assert under + once and set(under + once) == {"sorted keys xᵢ"}
    for (x, _), (x2, _) in zip(grid[::2], grid[1::2], strict=False):
        assert out[x]["domain"][1] < out[x2]["domain"][0]  # the two columns do not overlap


def test_two_panels_that_fit_are_left_alone() -> None:
    fig = heads(2)
    out = phone(fig).layout.to_plotly_json()
    assert [out[x]["domain"] for x, _ in panels(out)] == [list(fig.layout[x].domain) for x, _ in panels(out)]


def test_wide_titles_wrap_and_the_top_margin_makes_room() -> None:
    curve = np.sin(np.linspace(-3, 3, 50))
    points = kf.Points(np.linspace(-3, 3, 30), np.zeros(30), np.linspace(-3, 3, 50), curve)
    names = ["post ℓ = 3 → our ℓ = 2.12", "post ℓ = 0.5 → our ℓ = 0.354", "post ℓ = 0.25 → our ℓ = 0.177",
             "post ℓ = 0.05 → our ℓ = 0.0354"]
    fig = kf.small_multiples_figure(points, [(n, curve) for n in names])
    out = valid(phone(fig))
    wrapped = [t["text"] for t in titles(out)]
    assert wrapped == [n.replace("→ ", "→<br>") for n in names]
    assert all(t["font"]["size"] == narrow.TITLE_SIZE for t in titles(out))
    assert out["margin"]["t"] == fig.layout.margin.t + narrow.LINE_PX
    assert out["legend"]["y"] > fig.layout.legend.y  # the legend above the plot moved up with the titles


def test_split_breaks_where_the_longer_part_is_shortest() -> None:
    assert narrow._split("head 1: (W_v U)_y = +0.42") == "head 1:<br>(W_v U)_y = +0.42"
    assert narrow._split("Hold-out=120, ℓ_post=0.30 (softmax: 0.35)") == \
        "Hold-out=120, ℓ_post=0.30<br>(softmax: 0.35)"
    assert narrow._split("nothing to break") == "nothing to break"
    long_second = "self-attention<br>queries = the data points xⱼ"
    assert narrow._wrapped(long_second, 100) == "self-attention<br>queries =<br>the data points xⱼ"


def test_a_pair_of_heatmaps_beside_a_colour_bar_stacks_with_a_thin_bar() -> None:
    weights = RNG.uniform(size=(2, QUERIES.size, KEYS.size))
    names = ("Gaussian kernel<br>ℓ = 0.261", "attention head<br>softmax(q·k/√2)")
    fig = kf.heatmap_pair_figure(weights, QUERIES, KEYS, names)
    out = valid(phone(fig))
    assert out["coloraxis"]["colorbar"]["thickness"] == narrow.PHONE_COLORBAR["thickness"]
    assert out["margin"]["r"] == narrow.PHONE_COLORBAR_MARGIN
    (top, _), (bottom, _) = panels(out)
    assert out[top]["domain"] == out[bottom]["domain"] == [0.0, 1.0]  # one column, each panel full width
    assert out[panels(out)[1][1]]["domain"][1] < out[panels(out)[0][1]]["domain"][0]
    assert [out[x]["title"]["text"] for x in (top, bottom)] == ["", "keys xᵢ (sorted)"]
    assert out["height"] > fig.layout.height
    assert [t["text"] for t in titles(out)] == list(names)  # each fits its panel as it was


def test_a_legend_under_a_fit_moves_clear_of_the_x_title() -> None:
    grid = np.linspace(-3, 3, 50)
    points = kf.Points(grid, np.sin(grid), grid, np.sin(grid))
    curves = [kf.Curve(f"a curve with a long name, number {k}", np.cos(grid) * k, kf.head_color(k))
              for k in range(4)]
    fig = kf.fit_figure(points, curves, look=kf.Look(title="A fit"))
    out = valid(phone(fig))
    rows = narrow._legend_rows([t.name for t in fig.data if t.name and t.showlegend is not False],
                               narrow.PHONE_PX - out["margin"]["l"])
    assert rows >= 4  # on a phone every long entry takes a row of its own
    assert out["margin"]["b"] >= kf.styling.LEGEND_DROP + rows * kf.styling.LEGEND_ROW_PX
    plot_h = out["height"] - out["margin"]["t"] - out["margin"]["b"]
    assert -out["legend"]["y"] * plot_h == pytest.approx(kf.styling.LEGEND_DROP + narrow.LEGEND_GAP_PX)
    assert out.get("annotations", []) == []  # a figure of one panel: no title moved, none added


def test_a_legend_under_a_replays_controls_stays_where_they_put_it() -> None:
    grid = np.linspace(-3, 3, 50)
    points = kf.Points(grid, np.sin(grid), grid, np.sin(grid))
    fig = kf.fit_figure(points, look=kf.Look(title="A replay"))
    fig.update_layout(updatemenus=[{"type": "buttons", "buttons": [{"label": "Play", "method": "animate"}]}])
    out = valid(phone(fig))
    assert out["legend"]["y"] == fig.layout.legend.y and out["margin"]["b"] == fig.layout.margin.b
