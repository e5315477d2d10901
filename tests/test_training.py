"""Masked training, d2l's leave-one-out w, multi-head prediction: against NumPy references."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kernelviz as kv
import tests.reference.plain_training as reference
from kernelviz.app.defaults import KERNEL_GRID_POINTS
from kernelviz.app.views import replay
from kernelviz.app.warmup import QUERY_POINTS, count_compilations, warmup, warmup_tasks
from kernelviz.core import pooling
from kernelviz.core.kernels import KERNELS, kernel_index
from kernelviz.data import post
from kernelviz.models import heads, incontext
from kernelviz.models.attention import D_QK_MAX, attention_kernel
from kernelviz.models.heads import SEEDS_MAX
from kernelviz.models.holdout import (
    Holdout,
    holdout_bucket,
    holdout_chunks,
    holdout_objective,
    holdout_range,
    holdout_split,
)
from kernelviz.models.holdout_fast import holdout_split_fast
from kernelviz.models.smoothing import HEADS_MAX, kernel_scores
from kernelviz.models.training import STEPS_MAX
from kernelviz.runtime.shapes import bucket, pad


@pytest.fixture(scope="module")
def blog() -> tuple[np.ndarray, np.ndarray]:
    ds = kv.blog_data()
    return ds.x, ds.y


# ---------------------------------------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------------------------------------


def np_log_kernel(u: np.ndarray, kernel: str) -> np.ndarray:
    a = np.abs(u)
    with np.errstate(divide="ignore"):
        return {
            "gaussian": -0.5 * u * u,
            "laplace": -a,
            "cauchy": -np.log1p(u * u),
            "boxcar": np.where(a <= 1, 0.0, -np.inf),
            "epanechnikov": np.where(a < 1, np.log(np.clip(1 - u * u, 1e-300, None)), -np.inf),
            "triangular": np.where(a < 1, np.log(np.clip(1 - a, 1e-300, None)), -np.inf),
            "tricube": np.where(a < 1, 3 * np.log(np.clip(1 - a**3, 1e-300, None)), -np.inf),
        }[kernel]


def np_weights(queries, x, ell, kernel, available=None) -> np.ndarray:
    z = np_log_kernel((queries[:, None] - x[None, :]) / ell, kernel)
    if available is not None:
        z = np.where(available[None, :], z, -np.inf)
    top = np.max(z, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(z - top)
    s = e.sum(axis=1, keepdims=True)
    return e / np.where(s > 0, s, 1.0)


def np_heads(queries, x, y, ells, u, kernel):
    """Unpadded multi-head predictor: mean Σ u_h m_h, band with pooled weights Σ|u_h| w_h / Σ|u_h|."""
    ws = np.stack([np_weights(queries, x, e, kernel) for e in ells])
    hm = ws @ y
    hs = np.sqrt(np.sum(ws * (y[None, None, :] - hm[..., None]) ** 2, axis=-1))
    empty = ws.sum(axis=-1) == 0  # (H, q): no key in a compact kernel's window
    hm = np.where(empty, np.nan, hm)
    hs = np.where(empty, np.nan, hs)
    mean = np.asarray(u) @ hm  # NaN where any head is empty
    pooled = np.einsum("h,hqn->qn", np.abs(u) / np.abs(u).sum(), ws)
    std = np.sqrt(np.sum(pooled * (y[None, :] - mean[:, None]) ** 2, axis=1))
    return mean, std, hm, hs, ws


def test_numpy_reference_has_an_empty_window_case():
    x = np.linspace(-3, 3, 150)
    mean, *_ = np_heads(np.array([-3.5, 0.0]), x, np.sin(x), [0.05, 1.0], [0.5, 0.5], "triangular")
    assert np.isnan(mean[0]) and np.isfinite(mean[1])


# ---------------------------------------------------------------------------------------------------------
# Hold-out sets, the loss and its gradient
# ---------------------------------------------------------------------------------------------------------

SPLITS = {"formula": jax.jit(holdout_split), "fast": jax.jit(holdout_split_fast)}
each_split = pytest.mark.parametrize("form", list(SPLITS))


def _step_key(seed: int, step: int) -> np.ndarray:
    return np.asarray(post.step_keys(post.prng_key(seed), step + 1)[step])


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-0.5, 0.5, n))
    y = np.sin(6 * x) + 0.1 * rng.standard_normal(n)
    size = bucket(n)
    return x, y, pad(x, size, x[0]), pad(y, size), np.arange(size) < n


def _params(ells, u):
    """(log ℓ_h, u_h) padded to HEADS_MAX; padded heads get a large u, which must not count."""
    h = len(ells)
    log_ell = np.log(pad(np.asarray(ells), HEADS_MAX, 1.0))
    return log_ell, np.concatenate([u, np.full(HEADS_MAX - h, 5.0)])


def _objective(params, xp, yp, mask, holdout, seed, kernel, chunked=True, with_grad=True, fast=False):
    return _objective_of_key(params, xp, yp, mask, holdout, post.prng_key(seed), kernel, chunked, with_grad,
                             fast)


def test_the_fast_split_holds_out_what_the_formula_holds_out():
    """``holdout_split_fast`` (what training runs) against ``holdout_split`` (the formula shown): the same
    held-out points in the same order and the same keys left available, for many keys, sizes and k."""
    for n, size, k in ((3, 4, 1), (40, 64, 1), (40, 64, 5), (150, 256, 1), (150, 256, 75), (256, 256, 254)):
        mask = np.arange(size) < n
        for step in range(20):
            key = _step_key(n + k, step)
            (o1, a1), (o2, a2) = ((np.asarray(a) for a in SPLITS[f](key, mask, k)) for f in SPLITS)
            assert np.array_equal(o1[:k], o2[:k]) and np.array_equal(a1, a2)


@jax.jit(static_argnames=("chunked", "with_grad", "fast"))
def _objective_of_key(params, xp, yp, mask, holdout, key, kernel, chunked, with_grad, fast):
    h = jnp.sum(params[1] != 5.0)
    params = (params[0], jnp.where(jnp.arange(HEADS_MAX) < h, params[1], 0.0))
    predict = (heads.predictor if fast else reference.plain_predictor)(xp, yp, kernel)
    if not chunked:
        return reference.all_rows_objective(predict, xp, yp, mask, holdout, key)(params, 0)
    objective = holdout_objective(predict, Holdout(xp, yp, mask, holdout, key),
                                     with_grad=with_grad, chunks=(4, 64))
    return objective(params, 0)


@each_split
def test_holdout_split_draws_distinct_real_points_and_masks_exactly_them(form):
    for holdout in (1, 3, 5, 38):
        *_, mask = _data()
        order, avail = (np.asarray(a) for a in SPLITS[form](_step_key(holdout, 0), mask, holdout))
        held = order[:holdout]
        assert len(set(held.tolist())) == holdout and np.all(held < 40)
        assert set(np.flatnonzero(mask & ~avail).tolist()) == set(held.tolist())


@each_split
def test_holdout_split_is_a_uniform_random_order(form):
    """Over many steps every real point is held out about equally often, padded slots never, and the
    order is a permutation of the slots (real points first)."""
    n, size, holdout, steps = 40, 64, 5, 4000
    mask = np.arange(size) < n
    split = jax.vmap(SPLITS[form], in_axes=(0, None, None))
    order, avail = split(post.step_keys(post.prng_key(7), steps), mask, holdout)
    order, avail = np.asarray(order), np.asarray(avail)
    assert np.all(np.sort(order, axis=1) == np.arange(size)) and np.all(order[:, :n] < n)
    counts = np.bincount(order[:, :holdout].ravel(), minlength=size)
    expected = steps * holdout / n  # 500, standard deviation √(500 · 7/8) ≈ 21
    assert np.all(np.abs(counts[:n] - expected) < 5 * np.sqrt(expected)) and counts[n:].sum() == 0
    assert np.all((~avail & mask).sum(axis=1) == holdout)
    first = np.bincount(order[:, 0], minlength=n)
    assert np.all(np.abs(first - steps / n) < 5 * np.sqrt(steps / n))
    assert np.mean(order[1:, 0] == order[:-1, 0]) < 0.1


@each_split
def test_holdout_split_is_the_posts_permutation(form):
    """Step t's hold-out set is ``random.permutation(subkey_t, arange(n))[:k]`` of JAX's original threefry
    (the post's), for any n in a padded array, by the sort (k > 1) and by the argmin (k = 1)."""
    with jax.threefry_partitionable(False):
        for n, size, k in ((3, 256, 1), (40, 64, 5), (150, 256, 1), (150, 256, 120), (256, 256, 10)):
            key = jax.random.PRNGKey(n + k)
            for _ in range(3):
                key, sub = jax.random.split(key)
                perm = np.asarray(jax.random.permutation(sub, jnp.arange(n)))
                split = SPLITS[form](jax.random.key_data(sub), np.arange(size) < n, k)
                order, avail = (np.asarray(a) for a in split)
                assert set(order[:k].tolist()) == set(perm[:k].tolist()) and order[0] == perm[0]
                assert np.array_equal(np.flatnonzero(avail), np.sort(perm[k:]))


def _numpy_loss(x, y, order, avail, holdout, ells, u, kernel):
    held = order[:holdout]
    keep = avail[: x.shape[0]]
    pred = sum(u[h] * np_weights(x[held], x[keep], ells[h], kernel) @ y[keep] for h in range(len(ells)))
    return np.mean((pred - y[held]) ** 2)


@pytest.mark.parametrize(("n", "holdout"), [(40, 1), (40, 5), (40, 38), (100, 45), (100, 71)])
def test_padded_heads_loss_equals_unpadded_numpy_reference(n, holdout):
    x, y, xp, yp, mask = _data(n, seed=holdout)
    ells, u = np.array([0.03, 0.1, 0.4]), np.array([0.7, -0.2, 0.5])
    order, avail = (np.asarray(a) for a in SPLITS["formula"](_step_key(holdout, 0), mask, holdout))
    for name in ("gaussian", "laplace", "cauchy"):
        loss, _ = _objective(_params(ells, u), xp, yp, mask, holdout, holdout, kernel_index(name))
        ref = _numpy_loss(x, y, order, avail, holdout, ells, u, name)
        assert float(loss) == pytest.approx(ref, rel=1e-9), name


@pytest.mark.parametrize(("n", "holdout"), [(40, 1), (40, 4), (40, 9), (100, 64), (100, 71)])
def test_chunked_step_equals_all_rows_at_once(n, holdout):
    """Summing loss and gradient over chunks of held-out rows (one program for every hold-out size) gives
    the loss and gradient of predicting every padded row at once with weights 1/k on the held-out ones."""
    _x, _y, xp, yp, mask = _data(n, seed=holdout)
    params = _params(np.array([0.04, 0.15]), np.array([0.8, 0.3]))
    for name in ("gaussian", "tricube"):
        k = kernel_index(name)
        loss, grads = _objective(params, xp, yp, mask, holdout, 3, k)
        ref, ref_grads = _objective(params, xp, yp, mask, holdout, 3, k, chunked=False)
        assert float(loss) == pytest.approx(float(ref), rel=1e-10)
        for g, r in zip(grads, ref_grads, strict=True):
            np.testing.assert_allclose(g, r, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS)
def test_float32_block_with_its_own_gradient_matches_plain_autodiff(kernel):
    """The fast path (float32 block, hand-written backward sweep) gives the plain float64 loss and gradient
    to float32 accuracy."""
    _x, _y, xp, yp, mask = _data(100, seed=1)
    params = _params(np.array([0.03, 0.1, 0.4]), np.array([0.7, -0.2, 0.5]))
    k = kernel_index(kernel)
    loss, grads = _objective(params, xp, yp, mask, 13, 2, k, fast=True)
    ref, ref_grads = _objective(params, xp, yp, mask, 13, 2, k)
    assert float(loss) == pytest.approx(float(ref), rel=1e-5)
    for g, r in zip(grads, ref_grads, strict=True):
        np.testing.assert_allclose(g, r, rtol=2e-3, atol=1e-5 * np.max(np.abs(r)))


@pytest.mark.parametrize("kernel", KERNELS)
def test_post_arithmetic_with_its_own_gradient_matches_the_plain_formula(kernel):
    """``heads.post_model`` (pooled with the sink by the written-out gradient) gives the post's formula and
    JAX's gradient of it, to float32 accuracy; a query far from every key predicts 0 where the kernel's
    tails underflow (the Gaussian's do), as in the post."""
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-3, 3, 40), rng.normal(size=40)
    xq = np.append(rng.uniform(-3, 3, 11), 1e3)  # the last query: every kernel value underflows
    available = np.broadcast_to(rng.uniform(size=40) > 0.2, (12, 40))
    params = (jnp.log(jnp.array([0.2, 0.5, 1.5], jnp.float32)), jnp.array([0.7, -0.2, 0.5], jnp.float32))
    k = kernel_index(kernel)
    g = jnp.asarray(rng.normal(size=12), jnp.float32)
    fast = heads.predictor(x, y, k, arithmetic="post")  # post_model on the data in float32
    plain = reference.plain_post_model(x, y, k)
    out, ref = fast(params, xq, available), plain(params, xq, available)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    assert (float(out[-1]) == 0.0) == (float(ref[-1]) == 0.0)  # 0 where the kernel's tails underflow
    assert kernel != "gaussian" or float(out[-1]) == 0.0
    grads = jax.grad(lambda p: g @ fast(p, xq, available))(params)
    ref_grads = jax.grad(lambda p: g @ plain(p, xq, available))(params)
    for a, b in zip(grads, ref_grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * float(np.max(np.abs(b))))


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("ell", [1e-4, 1e4])
def test_gradients_finite_for_all_kernels_at_extreme_lengthscales(ell, fast):
    _x, _y, xp, yp, mask = _data()
    ells = np.full(HEADS_MAX, ell)
    ells[1] = 0.05  # one ordinary head next to the extreme ones
    params = (np.log(ells), np.full(HEADS_MAX, 1.0 / HEADS_MAX))
    for name in KERNELS:
        loss, (g_ell, g_u) = _objective(params, xp, yp, mask, 4, 0, kernel_index(name), fast=fast)
        assert np.isfinite(float(loss)), name
        assert np.all(np.isfinite(np.asarray(g_ell))) and np.all(np.isfinite(np.asarray(g_u))), name


