"""Chapter 3's page (multi-head kernel regression) under AppTest: defaults, every control at its minimum
and at its maximum, moving the heads and hold-out controls repaints, URL parameters set the controls."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pagetools import array, control, heatmap_panels, names, set_all
from test_app import charts, ok, start

import kernelviz as kv

MH = "pages/3_multihead.py"
MH_CHARTS = {"mh.fit", "mh.mixing", "mh.heatmaps", "mh.loss"}


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
    assert heatmap_panels(figs["mh.heatmaps"]) == heads
    assert len([n for n in names(figs["mh.fit"]) if n and n.startswith("head ")]) == heads
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
    assert heatmap_panels(after["mh.heatmaps"]) == 2
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
        values = set_all(at, keys, which)
        at.run()
        ok(at)
        assert set(charts(at)) >= {"mh.fit", "mh.mixing", "mh.heatmaps"}
        for key, v in values.items():
            assert control(at, key)[1].value == v
    assert heatmap_panels(charts(at)["mh.heatmaps"]) == kv.HEADS_MAX


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
    assert heatmap_panels(charts(at)["mh.heatmaps"]) == 3


def test_large_data_subsample_the_heatmaps_and_say_so():
    page = MH
    at = start(page, {"data.n": "2000", "mh.heads": "2", "attn.heads": "2", "mh.steps": "200",
                      "attn.steps": "200"})
    figs = charts(at)
    assert figs
    heat = figs["mh.heatmaps"]
    keys = array(next(t for t in heat["data"] if t["type"] == "heatmap")["x"])
    assert keys.size <= 1500
    assert any("subsample" in c.value and "2,000" in c.value for c in at.caption)
