"""Chapter 3's page (multi-head kernel regression) under AppTest: defaults, the blog post's four panels and
its printed numbers beside ours, every control at its minimum and at its maximum, moving the heads and
hold-out controls repaints, URL parameters set the controls."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pagetools import (
    array,
    assert_controls,
    assert_heatmap_subsample,
    control,
    heatmap_panels,
    names,
    numbers,
    panel_titles,
    repaint,
    rows_where,
    set_all,
    table_with,
    traces_named,
)
from prosetools import assert_frame, shown
from test_app import assert_sent, charts, metric, ok, start

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.models.training import TRAIN_MAX_POINTS

MH = "chapters/3_multihead.py"
CH = "3_multihead"  # its prose: chapters/prose/3_multihead.md
MH_CHARTS = {"mh.panels", "mh.fit", "mh.heatmaps"}  # and one of the own model's pictures at a time:
PICTURES = {"weights": "mh.heatmaps", "mixing": "mh.mixing", "loss": "mh.loss"}
CAPTIONS = {"weights": "heatmaps_caption", "mixing": "mixing_caption", "loss": "loss_caption"}
FIT = "fit f̂(x) = Σₕ uₕ f̂ₕ(x)"
OURS = "ℓₕ (this app)"  # the own model's table


def test_multihead_page_tells_the_story():
    at = start(MH)
    assert at.title[0].value.startswith("3 ·")
    assert len(at.latex) >= 2
    assert_frame(at, CH, [f"try_{i}" for i in (1, 2, 3)])
    figs = charts(at)
    assert set(figs) == MH_CHARTS
    heads = at.slider(key="mh.heads").value
    assert heatmap_panels(figs["mh.heatmaps"]) == heads
    assert len([n for n in names(figs["mh.fit"]) if n and n.startswith("head ")]) == heads
    table = table_with(at, OURS)
    assert len(table["head"]) == heads
    ours, post = numbers(table[OURS]), numbers(table["ℓₕ in the blog post (√2 ℓₕ)"])
    np.testing.assert_allclose(post, ours * math.sqrt(2.0), rtol=1e-3, atol=1e-4)
    text = [m.value for m in at.markdown]
    for section in ("training", "shared_controls", "post_intro", "explore_intro", "band", "conventions"):
        shown(text, CH, section)
    # the sum of the learned uₕ, which nothing constrains to 1: the same number as the readout above
    assert shown(text, CH, "learned")["total"] == f"{metric(at, 'Σₕ uₕ'):.3g}"
    for picture, key in PICTURES.items():  # each picture of the own model with its caption
        at.segmented_control(key="mh.picture").set_value(picture).run()
        ok(at)
        assert set(charts(at)) == MH_CHARTS - {"mh.heatmaps"} | {key}
        shown((c.value for c in at.caption), CH, CAPTIONS[picture])


def test_multihead_heads_and_holdout_repaint():
    at = start(MH)
    after = repaint(at, "mh.heads", 2, ("mh.fit", "mh.heatmaps"))
    assert heatmap_panels(after["mh.heatmaps"]) == 2
    at.segmented_control(key="mh.picture").set_value("loss").run()
    assert at.query_params["mh.picture"] in ("loss", ["loss"])
    repaint(at, "mh.holdout", 20, ("mh.fit", "mh.loss"))
    at.segmented_control(key="mh.picture").set_value("mixing").run()
    repaint(at, "mh.heads", 3, ("mh.fit", "mh.mixing"))


def test_multihead_controls_at_extremes():
    keys = ["mh.heads", "mh.kernel", "mh.holdout", "mh.steps", "mh.lr", "mh.seed", "mh.own_lr", "mh.own_seed"]
    at = start(MH)
    for which in ("min", "max"):
        values = set_all(at, keys, which)
        at.run()
        ok(at)
        assert set(charts(at)) >= {"mh.fit", "mh.heatmaps"}
        for key, v in values.items():
            assert control(at, key)[1].value == v
    assert heatmap_panels(charts(at)["mh.heatmaps"]) == HEADS_MAX


def test_multihead_boxcar_says_it_searches():
    at = start(MH, {"mh.kernel": "boxcar", "mh.heads": "2"})
    assert any("search" in i.value for i in at.info)
    assert "mh.fit" in charts(at)


def test_multihead_runaway_training_warns_and_still_draws():
    at = start(MH, {"mh.heads": "1", "mh.lr": "100"})  # the post's panels
    assert any("diverged" in w.value or "ran away" in w.value for w in at.warning)
    assert {"mh.panels", "mh.fit", "mh.heatmaps"} <= set(charts(at))
    warned = len(at.warning)
    at.select_slider(key="mh.own_lr").set_value(100.0).run()  # and the own model
    ok(at)
    assert len(at.warning) == warned + 1
    assert {"mh.panels", "mh.fit", "mh.heatmaps"} <= set(charts(at))


def test_multihead_query_params_set_the_controls():
    at = start(MH, {"mh.heads": "3", "mh.kernel": "laplace", "mh.holdout": "5", "mh.steps": "300",
                    "mh.lr": "0.03", "mh.seed": "7", "mh.own_lr": "3", "mh.own_seed": "11"})
    assert_controls(at, {"mh.heads": 3, "mh.kernel": "laplace", "mh.holdout": 5, "mh.steps": 300,
                         "mh.lr": 0.03, "mh.seed": 7, "mh.own_lr": 3.0, "mh.own_seed": 11})
    assert heatmap_panels(charts(at)["mh.heatmaps"]) == 3


def test_large_data_subsample_the_heatmaps_and_say_so():
    page = MH
    at = start(page, {"data.n": "2000", "mh.heads": "2", "attn.heads": "2", "mh.steps": "200",
                      "attn.steps": "200"})
    assert_heatmap_subsample(at, "mh.heatmaps", defaults.HEATMAP_KEYS, 2000)
    panels = charts(at)["mh.panels"]  # the post's panels draw the training points only, and say so
    assert array(traces_named(panels, "data (xᵢ, yᵢ)")[0]["x"]).size == TRAIN_MAX_POINTS
    said = shown((c.value for c in at.caption), CH, "panels_subsample")
    assert said == {"shown": f"{TRAIN_MAX_POINTS:,}", "n": "2,000"}


def _post_block(table: dict[str, list[str]], heads: int) -> dict[str, np.ndarray]:
    """The rows of the post's table for its ``heads``-head panel, each column as floats."""
    block = {c: numbers(cells) for c, cells in rows_where(table, "H", str(heads)).items()}
    assert list(block["head"]) == list(range(1, heads + 1))
    return block