def test_empty_window_in_training_puts_no_weight_on_masked_keys():
    # two clusters; the held-out point's compact window holds only masked (held-out) keys
    x = np.array([-0.5, -0.499, 0.3, 0.31, 0.32, 0.33] + [0.0] * 10)
    avail = np.arange(16) < 6
    avail[:2] = False  # both left points held out
    for name in ("boxcar", "epanechnikov", "tricube"):
        z = kernel_scores(jnp.asarray(x[:1]), jnp.asarray(x), 0.05, kernel_index(name), heads.OUTSIDE)
        w = np.asarray(pooling.masked_softmax(z, avail))[0]
        assert np.all(w[~avail] == 0.0), name
        assert np.allclose(w[avail], 0.25), name  # the mean of the remaining points, finite


def test_finite_difference_gradient_matches():
    _x, _y, xp, yp, mask = _data()
    params = _params(np.array([0.05, 0.2]), np.array([0.6, 0.5]))
    k = kernel_index("gaussian")
    _, (g, _) = _objective(params, xp, yp, mask, 5, 0, k)
    eps = 1e-5
    for h in range(2):
        hi, lo = params[0].copy(), params[0].copy()
        hi[h] += eps
        lo[h] -= eps
        up = _objective((hi, params[1]), xp, yp, mask, 5, 0, k, with_grad=False)
        down = _objective((lo, params[1]), xp, yp, mask, 5, 0, k, with_grad=False)
        assert float(g[h]) == pytest.approx((float(up) - float(down)) / (2 * eps), rel=1e-5, abs=1e-9)


