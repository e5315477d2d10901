"""d2l's chapter where the pages say they show it, against NumPy written out from the sources: the
nonparametric pooling at w = 1 on d2l's test inputs with its 50 × 50 heatmap (chapter 1, also from the
Sources page's links), exercise 1 with growing n, and the Kotlin/DJL port's validation loss per epoch as
DJL's ``EasyTrain.fit`` computes it (chapter 2)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from pagetools import array
from prosetools import shown
from test_app import MASKED_CH, assert_sent, charts, ok, start, values

import kernelviz as kv
from kernelviz.app import views
from kernelviz.app.ui.caching import sources as cache_sources
from kernelviz.data.datasets import blog_mean, d2l_mean
from kernelviz.models import parametric

KR, MASKED = "chapters/1_kernel_regression.py", "chapters/2_masked_training.py"
X_TEST = np.arange(0, 5, 0.1)  # d2l's x_test, the port's xVal = arange(0f, 5f, 5.0f/n) with n = 50


def d2l_weights(queries, keys, w=1.0):
    """d2l's attention_weights = softmax(−((x_test − x_train) w)²/2), row by row."""
    s = -0.5 * np.square((queries[:, None] - keys[None, :]) * w)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def djl_validation(x, y, w, x_val, y_val, batch=10):
    """EasyTrain.fit's validation after an epoch: each batch of ``batch`` validation points in order is
    predicted from all training pairs (the port's forward: keys xTrain, values yTrain), L2Loss.evaluate is
    the batch mean of ½(label − pred)², and the accumulator averages those over the batches."""
    losses = []
    for first in range(0, len(x_val), batch):
        xb, yb = x_val[first : first + batch], y_val[first : first + batch]
        losses.append(np.mean(0.5 * np.square(yb - d2l_weights(xb, x, w) @ y)))
    return float(np.mean(losses))


def port_ws(x, y, epochs, w=1.0, lr=3.0, batch=10):
    """w after each epoch of the port's SGD (batches in order, each point among its own keys)."""
    out = []
    for _ in range(epochs):
        for first in range(0, len(x), batch):
            xb, yb = x[first : first + batch], y[first : first + batch]
            a = d2l_weights(xb, x, w)
            f = a @ y
            d2 = np.square(xb[:, None] - x[None, :])
            df = np.sum(a * (-w * d2) * (y[None, :] - f[:, None]), axis=1)
            w -= lr * np.mean((f - yb) * df)
        out.append(w)
    return np.array(out)


# ---------------------------------------------------------------------- the port's validation loss


def test_validation_loss_is_djls_on_the_ports_validation_set():
    ds = kv.d2l_data()
    ws = port_ws(ds.x, ds.y, 10)
    got = parametric.validation_losses(ds.x, ds.y, X_TEST, d2l_mean(X_TEST), ws, batch_size=10)
    expected = [djl_validation(ds.x, ds.y, w, X_TEST, d2l_mean(X_TEST)) for w in ws]
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    # a last short batch counts as one batch, as DJL's accumulator counts it
    xs, ys = X_TEST[:23], d2l_mean(X_TEST[:23])
    short = parametric.validation_losses(ds.x, ds.y, xs, ys, ws[:2], batch_size=10)
    np.testing.assert_allclose(short, [djl_validation(ds.x, ds.y, w, xs, ys) for w in ws[:2]], rtol=1e-10)
    # a compact kernel's empty window has no prediction
    assert np.isnan(parametric.validation_losses(ds.x, ds.y, X_TEST, d2l_mean(X_TEST), [1e3], "boxcar")[0])


def test_chapter_2_draws_the_ports_validation_loss_beside_its_training_loss():
    at = start(MASKED, {"masked.kotlin": "true"})
    loss = charts(at)["masked.d2l_loss"]
    assert [t["name"] for t in loss["data"]] == ["training loss", "validation loss"]
    go.Figure(loss)  # valid Plotly
    ds = kv.d2l_data()
    expected = [djl_validation(ds.x, ds.y, w, X_TEST, d2l_mean(X_TEST)) for w in port_ws(ds.x, ds.y, 10)]
    assert_sent(values(loss["data"][1]["y"]), expected)
    text = [m.value for m in at.markdown]
    shown(text, MASKED_CH, "kotlin_validation")
    said = shown(text, MASKED_CH, "kotlin_validation_result")
    assert said["epochs"] == "10" and said["first"] == f"{expected[0]:.4g}"
    assert said["last"] == f"{expected[-1]:.4g}"
    assert said["best"] == f"{min(expected):.4g}"
    # d2l's own training has no validation set
    at.toggle(key="masked.kotlin").set_value(False).run()
    ok(at)
    assert [t.get("name") for t in charts(at)["masked.d2l_loss"]["data"]] == ["training loss"]


