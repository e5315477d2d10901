"""The Plotly builders: traces, axis titles, colours per role, NaN drawn as gaps, shapes; no browser
needed."""

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from kernelviz.app import figures as kf
from kernelviz.app.figures import styling
from kernelviz.app.figures.numbers import compact
from kernelviz.app.ui.caching.scrub import Path


def _names(fig: go.Figure) -> list[str]:
    return [t.name for t in fig.data]


def _trace(fig: go.Figure, name: str):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, f"expected one trace called {name!r}, got {_names(fig)}"
    return matches[0]


def _none_split(values) -> list[list]:
    """Split a None-separated list into its pieces."""
    pieces, cur = [], []
    for v in values:
        if v is None:
            pieces.append(cur)
            cur = []
        else:
            cur.append(v)
    pieces.append(cur)
    return pieces


def test_rgba_converts_hex():
    assert kf.rgba("#0072B2", 0.5) == "rgba(0, 114, 178, 0.5)"
    assert kf.rgba("ffffff", 1) == "rgba(255, 255, 255, 1)"


def test_png_config_names_the_download():
    cfg = kf.png_config("kernelviz-fit")
    assert cfg["toImageButtonOptions"] == {"format": "png", "filename": "kernelviz-fit", "scale": 2}
    assert cfg["displaylogo"] is False


def test_band_polygon_without_gaps_is_one_closed_ring():
    x = np.array([0.0, 1.0, 2.0])
    px, py = kf.band_polygon(x, x - 1, x + 1)
    assert None not in px
    # upper edge left→right, lower edge right→left, back to the first upper point
    assert px == [0.0, 1.0, 2.0, 2.0, 1.0, 0.0, 0.0]
    assert py == [1.0, 2.0, 3.0, 1.0, 0.0, -1.0, 1.0]


def test_band_polygon_splits_at_nan_into_separate_rings():
    x = np.arange(7.0)
    lo = np.array([0, 0, np.nan, np.nan, 0, 0, 0], dtype=float)
    hi = lo + 1
    px, py = kf.band_polygon(x, lo, hi)
    pieces = _none_split(px)
    assert len(pieces) == 2
    assert pieces[0] == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert pieces[1] == [4.0, 5.0, 6.0, 6.0, 5.0, 4.0, 4.0]
    assert all(v is None or np.isfinite(v) for v in py)


def test_band_polygon_all_nan_is_empty():
    assert kf.band_polygon([0, 1], [np.nan, np.nan], [1, 1]) == ([], [])


def test_fit_figure_traces_colours_and_axes():
    x = np.linspace(0, 1, 20)
    g = np.linspace(0, 1, 50)
    mean = np.sin(g)
    fig = kf.fit_figure(
        kf.Points(x, np.cos(x), g, truth=np.sin(g), noise_sd=np.full(50, 0.2)),
        [kf.Curve("fit m(x)", mean, kf.COLORS["fit"], std=np.full(50, 0.1), band_name="m ± 2s")],
        look=kf.Look(x_title="time", y_title="signal"),
    )
    assert _names(fig) == ["true band f(x) ± 2n(x)", "m ± 2s", "data (xᵢ, yᵢ)", "true mean f(x)", "fit m(x)"]
    assert fig.layout.xaxis.title.text == "time"
    assert fig.layout.yaxis.title.text == "signal"
    assert _trace(fig, "fit m(x)").line.color == kf.COLORS["fit"]
    assert _trace(fig, "true mean f(x)").line.color == kf.COLORS["truth"]
    band = _trace(fig, "m ± 2s")
    assert band.fill == "toself"
    assert band.fillcolor == kf.rgba(kf.COLORS["fit"], kf.BAND_ALPHA)
    # the true band is f ± 2n: the first ring point is f(g0) + 2·0.2
    truth_band = _trace(fig, "true band f(x) ± 2n(x)")
    assert truth_band.y[0] == pytest.approx(np.sin(g[0]) + 0.4)
    assert all(t.hovertemplate or t.hoverinfo == "skip" for t in fig.data)


