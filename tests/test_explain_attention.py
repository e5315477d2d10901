"""Click to explain on chapter 4: the layer at x*, its scores before the softmax, its own weights after it,
the values and every head's part, against the layer itself and a plain NumPy softmax."""

from __future__ import annotations

import numpy as np
import pytest
from pagetools import array
from test_app import charts, ok, start

import kernelviz as kv
from kernelviz.app.views import explain
from kernelviz.models.attention import attention_predict

ATTN = "chapters/4_attention.py"


@pytest.fixture(scope="module")
def layer() -> tuple[kv.Dataset, object]:
    ds = kv.blog_data()
    return ds, kv.fit_attention(ds.x, ds.y, heads=3, d_qk=5, d_v=2, steps=300, seed=3)


@pytest.mark.parametrize("x_star", [-3.0, 0.37, 2.9])
def test_the_panels_numbers_are_the_layers_own(layer, x_star):
    ds, fit = layer
    lp = explain.layer_point(fit, ds.x, ds.y, x_star)
    ref = attention_predict(fit, np.array([x_star]), ds.x, ds.y)
    np.testing.assert_allclose(lp.weights, ref.weights[:, 0, :], rtol=0, atol=1e-15)
    np.testing.assert_allclose(lp.head_outputs, ref.head_outputs[:, 0], rtol=0, atol=1e-15)
    assert lp.mean == pytest.approx(float(ref.mean[0]), abs=1e-15)
    # the scores, written out in NumPy from the maps, are what the layer's softmax turned into its weights
    e = np.exp(lp.scores - lp.scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True), lp.weights, rtol=1e-9, atol=1e-12)
    # q(x*)·k(x_i)/√d from the maps themselves
    t = lambda v: (np.asarray(v) - fit.center) / fit.scale  # noqa: E731
    phi = lambda v: np.stack([np.ones_like(t(v)), t(v), t(v) ** 2], axis=-1)  # noqa: E731
    q = np.einsum("f,hfd->hd", phi(x_star), fit.w_q)
    k = np.einsum("nf,hfd->hnd", phi(ds.x), fit.w_k)
    np.testing.assert_allclose(lp.scores, np.einsum("hd,hnd->hn", q, k) / np.sqrt(fit.d_qk), rtol=1e-12)
    # each head's part is its weighted values; the parts add up to the output
    np.testing.assert_allclose(np.sum(lp.weights * lp.values, axis=1), lp.head_outputs, rtol=1e-9, atol=1e-12)
    assert float(np.sum(lp.head_outputs)) == pytest.approx(lp.mean, abs=1e-12)


def test_the_tables_add_up(layer):
    ds, fit = layer
    lp = explain.layer_point(fit, ds.x, ds.y, 0.5)
    heads = explain.layer_heads_table(lp, ["a", "b", "c"])
    assert heads["headₕ(x*)·Uₕ"][-1] == pytest.approx(lp.mean)
    for h in range(3):
        rows = explain.head_keys_table(lp, h, ds.x)
        assert len(rows[""]) == explain.TOP_WEIGHTS + 2
        parts = rows["wₕᵢ · vₕᵢ"]
        assert sum(parts[:-1]) == pytest.approx(parts[-1]) and parts[-1] == pytest.approx(lp.head_outputs[h])
        assert sum(rows["weight wₕᵢ"][:-1]) == pytest.approx(1.0)
        assert rows["weight wₕᵢ"][-1] == pytest.approx(1)
        weights = rows["weight wₕᵢ"][: explain.TOP_WEIGHTS]
        assert weights == sorted(weights, reverse=True) and weights[0] == pytest.approx(lp.weights[h].max())


def test_chapter_4_explains_x_star_from_the_url_and_marks_the_heatmap():
    at = start(ATTN, {"attn.explain": "true", "attn.x": "1"})
    assert at.toggle(key="attn.explain").value and at.number_input(key="attn.x").value == 1.0
    assert any("Why the layer's output" in m.value for m in at.markdown)
    assert [t.label for t in at.tabs][:2] == ["head 1", "head 2"]
    fit = charts(at)["attn.fit"]
    rings = [t for t in fit["data"] if t.get("name") == "f̂(x*)"]
    assert len(rings) == 1 and list(array(rings[0]["x"])) == [1.0]
    heat = charts(at)["attn.heatmaps"]
    assert sum(1 for s in heat["layout"].get("shapes", []) if s.get("type") == "rect") == len(at.tabs)
    at.toggle(key="attn.explain").set_value(False).run()
    ok(at)
    assert not any("Why the layer's output" in m.value for m in at.markdown)
    assert not [t for t in charts(at)["attn.fit"]["data"] if t.get("name") == "f̂(x*)"]
