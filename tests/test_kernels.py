"""The kernel zoo against its closed forms, and the safety of log K at the edges."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import kernelviz as kv
from kernelviz.core import kernels
from kernelviz.core.kernels import get_kernel, log_kernel

U = np.array([-3.0, -1.0, -0.999, -0.5, 0.0, 0.25, 0.5, 0.999, 1.0, 1.5, 40.0])

CLOSED_FORMS = {
    "gaussian": lambda u: np.exp(-(u**2) / 2),
    "laplace": lambda u: np.exp(-np.abs(u)),
    "cauchy": lambda u: 1 / (1 + u**2),
    "boxcar": lambda u: (np.abs(u) <= 1).astype(float),
    "epanechnikov": lambda u: np.maximum(0, 1 - u**2),
    "triangular": lambda u: np.maximum(0, 1 - np.abs(u)),
    "tricube": lambda u: np.maximum(0, 1 - np.abs(u) ** 3) ** 3,
}


def test_the_zoo_has_the_required_kernels():
    assert {"gaussian", "boxcar", "epanechnikov", "triangular"} <= set(kv.KERNELS)
    assert set(kv.KERNELS) == set(CLOSED_FORMS)


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_closed_form(kernel):
    np.testing.assert_allclose(kv.kernel_value(U, kernel), CLOSED_FORMS[kernel](U), rtol=1e-12, atol=0)


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_traced_index_matches_name(kernel):
    by_index = jax.jit(lambda u, i: log_kernel(u, i))(U, kernels.kernel_index(kernel))
    np.testing.assert_array_equal(by_index, log_kernel(U, kernel))


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_kernel_peaks_at_zero_and_is_symmetric(kernel):
    u = np.linspace(-2, 2, 101)
    k = np.asarray(kv.kernel_value(u, kernel))
    assert k[50] == pytest.approx(1.0)
    np.testing.assert_allclose(k, k[::-1])
    assert np.all(k <= 1.0)


@pytest.mark.parametrize("kernel", kv.KERNELS)
def test_outside_support_and_finite_gradients(kernel):
    spec = get_kernel(kernel)
    logk = log_kernel(np.array([2.0]), kernel, outside=-1e30)
    want = -1e30 if spec.compact else float(np.log(CLOSED_FORMS[kernel](2.0)))
    assert float(logk[0]) == pytest.approx(want)
    grad = jax.vmap(jax.grad(lambda u: log_kernel(u, kernel, outside=-1e30)))(jnp.asarray(U))
    assert np.all(np.isfinite(grad))


def test_huge_scaled_distance_is_finite_or_outside():
    for kernel in kv.KERNELS:
        v = np.asarray(log_kernel(np.array([1e200, -np.finfo(float).max]), kernel))
        assert np.all(np.isfinite(v) | (v == -np.inf))


def test_unknown_kernel():
    with pytest.raises(ValueError, match="choose one of"):
        get_kernel("rbf")
