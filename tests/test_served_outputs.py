"""A served model returns its outputs by name (``kernelviz.runtime.serve.Pooled``), and ``serve`` reads them
field by field where ``serve.FIELDS`` says their axes are: anything but the record is refused, each field is
cut to the real queries, keys and heads and scaled back, against plain NumPy, for both placements of the
heads (their own (H, q) and a layer's token components first, (C, H, q))."""

from __future__ import annotations

import re
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
import pytest
from jax import Array

from kernelviz.runtime import serve
from kernelviz.runtime.shapes import param

RNG = np.random.default_rng(11)
X = np.sort(RNG.uniform(-2.0, 2.0, 11))
Y = 40.0 * np.sin(X) + RNG.normal(size=11)  # max |y| far from 1: the scale shows
Q = np.linspace(-2.5, 2.5, 7)
ELLS = np.array([0.3, 0.8, 1.6])  # three real heads of SLOTS
SLOTS = 4


def _weights(queries: Array, keys: Array, available: Array, ell: Array) -> Array:
    """Gaussian weights w_i(x) = K((x − x_i)/ℓ) / Σ_j K((x − x_j)/ℓ) over the available keys, (q, n)."""
    s = jnp.where(available, -0.5 * jnp.square((queries[:, None] - keys[None, :]) / ell), -jnp.inf)
    e = jnp.exp(s - jnp.max(s, axis=1, keepdims=True))
    return e / jnp.sum(e, axis=1, keepdims=True)


def _moments(w: Array, v: Array) -> tuple[Array, Array]:
    mean = w @ v
    return mean, jnp.sum(w * jnp.square(v - mean[..., None]), axis=-1)


def one_head(queries: Array, keys: Array, values: Array, available: Array, ell: Array) -> serve.Pooled:
    w = _weights(queries, keys, available, ell)
    mean, var = _moments(w, values)
    return serve.Pooled(mean=mean, var=var, weights=w)


def heads_first(queries: Array, keys: Array, values: Array, available: Array, ells: Array) -> serve.Pooled:
    """Heads on the first axis: head means (H, q), weights (H, q, n); the mixture is head 0."""
    w = jnp.stack([_weights(queries, keys, available, ell) for ell in ells])
    means, variances = _moments(w, values)
    return serve.Pooled(mean=means[0], var=variances[0], head_means=means, head_vars=variances, weights=w)


def components_first(queries: Array, keys: Array, values: Array, available: Array, ells: Array
                     ) -> serve.Pooled:
    """A layer's placement: every head pools two components (v, 2v), head means (2, H, q)."""
    w = jnp.stack([_weights(queries, keys, available, ell) for ell in ells])
    means, variances = zip(*(_moments(w, c) for c in (values, 2.0 * values)), strict=True)
    return serve.Pooled(mean=means[0][0], var=variances[0][0], head_means=jnp.stack(means),
                        head_vars=jnp.stack(variances), weights=w)


def one_more_array(queries: Array, keys: Array, values: Array, available: Array, ell: Array) -> tuple:
    pooled = one_head(queries, keys, values, available, ell)
    return pooled.mean, pooled.var, pooled.weights, jnp.zeros_like(pooled.weights)


def plain_tuple(queries: Array, keys: Array, values: Array, available: Array, ell: Array) -> tuple:
    pooled = one_head(queries, keys, values, available, ell)
    return pooled.mean, pooled.var


class Smooth(NamedTuple):
    mean: Array
    var: Array
    weights: Array


def other_record(queries: Array, keys: Array, values: Array, available: Array, ell: Array) -> Smooth:
    pooled = one_head(queries, keys, values, available, ell)
    return Smooth(pooled.mean, pooled.var, pooled.weights)


