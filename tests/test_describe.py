"""A chart's text alternative (kernelviz/app/figures/describe.py, passed to st.plotly_chart as ``alt``) says
what the chart shows from the figure's own numbers: tested against closed forms, and on chapter 1 against
the backend's fit, before and after a move of ℓ."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest
from test_app import CHAPTERS, KR, ok, start

import kernelviz as kv
from kernelviz.app import figures as kf


def test_a_curve_says_its_range_and_its_peak():
    x = np.linspace(-3.0, 3.0, 61)
    fig = go.Figure(go.Scatter(x=x, y=np.exp(-(x - 1.0) ** 2), name="bump", mode="lines"))
    fig.update_layout(title="A bump")
    text = kf.describe(fig)
    assert text.name == "A bump"
    assert "bump: from x = -3 to 3, y between 1.13e-07 and 1 (highest at x = 1)" in text.summary


def test_a_band_says_where_it_is_widest():
    x = np.linspace(0.0, 1.0, 11)
    half = 0.1 + x * (1.0 - x)  # widest, 0.35, at x = 0.5
    fig = go.Figure(kf.band_trace(x, np.sin(x) - half, np.sin(x) + half, "band", "#0072B2"))
    assert "band: widest, ±0.35, near x = 0.5" in kf.describe(fig).summary


def test_a_heatmap_says_its_size_and_its_largest_cell():
    z = np.zeros((3, 4))
    z[2, 1] = 0.8
    fig = go.Figure(go.Heatmap(z=z, x=[10, 20, 30, 40], y=[-1, 0, 1], name="weights"))
    assert "weights: 3 rows by 4 columns; largest 0.8 at row 1, column 20" in kf.describe(fig).summary


def _triangle_weights() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights of a triangular kernel of half-width 4 on keys 0…19, one row per query 0…19."""
    keys = np.arange(20.0)
    w = np.clip(1.0 - np.abs(keys[:, None] - keys[None, :]) / 4.0, 0.0, None)
    return w / w.sum(axis=1, keepdims=True), keys, keys


def test_a_row_of_weights_says_how_few_keys_hold_most_of_it():
    # row x = 10: weights ¼, ½, ¾, 1, ¾, ½, ¼ (÷ 4) on keys 7…13; the largest five (1, ¾, ¾, ½, ½) hold
    # 87.5 % and the largest three 62.5 %, so five keys, 8 to 12, are the fewest that hold 80 %
    w, q, k = _triangle_weights()
    summary = kf.describe(kf.heatmap_figure(w, q, k)).summary
    assert "attention weights: 20 queries by 20 keys; row x = 10: 80% of its weight on 5 of the 20 keys, " \
           "from 8 to 12." in summary


def test_the_row_described_is_the_one_x_star_marks():
    w, q, k = _triangle_weights()
    summary = kf.describe(kf.mark_row(kf.heatmap_figure(w, q, k), 1, q)).summary
    # row x = 1: weights ¾, 1, ¾, ½, ¼ (÷ 3.25) on keys 0…4; the largest three hold 77 %, four 92 %
    assert "row x = 1: 80% of its weight on 4 of the 20 keys, from 0 to 3" in summary


def test_each_head_and_each_panel_is_described_by_its_name():
    w, q, k = _triangle_weights()
    sharp = np.eye(20)
    heads = kf.describe(kf.head_heatmaps_figure(np.stack([w, sharp]), q, k, ["wide", "sharp"])).summary
    assert "wide: 20 queries by 20 keys; row x = 10: 80% of its weight on 5" in heads
    assert "sharp: 20 queries by 20 keys; row x = 10: 80% of its weight on 1 of the 20 keys, from 10 to 10" \
        in heads
    pair = kf.describe(kf.heatmap_pair_figure(np.stack([w, sharp]), q, k, ("before", "after"))).summary
    assert "before: 20 queries" in pair and "after: 20 queries" in pair


def test_an_empty_row_of_weights_says_so():
    w, q, k = _triangle_weights()
    w[10] = 0.0
    summary = kf.describe(kf.heatmap_figure(w, q, k)).summary
    assert "row x = 10 has no weight (no key in its window)" in summary


