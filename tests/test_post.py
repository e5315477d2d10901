"""The blog post's sample, key sequence and runs, against a re-run of the post's code
(``tests/reference/post_run.py`` wrote ``post_run.json``) and against what the post printed."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.data import post

REF = json.loads((Path(__file__).parent / "reference" / "post_run.json").read_text())
SQRT2 = math.sqrt(2.0)


def test_jax_still_has_the_generator_the_post_used():
    """The post's numbers come from JAX's original threefry: without it, no JAX draws the post's sample."""
    assert hasattr(jax, "threefry_partitionable"), (
        "this JAX no longer offers jax.threefry_partitionable: the blog data set can no longer be the post's "
        "own sample; pin jax below this version or draw the sample with kernelviz.data.post's threefry code"
    )
    with jax.threefry_partitionable(False):
        eps = jax.random.normal(jax.random.split(jax.random.PRNGKey(2024))[1], (5,), jnp.float32)
    assert eps[:3].tolist() == pytest.approx([0.77631515, -0.8598981, 0.4191782], abs=1e-7), (
        "JAX's original threefry now gives other numbers than the post's")


def test_blog_data_is_the_posts_own_sample():
    ds = kv.blog_data()
    assert np.array_equal(ds.x, np.array(REF["x"])) and np.array_equal(ds.y, np.array(REF["y"]))


def test_drawing_the_sample_leaves_jaxs_generator_setting_alone():
    before = jax.config.jax_threefry_partitionable
    kv.blog_data(40, seed=3)
    assert jax.config.jax_threefry_partitionable == before


def test_other_sizes_and_seeds_are_drawn_the_same_way():
    ds = kv.blog_data(37, seed=5)
    with jax.threefry_partitionable(False):
        key = jax.random.split(jax.random.PRNGKey(5))[1]
        eps = np.asarray(jax.random.normal(key, (37,), jnp.float32), np.float64)
    np.testing.assert_allclose(ds.y, ds.true_mean(ds.x) + ds.noise_sd(ds.x) * eps, atol=1e-6)
    assert not np.array_equal(ds.y, kv.blog_data(37, seed=6).y)


@pytest.mark.parametrize("seed", [2024, 0, 7])
def test_the_noise_is_jaxs_normal_draw_for_every_n_from_one_program(seed):
    from kernelviz.app.warmup import count_compilations

    sizes = [*range(3, 260), 1000, 1024, 1025]
    post.noise(seed, 3), post.noise(seed, 1000), post.noise(seed, 1025)  # three padded sizes
    with count_compilations() as count:
        ours = [post.noise(seed, n) for n in sizes]
    here = threading.current_thread().name  # a server thread left by another test may compile meanwhile
    assert [t for t in count.threads if t == here] == []
    with jax.threefry_partitionable(False):
        key = jax.random.split(jax.random.PRNGKey(seed))[1]
        for n, eps in zip(sizes, ours, strict=True):
            assert np.array_equal(eps, np.asarray(jax.random.normal(key, (n,), jnp.float32), np.float64)), n


def test_the_sample_is_computed_as_the_post_computes_it_op_by_op():
    for n in (3, 4, 6, 8, 10, 57, 150, 256, 300):
        ds = kv.blog_data(n, seed=11)
        x = jnp.linspace(-3.0, 3.0, n, dtype=jnp.float32)
        eps = jnp.asarray(post.noise(11, n), jnp.float32)
        y = 0.5 * jnp.sin(x) - 1 * jnp.sin(3 * x) + 0.2 * jnp.square(x) + (0.2 + 0.05 * jnp.abs(x)) * eps
        assert np.array_equal(ds.x, np.asarray(x, np.float64))
        assert np.array_equal(ds.y, np.asarray(y, np.float64))


