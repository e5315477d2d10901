"""d2l's parametric attention pooling and the Kotlin/DJL port's variant, against NumPy written out by hand;
then chapter 2's d2l section, which must show exactly those runs.

Each reference below is the source's procedure step by step (its own loop over epochs and batches, the
gradient of the softmax by hand), started from the same w as the compiled run.
"""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pytest
from prosetools import shown
from test_app import MASKED, MASKED_CH, assert_sent, charts, metric, ok, page_texts, start, titles, values

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.warmup import count_compilations
from kernelviz.models.heads import FitResult
from kernelviz.models.parametric import Batches, batch_count, parametric_loss


def pooled(x_rows, x_keys, y_keys, w, exclude_self):
    """f(x_i) = Σ_j a_ij y_j with a_ij = softmax_j(−½((x_i − x_j) w)²), and ∂f(x_i)/∂w."""
    d2 = np.square(x_rows[:, None] - x_keys[None, :])
    s = -0.5 * d2 * w * w
    if exclude_self is not None:
        s[np.arange(len(x_rows)), exclude_self] = -np.inf
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    f = a @ y_keys
    ds_dw = -w * d2  # ∂s_ij/∂w
    df_dw = np.sum(a * ds_dw * (y_keys[None, :] - f[:, None]), axis=1)  # softmax derivative
    return f, df_dw


def d2l_reference(x, y, w, lr=0.5, epochs=5):
    """d2l's training: every epoch one SGD step on Σ_i ½(f_{−i}(x_i) − y_i)² over all n points, each
    predicted from the n − 1 others; returns the final w and d2l's per-epoch loss (before the step)."""
    losses = []
    for _ in range(epochs):
        f, df = pooled(x, x, y, w, exclude_self=np.arange(len(x)))
        losses.append(np.sum(0.5 * np.square(f - y)))
        w -= lr * np.sum((f - y) * df)
    return w, np.array(losses)


def kotlin_reference(x, y, w=1.0, lr=3.0, batch=10, epochs=10):
    """The Kotlin/DJL port: batches of ``batch`` points in order, each predicted from ALL n pairs (itself
    included), DJL's L2Loss = mean over the batch of ½ error², one SGD step per batch."""
    losses = []
    for _ in range(epochs):
        for first in range(0, len(x), batch):
            xb, yb = x[first : first + batch], y[first : first + batch]
            f, df = pooled(xb, x, y, w, exclude_self=None)
            losses.append(np.mean(0.5 * np.square(f - yb)))
            w -= lr * np.mean((f - yb) * df)
    return w, np.array(losses)


@pytest.fixture(scope="module")
def d2l():
    ds = kv.d2l_data()
    return ds.x, ds.y


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_d2l_sgd_matches_the_numpy_procedure(d2l, seed):
    x, y = d2l
    got = kv.fit_parametric(x, y, seed=seed)  # d2l's defaults: U(0, 1) start, SGD 0.5, 5 full-batch epochs
    w0 = np.random.default_rng(seed).uniform()
    w, losses = d2l_reference(x, y, w0)
    assert (got.method, got.steps_run, got.holdout, got.diverged) == ("sgd", 5, 1, False)
    assert 1.0 / got.trajectory[0, 0] == pytest.approx(w0, rel=1e-12)
    assert 1.0 / got.lengthscales[0] == pytest.approx(abs(w), rel=1e-9)
    np.testing.assert_allclose(got.losses, losses, rtol=1e-9)


def test_the_defaults_are_d2ls():
    assert (defaults.D2L.steps, defaults.D2L.learning_rate, defaults.D2L.optimizer) == (5, 0.5, "sgd")
    k = defaults.D2L_KOTLIN
    assert (k.epochs, k.learning_rate, k.batch_size, k.w0, k.include_self) == (10, 3.0, 10, 1.0, True)