def test_bars_points_and_a_repeated_name_are_said_once_each():
    fig = go.Figure([go.Bar(x=["head 1", "head 2"], y=[1.09, -0.36], name="u"),
                     go.Scatter(x=[0.0, 1.0, 2.0], y=[3.0, 1.0, 2.0], mode="markers", name="data"),
                     go.Scatter(x=[0.0, 1.0, 2.0], y=[9.0, 9.0, 9.0], mode="markers", name="data"),
                     go.Scatter(x=[0.5], y=[0.25], mode="markers", name="optimum")])
    summary = kf.describe(fig, fallback="Mixing").alt
    assert summary.startswith("Mixing. u: head 1 1.09, head 2 -0.36. data: 3 points, y from 1 to 3.")
    assert summary.count("data:") == 1 and "optimum: at x = 0.5, y = 0.25" in summary


def _fit_alt(at) -> str:
    (alt,) = [c.proto.alt for c in at.get("plotly_chart") if "kernel regression m(x)" in c.proto.alt]
    return alt


def _fit_range(alt: str) -> tuple[float, float]:
    found = re.search(r"kernel regression m\(x\): from x = \S+ to \S+, y between (\S+) and (\S+) ", alt)
    return float(found.group(1)), float(found.group(2))


@pytest.mark.parametrize("ell", ["0.178", "0.562"])
def test_chapter_1s_fit_is_described_by_the_backends_numbers(ell):
    at = start(KR, {"kr.lengthscale": ell})
    ok(at)
    ds = at.session_state["kv._data"].ds
    mean = kv.nadaraya_watson(ds.grid(256), ds.x, ds.y, float(ell), "gaussian").mean
    low, high = _fit_range(_fit_alt(at))
    assert (low, high) == (float(f"{mean.min():.3g}"), float(f"{mean.max():.3g}"))
    assert f"ℓ = {ell}" in _fit_alt(at)


def test_moving_the_lengthscale_changes_the_description():
    at = start(KR)
    before = _fit_alt(at)
    at.select_slider(key="kr.lengthscale").set_value(0.562).run()
    ok(at)
    assert _fit_alt(at) != before and "ℓ = 0.562" in _fit_alt(at)


def test_every_chart_on_every_page_has_a_text_alternative():
    for page in [*CHAPTERS, "chapters/6_sources.py"]:
        at = start(page)
        charts = at.get("plotly_chart")
        assert charts and all(len(c.proto.alt) > 20 for c in charts), page


def test_the_numbers_switch_puts_each_charts_numbers_under_it():
    at = start(KR)
    assert not any(c.value.startswith("The numbers of the chart above") for c in at.caption)
    at.toggle(key="a11y.numbers").set_value(True).run()
    ok(at)
    captions = [c.value for c in at.caption if c.value.startswith("The numbers of the chart above")]
    assert "The numbers of the chart above: curves" in captions
    ds = at.session_state["kv._data"].ds
    mean = kv.nadaraya_watson(ds.grid(256), ds.x, ds.y, 0.178, "gaussian").mean
    table = next(m.value for m in at.markdown if m.value.startswith("| x |") and "regression m" in m.value)
    first_row = table.splitlines()[2].split("|")
    header = [h.strip().replace("\\", "") for h in table.splitlines()[0].split("|")]
    assert float(first_row[header.index("kernel regression m(x)")]) == float(f"{mean[0]:.3g}")


def test_a_tables_rows_are_spread_over_the_chart():
    x = np.linspace(0.0, 1.0, 256)
    fig = go.Figure([go.Scatter(x=x, y=x**2, name="a", mode="lines"), go.Scatter(x=x, y=x, name="b")])
    ((caption, table),) = kf.chart_tables(fig)
    assert caption == "curves" and list(table) == ["x", "a", "b"] and len(table["x"]) == 25
    assert (table["x"][0], table["x"][-1], table["a"][-1], table["b"][12]) == (0.0, 1.0, 1.0, 0.502)


def test_a_band_beside_the_true_mean_says_how_much_of_the_truth_it_holds():
    x = np.linspace(0.0, 1.0, 101)
    truth = np.where(x < 0.8, 0.0, 1.0)  # inside the band [-0.5, 0.5] below x = 0.8: 80 of 101 points
    fig = go.Figure([kf.band_trace(x, x * 0 - 0.5, x * 0 + 0.5, "estimated band", "#0072B2"),
                     go.Scatter(x=x, y=truth, name="true mean f(x)", mode="lines")])
    assert "the true mean lies inside estimated band at 79% of its x" in kf.describe(fig).summary