def numpy_heads(ells: np.ndarray, values: np.ndarray = Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Plain NumPy on the real points: weights (H, q, n), means and stds (H, q)."""
    k = np.exp(-0.5 * ((Q[None, :, None] - X[None, None, :]) / ells[:, None, None]) ** 2)
    w = k / k.sum(axis=2, keepdims=True)
    mean = w @ values
    return w, mean, np.sqrt(np.sum(w * (values - mean[..., None]) ** 2, axis=2))


@pytest.mark.parametrize("model", [one_more_array, plain_tuple, other_record])
def test_anything_but_the_record_is_refused_naming_the_model(model) -> None:
    p = serve.problem(Q, X, Y)
    with pytest.raises(TypeError, match=re.escape(f"{model.__name__} must return a serve.Pooled record")):
        serve.serve(model, p, 0.5)


def test_read_refuses_a_plain_tuple() -> None:
    p = serve.problem(Q, X, Y)
    with pytest.raises(TypeError, match=r"serve\.Pooled"):
        serve.read((np.zeros(p.queries.shape), np.zeros(p.queries.shape)), p)


def test_one_head_is_cut_to_the_real_queries_and_keys_and_scaled() -> None:
    out = serve.serve(one_head, serve.problem(Q, X, Y), 0.5)
    w, mean, std = numpy_heads(np.array([0.5]))
    assert out.mean.shape == out.std.shape == (Q.size,) and out.weights.shape == (Q.size, X.size)
    assert out.head_means is None and out.head_stds is None
    np.testing.assert_allclose(out.weights, w[0], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(out.mean, mean[0], rtol=1e-12)
    np.testing.assert_allclose(out.std, std[0], rtol=1e-10)
    assert serve.serve(one_head, serve.problem(Q, X, Y), 0.5, weights=False).weights is None


def test_heads_first_are_cut_to_the_real_heads() -> None:
    out = serve.serve(heads_first, serve.problem(Q, X, Y), param(ELLS, SLOTS, 1.0), heads=ELLS.size)
    w, mean, std = numpy_heads(ELLS)
    assert out.head_means.shape == out.head_stds.shape == (ELLS.size, Q.size)
    assert out.weights.shape == (ELLS.size, Q.size, X.size)
    np.testing.assert_allclose(out.weights, w, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(out.head_means, mean, rtol=1e-12)
    np.testing.assert_allclose(out.head_stds, std, rtol=1e-10)
    np.testing.assert_allclose(out.mean, mean[0], rtol=1e-12)


def test_heads_after_a_leading_axis_are_cut_to_the_real_heads() -> None:
    out = serve.serve(components_first, serve.problem(Q, X, Y), param(ELLS, SLOTS, 1.0), heads=ELLS.size)
    w, mean, std = numpy_heads(ELLS)
    assert out.head_means.shape == out.head_stds.shape == (2, ELLS.size, Q.size)
    np.testing.assert_allclose(out.head_means, np.stack([mean, 2.0 * mean]), rtol=1e-12)
    np.testing.assert_allclose(out.head_stds, np.stack([std, 2.0 * std]), rtol=1e-10)
    np.testing.assert_allclose(out.weights, w, rtol=1e-12, atol=1e-300)


def test_every_field_is_cut_where_its_axes_are() -> None:
    """Hand-made padded outputs, each entry its own index: the cut is NumPy's slice of the real corner."""
    p = serve.problem(Q, X, Y)
    qp, kp, h, nq, nk = p.queries.shape[0], p.keys.shape[0], 2, Q.size, X.size
    ramp = np.arange(qp, dtype=np.float64)
    heads = np.arange(2 * SLOTS * qp, dtype=np.float64).reshape(2, SLOTS, qp)
    weights = np.arange(SLOTS * qp * kp, dtype=np.float64).reshape(SLOTS, qp, kp)
    record = serve.Pooled(mean=ramp, var=ramp**2, head_means=heads, head_vars=heads, weights=weights)
    out = serve.read(record, p, heads=h)
    np.testing.assert_array_equal(out.mean, ramp[:nq] * p.scale)
    np.testing.assert_array_equal(out.std, ramp[:nq] * p.scale)
    np.testing.assert_array_equal(out.head_means, heads[:, :h, :nq] * p.scale)
    np.testing.assert_array_equal(out.head_stds, np.sqrt(heads[:, :h, :nq]) * p.scale)
    np.testing.assert_array_equal(out.weights, weights[:h, :nq, :nk])


def test_a_field_off_the_padded_problem_or_the_wrong_heads_is_an_error() -> None:
    p = serve.problem(Q, X, Y)
    qp = p.queries.shape[0]
    with pytest.raises(ValueError, match="mean has shape"):
        serve.read(serve.Pooled(mean=np.zeros(qp + 1), var=np.zeros(qp)), p)
    with pytest.raises(ValueError, match="weights has shape"):
        serve.read(serve.Pooled(mean=np.zeros(qp), var=np.zeros(qp), weights=np.zeros((qp, 3))), p)
    with pytest.raises(ValueError, match="heads="):
        serve.serve(heads_first, p, param(ELLS, SLOTS, 1.0))  # heads not said
    with pytest.raises(ValueError, match="heads="):
        serve.serve(one_head, p, 0.5, heads=1)
    with pytest.raises(ValueError, match="head_means has shape"):
        serve.serve(heads_first, p, param(ELLS, SLOTS, 1.0), heads=SLOTS + 1)


def grid_model(queries: Array, keys: Array, values: Array, available: Array, ells: Array) -> serve.Pooled:
    means, variances = zip(*(_moments(_weights(queries, keys, available, ell), values) for ell in ells),
                           strict=True)
    return serve.Pooled(mean=jnp.stack(means), var=jnp.stack(variances))


def test_a_grid_keeps_its_leading_axis_and_is_cut_to_its_values() -> None:
    p = serve.problem(Q, X, Y)
    out = serve.read(serve.over(grid_model, p, serve.Grid(ELLS, 4)), p, model=grid_model)
    _, mean, std = numpy_heads(ELLS)
    assert out.mean.shape == out.std.shape == (ELLS.size, Q.size) and out.weights is None
    np.testing.assert_allclose(out.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(out.std, std, rtol=1e-10)