def test_fit_figure_nan_is_a_gap_not_a_line():
    g = np.linspace(0, 1, 10)
    mean = np.where((g > 0.3) & (g < 0.6), np.nan, g)
    curve = kf.Curve("fit", mean, "#000000", std=np.full(10, 0.1))
    fig = kf.fit_figure(kf.Points([0.0, 1.0], [0.0, 1.0], g), [curve])
    line = _trace(fig, "fit")
    assert line.connectgaps is False
    assert np.isnan(np.asarray(line.y, dtype=float)).sum() == np.isnan(mean).sum()
    band = _trace(fig, "fit ± 2s(x)")
    assert len(_none_split(band.x)) == 2  # one ring on each side of the gap
    # the figure serialises (NaN becomes null, which Plotly leaves undrawn)
    json.loads(fig.to_json())


def test_fit_figure_without_truth_has_no_truth_traces():
    curve = kf.Curve("fit", np.ones(3), kf.COLORS["fit"])
    fig = kf.fit_figure(kf.Points([0, 1, 2], [1, 2, 3], [0, 1, 2]), [curve])
    assert _names(fig) == ["data (xᵢ, yᵢ)", "fit"]


def test_data_trace_switches_to_webgl_for_large_data():
    assert isinstance(kf.data_trace(np.arange(100.0), np.arange(100.0)), go.Scatter)
    assert isinstance(kf.data_trace(np.arange(6000.0), np.arange(6000.0)), go.Scattergl)


def test_heatmap_figure_shape_orientation_and_titles():
    q = np.linspace(0, 1, 5)
    k = np.linspace(0, 1, 7)
    w = np.random.default_rng(0).random((5, 7))
    w /= w.sum(axis=1, keepdims=True)
    fig = kf.heatmap_figure(w, q, k, look=kf.Look(title="weights"))
    (hm,) = fig.data
    assert np.asarray(hm.z).shape == (5, 7)
    np.testing.assert_allclose(np.asarray(hm.z), w)
    np.testing.assert_allclose(hm.x, k)
    np.testing.assert_allclose(hm.y, q)
    assert fig.layout.yaxis.autorange == "reversed"  # first query on top, as in d2l
    assert "keys" in fig.layout.xaxis.title.text and "queries" in fig.layout.yaxis.title.text
    assert fig.layout.coloraxis.cmin == 0.0


def test_heatmap_figure_thins_large_matrices_keeping_exact_values():
    q = np.linspace(0, 1, 500)
    k = np.linspace(0, 1, 1000)
    w = np.outer(np.arange(500.0), np.ones(1000)) + np.arange(1000.0)[None, :] * 1e-3
    fig = kf.heatmap_figure(w, q, k, cells=(50, 100))
    z = np.asarray(fig.data[0].z)
    assert z.shape == (50, 100)
    rows = np.round(np.asarray(fig.data[0].y) * 499).astype(int)
    cols = np.round(np.asarray(fig.data[0].x) * 999).astype(int)
    assert rows[0] == 0 and rows[-1] == 499 and cols[0] == 0 and cols[-1] == 999
    np.testing.assert_allclose(z, w[np.ix_(rows, cols)])


def test_thin_heatmap_keeps_exactly_the_cells_the_builders_draw():
    rng = np.random.default_rng(0)
    q, k = np.linspace(-1, 1, 256), np.linspace(0, 3, 400)
    w = rng.random((3, 256, 400))
    shown, qs, ks = kf.thin_heatmap(w, q, k, 96, 160)
    assert shown.shape == (3, 96, 160) and qs.shape == (96,) and ks.shape == (160,)
    assert (qs[0], qs[-1], ks[0], ks[-1]) == (q[0], q[-1], k[0], k[-1])
    full = kf.head_heatmaps_figure(w, q, k, cells=(96, 160))
    thin = kf.head_heatmaps_figure(shown, qs, ks, cells=(96, 160))
    assert full.to_json() == thin.to_json()
    small, q2, k2 = kf.thin_heatmap(w[0, :10, :20], q[:10], k[:20], 96, 160)  # nothing to thin
    np.testing.assert_array_equal(q2, q[:10])
    np.testing.assert_array_equal(k2, k[:20])
    np.testing.assert_array_equal(small, w[0, :10, :20])
    with pytest.raises(ValueError):
        kf.thin_heatmap(w, q, k[:-1], 96, 160)