def test_post_panels_are_trained_live_and_drawn_on_the_grid():
    at = start(MH)
    spec = charts(at)["mh.panels"]
    panels = defaults.MULTIHEAD.panels
    assert panel_titles(spec) == [f"Heads = {h}" for h in panels]
    fits = traces_named(spec, FIT)
    assert len(fits) == len(panels)
    table = table_with(at, "post's ℓ_post (printed)")
    ds = kv.make_dataset("blog", n=150, seed=2024)
    grid = ds.grid(defaults.GRID_POINTS)
    for h, trace in zip(panels, fits, strict=True):
        x, f = array(trace["x"]), array(trace["y"])
        assert_sent(x, grid)  # the 256-point grid, nothing finer
        # the panel is the post's own run of its MultiheadGaussianKernel: H heads, hold-out 1, 1,000 steps
        want = kv.fit(ds.x, ds.y, heads=h, holdout=1, steps=1000, learning_rate=0.2, seed=2024,
                      multihead=True, arithmetic="post")
        assert_sent(f, kv.predict_heads(grid, ds.x, ds.y, want.lengthscales, want.mixing).mean)
        block = _post_block(table, h)
        np.testing.assert_allclose(block["ℓₕ here"], want.lengthscales, rtol=1e-3)
        np.testing.assert_allclose(block["uₕ here"], want.mixing, atol=0.005)  # shown with two decimals
    assert len(traces_named(spec, "true mean f(x)")) == len(panels)
    data_traces = traces_named(spec, "data (xᵢ, yᵢ)")
    assert len(data_traces) == len(panels) and array(data_traces[0]["x"]).size == 150
    assert len(json.dumps(spec)) < 150_000  # four panels of 256 grid points and the data stay light


def test_post_table_starts_at_linspace_and_quotes_the_post_converted():
    at = start(MH)
    table = table_with(at, "post's ℓ_post (printed)")
    mh = defaults.MULTIHEAD
    assert len(table["H"]) == sum(mh.panels)
    for h, post_u, post_ell in zip(mh.panels, mh.post_mixing, mh.post_lengthscales, strict=True):
        block = _post_block(table, h)
        # every H, also H = 1, starts where the post's MultiheadGaussianKernel does: linspace(0.1, 3, H)/√2
        np.testing.assert_allclose(block["start ℓₕ"], np.linspace(0.1, 3.0, h) / math.sqrt(2.0), rtol=1e-3)
        np.testing.assert_allclose(block["post's ℓ_post (printed)"], post_ell)
        np.testing.assert_allclose(block["post's uₕ (printed)"], post_u)
        np.testing.assert_allclose(block["ℓ_post here (√2 ℓₕ)"], block["ℓₕ here"] * math.sqrt(2.0),
                                   rtol=1e-3, atol=0.006)
        if h < 8:  # the post's own runs reprint its digits (but the 4-head model's widest head, 11.62)
            assert [f"{u:.2f}" for u in block["uₕ here"]] == [f"{u:.2f}" for u in post_u]
            here = [f"{v:.2f}" for v in block["ℓ_post here (√2 ℓₕ)"]]
            assert here[:3] == [f"{v:.2f}" for v in post_ell][:3]
    h8 = _post_block(table, 8)
    assert h8["post's ℓ_post (printed)"][4] == 210.44
    # Σₕ uₕ of every panel, here (the table's) and in the post's printout
    sums = shown((m.value for m in at.markdown), CH, "post_match")
    agree = sum(f"{float(a):.2f}" == f"{float(b):.2f}" for col in (("uₕ here", "post's uₕ (printed)"),
                                                     ("ℓ_post here (√2 ℓₕ)", "post's ℓ_post (printed)"))
                for a, b in zip(table[col[0]], table[col[1]], strict=True))
    assert (sums["agree"], sums["total"]) == (str(agree), str(2 * sum(mh.panels)))
    assert sums["post"] == " · ".join(f"{sum(u):.2f}" for u in mh.post_mixing)
    here = [float(v) for v in sums["ours"].split(" · ")]
    shown_sums = [_post_block(table, h)["uₕ here"].sum() for h in mh.panels]  # of two-decimal numbers
    np.testing.assert_allclose(here, shown_sums, atol=0.005 * (max(mh.panels) + 1))


