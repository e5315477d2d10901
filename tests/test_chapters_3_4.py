"""Chapters 3 (multi-head kernel regression) and 4 (attention): their figure builders and their pages.

The builders are checked without a browser against plain NumPy (shapes, thinning, colours, transposes, NaN
as gaps). The pages run under AppTest: defaults, every control at its minimum and at its maximum, moving the
heads and hold-out controls repaints, and URL parameters set the controls.
"""

from __future__ import annotations

import base64
import math

import numpy as np
import plotly.graph_objects as go
import pytest
from test_app import charts, ok, start, widget

import kernelviz as kv
from kernelviz import figures as kf

MH = "pages/3_multihead.py"
ATTN = "pages/4_attention.py"


# ---------------------------------------------------------------------------------------------------------
# Figure builders
# ---------------------------------------------------------------------------------------------------------


def _trace(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


def test_heads_fit_figure_draws_heads_dotted_and_the_mixture_on_top():
    grid = np.linspace(-1.0, 1.0, 9)
    heads = np.vstack([np.sin(grid), np.cos(grid), grid])
    u = np.array([0.5, -0.25, 1.0])
    mean = u @ heads
    std = np.full(grid.shape, 0.1)
    names = ["head 1", "head 2", "head 3"]
    fig = kf.heads_fit_figure(grid, grid**2, grid, heads, mean, std, names, truth=grid**2)
    for h, name in enumerate(names):
        t = _trace(fig, name)
        assert t.line.dash == "dot"
        assert t.line.color == kf.HEAD_COLORS[h]
        np.testing.assert_allclose(t.y, heads[h])
    mix = _trace(fig, "mixture f̂(x) = Σₕ uₕ f̂ₕ(x)")
    assert fig.data[-1] is mix  # drawn last, on top
    assert mix.line.width > max(_trace(fig, n).line.width for n in names)
    band = _trace(fig, "mixture band f̂(x) ± 2s(x)")
    ys = [v for v in band.y if v is not None]
    assert max(ys) == pytest.approx(float(np.max(mean + 0.2)))
    assert min(ys) == pytest.approx(float(np.min(mean - 0.2)))
    assert fig.layout.legend.y < 0  # many entries: the legend sits below the plot
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_heads_fit_figure_draws_nan_as_gaps_and_checks_shapes():
    grid = np.linspace(0.0, 1.0, 6)
    mean = np.array([0.0, 1.0, np.nan, np.nan, 1.0, 0.0])
    fig = kf.heads_fit_figure(grid, grid, grid, mean[None, :], mean, np.full(6, 0.1), ["head 1"])
    mix = _trace(fig, "mixture f̂(x) = Σₕ uₕ f̂ₕ(x)")
    assert mix.connectgaps is False and np.isnan(mix.y[2])
    band = _trace(fig, "mixture band f̂(x) ± 2s(x)")
    assert band.x.count(None) == 1  # two finite runs: two closed polygons
    with pytest.raises(ValueError, match="head_means"):
        kf.heads_fit_figure(grid, grid, grid, np.zeros((2, 6)), mean, None, ["only one name"])
    without_band = kf.heads_fit_figure(grid, grid, grid, mean[None, :], mean, None, ["head 1"])
    assert not [t for t in without_band.data if t.fill == "toself"]


def test_mixing_figure_shows_signed_weights_in_head_colours():
    u = np.array([0.9, -0.45, 0.02])
    ells = np.array([0.1, 2.0, 30.0])
    fig = kf.mixing_figure(u, ells)
    (bar,) = [t for t in fig.data if isinstance(t, go.Bar)]
    np.testing.assert_allclose(bar.y, u)
    assert list(bar.x) == ["head 1", "head 2", "head 3"]
    assert list(bar.marker.color) == list(kf.HEAD_COLORS[:3])
    np.testing.assert_allclose(bar.customdata, ells)
    assert "ℓₕ" in bar.hovertemplate
    assert fig.layout.title.text == f"Σₕ uₕ = {u.sum():.3g}"
    assert any(s.y0 == 0 and s.y1 == 0 for s in fig.layout.shapes)  # the zero line
    plain = kf.mixing_figure(u, head_names=["a", "b", "c"])
    assert "ℓₕ" not in plain.data[0].hovertemplate
    with pytest.raises(ValueError):
        kf.mixing_figure(u, ells[:2])


def test_head_heatmaps_one_panel_per_head_each_on_its_own_scale():
    rng = np.random.default_rng(0)
    heads, q, n = 5, 300, 400
    w = rng.random((heads, q, n))
    w /= w.sum(axis=2, keepdims=True)
    w[1] *= 10.0  # a much sharper head must not wash out the others
    queries, keys = np.linspace(-3, 3, q), np.linspace(-3, 3, n)
    fig = kf.head_heatmaps_figure(w, queries, keys, max_rows=50, max_cols=80, cols=4)
    maps = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(maps) == heads
    rows = np.unique(np.round(np.linspace(0, q - 1, 50)).astype(int))
    cols = np.unique(np.round(np.linspace(0, n - 1, 80)).astype(int))
    for h, t in enumerate(maps):
        z = np.asarray(t.z)
        assert z.shape == (rows.size, cols.size)
        np.testing.assert_allclose(z, w[h][np.ix_(rows, cols)])
        np.testing.assert_allclose(t.y, queries[rows])
        axis = fig.layout[t.coloraxis]
        assert axis.cmin == 0 and axis.cmax == pytest.approx(z.max())
        assert axis.showscale is False
    assert len({t.coloraxis for t in maps}) == heads
    titles = [a for a in fig.layout.annotations if a.text.startswith("head ")]
    assert [a.font.color for a in titles] == list(kf.HEAD_COLORS[:heads])
    assert fig.layout.yaxis.autorange == "reversed"
    assert fig.layout.xaxis5.title.text == "sorted keys xᵢ"  # bottom row (row 2, col 1)
    assert fig.layout.yaxis.title.text == "sorted queries x"
    with pytest.raises(ValueError):
        kf.head_heatmaps_figure(w[:, :, :10], queries, keys)


def test_score_transpose_figure_shows_the_kernel_beside_its_transpose():
    g = np.linspace(-1.0, 2.0, 7)
    s = np.add.outer(g, 2.0 * g) - np.outer(g, g)  # s(x, x') = x + 2x' − x x': not symmetric
    fig = kf.score_transpose_figure(s, g)
    left, right = [t for t in fig.data if isinstance(t, go.Heatmap)]
    np.testing.assert_allclose(left.z, s)
    np.testing.assert_allclose(right.z, s.T)
    assert not np.allclose(left.z, right.z)
    diagonals = [t for t in fig.data if t.name == "diagonal x = x′"]
    assert len(diagonals) == 2 and list(diagonals[0].x) == [g[0], g[-1]] == list(diagonals[0].y)
    assert fig.layout.coloraxis.cmin == pytest.approx(s.min())
    assert fig.layout.coloraxis.cmax == pytest.approx(s.max())
    assert fig.layout.xaxis.title.text == "key x′" and fig.layout.yaxis.title.text == "query x"
    sym = np.subtract.outer(g, g) ** 2
    a, b = [t for t in kf.score_transpose_figure(-sym, g).data if isinstance(t, go.Heatmap)]
    np.testing.assert_allclose(a.z, b.z)  # the Gaussian's log-kernel: both panels the same
    with pytest.raises(ValueError):
        kf.score_transpose_figure(s[:, :3], g)


def test_self_cross_figure_shares_one_scale_and_keeps_both_shapes():
    x = np.linspace(0.0, 1.0, 30)
    grid = np.linspace(-0.1, 1.1, 50)
    self_w = np.exp(-np.subtract.outer(x, x) ** 2 / 0.02)
    self_w /= self_w.sum(axis=1, keepdims=True)
    cross_w = np.exp(-np.subtract.outer(grid, x) ** 2 / 0.5)
    cross_w /= cross_w.sum(axis=1, keepdims=True)
    fig = kf.self_cross_figure(self_w, x, cross_w, grid)
    a, b = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert np.asarray(a.z).shape == (30, 30) and np.asarray(b.z).shape == (50, 30)
    np.testing.assert_allclose(a.y, x)
    np.testing.assert_allclose(b.y, grid)
    assert a.coloraxis == b.coloraxis == "coloraxis"
    both = np.concatenate([self_w.ravel(), cross_w.ravel()])
    assert fig.layout.coloraxis.cmax == pytest.approx(np.quantile(both, 0.995))
    # the two pictures are the same size: equal panel widths, and each query axis spans its own queries
    (l0, l1), (r0, r1) = fig.layout.xaxis.domain, fig.layout.xaxis2.domain
    assert l1 - l0 == pytest.approx(r1 - r0)
    assert tuple(fig.layout.yaxis.domain) == tuple(fig.layout.yaxis2.domain)
    assert fig.layout.yaxis2.matches is None and fig.layout.yaxis.matches is None
    full = kf.self_cross_figure(self_w, x, cross_w, grid, top_quantile=1.0)
    assert full.layout.coloraxis.cmax == pytest.approx(max(self_w.max(), cross_w.max()))
    with pytest.raises(ValueError):
        kf.self_cross_figure(cross_w, x, self_w, grid)


# ---------------------------------------------------------------------------------------------------------
# The pages
# ---------------------------------------------------------------------------------------------------------

MH_CHARTS = {"mh.fit", "mh.mixing", "mh.heatmaps", "mh.loss"}
ATTN_CHARTS = {"attn.equivalence", "attn.fit", "attn.loss", "attn.kernel", "attn.heatmaps", "attn.wo",
               "attn.selfcross"}


def _control(at, key: str):
    """The widget with ``key``: test_app's ``widget`` plus radios."""
    for r in at.radio:
        if r.key == key:
            return "radio", r
    return widget(at, key)


def _set_all(at, keys: list[str], which: str) -> dict[str, object]:
    """Every control in ``keys`` to its minimum or maximum at once (one rerun for all of them)."""
    values = {}
    for key in keys:
        kind, w = _control(at, key)
        i = 0 if which == "min" else len(getattr(w, "options", ())) - 1
        if kind == "slider":
            v = w.min if which == "min" else w.max
            w.set_value(v)
        elif kind == "select_slider":  # options are shown as text; the values are numbers
            v = float(w.options[i])
            w.set_value(v)
        elif kind == "selectbox":  # the kernel: options are its labels
            v = kv.KERNELS[i]
            w.select_index(i)
        elif kind == "radio":  # the head shown: 1 … H
            v = i + 1
            w.set_value(v)
        else:
            raise AssertionError(f"unexpected control {key} ({kind})")
        values[key] = v
    return values


def _array(value: object) -> np.ndarray:
    """A Plotly JSON array: a plain list, or a typed array {"dtype", "bdata" (base64), "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if shape:
            flat = flat.reshape([int(d) for d in str(shape).split(",")])
        return flat.astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def _heatmap_panels(spec: dict) -> int:
    return sum(1 for t in spec["data"] if t["type"] == "heatmap")


def _names(spec: dict) -> list[str]:
    return [t.get("name") for t in spec["data"]]


def test_multihead_page_tells_the_story():
    at = start(MH)
    assert at.title[0].value.startswith("3 ·")
    assert len(at.latex) >= 2
    assert any(c.value.startswith("Follows:") and "Multi-headed kernel regression" in c.value
               for c in at.caption)
    assert any(s.value == "Try this" for s in at.subheader)
    prompts = [m.value for m in at.markdown if m.value.startswith("1. ")]
    assert prompts and 2 <= prompts[-1].count("\n") + 1 <= 3
    figs = charts(at)
    assert set(figs) == MH_CHARTS
    heads = at.slider(key="mh.heads").value
    assert _heatmap_panels(figs["mh.heatmaps"]) == heads
    assert len([n for n in _names(figs["mh.fit"]) if n and n.startswith("head ")]) == heads
    table = at.dataframe[0].value
    assert len(table) == heads
    ours, post = table.iloc[:, 1].to_numpy(float), table.iloc[:, 2].to_numpy(float)
    np.testing.assert_allclose(post, ours * math.sqrt(2.0), rtol=1e-3, atol=1e-4)
    text = " ".join(m.value for m in at.markdown)
    assert "not constrained" in text and "√2" in text


def test_multihead_heads_and_holdout_repaint():
    at = start(MH)
    before = charts(at)
    at.slider(key="mh.heads").set_value(2).run()
    ok(at)
    after = charts(at)
    assert _heatmap_panels(after["mh.heatmaps"]) == 2
    for key in ("mh.fit", "mh.heatmaps", "mh.mixing"):
        assert after[key] != before[key], key
    at.slider(key="mh.holdout").set_value(20).run()
    ok(at)
    moved = charts(at)
    for key in ("mh.fit", "mh.loss"):
        assert moved[key] != after[key], key


def test_multihead_controls_at_extremes():
    keys = ["mh.heads", "mh.kernel", "mh.holdout", "mh.steps", "mh.lr", "mh.seed"]
    at = start(MH)
    for which in ("min", "max"):
        values = _set_all(at, keys, which)
        at.run()
        ok(at)
        assert set(charts(at)) >= {"mh.fit", "mh.mixing", "mh.heatmaps"}
        for key, v in values.items():
            assert _control(at, key)[1].value == v
    assert _heatmap_panels(charts(at)["mh.heatmaps"]) == kv.HEADS_MAX


def test_multihead_boxcar_says_it_searches():
    at = start(MH, {"mh.kernel": "boxcar", "mh.heads": "2"})
    assert any("search" in i.value for i in at.info)
    assert "mh.fit" in charts(at)


def test_multihead_runaway_training_warns_and_still_draws():
    at = start(MH, {"mh.heads": "1", "mh.lr": "100"})
    assert any("diverged" in w.value or "ran away" in w.value for w in at.warning)
    assert {"mh.fit", "mh.heatmaps"} <= set(charts(at))


def test_multihead_query_params_set_the_controls():
    at = start(MH, {"mh.heads": "3", "mh.kernel": "laplace", "mh.holdout": "5", "mh.steps": "300",
                    "mh.lr": "0.03", "mh.seed": "7"})
    assert at.slider(key="mh.heads").value == 3
    assert at.selectbox(key="mh.kernel").value == "laplace"
    assert at.slider(key="mh.holdout").value == 5
    assert at.slider(key="mh.steps").value == 300
    assert at.select_slider(key="mh.lr").value == pytest.approx(0.03)
    assert at.slider(key="mh.seed").value == 7
    assert _heatmap_panels(charts(at)["mh.heatmaps"]) == 3


def test_attention_page_verifies_the_gaussian_and_tells_the_story():
    at = start(ATTN)
    assert at.title[0].value.startswith("4 ·")
    assert len(at.latex) >= 5
    assert any(c.value.startswith("Follows:") for c in at.caption)
    assert any(s.value == "Try this" for s in at.subheader)
    figs = charts(at)
    assert set(figs) == ATTN_CHARTS
    diffs = {m.label: float(m.value) for m in at.metric if m.label.startswith("max |")}
    assert len(diffs) == 2 and all(0 <= d < 1e-9 for d in diffs.values())
    heads = at.slider(key="attn.heads").value
    assert _heatmap_panels(figs["attn.heatmaps"]) == heads
    left, right = [t for t in figs["attn.kernel"]["data"] if t["type"] == "heatmap"]
    np.testing.assert_allclose(_array(right["z"]), _array(left["z"]).T)
    assert not np.allclose(_array(right["z"]), _array(left["z"]))  # a learned kernel is not symmetric
    text = " ".join(m.value for m in at.markdown)
    assert "W_O" in text and "self-attention" in text and "cross-attention" in text


def test_attention_heads_and_holdout_repaint():
    at = start(ATTN)
    before = charts(at)
    at.slider(key="attn.heads").set_value(1).run()
    ok(at)
    after = charts(at)
    assert _heatmap_panels(after["attn.heatmaps"]) == 1
    for key in ("attn.fit", "attn.heatmaps", "attn.wo", "attn.kernel"):
        assert after[key] != before[key], key
    assert after["attn.equivalence"] == before["attn.equivalence"]  # the Gaussian part does not retrain
    at.slider(key="attn.holdout").set_value(30).run()
    ok(at)
    moved = charts(at)
    for key in ("attn.fit", "attn.loss", "attn.selfcross"):
        assert moved[key] != after[key], key


def test_attention_controls_at_extremes():
    keys = ["attn.lengthscale", "attn.heads", "attn.dqk", "attn.holdout", "attn.steps", "attn.lr",
            "attn.seed"]
    at = start(ATTN)
    for which in ("min", "max"):
        values = _set_all(at, keys, which)
        at.run()
        ok(at)
        assert set(charts(at)) == ATTN_CHARTS
        for key, v in values.items():
            assert _control(at, key)[1].value == v
        diffs = [float(m.value) for m in at.metric if m.label.startswith("max |")]
        assert all(d < 1e-9 for d in diffs), diffs
        for which_head in ("min", "max"):
            _set_all(at, ["attn.head"], which_head)
            at.run()
            ok(at)
    assert at.radio(key="attn.head").value == kv.HEADS_MAX


def test_attention_query_params_set_the_controls():
    at = start(ATTN, {"attn.heads": "3", "attn.dqk": "2", "attn.holdout": "12", "attn.steps": "200",
                      "attn.lr": "0.1", "attn.seed": "4", "attn.head": "2"})
    assert at.slider(key="attn.heads").value == 3
    assert at.slider(key="attn.dqk").value == 2
    assert at.slider(key="attn.holdout").value == 12
    assert at.slider(key="attn.steps").value == 200
    assert at.select_slider(key="attn.lr").value == pytest.approx(0.1)
    assert at.slider(key="attn.seed").value == 4
    assert at.radio(key="attn.head").value == 2
    assert _heatmap_panels(charts(at)["attn.heatmaps"]) == 3


@pytest.mark.parametrize("page", [MH, ATTN])
def test_large_data_subsample_the_heatmaps_and_say_so(page):
    at = start(page, {"data.n": "2000", "mh.heads": "2", "attn.heads": "2", "mh.steps": "200",
                      "attn.steps": "200"})
    figs = charts(at)
    assert figs
    heat = figs["mh.heatmaps" if page == MH else "attn.heatmaps"]
    keys = _array(next(t for t in heat["data"] if t["type"] == "heatmap")["x"])
    assert keys.size <= 500 if page == ATTN else keys.size <= 1500
    assert any("subsample" in c.value and "2,000" in c.value for c in at.caption)