def test_heatmap_figure_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="shape"):
        kf.heatmap_figure(np.ones((3, 4)), np.arange(3.0), np.arange(5.0))


def test_heatmap_pair_shares_one_colour_scale():
    q, k = np.arange(3.0), np.arange(4.0)
    a = np.full((3, 4), 0.25)
    b = np.eye(3, 4)
    fig = kf.heatmap_pair_figure(np.stack([a, b]), q, k, ("before", "after"))
    assert len(fig.data) == 2
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    assert fig.layout.coloraxis.cmax == pytest.approx(1.0)
    assert [a.text for a in fig.layout.annotations] == ["before", "after"]


def test_kernel_shape_highlights_the_chosen_kernel():
    u = np.linspace(-2, 2, 41)
    shapes = {"Gaussian": np.exp(-(u**2) / 2), "Boxcar": (np.abs(u) <= 1).astype(float)}
    fig = kf.kernel_shape_figure(u, shapes, "Boxcar")
    assert _names(fig)[-1] == "Boxcar"  # drawn last, on top
    assert [t.name for t in fig.data if t.showlegend is not False] == ["other kernels", "Boxcar"]
    assert fig.data[0].hovertemplate.startswith("Gaussian<br>")  # each faint kernel is named in its hover
    assert _trace(fig, "Boxcar").line.color == kf.COLORS["fit"]
    assert fig.layout.xaxis.title.text.startswith("u = ")
    assert fig.layout.yaxis.title.text == "K(u)"
    with pytest.raises(ValueError):
        kf.kernel_shape_figure(u, shapes, "Cauchy")


def test_small_multiples_panels_and_single_legend_entries():
    g = np.linspace(0, 1, 11)
    panels = [(f"ℓ = {e}", np.sin(g / e)) for e in (1.0, 0.5, 0.25, 0.05)]
    fig = kf.small_multiples_figure(kf.Points([0.0, 1.0], [0.0, 1.0], g, truth=np.sin(g)), panels)
    assert [a.text for a in fig.layout.annotations] == [t for t, _ in panels]
    assert len(fig.data) == 4 * 3
    assert sum(bool(t.showlegend) for t in fig.data) == 3  # data, truth, fit once each
    assert fig.layout.xaxis3.title.text == "x" and fig.layout.yaxis.title.text == "y"


def test_small_multiples_draw_at_most_the_panel_budget_and_say_so():
    g = np.linspace(0, 1, 11)
    panels = [(f"ℓ = {e}", np.sin(g / e)) for e in (1.0, 0.5)]
    x = np.linspace(-3.0, 3.0, 1000)
    fig = kf.small_multiples_figure(kf.Points(x, x**2, g), panels, most_points=256)
    data = [t for t in fig.data if t.mode == "markers"]
    assert len(data) == 2 and all(t.name == "data (xᵢ, yᵢ): 256 of 1,000 drawn" for t in data)
    xs = np.asarray(data[0].x)
    assert xs.size == 256 and xs[0] == x[0] and xs[-1] == x[-1]  # the ends are kept
    gaps = np.diff(np.searchsorted(x, xs))
    assert gaps.min() >= 3 and gaps.max() <= 4  # evenly spread: every 3rd or 4th point
    np.testing.assert_array_equal(np.asarray(data[0].y), xs**2)  # each drawn y belongs to its x
    few = kf.small_multiples_figure(kf.Points(x[:200], x[:200], g), panels, most_points=256)
    assert [t.name for t in few.data if t.mode == "markers"] == ["data (xᵢ, yᵢ)"] * 2
    assert len(few.data[0].x) == 200


def test_running_mean_ignores_nan():
    v = np.array([1.0, 3.0, np.nan, 5.0])
    np.testing.assert_allclose(kf._running_mean(v, 2), [1.0, 2.0, 3.0, 5.0])
    assert np.isnan(kf._running_mean(np.array([np.nan, np.nan]), 3)).all()