def test_holdout_chunks_by_hand():
    """Chunks of 64 rows, then of 4, or one more of 64 where more than 10 of 4 would be needed."""
    table = {1: (0, 1), 4: (0, 1), 5: (0, 2), 40: (0, 10), 41: (1, 0), 64: (1, 0), 75: (1, 3), 148: (2, 5)}
    for holdout, chunks in table.items():
        assert holdout_chunks(holdout) == chunks, holdout
        assert holdout_bucket(holdout) == 64 * chunks[0] + 4 * chunks[1]


# ---------------------------------------------------------------------------------------------------------
# fit, fit_seeds, fit_parametric
# ---------------------------------------------------------------------------------------------------------


def test_fit_holdout_10_lands_near_the_leave_one_out_optimum(blog):
    x, y = blog
    best = kv.loo_lengthscale(x, y)
    fits = kv.fit_seeds(x, y, seeds=[0, 1, 2, 3], holdout=10, steps=1000, learning_rate=0.2)
    for f in fits:
        assert f.method == "adam" and not f.diverged
        assert best / 2 <= f.lengthscales[0] <= best * 2, (f.seed, f.lengthscales, best)
        assert f.losses[-100:].mean() < f.losses[:100].mean()
    # fit_seeds is fit, seed by seed
    single = kv.fit(x, y, holdout=10, steps=1000, learning_rate=0.2, seed=2)
    np.testing.assert_allclose(single.lengthscales, fits[2].lengthscales, rtol=1e-9)
    np.testing.assert_allclose(single.losses, fits[2].losses, rtol=1e-9)