def test_the_validation_set_on_the_sidebars_data_is_their_true_mean():
    at = start(MASKED, {"masked.kotlin": "true", "masked.d2l_sidebar": "true"})
    ds = kv.blog_data()
    x_val = ds.grid(50)
    expected = [djl_validation(ds.x, ds.y, w, x_val, blog_mean(x_val)) for w in port_ws(ds.x, ds.y, 10)]
    np.testing.assert_allclose(values(charts(at)["masked.d2l_loss"]["data"][1]["y"]), expected, rtol=1e-5)


# ------------------------------------------------------------- chapter 1: d2l's nonparametric pooling


def link(fragment: str) -> dict[str, str]:
    """The URL parameters of the Sources page's entries whose text contains ``fragment`` (d2l's and its
    port's wording of one exercise open the same view)."""
    items = [i for s in cache_sources.catalogue() for i in s["item"] if fragment in i["what"]]
    assert items and all(i["params"] == items[0]["params"] for i in items), fragment
    return items[0]["params"]


@pytest.mark.parametrize("fragment", ["1. Increase the number of training examples",
                                      "Nonparametric attention", "sorted test inputs against sorted"])
def test_sources_links_open_d2ls_nonparametric_pooling_as_d2l_draws_it(fragment):
    params = link(fragment)
    assert params["data.source"] == "d2l" and params["kr.lengthscale"] == "1"
    at = start(KR, params)
    assert at.select_slider(key="kr.lengthscale").value == 1.0
    assert (at.select_slider(key="data.n").value, at.number_input(key="data.seed").value) == (50, 0)
    ds = kv.d2l_data()
    figs = charts(at)
    heat = next(t for t in figs["kr.d2l_heatmap"]["data"] if t["type"] == "heatmap")
    assert_sent(values(heat["y"]), X_TEST)  # rows: d2l's 50 test inputs
    assert_sent(values(heat["x"]), ds.x)  # columns: its sorted training inputs
    z = array(heat["z"])
    assert z.shape == (50, 50)
    np.testing.assert_allclose(z, d2l_weights(X_TEST, ds.x), atol=1e-6)
    pred = next(t for t in figs["kr.d2l_fit"]["data"] if t["name"].startswith("prediction at ℓ = 1"))
    assert_sent(values(pred["x"]), X_TEST)
    assert_sent(values(pred["y"]), d2l_weights(X_TEST, ds.x) @ ds.y)
    error = np.sqrt(np.mean(np.square(d2l_weights(X_TEST, ds.x) @ ds.y - d2l_mean(X_TEST))))
    assert float(at.metric[0].value) == pytest.approx(error, rel=1e-2)
    # the exercise's link also runs it for every n; the figures' links leave that to the reader
    assert ("kr.d2l_consistency" in figs) == fragment.startswith("1.")
    for key in ("kr.d2l_fit", "kr.d2l_heatmap", "kr.d2l_consistency"):
        if key in figs:
            go.Figure(figs[key])  # valid Plotly


def test_the_section_is_d2ls_only_and_follows_the_sidebars_n():
    assert "kr.d2l_fit" not in charts(start(KR))  # the blog post's data: no d2l section
    at = start(KR, {"data.source": "d2l", "data.n": "500", "kr.lengthscale": "1"})
    heat = next(t for t in charts(at)["kr.d2l_heatmap"]["data"] if t["type"] == "heatmap")
    assert array(heat["z"]).shape == (50, views.D2L_HEAT_KEYS)  # every test input, a subsample of keys
    assert any("subsample" in c.value for c in at.caption)


def test_exercise_1_at_l_1_stops_improving_and_at_the_optimum_keeps_improving():
    """d2l: “given enough data this model converges”; the port adds “(and sufficiently small kernel
    bandwidth)”."""
    sizes = (50, 200, 1000)
    c = views.d2l_consistency(sizes, seed=0)
    for n, fixed, tuned, ell in zip(sizes, c.fixed, c.tuned, c.optima, strict=True):
        ds = kv.d2l_data(n, 0)
        for got, v in ((fixed, 1.0), (tuned, ell)):
            pred = d2l_weights(X_TEST, ds.x, 1.0 / v) @ ds.y
            assert got == pytest.approx(np.sqrt(np.mean(np.square(pred - d2l_mean(X_TEST)))), rel=1e-9)
    assert c.fixed[-1] > 0.5 and c.tuned[-1] < c.fixed[-1] / 4  # the bias of ℓ = 1 stays
    assert c.optima[-1] < c.optima[0]