def test_loss_figure_log_axis_and_running_mean():
    losses = np.array([4.0, 2.0, 0.0, 1.0])  # a zero cannot sit on a log axis: it becomes a gap
    fig = kf.loss_figure(losses, window=2)
    raw, mean = fig.data
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "training step"
    assert np.isnan(raw.y[2])
    np.testing.assert_allclose(mean.y, [4.0, 3.0, 2.0, 1.0])
    for trace in fig.data:  # steps 1, 2, … sent as a start and a step, not as an array
        assert trace.x is None and (trace.x0, trace.dx) == (1, 1)


@pytest.mark.parametrize(("low", "longest"), [(0.012, "0.02"), (0.0058, "0.005"), (3e-4, "10⁻³")])
def test_loss_figure_left_margin_holds_its_longest_label(low: float, longest: str) -> None:
    fig = kf.loss_figure(np.geomspace(0.4, low, 50), window=5)
    y = fig.layout.yaxis
    lo, hi = (10.0**r for r in y.range)
    shown = [t for t, v in zip(y.ticktext, y.tickvals, strict=True) if lo <= v <= hi]
    assert len(max(shown, key=len)) == len(longest) and longest in shown
    extra = styling.CHAR_PX * max(0, len(longest) - styling.LABEL_CHARS)
    assert fig.layout.margin.l == styling.MARGIN["l"] + extra


def test_loo_figure_marks_optimum_learned_and_path_with_inf_as_gap():
    ells = np.geomspace(0.01, 10, 30)
    cv = (np.log(ells) - np.log(0.3)) ** 2 + 1.0
    cv[:5] = np.inf
    fig = kf.loo_figure(
        ells,
        cv,
        optimum=0.3,
        path=kf.LooPath(np.array([1.0, 0.6, 0.35]), np.array([2.0, 1.3, 1.01]), learned=0.35,
                        learned_cv=1.01),
    )
    curve = fig.data[0]
    assert np.isnan(np.asarray(curve.y[:5], dtype=float)).all() and curve.connectgaps is False
    names = _names(fig)
    assert any(n.startswith("exact LOO optimum") for n in names)
    assert any(n.startswith("learned ℓ") for n in names)
    assert "training path (colour = step)" in names
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.shapes[0].x0 == 0.3  # the vertical line at ℓ*
    star = _trace(fig, "exact LOO optimum ℓ* = 0.3")
    assert star.y[0] == pytest.approx(1.0, abs=0.05)


def test_seeds_figure_one_box_per_group():
    fig = kf.seeds_figure({"hold-out 1": [0.1, 0.2, 0.05], "hold-out 10": [0.12, 0.13]}, optimum=0.11)
    assert _names(fig) == ["hold-out 1", "hold-out 10"]
    assert len(fig.data[0].y) == 3
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.shapes[0].y0 == 0.11
    label = fig.layout.annotations[0]  # the optimum's label sits on its line (log axis: log10 coordinates)
    assert label.y == pytest.approx(np.log10(0.11)) and "0.11" in label.text
    lo, hi = fig.layout.yaxis.range
    assert lo < np.log10(0.05) and np.log10(0.2) < hi < np.log10(0.3)  # the range follows the values


def test_thumbnail_hides_legend_and_shrinks():
    curve = kf.Curve("fit", np.ones(2), "#000000")
    fig = kf.thumbnail(kf.fit_figure(kf.Points([0, 1], [0, 1], [0, 1]), [curve]))
    assert fig.layout.height == 200 and fig.layout.showlegend is False
    assert fig.layout.xaxis.title.text == "x"


def test_a_look_takes_the_builders_defaults_only_where_it_gives_none():
    look = kf.Look(title="T", height=300).over(x_title="x", y_title="y", height=420)
    assert (look.title, look.x_title, look.y_title, look.height) == ("T", "x", "y", 300)
    fig = kf.fit_figure(kf.Points([0, 1, 2], [1, 2, 3], [0, 1, 2]), look=kf.Look(y_title="signal"))
    assert fig.layout.height == 420 and fig.layout.title.text is None
    assert fig.layout.xaxis.title.text == "x" and fig.layout.yaxis.title.text == "signal"