@pytest.mark.parametrize("kernel", ["gaussian", "boxcar"])
def test_one_head_program_equals_one_head_of_eight_masked_slots(blog, kernel, monkeypatch):
    x, y = blog
    assert (heads.head_slots(1), heads.head_slots(2), heads.head_slots(HEADS_MAX)) == (1, 8, 8)
    one = kv.fit(x, y, kernel=kernel, holdout=7, steps=200, learning_rate=0.2, seed=3)
    monkeypatch.setattr(heads, "head_slots", lambda h: HEADS_MAX)
    padded = kv.fit(x, y, kernel=kernel, holdout=7, steps=200, learning_rate=0.2, seed=3)
    assert padded.trajectory.shape == one.trajectory.shape == (201, 1)
    np.testing.assert_allclose(one.lengthscales, padded.lengthscales, rtol=1e-6)
    np.testing.assert_allclose(one.losses, padded.losses, rtol=1e-5)  # float32 block: another sum order


def test_fit_result_shapes_start_and_record(blog):
    x, y = blog
    f = kv.fit(x, y, heads=4, holdout=3, steps=50, learning_rate=0.05, seed=7)
    assert f.lengthscales.shape == (4,) and f.mixing.shape == (4,)
    assert f.losses.shape == (50,) and f.trajectory.shape == (51, 4) and f.steps_run == 50
    assert (f.kernel, f.holdout, f.learning_rate, f.seed, f.message) == ("gaussian", 3, 0.05, 7, "")
    # the start is the blog post's linspace(0.1, 3, H) in its convention ℓ_post = √2 ℓ (span of x is 6)
    np.testing.assert_allclose(f.trajectory[0] * np.sqrt(2), np.linspace(0.1, 3, 4), rtol=1e-9)
    np.testing.assert_allclose(f.trajectory[-1], f.lengthscales)
    one = kv.fit(x, y, heads=1, steps=1, learning_rate=1e-12)
    assert one.trajectory[0, 0] * np.sqrt(2) == pytest.approx(1.0)
    assert np.all(np.isfinite(f.losses)) and np.all(f.losses >= 0)


