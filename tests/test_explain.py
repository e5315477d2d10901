"""Click to explain (chapter 1): the numbers of the formula panel, the marks on the fit and the heatmap, and
the selection as a control (URL, reload, clearing)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from pagetools import markdown_tables, numbers
from test_app import KR, charts, ok, page_texts, start, values

import kernelviz as kv
from kernelviz.app import figures as kf
from kernelviz.app.views import explain

X = np.array([0.0, 0.4, 1.0, 1.3, 2.0, 2.2, 3.1, 4.0, 4.4, 5.0])
Y = np.array([1.0, 0.5, -0.2, 0.3, 1.7, 1.1, -0.8, 0.0, 2.0, 0.9])


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov", "cauchy"])
@pytest.mark.parametrize("x_star", [0.0, 1.7, 4.9])
def test_the_panels_numbers_are_nadaraya_watsons_own(kernel, x_star):
    pw = explain.point_weights(X, Y, x_star, 0.8, kernel)
    ref = kv.nadaraya_watson(np.array([x_star]), X, Y, 0.8, kernel, with_weights=True)
    np.testing.assert_allclose(pw.weights, ref.weights[0], rtol=0, atol=1e-15)
    assert pw.mean == pytest.approx(ref.mean[0], abs=1e-15) and pw.std == pytest.approx(ref.std[0], abs=1e-15)
    # the largest weights, largest first; the rest summed; together the whole sum
    assert list(pw.top) == list(np.argsort(-ref.weights[0], kind="stable")[: len(pw.top)])
    assert len(pw.top) == min(explain.TOP_WEIGHTS, int(np.sum(ref.weights[0] > 0)))
    top = float(np.sum(pw.weights[pw.top] * Y[pw.top]))
    assert top + pw.rest_sum == pytest.approx(pw.mean, abs=1e-12)
    assert float(np.sum(pw.weights[pw.top])) + pw.rest_weight == pytest.approx(1.0, abs=1e-12)


def test_the_total_is_the_fits_value_at_x_star():
    grid = np.linspace(0.0, 5.0, 256)
    fit = kv.nadaraya_watson(grid, X, Y, 0.5, "gaussian", with_weights=False)
    for k in (0, 77, 200):
        pw = explain.point_weights(X, Y, grid[k], 0.5, "gaussian")
        table = explain.weights_table(pw, X, Y)
        assert table["wᵢ(x*) · yᵢ"][-1] == pytest.approx(fit.mean[k], abs=1e-12)
        assert table["wᵢ(x*)"][-1] == pytest.approx(1.0, abs=1e-12)
        assert len(table[""]) == explain.TOP_WEIGHTS + 2  # the largest, the others, all


def test_an_empty_window_has_no_terms():
    pw = explain.point_weights(X, Y, 3.6, 0.1, "boxcar")
    assert pw.empty and pw.top.size == 0 and np.isnan(pw.mean)


def test_the_highlighted_row_is_the_one_nearest_x_star():
    q = np.linspace(-1.0, 1.0, 41)  # rows 0.05 apart
    for x_star, row in ((-1.0, 0), (0.26, 25), (0.024, 20), (0.9999, 40)):
        assert explain.nearest_row(q, x_star) == row
        fig = kf.mark_row(go.Figure(), row, q)
        rect = fig.layout.shapes[-1]
        assert rect.y0 < q[row] < rect.y1
        assert not any(rect.y0 < v < rect.y1 for i, v in enumerate(q) if i != row)


def test_the_weights_markers_have_areas_proportional_to_the_weights():
    pw = explain.point_weights(X, Y, 2.1, 0.6, "gaussian")
    fig = kf.mark_point(go.Figure(), pw.x, pw.mean, X, Y, pw.weights)
    go.Figure(fig.to_dict())  # valid Plotly
    weights = fig.data[0]
    sizes, w = np.asarray(weights.marker.size), np.asarray(weights.customdata)
    np.testing.assert_allclose(sizes**2 / sizes.max() ** 2, w / w.max(), rtol=1e-12)
    assert fig.data[1].x == (pw.x,) and fig.data[1].y == (pw.mean,)
    assert fig.layout.shapes[-1].x0 == pw.x


def test_a_selection_in_the_url_draws_the_panel_and_survives_a_reload():
    query = {"kr.explain": "true", "kr.x": "1.5"}
    for _ in range(2):  # the link opened twice: a reload is a new session at the same URL
        at = start(KR, query)
        assert at.toggle(key="kr.explain").value is True and at.number_input(key="kr.x").value == 1.5
        tables = [t for t in (markdown_tables(m.value) for m in at.markdown) for t in t if "wᵢ(x*)" in t]
        assert len(tables) == 1, "one weights table"
        total = numbers(tables[0]["wᵢ(x*) · yᵢ"])[-1]
        spec = charts(at)
        ring = next(t for t in spec["kr.fit"]["data"] if t.get("name", "").startswith("m(x*)"))
        assert values(ring["x"])[0] == 1.5 and values(ring["y"])[0] == pytest.approx(total, rel=5e-4)
        rect = spec["kr.heatmap"]["layout"]["shapes"][-1]
        assert rect["y0"] < 1.5 < rect["y1"]
        assert any("Why the fit is where it is" in t for t in page_texts(at))


def test_turning_the_toggle_off_clears_the_marks():
    at = start(KR, {"kr.explain": "true", "kr.x": "-2"})
    at.toggle(key="kr.explain").set_value(False).run()
    ok(at)
    spec = charts(at)
    assert not any(t.get("name", "").startswith("weights") for t in spec["kr.fit"]["data"])
    assert not spec["kr.heatmap"]["layout"].get("shapes")
    assert not any("Why the fit is where it is" in t for t in page_texts(at))
    assert at.query_params["kr.explain"] in (["false"], "false")


def test_junk_and_out_of_range_x_star_are_clamped():
    at = start(KR, {"kr.explain": "yes", "kr.x": "1e9"})
    x = at.number_input(key="kr.x")
    assert x.value == x.max and at.toggle(key="kr.explain").value is True
    at = start(KR, {"kr.explain": "true", "kr.x": "not a number"})
    ok(at)