def test_style_sets_titles_and_legend_position():
    fig = kf.style(go.Figure(), kf.Look(x_title="a", y_title="b", title="t", log_x=True))
    assert fig.layout.xaxis.title.text == "a" and fig.layout.xaxis.type == "log"
    assert fig.layout.title.text == "t"
    assert fig.layout.legend.orientation == "h"


def _labels_inside(props: dict, lo: float, hi: float) -> list[tuple[float, str]]:
    return [(v, t) for v, t in zip(props["tickvals"], props["ticktext"], strict=True) if lo <= v <= hi]


def _label_value(text: str) -> float:
    """Read a tick label back: "0.05", "2", "10⁻⁴", "2×10⁻⁴"."""
    mantissa, _, power = text.rpartition("×") if "×" in text else ("1", "", text)
    if "⁻" in power or any(c in power for c in "⁰¹²³⁴⁵⁶⁷⁸⁹"):
        exponent = int(power[2:].translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
        return float(mantissa) * 10.0**exponent
    return float(mantissa) * float(power)


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (0.03, 10.0, ["0.1", "1", "10"]),  # several decades: powers of ten only
        (0.05, 2.0, ["0.05", "0.1", "0.2", "0.5", "1", "2"]),  # less than two decades: 1, 2, 5
        (0.2, 0.5, ["0.2", "0.3", "0.4", "0.5"]),  # within a decade: every digit
        (1e-5, 3e-4, ["10⁻⁵", "2×10⁻⁵", "5×10⁻⁵", "10⁻⁴", "2×10⁻⁴"]),  # tiny values: powers, no SI prefix
        (1e-8, 1.0, ["10⁻⁸", "10⁻⁶", "10⁻⁴", "10⁻²", "1"]),  # many decades: every other power
    ],
)
def test_log_ticks_label_whole_values(lo, hi, expected):
    props = kf.log_ticks(np.geomspace(lo, hi, 7))
    assert props["type"] == "log" and props["tickmode"] == "array"
    shown = _labels_inside(props, lo * (1 - 1e-9), hi * (1 + 1e-9))
    assert [t for _, t in shown] == expected
    for v, t in zip(props["tickvals"], props["ticktext"], strict=True):  # each label is its tick's value
        assert _label_value(t) == pytest.approx(v, rel=1e-9)
    minor = np.asarray(props["minor"]["tickvals"])  # unlabelled minor ticks never sit on a labelled one
    assert not np.isclose(minor[:, None], np.asarray(props["tickvals"])[None, :], rtol=1e-9, atol=0).any()


def test_log_ticks_narrow_range_and_no_data():
    shown = _labels_inside(kf.log_ticks([0.31, 0.33, 0.38]), 0.31, 0.38)
    assert len(shown) >= 3 and all(_label_value(t) == pytest.approx(v) for v, t in shown)
    empty = kf.log_ticks([])  # nothing to show yet: still a labelled log axis
    assert empty["type"] == "log" and "1" in empty["ticktext"]


def test_log_axes_of_every_builder_label_whole_values():
    ells = np.geomspace(0.02, 20, 40)
    cases = [
        (kf.loss_figure(np.geomspace(1e-6, 1.0, 50)).layout.yaxis, 1e-6, 1.0),
        (kf.loo_figure(ells, 1.0 + np.log(ells) ** 2, optimum=1.0).layout.xaxis, 0.02, 20.0),
        (kf.seeds_figure({"a": [0.08, 0.1, 0.13]}, optimum=0.09).layout.yaxis, 0.08, 0.13),
    ]
    for axis, lo, hi in cases:
        assert axis.type == "log" and axis.tickmode == "array"
        shown = _labels_inside({"tickvals": axis.tickvals, "ticktext": axis.ticktext}, lo, hi)
        assert len(shown) >= 2
        assert all(_label_value(t) == pytest.approx(v) for v, t in shown)
        assert not any(c in "".join(axis.ticktext) for c in "µμmk")  # no SI prefixes


