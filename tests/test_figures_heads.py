"""The figure builders of chapters 3 and 4, checked without a browser against plain NumPy (shapes, thinning,
colours, transposes, NaN as gaps)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from kernelviz.app import figures as kf
from kernelviz.app.views import Heatmap

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
    points = kf.Points(grid, grid**2, grid, truth=grid**2)
    fig = kf.heads_fit_figure(points, kf.Mixture(heads, mean, std, names))
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
    points = kf.Points(grid, grid, grid)
    fig = kf.heads_fit_figure(points, kf.Mixture(mean[None, :], mean, np.full(6, 0.1), ["head 1"]))
    mix = _trace(fig, "mixture f̂(x) = Σₕ uₕ f̂ₕ(x)")
    assert mix.connectgaps is False and np.isnan(mix.y[2])
    band = _trace(fig, "mixture band f̂(x) ± 2s(x)")
    assert band.x.count(None) == 1  # two finite runs: two closed polygons
    with pytest.raises(ValueError, match="head_means"):
        kf.heads_fit_figure(points, kf.Mixture(np.zeros((2, 6)), mean, None, ["only one name"]))
    without_band = kf.heads_fit_figure(points, kf.Mixture(mean[None, :], mean, None, ["head 1"]))
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
    fig = kf.head_heatmaps_figure(w, queries, keys, cells=(50, 80))
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
    own, cross = Heatmap(x, x, self_w), Heatmap(grid, x, cross_w)
    fig = kf.self_cross_figure(own, cross)
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
    full = kf.self_cross_figure(own, cross, top_quantile=1.0)
    assert full.layout.coloraxis.cmax == pytest.approx(max(self_w.max(), cross_w.max()))
    with pytest.raises(ValueError):
        kf.self_cross_figure(Heatmap(x, x, cross_w), Heatmap(grid, x, self_w))


@pytest.mark.parametrize("panels", [1, 2, 4, 8])
def test_heatmap_cell_budget_holds_for_every_number_of_panels(panels):
    from kernelviz.app import views

    rows, cols = views.cell_budget(panels, 96, 1500)
    assert views.MIN_ROWS <= rows <= 96 and 1 <= cols <= 1500
    assert panels * rows * cols <= views.FIGURE_CELLS
    assert views.cell_budget(panels, 10, 20) == (10, 20)  # small heatmaps are kept whole
    rows, cols = views.cell_budget(panels, 120, 89, keep_cols=True)
    assert cols == 89 and rows >= views.MIN_ROWS
