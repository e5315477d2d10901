"""kernelviz: attention grown out of kernel regression, as an interactive dashboard.

The public API used by the pages, the tests and the benchmarks::

    import kernelviz as kv
    s = kv.nadaraya_watson(queries, keys, values, lengthscale, kernel="gaussian", with_weights=True)
    kv.loo_lengthscale(x, y, kernel="gaussian")
"""

from kernelviz import _jax  # noqa: F401  (float64 and the compilation cache, before anything else)
from kernelviz.kernels import KERNELS, Kernel, get_kernel, kernel_value, log_kernel
from kernelviz.smoothing import Smooth, knn_average, loo_curve, loo_lengthscale, nadaraya_watson

__all__ = [
    "KERNELS",
    "Kernel",
    "Smooth",
    "get_kernel",
    "kernel_value",
    "knn_average",
    "log_kernel",
    "loo_curve",
    "loo_lengthscale",
    "nadaraya_watson",
]