def test_compact_sends_short_decimals_except_where_rounding_would_show():
    x = np.linspace(0, 1, 50)
    stamps = 1.6e9 + np.arange(50.0)  # seconds since 1970: neighbours stay apart
    fig = go.Figure([go.Scatter(x=x, y=np.sin(x)), go.Scatter(x=stamps, y=[float(v) for v in x]),
                     go.Scatter(x=["a", "b"], y=[np.nan, 1e300]), go.Heatmap(z=np.outer(x, x))])
    data = [t.to_plotly_json() for t in fig.data]
    compact(data)
    assert all(isinstance(t[p], list) for t in data for p in ("x", "y") if p in t)
    assert data[1]["x"] == stamps.tolist()  # in full
    assert max(len(repr(v)) for v in data[0]["y"]) <= len("0.841471")  # 1e-5 of the range: six decimals
    assert tuple(data[2]["x"]) == ("a", "b") and data[2]["y"][1] == 1e300
    assert np.shape(data[3]["z"]) == (50, 50)
    np.testing.assert_allclose(data[0]["y"], np.sin(x), atol=1e-6)
    assert "bdata" not in json.dumps(data)


def test_scrub_frames_replace_the_fit_and_its_band():
    g = np.linspace(0, 1, 30)
    ells = [0.05, 0.1, 0.2]
    means = np.stack([np.sin(g / e) for e in ells])
    stds = np.full_like(means, 0.1)
    stds[0, 10:12] = np.nan  # an empty window: a gap in that frame's band
    curve = kf.Curve("fit", means[1], kf.COLORS["fit"], std=stds[1])
    fig = kf.fit_figure(kf.Points(g, np.cos(g), g), [curve])
    frames = Path(g, tuple(ells), means, stds)
    fig = kf.add_scrub(fig, curve, frames, active=1, titles=[f"ℓ = {e}" for e in ells])
    assert [f.name for f in fig.frames] == ["0.05", "0.1", "0.2"]
    assert fig.layout.sliders[0].active == 1 and len(fig.layout.sliders[0].steps) == 3
    assert all(tuple(f.traces) == (2, 0) for f in fig.frames)
    go.Figure(fig.to_dict())  # built without validation: valid all the same
    np.testing.assert_allclose(fig.frames[2].data[0].y, means[2], rtol=1e-6, atol=1e-6)  # float32
    assert np.isnan(fig.frames[0].data[1].y).any() and not np.isnan(fig.frames[1].data[1].y).any()
    assert fig.frames[0].layout.title.text == "ℓ = 0.05"
    assert kf.themed(fig, "light").frames[2].data[0].y.dtype == np.float32  # frames stay binary


@pytest.mark.parametrize("height", [300, 350, 420, 600])
def test_a_legend_below_a_titled_figure_stays_under_its_x_axis_title(height: int) -> None:
    """Below a titled figure's plot the legend drops the same ``LEGEND_DROP`` px at any height (a lesson's
    stage draws charts lower), so it never climbs into the x axis's ticks and title."""
    fig = kf.style(go.Figure(go.Scatter(x=[0, 1], y=[0, 1], name="a")),
                   kf.Look(title="T", x_title="x", y_title="y", height=height))
    lay = fig.layout
    plot = height - lay.margin.t - lay.margin.b
    assert lay.legend.yanchor == "top"
    assert -lay.legend.y * plot == pytest.approx(styling.LEGEND_DROP)
    assert lay.legend.y == kf.legend_below(height)


def test_a_figure_redrawn_lower_keeps_its_legend_under_the_plot() -> None:
    """``at_height`` (a lesson's stage): a titled figure's legend below keeps its ``LEGEND_DROP``; a legend
    above an untitled plot is left where ``style`` put it."""
    trace = go.Scatter(x=[0, 1], y=[0, 1], name="a")
    look = kf.Look(title="T", x_title="x", y_title="y", height=460)
    titled = kf.at_height(kf.style(go.Figure(trace), look), 350)
    lay = titled.layout
    assert lay.height == 350
    assert -lay.legend.y * (350 - lay.margin.t - lay.margin.b) == pytest.approx(styling.LEGEND_DROP)
    plain = kf.style(go.Figure(trace), kf.Look(x_title="x", y_title="y", height=460))
    assert kf.at_height(plain, 350).layout.legend.y == plain.layout.legend.y