def test_kotlin_variant_matches_the_numpy_procedure(d2l):
    x, y = d2l
    k = defaults.D2L_KOTLIN
    steps = k.epochs * batch_count(len(x), k.batch_size)
    assert steps == 50  # 10 epochs of 5 batches
    got = kv.fit_parametric(x, y, steps=steps, learning_rate=k.learning_rate, w0=k.w0,
                            include_self=True, batch_size=k.batch_size)
    w, losses = kotlin_reference(x, y)
    assert got.steps_run == 50 and got.holdout == 0 and not got.diverged
    assert 1.0 / got.lengthscales[0] == pytest.approx(w, rel=1e-9)
    np.testing.assert_allclose(got.losses, losses, rtol=1e-9)
    # the trajectory is w after every batch: row 5 is w after the first epoch
    assert 1.0 / got.trajectory[5, 0] == pytest.approx(kotlin_reference(x, y, epochs=1)[0], rel=1e-9)


def test_a_last_short_batch_is_kept(d2l):
    x, y = (a[:23] for a in d2l)
    assert batch_count(23, 10) == 3 and batch_count(23, None) == 1
    got = kv.fit_parametric(x, y, steps=6, learning_rate=2.0, w0=0.8, include_self=True, batch_size=10)
    w, losses = kotlin_reference(x, y, w=0.8, lr=2.0, batch=10, epochs=2)
    assert 1.0 / got.lengthscales[0] == pytest.approx(w, rel=1e-9)
    np.testing.assert_allclose(got.losses, losses, rtol=1e-9)


def test_leaving_the_point_out_is_what_gives_an_optimum(d2l):
    """With its own pair among the keys, every point predicts itself as w grows: the loss falls to 0 and
    training can only sharpen the kernel. Left out, a very sharp kernel copies the nearest other point."""
    x, y = d2l
    size = 256
    xp, yp = np.pad(x, (0, size - x.size), constant_values=x[0]), np.pad(y, (0, size - y.size))
    mask = np.arange(size) < x.size

    def loss(w, include_self):
        return float(parametric_loss(jnp.asarray(w), 0, Batches(xp, yp, mask, 0, include_self, 0)))

    ws = [1.0, 10.0, 100.0, 1e4]
    with_self = [loss(w, True) for w in ws]
    left_out = [loss(w, False) for w in ws]
    assert all(a > b for a, b in itertools.pairwise(with_self))
    assert with_self[-1] < 1e-20
    assert left_out[-1] > 0.5 * left_out[0] > 0  # the sharpest kernel predicts a neighbour, not itself
    best = kv.loo_lengthscale(x, y)
    assert loss(1.0 / best, False) < min(left_out[1:])
    # the Kotlin variant's w keeps growing with more epochs
    k = defaults.D2L_KOTLIN
    short, long = (kv.fit_parametric(x, y, steps=5 * e, learning_rate=k.learning_rate, w0=k.w0,
                                     include_self=True, batch_size=k.batch_size) for e in (10, 100))
    assert 1.0 / long.lengthscales[0] > 2.0 / short.lengthscales[0]


def test_both_procedures_share_one_program(d2l):
    x, y = d2l
    kv.fit_parametric(x, y)
    with count_compilations() as count:
        kv.fit_parametric(x[:37], y[:37], kernel="cauchy", steps=40, learning_rate=3.0, w0=1.0,
                          include_self=True, batch_size=10)
        kv.fit_parametric(x, y, steps=7, learning_rate=0.1, include_self=True)
        kv.fit_parametric(x, y, steps=12, batch_size=7, seed=4)
    assert count.requests == 0, count.names


def test_bad_batch_sizes_are_refused(d2l):
    x, y = d2l
    for bad in (0, len(x) + 1, 2.5, True):
        with pytest.raises(ValueError):
            kv.fit_parametric(x, y, batch_size=bad)
    with pytest.raises(ValueError):
        kv.fit_parametric(x, y, w0=0.0)


# ---------------------------------------------------------------------------------------------------------
# Chapter 2's d2l section (AppTest)
# ---------------------------------------------------------------------------------------------------------