def test_diverging_learning_rate_stops_at_finite_parameters(blog):
    x, y = blog
    f = kv.fit(x, y, heads=8, holdout=1, steps=300, learning_rate=1e6, seed=0)
    assert f.diverged and f.steps_run < 300
    assert "diverged" in f.message
    assert np.all(np.isfinite(f.lengthscales)) and np.all(f.lengthscales > 0)
    assert np.all(np.isfinite(f.mixing))
    assert f.losses.shape == (f.steps_run,) and np.all(np.isfinite(f.losses))
    assert f.trajectory.shape == (f.steps_run + 1, 8) and np.all(np.isfinite(f.trajectory))


def test_boxcar_is_fitted_by_search(blog):
    x, y = blog
    f = kv.fit(x, y, kernel="boxcar", holdout=10, steps=300, seed=0)
    assert f.method == "search" and not f.diverged
    assert "search" in f.message and "gradient" in f.message
    best = kv.loo_lengthscale(x, y, "boxcar")
    assert best / 2 <= f.lengthscales[0] <= best * 2
    assert kv.fit(x, y, kernel="epanechnikov", holdout=10, steps=5).method == "adam"
    # the search, too, runs seed by seed in the program fit uses
    runs = kv.fit_seeds(x, y, seeds=[3, 0], kernel="boxcar", holdout=10, steps=300)
    np.testing.assert_array_equal(runs[1].lengthscales, f.lengthscales)
    np.testing.assert_array_equal(runs[1].losses, f.losses)
    assert runs[0].seed == 3 and runs[0].method == "search"


