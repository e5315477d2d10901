"""Chapter 5's backend: task families, the pretrained in-context layer and its readouts."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from kernelviz.app.warmup import count_compilations
from kernelviz.core import pooling
from kernelviz.data import tasks
from kernelviz.models import incontext as ic
from kernelviz.models.attention import dot_scores, gaussian_attention_params
from kernelviz.models.incontext import evaluation as ev
from kernelviz.runtime import train
from kernelviz.runtime.shapes import unslot


def _fit(w_q: np.ndarray, w_k: np.ndarray, u: np.ndarray, kind: str = "softmax") -> ic.Pretrained:
    return ic.Pretrained(w_q=w_q, w_k=w_k, mixing=u, kind=kind, family="sine", roughness=3.0, noise=0.1,
                         n=32, steps=1, learning_rate=0.1, seed=0)


@pytest.fixture(scope="module")
def fits() -> dict[str, ic.Pretrained]:
    return {
        "softmax": ic.pretrain("sine", 3.0, 0.1),
        "linear": ic.pretrain("sine", 3.0, 0.1, kind="linear"),
        "smooth": ic.pretrain("sine", 1.5, 0.1),
        "rough": ic.pretrain("sine", 8.0, 0.1),
        "noisy": ic.pretrain("sine", 3.0, 1.0),
    }


def test_prediction_is_the_pooling_core_on_dot_scores() -> None:
    rng = np.random.default_rng(0)
    w_q, w_k = rng.normal(size=(1, 3, 2)), rng.normal(size=(1, 3, 2))
    x, y, q = rng.uniform(-1, 1, 20), rng.normal(size=20), np.linspace(-1, 1, 7)
    p = ic.in_context_predict(_fit(w_q, w_k, np.ones(1)), x, y, q)
    core = pooling.pool(dot_scores(w_q[0], w_k[0], q, x, ic.D_QK), y)
    np.testing.assert_allclose(p.mean, np.asarray(core.mean), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.square(p.std), np.asarray(core.var), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(p.weights[0], np.asarray(core.weights), rtol=1e-10, atol=1e-12)
    # the training form (float32) is the same layer
    f = ic.layer_output(unslot(_fit(w_q, w_k, np.ones(1)).params), 0, q, x, y, np.ones(20, bool))
    np.testing.assert_allclose(np.asarray(f), np.asarray(core.mean), rtol=1e-4, atol=1e-5)


def test_two_heads_mix_by_u() -> None:
    rng = np.random.default_rng(1)
    w_q, w_k, u = rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2)), np.array([0.7, -0.4])
    x, y, q = rng.uniform(-1, 1, 15), rng.normal(size=15), np.linspace(-1, 1, 5)
    p = ic.in_context_predict(_fit(w_q, w_k, u), x, y, q)
    heads = [np.asarray(pooling.pool(dot_scores(w_q[h], w_k[h], q, x, ic.D_QK), y).mean) for h in range(2)]
    np.testing.assert_allclose(p.mean, u[0] * heads[0] + u[1] * heads[1], rtol=1e-10, atol=1e-12)
    assert p.weights.shape == (2, 5, 15)


def test_linear_layer_shares_the_score_without_softmax() -> None:
    rng = np.random.default_rng(2)
    w_q, w_k = rng.normal(size=(1, 3, 2)), rng.normal(size=(1, 3, 2))
    x, y, q = rng.uniform(-1, 1, 12), rng.normal(size=12), np.linspace(-1, 1, 4)
    p = ic.in_context_predict(_fit(w_q, w_k, np.ones(1), "linear"), x, y, q)
    s = np.asarray(dot_scores(w_q[0], w_k[0], q, x, ic.D_QK))
    np.testing.assert_allclose(p.mean, s @ y / 12, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(p.weights[0], s / 12, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", [0, 1])
def test_head_by_head_gradient_is_the_plain_gradient(kind: int) -> None:
    rng = np.random.default_rng(4)
    params = ic.ICLParams(rng.normal(size=(8, 3, 2)), rng.normal(size=(8, 3, 2)), rng.normal(size=8))
    prompts = tasks.draw_prompts(jax.random.PRNGKey(0), tasks.Task(0, 3.0, 0.1), 4, 32)
    available = np.arange(32) < 20

    def plain(p: ic.ICLParams) -> jax.Array:
        return ic.pretraining_loss(ic.ICLParams(p.w_q[:3], p.w_k[:3], p.u[:3]), kind, prompts, available)

    loss, grads = ic._LOSSES[kind](params, prompts, available, 3)
    want_loss, want = jax.value_and_grad(plain)(params)
    assert float(loss) == pytest.approx(float(want_loss), rel=1e-5)
    for got, ref in zip(grads, want, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=2e-3, atol=1e-5)
        assert not np.any(np.asarray(got)[3:])


def test_learned_window_of_a_gaussian_head_is_its_lengthscale() -> None:
    g = gaussian_attention_params(0.2)
    w = ev.learned_window(_fit(g.w_q[None], g.w_k[None], np.ones(1)), np.linspace(-1, 1, 5))
    np.testing.assert_allclose(w.lengthscales, 0.2, rtol=1e-12)
    np.testing.assert_allclose(w.centres, 0.0, atol=1e-12)
    assert w.window == pytest.approx(0.2)
    k = ev.learned_kernel(_fit(g.w_q[None], g.w_k[None], np.ones(1)), [0.3], [-0.2, 0.0, 0.2])
    np.testing.assert_allclose(k[0, 0], [-0.5, 0.0, -0.5], atol=1e-12)


def test_pretraining_lowers_the_loss(fits: dict[str, ic.Pretrained]) -> None:
    fit = fits["softmax"]
    assert fit.steps_run == ic.STEPS and not fit.diverged and fit.losses.shape == (ic.STEPS,)
    assert fit.losses[-100:].mean() < 0.25 * fit.losses[:10].mean()


def test_window_narrower_for_rough_tasks_wider_for_noisy_labels(fits: dict[str, ic.Pretrained]) -> None:
    smooth, rough = ev.learned_window(fits["smooth"]).window, ev.learned_window(fits["rough"]).window
    assert smooth > 1.8 * rough
    assert ev.learned_window(fits["noisy"]).window > 1.8 * ev.learned_window(fits["softmax"]).window
    assert ev.best_fixed_lengthscale("sine", 1.5).best > ev.best_fixed_lengthscale("sine", 8.0).best


def test_softmax_matches_nadaraya_watson_and_beats_linear(fits: dict[str, ic.Pretrained]) -> None:
    e = ev.evaluate(fits["softmax"], fits["linear"], loo_tasks=4)
    assert e.layer_error <= 1.1 * e.nw_error
    assert e.linear_error >= 1.5 * e.layer_error
    assert 0.5 * e.best_lengthscale < e.learned_window < 2.0 * e.best_lengthscale


def test_nothing_recompiles_across_controls(fits: dict[str, ic.Pretrained]) -> None:
    program = train.compiled(ic._pretrain, ("snapshots",))
    before = program._cache_size()
    with count_compilations() as count:
        ic.pretrain("gp", 5.0, 0.5, n=50, heads=3, steps=20, learning_rate=0.1, kind="softmax", seed=3)
        ic.pretrain("sine", 9.0, 0.0, n=7, heads=8, steps=5, kind="linear", seed=4)
        ic.pretrain("gp", 1.0, 1.0, n=64, heads=2, steps=1, seed=5)
    assert count.requests == 0, count.names
    assert program._cache_size() == before == 1


def test_task_shapes() -> None:
    for family in tasks.FAMILIES:
        p = tasks.sample_prompts(tasks.Task(family, 3.0, 0.1), n=17, count=5, seed=1)
        assert p.x.shape == p.y.shape == (5, 17) and p.xq.shape == p.fq.shape == (5, tasks.QUERIES)
        assert np.all(np.abs(p.x) <= 1) and np.all(np.abs(p.xq) <= 1) and np.all(np.isfinite(p.y))
    # float32 Cholesky, λ = 0.1
    rough = tasks.sample_prompts(tasks.Task("gp", 10.0, 0.0), n=64, count=500, seed=4)
    assert np.all(np.isfinite(rough.y)) and np.all(np.isfinite(rough.fq))
    sine = tasks.sample_prompts(tasks.Task("sine", 3.0, 0.0), n=32, count=200, seed=2)
    assert np.max(np.abs(sine.y)) <= 1.5 + 1e-6


@pytest.mark.parametrize("roughness", [2.0, 5.0])
def test_gp_draws_have_the_stated_lengthscale(roughness: float) -> None:
    p = tasks.sample_prompts(tasks.Task("gp", roughness, 0.0), n=64, count=400, seed=3)
    d = np.abs(p.x[:, :, None] - p.x[:, None, :])
    half_sq = 0.5 * np.square(p.y[:, :, None] - p.y[:, None, :])
    lam = 1.0 / roughness  # the stated lengthscale, written out: the test must not trust the module
    assert tasks.gp_lengthscale(roughness) == lam
    near = (d > 0.8 * lam) & (d < 1.2 * lam)
    expected = np.mean(1.0 - np.exp(-0.5 * np.square(d[near] / lam)))  # semivariogram of the RBF kernel
    assert np.mean(half_sq[near]) == pytest.approx(expected, rel=0.15)
    assert np.var(p.y) == pytest.approx(1.0, rel=0.15)


def test_loo_window_is_near_the_best_fixed_lengthscale() -> None:
    loo = ev.loo_window("sine", 3.0, 0.1, tasks_count=8)
    best = ev.best_fixed_lengthscale("sine", 3.0, 0.1).best
    assert loo.shape == (8,) and 0.3 * best < np.median(loo) < 3.0 * best


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n": 65}, "context points"),
    ({"n": 2}, "context points"),
    ({"heads": 0}, "heads"),
    ({"heads": 9}, "heads"),
    ({"family": "cosine"}, "family"),
    ({"roughness": 0.5}, "roughness"),
    ({"noise": -0.1}, "noise"),
    ({"kind": "relu"}, "kind"),
    ({"steps": 0}, "steps"),
    ({"learning_rate": -1.0}, "learning rate"),
])
def test_bad_controls_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ic.pretrain(**kwargs)
