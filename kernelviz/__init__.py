"""kernelviz: attention grown out of kernel regression, as an interactive dashboard.

The public API used by the pages, the tests and the benchmarks::

    import kernelviz as kv
    s = kv.nadaraya_watson(queries, keys, values, lengthscale, kernel="gaussian", with_weights=True)
    kv.loo_lengthscale(x, y, kernel="gaussian")
"""

from kernelviz import _jax  # noqa: F401  (float64 and the compilation cache, before anything else)
from kernelviz.data import (
    DATASETS,
    MAX_CSV_BYTES,
    MAX_CSV_MB,
    MAX_CSV_ROWS,
    DataError,
    Dataset,
    blog_data,
    d2l_data,
    dataset_from_arrays,
    load_csv,
    make_dataset,
    subsample,
)
from kernelviz.kernels import KERNELS, Kernel, get_kernel, kernel_value, log_kernel
from kernelviz.smoothing import Smooth, knn_average, loo_curve, loo_lengthscale, nadaraya_watson
from kernelviz.training import (
    HEADS_MAX,
    SEEDS_MAX,
    STEPS_MAX,
    TRAIN_MAX_POINTS,
    FitResult,
    HeadsPrediction,
    fit,
    fit_parametric,
    fit_seeds,
    holdout_range,
    predict_heads,
)

__all__ = [
    "DATASETS",
    "HEADS_MAX",
    "KERNELS",
    "MAX_CSV_BYTES",
    "MAX_CSV_MB",
    "MAX_CSV_ROWS",
    "SEEDS_MAX",
    "STEPS_MAX",
    "TRAIN_MAX_POINTS",
    "DataError",
    "Dataset",
    "FitResult",
    "HeadsPrediction",
    "Kernel",
    "Smooth",
    "blog_data",
    "d2l_data",
    "dataset_from_arrays",
    "fit",
    "fit_parametric",
    "fit_seeds",
    "get_kernel",
    "holdout_range",
    "kernel_value",
    "knn_average",
    "load_csv",
    "log_kernel",
    "loo_curve",
    "loo_lengthscale",
    "make_dataset",
    "nadaraya_watson",
    "predict_heads",
    "subsample",
]
