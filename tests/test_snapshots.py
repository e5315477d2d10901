"""Parameter snapshots kept inside the compiled training loop (``training.run(snapshots=True)``): the steps
they hold, that each equals a run stopped at that step, that the last is the trained layer, and what a
divergence leaves in them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kernelviz as kv
from kernelviz.models import incontext
from kernelviz.models import training as tr
from kernelviz.models.training import SNAPSHOTS, snapshot_steps


@pytest.fixture(scope="module")
def blog() -> kv.Dataset:
    return kv.blog_data()


@pytest.mark.parametrize("steps", [1, 7, 49, 50, 196, 1000, tr.STEPS_MAX])
def test_snapshot_steps_run_evenly_from_the_start_to_the_end(steps):
    at = snapshot_steps(steps)
    assert at.shape == (SNAPSHOTS,) and at[0] == 0 and at[-1] == steps
    assert np.all(np.diff(at) >= 0)
    exact = np.arange(SNAPSHOTS) * steps / (SNAPSHOTS - 1)
    assert np.max(np.abs(at - exact)) <= 0.5  # the nearest step to each even spacing


@pytest.mark.parametrize("steps", [7, 196])
def test_each_snapshot_equals_a_run_stopped_at_its_step(blog, steps):
    fit = kv.fit_attention(blog.x, blog.y, heads=2, steps=steps, decay=False)  # decay depends on steps
    for j in (0, 1, SNAPSHOTS // 2, SNAPSHOTS - 2):
        step = int(fit.snapshot_steps[j])
        layer = fit.at_snapshot(j)
        if step == 0:
            assert np.max(np.abs(layer.w_q - fit.at_snapshot(0).w_q)) == 0
            continue
        short = kv.fit_attention(blog.x, blog.y, heads=2, steps=step, decay=False)
        for got, want in zip((layer.w_q, layer.w_k, layer.w_v, layer.mixing),
                             (short.w_q, short.w_k, short.w_v, short.mixing), strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_last_snapshot_is_the_trained_layer_and_the_losses_are_unchanged(blog):
    fit = kv.fit_attention(blog.x, blog.y, heads=3, d_qk=5, d_v=2, steps=300)
    last = fit.at_snapshot(SNAPSHOTS - 1)
    for got, want in zip((last.w_q, last.w_k, last.w_v, last.mixing), (fit.w_q, fit.w_k, fit.w_v, fit.mixing),
                         strict=True):
        assert got.shape == want.shape and np.array_equal(got, want)
    assert fit.snapshots[0].shape == (SNAPSHOTS, 3, 3, 5)
    first = fit.at_snapshot(0)
    assert not np.array_equal(first.w_q, fit.w_q)  # the start, before training moved it
    pre = incontext.pretrain(steps=60, heads=2)
    assert np.array_equal(pre.at_snapshot(SNAPSHOTS - 1).w_q, pre.w_q)
    assert np.array_equal(pre.at_snapshot(SNAPSHOTS - 1).mixing, pre.mixing)
    assert pre.snapshot_steps[-1] == 60 and pre.snapshots[2].shape == (SNAPSHOTS, 2)


def test_a_divergence_leaves_the_last_finite_params_in_later_slots():
    """A loss that turns non-finite at step 13: the loop stops there, the slots up to step 13 hold the
    steps they name and every later slot the last finite params (a plain gradient step on p²)."""

    @jax.jit
    def go():
        def objective(p, step):
            return jnp.where(step >= 13, jnp.nan, p * p), 2 * p

        settings = tr.Settings("sgd", 0.1, 100, 1e6, lambda p: jnp.zeros(0))
        return tr.run(objective, jnp.asarray(1.0), jnp.asarray(1.0), settings, snapshots=True)

    out = go()
    at, (snaps,) = tr.snapshots_kept(out, 100)
    assert int(out.steps_run) == 13 and bool(out.diverged)
    np.testing.assert_allclose(snaps, 0.8 ** at, rtol=1e-12)  # p_t = 0.8^t, frozen at t = 13
    assert at.max() == 13 and np.all(snaps[at == 13] == snaps[-1])
