"""The blog post's random numbers: its sample and its key sequence, as JAX drew them in January 2024.

The post ("From kernel regression to the transformer") starts from ``key = random.PRNGKey(2024)`` and splits
it, ``key, subkey = random.split(key)``: once for its noise ``random.normal(subkey, (150,))``, then once per
experiment (hold-out 1, 10, 75, 120 of its ``GaussianKernel``, then 1, 2, 4, 8 heads of its
``MultiheadGaussianKernel``), and inside ``train`` once per step, whose subkey draws that step's hold-out
set ``random.permutation(subkey, arange(n))[:holdout]``.

JAX drew those numbers with its threefry generator in its original form (``jax_threefry_partitionable``
False, JAX's default until 0.5). ``split`` and ``permutation_keys`` below are that form written on the
threefry hash itself (``jax.extend.random.threefry2x32_p``), and so is the normal draw of the sample
(``normal``): they need no global setting, run inside a compiled loop, and take the number of points n as a
traced value over padded slots (one program for every n).
``tests/test_post.py`` checks all of it against JAX's sampler in that mode and against a re-run of the
post's code (``tests/reference/post_run.py``).
"""

from __future__ import annotations

from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array
from jax.extend.random import threefry2x32_p, threefry_2x32

from kernelviz.runtime import serve

__all__ = [
    "EXPERIMENTS", "POST_SEED", "erf_normals", "experiment_key", "experiment_keys", "experiment_of", "noise",
    "normal", "permutation_keys", "post_holdouts", "prng_key", "random_bits", "split", "step_keys",
]

POST_SEED = 2024  # the post's random.PRNGKey(2024)
#: The post's experiments in the order it runs them, each taking the next split of the key.
EXPERIMENTS = ("holdout 1", "holdout 10", "holdout n/2", "holdout 0.8n", "heads 1", "heads 2", "heads 4",
               "heads 8")


def prng_key(seed: int) -> Array:
    """``random.PRNGKey(seed)`` as raw uint32[2]: the high and low 32 bits of the 64-bit seed."""
    s = int(seed) % 2**64
    return jnp.array([s >> 32, s & 0xFFFFFFFF], dtype=jnp.uint32)


def split(key: Array) -> tuple[Array, Array]:
    """``key, subkey = random.split(key)``: threefry of the counts 0, 1, 2, 3, reshaped to two keys."""
    words = threefry_2x32(key, jnp.arange(4, dtype=jnp.uint32))
    return words[:2], words[2:]


@lru_cache(maxsize=512)
def experiment_keys(seed: int = POST_SEED) -> np.ndarray:
    """The subkeys the post passes to ``train`` for its eight experiments (``EXPERIMENTS``): (8, 2) uint32,
    read-only (remembered per seed: a rerun of a page would otherwise spend some 20 ms on these splits).

    The first split of ``PRNGKey(seed)`` drew the data; each experiment then takes the next split.
    """
    key, _ = split(prng_key(seed))
    out = []
    for _ in EXPERIMENTS:
        key, sub = split(key)
        out.append(sub)
    keys = np.array(jnp.stack(out))
    keys.setflags(write=False)
    return keys


def experiment_key(seed: int, experiment: int) -> np.ndarray:
    """The subkey of experiment ``experiment`` (an index into ``EXPERIMENTS``) of ``PRNGKey(seed)``."""
    return experiment_keys(seed)[int(experiment)]


def step_keys(key: Array, steps: int) -> Array:
    """The subkeys of ``train``'s first ``steps`` steps, ``key, subkey = random.split(key)`` each.

    Returns (steps, 2) uint32.
    """

    def body(k, _):
        k, sub = split(k)
        return k, sub

    return jax.lax.scan(body, key, None, length=steps)[1]