def test_d2l_section_runs_d2ls_training_and_draws_its_figures():
    at = start(MASKED)
    ds = kv.d2l_data()  # d2l's own data, whatever the sidebar shows
    fit = kv.fit_parametric(ds.x, ds.y)  # w ~ U(0, 1) (seed 0), SGD at 0.5, 5 full-batch epochs
    assert fit.method == "sgd" and fit.steps_run == 5
    assert metric(at, "Learned w") == pytest.approx(1.0 / fit.lengthscales[0], rel=1e-3)
    figs = charts(at)
    loss = figs["masked.d2l_loss"]["data"][0]
    np.testing.assert_array_equal(values(loss["x"]), [1, 2, 3, 4, 5])
    assert_sent(values(loss["y"]), fit.losses)
    assert figs["masked.d2l_loss"]["layout"]["xaxis"]["title"]["text"] == "epoch"
    # d2l's heatmaps: queries its test inputs arange(0, 5, 0.1), keys the sorted training inputs
    heat = [t for t in figs["masked.d2l_heatmaps"]["data"] if t["type"] == "heatmap"]
    assert len(heat) == 2
    np.testing.assert_allclose(values(heat[0]["y"]), np.arange(0.0, 5.0, 0.1), atol=1e-12)
    assert_sent(values(heat[0]["x"]), ds.x)
    assert titles(figs["masked.d2l_heatmaps"])[1] == f"learned w = {1.0 / fit.lengthscales[0]:.3g}"
    assert "nonparametric, w = 1" in [t["name"] for t in figs["masked.d2l_fit"]["data"]]
    text = page_texts(at)
    shown(text, MASKED_CH, "d2l_intro")
    # d2l's training, from the w₀ that seed 0 draws
    assert shown(text, MASKED_CH, "d2l_runs") == {"seed": "0", "w0": f"{1.0 / fit.trajectory[0, 0]:.3g}"}
    # more epochs, another start
    at.slider(key="masked.d2l_epochs").set_value(7)
    at.slider(key="masked.d2l_seed").set_value(3)
    at.run()
    ok(at)
    fit = kv.fit_parametric(ds.x, ds.y, steps=7, seed=3)
    np.testing.assert_allclose(values(charts(at)["masked.d2l_loss"]["data"][0]["y"]), fit.losses, rtol=1e-6)


def test_kotlin_port_trains_with_each_point_among_its_keys():
    at = start(MASKED, {"masked.kotlin": "true"})
    ds = kv.d2l_data()

    def port(epochs: int) -> FitResult:
        return kv.fit_parametric(ds.x, ds.y, steps=5 * epochs, learning_rate=3.0, w0=1.0, include_self=True,
                                 batch_size=10)

    fit = port(10)
    assert metric(at, "Learned w after 10 epochs") == pytest.approx(1.0 / fit.lengthscales[0], rel=1e-3)
    loss = values(charts(at)["masked.d2l_loss"]["data"][0]["y"])
    assert_sent(loss, fit.losses.reshape(10, 5).mean(axis=1))
    text = page_texts(at)
    assert shown(text, MASKED_CH, "kotlin_runs") == {"epochs": "10"}
    shown(text, MASKED_CH, "kotlin_why")
    here = shown(text, MASKED_CH, "kotlin_here")
    assert (here["epochs"], here["w"]) == ("10", f"{1.0 / fit.lengthscales[0]:.3g}")
    own = metric(at, "Weight on its own pair")
    at.slider(key="masked.kotlin_epochs").set_value(100)
    at.run()
    ok(at)
    longer = metric(at, "Learned w after 100 epochs")
    assert longer == pytest.approx(1.0 / port(100).lengthscales[0], rel=1e-3)
    assert longer > 2 * (1.0 / fit.lengthscales[0])
    assert metric(at, "Weight on its own pair") > own  # each point predicts itself more and more


def test_d2l_section_can_train_on_the_sidebars_data():
    at = start(MASKED, {"masked.d2l_sidebar": "true"})
    heat = [t for t in charts(at)["masked.d2l_heatmaps"]["data"] if t["type"] == "heatmap"]
    ds = kv.blog_data()
    assert_sent(values(heat[0]["x"]), ds.x)
    w = 1.0 / kv.fit_parametric(ds.x, ds.y).lengthscales[0]
    assert metric(at, "Learned w") == pytest.approx(w, rel=1e-3)