def test_fit_parametric_with_adam_reaches_the_exact_leave_one_out_optimum():
    ds = kv.d2l_data()
    f = kv.fit_parametric(ds.x, ds.y, steps=1500, learning_rate=0.1, w0=1.0, optimizer="adam")
    assert f.method == "adam" and not f.diverged
    best = kv.loo_lengthscale(ds.x, ds.y)
    assert f.lengthscales[0] == pytest.approx(best, rel=0.02)
    cv = kv.loo_curve(ds.x, ds.y, [f.lengthscales[0]])[0]
    assert f.losses[-1] == pytest.approx(0.5 * len(ds) * cv, rel=1e-3)  # d2l's loss is Σ ½ error² = n/2 CV
    assert f.trajectory.shape == (1501, 1) and f.trajectory[0, 0] == pytest.approx(1.0)


def numpy_d2l_sgd(x, y, w, lr, epochs):
    """d2l's parametric pooling trained as d2l does, written out in NumPy: every point predicted from all
    the others, loss Σ ½(f_i − y_i)², the gradient of s_ij = −½((x_i − x_j) w)² by hand, plain SGD."""
    d2 = (x[:, None] - x[None, :]) ** 2
    off = ~np.eye(x.size, dtype=bool)
    losses = []
    for _ in range(epochs):
        s = np.where(off, -0.5 * d2 * w * w, -np.inf)
        a = np.exp(s - s.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        f = a @ y
        ds = np.where(off, -d2 * w, 0.0)
        df = (a * y[None, :] * ds).sum(axis=1) - f * (a * ds).sum(axis=1)
        losses.append(0.5 * np.sum((f - y) ** 2))
        w = w - lr * np.sum((f - y) * df)
    return w, np.array(losses)


def test_fit_parametric_runs_d2ls_sgd_from_a_uniform_start():
    ds = kv.d2l_data()
    f = kv.fit_parametric(ds.x, ds.y, seed=3)  # d2l: w ~ U(0, 1), SGD at 0.5, 5 epochs, full batch
    w0 = np.random.default_rng(3).uniform()
    assert f.method == "sgd" and f.steps_run == 5 and f.trajectory[0, 0] == pytest.approx(1 / w0)
    w, losses = numpy_d2l_sgd(ds.x, ds.y, w0, 0.5, 5)
    assert 1 / f.lengthscales[0] == pytest.approx(abs(w), rel=1e-9)
    np.testing.assert_allclose(f.losses, losses, rtol=1e-9)


def test_input_validation(blog):
    x, y = blog
    lo, hi = holdout_range(150)
    assert (lo, hi) == (1, 148)
    for bad in ({"holdout": 0}, {"holdout": 149}, {"heads": 9}, {"steps": STEPS_MAX + 1},
                {"learning_rate": -1.0}, {"kernel": "nope"}):
        with pytest.raises(ValueError):
            kv.fit(x, y, **bad)
    with pytest.raises(ValueError):
        kv.fit_seeds(x, y, seeds=list(range(SEEDS_MAX + 1)))


# ---------------------------------------------------------------------------------------------------------
# predict_heads
# ---------------------------------------------------------------------------------------------------------


def test_predict_heads_matches_numpy_reference(blog):
    x, y = blog
    q = np.linspace(-3.5, 3.5, 37)
    ells, u = np.array([0.05, 0.3, 1.5]), np.array([1.1, -0.4, 0.3])
    for name in ("gaussian", "cauchy", "triangular"):
        p = kv.predict_heads(q, x, y, ells, u, kernel=name)
        mean, std, hm, hs, ws = np_heads(q, x, y, ells, u, name)
        np.testing.assert_allclose(p.mean, mean, atol=1e-10)
        np.testing.assert_allclose(p.std, std, atol=1e-10)
        np.testing.assert_allclose(p.head_means, hm, atol=1e-10)
        np.testing.assert_allclose(p.head_stds, hs, atol=1e-10)
        np.testing.assert_allclose(p.weights, ws, atol=1e-12)
        assert np.all(p.std[np.isfinite(p.std)] >= 0)


def test_predict_heads_in_query_blocks_and_without_weights(blog):
    x, y = blog
    q = np.linspace(-3.5, 3.5, 300)  # several query blocks, padded past the first bucket
    ells, u = np.array([0.02, 0.4]), np.array([0.7, 0.3])
    p = kv.predict_heads(q, x, y, ells, u, kernel="epanechnikov")
    mean, std, hm, _hs, ws = np_heads(q, x, y, ells, u, "epanechnikov")
    np.testing.assert_allclose(p.mean, mean, atol=1e-10)  # NaN where the narrow head's window is empty
    np.testing.assert_allclose(p.std, std, atol=1e-10)
    np.testing.assert_allclose(p.head_means, hm, atol=1e-10)
    np.testing.assert_allclose(p.weights, ws, atol=1e-12)
    light = kv.predict_heads(q, x, y, ells, u, kernel="epanechnikov", with_weights=False)
    assert light.weights is None
    for field in ("mean", "std", "head_means", "head_stds"):
        np.testing.assert_array_equal(getattr(light, field), getattr(p, field))


def test_one_head_equals_the_single_head_smoother(blog):
    x, y = blog
    q = np.linspace(-3, 3, 50)
    p = kv.predict_heads(q, x, y, [0.2], [1.0], kernel="epanechnikov")
    s = kv.nadaraya_watson(q, x, y, 0.2, "epanechnikov")
    np.testing.assert_allclose(p.mean, s.mean, atol=1e-12)
    np.testing.assert_allclose(p.std, s.std, atol=1e-12)
    np.testing.assert_allclose(p.weights[0], s.weights, atol=1e-14)
    # and the masked-training loss of a 1-head model is the single smoother's hold-out error
    f = kv.fit(x, y, heads=1, holdout=10, steps=1, learning_rate=1e-12, seed=3)
    assert f.mixing[0] == pytest.approx(1.0)


def test_predict_heads_empty_window_is_nan_with_zero_weights():
    x = np.array([0.0, 0.1, 0.2, 5.0])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    p = kv.predict_heads([2.5, 0.1], x, y, [0.5, 1.0], [0.5, 0.5], kernel="boxcar")
    assert np.isnan(p.mean[0]) and np.isnan(p.std[0]) and np.all(p.weights[:, 0] == 0)
    assert np.isfinite(p.mean[1]) and p.mean[1] == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------------------------
# Static shapes: nothing recompiles
# ---------------------------------------------------------------------------------------------------------


def test_warmup_stops_when_asked():
    stop = threading.Event()
    stop.set()
    report = warmup(40, stop=stop)
    assert not report.complete and report.programs == 0 and report.n_points == (40,)


def test_sweep_after_background_warmup_compiles_nothing():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 5, 150))  # bucket 256, hold-outs 1 … 148: chunks of 4 and of 64 rows
    y = np.sin(x)
    reports: list = []
    thread = threading.Thread(target=lambda: reports.append(warmup(150)))
    thread.start()
    # a page's call while the warm-up runs: correct, whether it compiles its program or finds it compiled
    during = kv.fit(x, y, heads=2, holdout=7, steps=20, seed=4)
    thread.join()
    assert reports and reports[0].complete and reports[0].n_points == (150,)
    q = np.linspace(0, 5, QUERY_POINTS)
    with count_compilations() as count:
        after = kv.fit(x, y, heads=2, holdout=7, steps=20, seed=4)
        for heads in range(1, HEADS_MAX + 1):
            kv.fit(x, y, heads=heads, holdout=(1, 5, 17, 64, 70, 128, 148, 2)[heads - 1], steps=3 + heads,
                   learning_rate=0.01 * heads, seed=heads, kernel=KERNELS[heads % len(KERNELS)])
        for i, kernel in enumerate(KERNELS):
            kv.fit_seeds(x, y, seeds=list(range(1 + i)), kernel=kernel, holdout=(1, 4, 65, 148)[i % 4],
                         steps=(1, 50, STEPS_MAX)[i % 3])
        kv.fit_parametric(x, y, kernel="laplace", steps=17, learning_rate=0.3)
        kv.predict_heads(q, x, y, [0.1, 0.2, 0.3], [1.0, -0.5, 0.5], kernel="tricube")
        kv.predict_heads(x, x, y, [0.4], [1.0])
        kv.nadaraya_watson(q, x, y, 0.7, "cauchy")
        for holdout, heads in ((1, 1), (13, 8), (100, 3)):
            att = kv.fit_attention(x, y, heads=heads, d_qk=heads % D_QK_MAX + 1, holdout=holdout, steps=9,
                                   seed=holdout)
        kv.attention_predict(att, q, x, y)
        attention_kernel(att, np.linspace(0, 5, KERNEL_GRID_POINTS))
        # the replays of training: the layer and the pretrained layer at their snapshots
        replay.layer_path(SimpleNamespace(x=x, y=y), att, q, np.linspace(0, 5, KERNEL_GRID_POINTS))
        replay.pretrain_path(incontext.pretrain(steps=50, heads=2, seed=3))
    assert count.requests == 0, count.names
    np.testing.assert_array_equal(during.lengthscales, after.lengthscales)
    np.testing.assert_array_equal(during.losses, after.losses)


def test_warmup_waits_while_pages_run():
    """Before each call the warm-up waits while ``yield_to()`` is true, so it never compiles alongside a
    page; it asks again before every call."""
    asked: list[float] = []
    start = time.monotonic()

    def busy() -> bool:
        asked.append(time.monotonic() - start)
        return asked[-1] < 0.3  # "a page runs" for the first 0.3 s

    report = warmup(40, yield_to=busy)
    assert report.complete and len(asked) > len(warmup_tasks(40))
    assert report.seconds >= 0.3