def test_own_model_with_one_head_is_the_multihead_kernel():
    at = start(MH, {"mh.heads": "1"})
    table = table_with(at, OURS)
    row = {c: float(cells[0]) for c, cells in table.items() if c != "head"}
    assert row["start ℓₕ"] == pytest.approx(0.1 / math.sqrt(2.0), rel=1e-3)
    assert row["mixing weight uₕ"] != 1.0  # u₁ trains from 1/H = 1
    want = kv.fit(*(lambda d: (d.x, d.y))(kv.make_dataset("blog", n=150, seed=2024)), heads=1, holdout=1,
                  steps=1000, learning_rate=0.2, seed=2024, multihead=True)
    assert row[OURS] == pytest.approx(want.lengthscales[0], rel=1e-3)
    assert row["mixing weight uₕ"] == pytest.approx(want.mixing[0], rel=1e-3)


def test_post_panels_follow_seed_but_not_the_own_models_sliders():
    at = start(MH)
    before = charts(at)["mh.panels"]
    at.slider(key="mh.heads").set_value(3).run()
    at.slider(key="mh.steps").set_value(200).run()
    at.select_slider(key="mh.own_lr").set_value(0.03).run()
    at.number_input(key="mh.own_seed").set_value(9).run()
    ok(at)
    assert charts(at)["mh.panels"] == before
    own = charts(at)["mh.fit"]
    at.number_input(key="mh.seed").set_value(5).run()
    ok(at)
    assert charts(at)["mh.panels"] != before
    assert charts(at)["mh.fit"] == own  # the post's seed is the post's alone
    at.select_slider(key="mh.lr").set_value(0.1).run()
    assert charts(at)["mh.fit"] == own


def test_the_book_draws_each_chart_by_name_as_the_page_does():
    from kernelviz.app.ui import charts as books
    from kernelviz.app.ui.charts import Chart, Panel
    from kernelviz.app.ui.widgets.sidebar import builtin_data

    book = books.book("multi-head")
    data = builtin_data("blog", 150, 2024)
    query = {"mh.heads": "3", "mh.explain": "true", "mh.x": "0.5"}
    settings, problems = book.read(data, query)
    assert problems == () and settings.own.heads == 3 and settings.pick.on
    drawn = {key: build(data, settings) for key, build in book.charts.items()}
    assert isinstance(drawn["mh.formula"], Panel) and isinstance(drawn["mh.heatmaps"], Chart)
    assert drawn["mh.mixing"] is None and drawn["mh.loss"] is None  # one picture at a time: "weights"
    page = charts(start(MH, query))
    for key in ("mh.panels", "mh.fit", "mh.heatmaps"):
        figure = drawn[key].figure.to_plotly_json()
        assert names(figure) == names(page[key])
        title = figure["layout"].get("title", {}).get("text")
        assert title == page[key]["layout"].get("title", {}).get("text")
    question = book.questions["mh.largest_mixing"](data, settings)
    assert question.guess.options == (1, 2, 3)  # the own model's heads, at the settings' H


def test_a_scene_draws_the_mixing_weights_without_the_page_and_explore_opens_it():
    at = start(MH, {"lesson": "ten-minutes", "scene": "4"})
    ok(at)
    assert {"mh.fit", "mh.mixing"} <= set(charts(at))
    assert not [s.key for s in at.slider if s.key and s.key.startswith("mh.")]  # no page control ran
    at.session_state["kv._scene_picked"] = {"mh.explain": True, "mh.x": 0.5}  # what a click on the fit writes
    at.run()
    ok(at)
    assert any((n or "").endswith(" at x*") for n in names(charts(at)["mh.fit"]))  # the heads at x*, marked
    at.button(key="lesson.explore").click().run()
    ok(at)
    assert at.slider(key="mh.heads").value == 4 and at.segmented_control(key="mh.picture").value == "mixing"
    assert at.toggle(key="mh.explain").value and at.number_input(key="mh.x").value == 0.5
