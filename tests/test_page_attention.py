"""Chapter 4's page (attention) under AppTest: the Gaussian check, defaults, every control at its minimum
and at its maximum, moving the heads and hold-out controls repaints, URL parameters set the controls."""

from __future__ import annotations

import numpy as np
import pytest
from pagetools import array, control, heatmap_panels, set_all
from test_app import charts, ok, start

import kernelviz as kv

ATTN = "pages/4_attention.py"
ATTN_CHARTS = {"attn.equivalence", "attn.fit", "attn.loss", "attn.kernel", "attn.heatmaps", "attn.wo",
               "attn.selfcross"}


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
    assert heatmap_panels(figs["attn.heatmaps"]) == heads
    left, right = [t for t in figs["attn.kernel"]["data"] if t["type"] == "heatmap"]
    np.testing.assert_allclose(array(right["z"]), array(left["z"]).T)
    assert not np.allclose(array(right["z"]), array(left["z"]))  # a learned kernel is not symmetric
    text = " ".join(m.value for m in at.markdown)
    assert "W_O" in text and "self-attention" in text and "cross-attention" in text


def test_attention_heads_and_holdout_repaint():
    at = start(ATTN)
    before = charts(at)
    at.slider(key="attn.heads").set_value(1).run()
    ok(at)
    after = charts(at)
    assert heatmap_panels(after["attn.heatmaps"]) == 1
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
        values = set_all(at, keys, which)
        at.run()
        ok(at)
        assert set(charts(at)) == ATTN_CHARTS
        for key, v in values.items():
            assert control(at, key)[1].value == v
        diffs = [float(m.value) for m in at.metric if m.label.startswith("max |")]
        assert all(d < 1e-9 for d in diffs), diffs
        for which_head in ("min", "max"):
            set_all(at, ["attn.head"], which_head)
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
    assert heatmap_panels(charts(at)["attn.heatmaps"]) == 3


def test_large_data_subsample_the_heatmaps_and_say_so():
    page = ATTN
    at = start(page, {"data.n": "2000", "mh.heads": "2", "attn.heads": "2", "mh.steps": "200",
                      "attn.steps": "200"})
    figs = charts(at)
    assert figs
    heat = figs["attn.heatmaps"]
    keys = array(next(t for t in heat["data"] if t["type"] == "heatmap")["x"])
    assert keys.size <= 500
    assert any("subsample" in c.value and "2,000" in c.value for c in at.caption)