def test_split_and_experiment_keys_are_the_posts():
    assert post.experiment_keys().tolist() == [r["key"] for r in REF["holdout"] + REF["heads"]]
    with jax.threefry_partitionable(False):
        for seed in (0, 7, 2**40 + 3):
            key = jax.random.PRNGKey(seed)
            assert np.array_equal(post.prng_key(seed), key)
            new, sub = jax.random.split(key)
            assert np.array_equal(post.split(key)[0], new) and np.array_equal(post.split(key)[1], sub)


@pytest.mark.parametrize("n", [3, 4, 149, 150, 255, 256])
def test_permutation_keys_sort_into_the_posts_permutation(n):
    with jax.threefry_partitionable(False):
        key = jax.random.PRNGKey(n)
        perm = np.asarray(jax.random.permutation(key, jnp.arange(n)))
    bits = np.asarray(post.permutation_keys(np.asarray(key), n, 256))[:n]
    assert np.array_equal(np.lexsort((np.arange(n), bits)), perm)


def test_which_experiment_a_run_repeats():
    assert [post.experiment_of(False, 1, h, 150) for h in (1, 10, 75, 120, 7)] == [0, 1, 2, 3, 0]
    assert [post.experiment_of(True, h, 1, 150) for h in (1, 2, 4, 8, 3)] == [4, 5, 6, 7, 4]
    assert post.experiment_of(True, 2, 5, 150) == 4


@pytest.fixture(scope="module")
def blog():
    return kv.blog_data()


@pytest.mark.parametrize("panel", range(4))
def test_the_posts_holdout_runs_are_reprinted(blog, panel):
    """Chapter 2's panels: the learned ℓ_post of the re-run to 1e-5, every step's loss to 1e-4, and the
    title the post's figure shows (0.13, 0.14, 0.21, 0.30)."""
    ref = REF["holdout"][panel]
    f = kv.fit(blog.x, blog.y, holdout=ref["holdout"], steps=100, seed=2024, arithmetic="post")
    assert SQRT2 * f.lengthscales[0] == pytest.approx(ref["lengthscale_post"], rel=1e-5)
    np.testing.assert_allclose(f.losses, ref["losses"], atol=1e-4)
    assert f"{SQRT2 * f.lengthscales[0]:.2f}" == ("0.13", "0.14", "0.21", "0.30")[panel]


def test_kernelviz_softmax_differs_from_the_post_only_at_holdout_120(blog):
    """With 30 points left some held-out points see only underflowing kernel values: the post predicts 0
    there, kernelviz's softmax does not, and ℓ_post ends at 0.35 instead of 0.30."""
    own = [kv.fit(blog.x, blog.y, holdout=r["holdout"], steps=100, seed=2024) for r in REF["holdout"]]
    shown = [f"{SQRT2 * f.lengthscales[0]:.2f}" for f in own]
    assert shown == ["0.13", "0.14", "0.21", "0.35"]


@pytest.mark.parametrize("panel", range(3))
def test_the_posts_heads_table_is_reprinted(blog, panel):
    """Chapter 3's 1, 2 and 4 heads: every printed u_h and ℓ_post,h to its two decimals, but the 4-head
    model's widest head (11.62 here, 11.58 in the re-run, 11.60 printed: its loss is flat in ℓ there)."""
    h = (1, 2, 4)[panel]
    f = kv.fit(blog.x, blog.y, heads=h, holdout=1, steps=1000, seed=2024, multihead=True, arithmetic="post")
    mh = defaults.MULTIHEAD
    assert [f"{u:.2f}" for u in f.mixing] == [f"{u:.2f}" for u in mh.post_mixing[panel]]
    ells = [f"{SQRT2 * ell:.2f}" for ell in f.lengthscales]
    printed = [f"{ell:.2f}" for ell in mh.post_lengthscales[panel]]
    assert ells[:3] == printed[:3]
    np.testing.assert_allclose(SQRT2 * f.lengthscales, REF["heads"][panel]["lengthscales_post"], rtol=5e-3)