def random_bits(key: Array, n: Array, size: int) -> Array:
    """The words of ``random.bits(key, (n,))`` (32 bits each), one per slot of ``size`` ≥ n: (size,) uint32.

    They are the threefry hash of the counts 0 … n − 1 taken as pairs (j, j + h), h = ⌈n/2⌉ (the pair of
    the last j of an odd n is (j, 0)): slot i < h gets the pair's first word, slot i ≥ h the second word of
    pair i − h. n may be traced; slots i ≥ n are padding, their value is meaningless.
    """
    i = jnp.arange(size, dtype=jnp.uint32)
    n = jnp.asarray(n, jnp.uint32)
    h = (n + 1) // 2
    first = i < h
    j = jnp.where(first, i, i - h)
    partner = jnp.where(j + h < n, j + h, jnp.uint32(0))
    a, b = threefry2x32_p.bind(key[0], key[1], j, partner)
    return jnp.where(first, a, b)


def permutation_keys(key: Array, n: Array, size: int) -> Array:
    """The 32-bit sort keys of ``random.permutation(key, arange(n))``, one per slot of ``size`` ≥ n: (size,).

    The permutation splits its key once and sorts ``arange(n)`` by ``random_bits(subkey, n)`` (one round up
    to n = 1,625).
    """
    return random_bits(split(key)[1], n, size)


SQRT2_F32 = np.float32(np.sqrt(2.0))
BELOW_ONE = np.nextafter(np.float32(-1.0), np.float32(0.0))  # the open lower end of normal's uniform draw


def normal(key: Array, n: Array, size: int) -> Array:
    """``random.normal(key, (n,))`` in float32, one value per slot of ``size`` ≥ n (padding after n): (size,).

    As JAX draws it: u = 1.m − 1 from the top 23 bits m of each word (``random_bits``), scaled onto
    [nextafter(−1, 0), 1), and ε = √2 erf⁻¹(u). n is traced, so one program serves every n of a size
    (``noise`` runs it through ``kernelviz.runtime.serve.sized``).
    """
    mantissa = jax.lax.shift_right_logical(random_bits(key, n, size), jnp.uint32(32 - 23))
    one = jnp.uint32(np.float32(1.0).view(np.uint32))
    floats = jax.lax.bitcast_convert_type(mantissa | one, jnp.float32) - jnp.float32(1.0)
    return erf_normals(floats * (jnp.float32(1.0) - BELOW_ONE) + BELOW_ONE)


def erf_normals(u: Array) -> Array:
    """Standard normals from uniforms u on [−1, 1), as ``jax.random.normal`` makes them: ε = √2 erf⁻¹(u),
    u raised to ``BELOW_ONE`` (erf⁻¹(−1) = −∞)."""
    return SQRT2_F32 * jax.lax.erf_inv(jnp.maximum(BELOW_ONE, u))


def noise(seed: int, n: int) -> np.ndarray:
    """ε of the post's sample: ``random.normal(subkey, (n,))`` in float32 after ``key, subkey =
    random.split(random.PRNGKey(seed))`` (n values, float64)."""
    _, sub = split(prng_key(seed))
    return np.asarray(serve.sized(normal, int(n), sub), dtype=np.float64)  # one program per bucket of n


def post_holdouts(n: int) -> tuple[int, ...]:
    """The post's hold-out sizes for n points: 1, 10, n // 2 and int(0.8 n) (150 points: 1, 10, 75, 120)."""
    return 1, 10, int(n) // 2, int(0.8 * int(n))


def experiment_of(multihead: bool, heads: int, holdout: int, n: int) -> int:
    """The post's experiment a training run repeats (an index into ``EXPERIMENTS``), so it takes that
    experiment's key: one GaussianKernel at a hold-out size of the post's figure, or the
    MultiheadGaussianKernel at 1, 2, 4 or 8 heads and hold-out 1. Any other run takes the first key of its
    model's series (0 for one kernel, 4 for several heads)."""
    if not multihead:
        sizes = post_holdouts(n)
        return sizes.index(holdout) if holdout in sizes else 0
    panels = (1, 2, 4, 8)
    return 4 + (panels.index(heads) if holdout == 1 and heads in panels else 0)
