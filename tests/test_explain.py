"""Click to explain (chapter 1): the numbers of the formula panel, the marks on the fit and the heatmap, and
the selection as a control (URL, reload, clearing)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from pagetools import markdown_tables, numbers
from test_app import KR, MASKED, charts, ok, page_texts, start, values

import kernelviz as kv
from kernelviz.app import figures as kf
from kernelviz.app.views import explain
from kernelviz.app.views.training import MaskedSettings

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


# --- chapter 2: replaying training ------------------------------------------------------------------------


def test_the_replay_is_the_recorded_training_and_ends_at_the_learned_l():
    from kernelviz.app.ui.caching import cache
    from kernelviz.app.ui.caching import scrub as cache_scrub
    from kernelviz.app.ui.widgets.sidebar import make_data

    data = make_data(("blog", 150, 2024), kv.make_dataset("blog", n=150, seed=2024))
    run = cache.fit(data, MaskedSettings("gaussian", 10, 100, 0.2, 2024))
    replay = cache_scrub.training_path(data, "gaussian", 10, 100, 0.2, 2024)
    assert replay.steps[0] == 0 and replay.steps[-1] == run.steps_run == 100
    assert len(replay.steps) == cache_scrub.TRAINING_FRAMES
    assert replay.lengthscales[-1] == run.lengthscales[0]  # the last frame is the trained ℓ
    np.testing.assert_array_equal(replay.lengthscales, run.trajectory[list(replay.steps), 0])
    for k in (0, 17, -1):
        ref = kv.nadaraya_watson(replay.grid, data.ds.x, data.ds.y, replay.lengthscales[k], "gaussian",
                                 with_weights=False)
        np.testing.assert_allclose(replay.means[k], ref.mean, rtol=1e-5, atol=1e-6)  # sent as float32
    assert cache_scrub.training_path(data, "boxcar", 10, 100, 0.2, 2024) is None  # a search: no steps


def test_the_replays_frames_are_labelled_by_step_and_start_at_the_end():
    grid = np.linspace(0.0, 5.0, 20)
    ells = [2.0, 1.0, 1.0, 0.5]  # a plateau: two steps with the same ℓ still make two frames
    means = np.vstack([kv.nadaraya_watson(grid, X, Y, e, "gaussian", with_weights=False).mean for e in ells])
    curve = kf.Curve("fit", means[-1], kf.COLORS["fit"], std=np.ones(20), band_name="band")
    fig = kf.fit_figure(kf.Points(X, Y, grid), [curve])
    fig = kf.add_training_scrub(fig, curve, [0, 1, 2, 3], ells, means)
    go.Figure(fig.to_dict())
    slider = fig.layout.sliders[0]
    assert [s.label for s in slider.steps] == ["0", "1", "2", "3"] and slider.active == 3
    assert len({f.name for f in fig.frames}) == 4
    assert fig.frames[-1].layout.title.text == "After 3 steps: ℓ = 0.5"
    still = fig.data[2]  # the last frame is the still chart itself: its line and its band
    np.testing.assert_allclose(fig.frames[-1].data[0].y, still.y, rtol=1e-6)  # float32, as it is sent
    assert len(fig.frames[-1].data[1].x) > 0 and all(len(f.data[1].x) == 0 for f in fig.frames[:-1])
    np.testing.assert_allclose(fig.frames[1].data[0].y, means[1], rtol=1e-6, atol=1e-6)


def test_the_replay_is_sent_only_when_asked_for():
    at = start(MASKED)
    assert not charts(at)["masked.fit"].get("frames")  # off by default: a hold-out move sends no frames
    at.toggle(key="masked.replay").set_value(True).run()
    ok(at)
    spec = charts(at)["masked.fit"]
    assert len(spec["frames"]) == 50 and spec["layout"]["sliders"][0]["steps"][-1]["label"] == "100"
    assert at.query_params["masked.replay"] in (["true"], "true")


def test_an_empty_window_says_so_instead_of_a_sum():
    xs = np.sort(kv.make_dataset("blog", n=150, seed=2024).x)
    gap = int(np.argmax(np.diff(xs)))  # x* in the middle of the widest gap, the window as small as it goes
    middle = round(float(xs[gap] + xs[gap + 1]) / 2, 2)
    at = start(KR, {"kr.explain": "true", "kr.x": str(middle), "kr.kernel": "boxcar",
                    "kr.lengthscale": "1e-9"})
    ell = at.select_slider(key="kr.lengthscale").value
    assert np.min(np.abs(xs - at.number_input(key="kr.x").value)) > ell
    texts = " ".join(page_texts(at)) + " ".join(i.value for i in at.info)
    assert "No data point lies in the" in texts and "every weight is 0" in texts
    spec = charts(at)["kr.fit"]
    assert not any(t.get("name", "").startswith("m(x*)") for t in spec["data"])  # no value to ring


@pytest.mark.parametrize("query", [{"data.source": "d2l"}, {"data.n": "10"}, {"data.n": "2000"}])
def test_x_star_follows_the_data_sets_range(query):
    at = start(KR, {"kr.explain": "true", "kr.x": "2.9", **query})
    x = at.number_input(key="kr.x")
    assert x.min <= x.value <= x.max
    tables = [t for m in at.markdown for t in markdown_tables(m.value) if "wᵢ(x*)" in t]
    assert len(tables) == 1 and numbers(tables[0]["wᵢ(x*)"])[-1] == pytest.approx(1.0, abs=1e-3)


# --- chapter 3: the heads at x* ---------------------------------------------------------------------------


def test_the_heads_numbers_are_predict_heads_own():
    ells, mix = (0.3, 1.2, 4.0), (0.9, 0.4, -0.2)
    hp = explain.heads_point(X, Y, 2.2, ells, mix, "gaussian")
    ref = kv.predict_heads(np.array([2.2]), X, Y, ells, mix, "gaussian", with_weights=True)
    np.testing.assert_allclose(hp.head_means, ref.head_means[:, 0], atol=1e-15)
    assert hp.mean == pytest.approx(ref.mean[0], abs=1e-15)
    assert float(np.sum(hp.mixing * hp.head_means)) == pytest.approx(hp.mean, abs=1e-12)  # the sum
    np.testing.assert_allclose(hp.points, 1.0 / np.sum(ref.weights[:, 0, :] ** 2, axis=1), rtol=1e-12)
    assert hp.points[0] < hp.points[1] < hp.points[2] <= len(X)  # a wider head averages more points
    table = explain.heads_table(hp, ["a", "b", "c"])
    assert table["uₕ · mₕ(x*)"][-1] == hp.mean and table["uₕ"][-1] == pytest.approx(sum(mix))


def test_chapter_3_marks_x_star_on_the_fit_and_every_heads_heatmap():
    at = start("chapters/3_multihead.py", {"mh.explain": "true", "mh.x": "-1", "mh.heads": "3",
                                        "mh.picture": "weights"})
    spec = charts(at)
    ring = next(t for t in spec["mh.fit"]["data"] if t.get("name") == "f̂(x*)")
    table = next(t for m in at.markdown for t in markdown_tables(m.value) if "uₕ · mₕ(x*)" in t)
    assert values(ring["y"])[0] == pytest.approx(numbers(table["uₕ · mₕ(x*)"])[-1], rel=5e-4)
    assert sum(1 for t in spec["mh.fit"]["data"] if t.get("name", "").endswith(" at x*")) == 3
    rows = [s for s in spec["mh.heatmaps"]["layout"]["shapes"] if s["type"] == "rect"]
    assert len(rows) == 3 and all(r["y0"] < -1 < r["y1"] for r in rows)


def test_chapter_2_explains_the_fit_with_the_learned_lengthscale():
    at = start(MASKED, {"masked.explain": "true", "masked.x": "-1.5"})
    learned = float(next(m.value for m in at.metric if m.label == "Learned ℓ"))
    table = next(t for m in at.markdown for t in markdown_tables(m.value) if "wᵢ(x*)" in t)
    data = kv.make_dataset("blog", n=150, seed=2024)
    pw = explain.point_weights(data.x, data.y, -1.5, learned, "gaussian")
    assert numbers(table["wᵢ(x*) · yᵢ"])[-1] == pytest.approx(pw.mean, rel=1e-3)  # ℓ shown to 4 digits
    assert any(t.get("name", "").startswith("weights") for t in charts(at)["masked.fit"]["data"])
