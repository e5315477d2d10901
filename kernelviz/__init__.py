"""kernelviz: attention grown out of kernel regression, as an interactive dashboard.

The public API used by the pages, the tests and the benchmarks::

    import kernelviz as kv
    s = kv.nadaraya_watson(queries, keys, values, lengthscale, kernel="gaussian", with_weights=True)
    kv.loo_lengthscale(x, y, kernel="gaussian")
"""

from kernelviz.app.defaults import KERNEL_GRID_POINTS
from kernelviz.app.warmup import (
    QUERY_POINTS,
    CompileCount,
    WarmupReport,
    count_compilations,
    warmup,
    warmup_tasks,
)
from kernelviz.core.kernels import KERNELS, Kernel, get_kernel, kernel_value, kernel_values, log_kernel
from kernelviz.data.csvfile import MAX_CSV_BYTES, MAX_CSV_MB, MAX_CSV_ROWS, dataset_from_arrays, load_csv
from kernelviz.data.datasets import DATASETS, DataError, Dataset, blog_data, d2l_data, make_dataset, subsample
from kernelviz.data.tasks import FAMILIES, Prompts, sample_prompts
from kernelviz.models.attention import (
    D_QK_MAX,
    D_V_MAX,
    AttentionFit,
    AttentionPrediction,
    GaussianAttention,
    attention_kernel,
    attention_loo_error,
    attention_predict,
    attention_values,
    dot_product_attention,
    gaussian_attention_params,
    gaussian_layer,
)
from kernelviz.models.attention.selfattention import (
    SelfAttentionWeights,
    as_self_attention,
    multihead_self_attention,
    self_attention,
    softmax_attention,
)
from kernelviz.models.attention.training import STARTS, fit_attention, start_lengthscales
from kernelviz.models.heads import SEEDS_MAX, FitResult, fit, fit_seeds, initial_lengthscales
from kernelviz.models.incontext import InContextPrediction, Pretrained, in_context_predict, pretrain
from kernelviz.models.incontext.evaluation import (
    Evaluation,
    LengthscaleSearch,
    SweepRow,
    Window,
    best_fixed_lengthscale,
    evaluate,
    in_context_error,
    learned_kernel,
    learned_window,
    loo_window,
    window_sweep,
)
from kernelviz.models.loo import loo_curve, loo_lengthscale
from kernelviz.models.parametric import fit_parametric
from kernelviz.models.smoothing import (
    HEADS_MAX,
    HeadsPrediction,
    Smooth,
    knn_average,
    nadaraya_watson,
    predict_heads,
)
from kernelviz.models.training import (
    STEPS_MAX,
    TRAIN_MAX_POINTS,
    holdout_bucket,
    holdout_chunks,
    holdout_range,
)
from kernelviz.runtime import jax_setup as _jax  # noqa: F401  (float64 and the compilation cache, before anything else)

__all__ = [
    "DATASETS",
    "D_QK_MAX",
    "D_V_MAX",
    "FAMILIES",
    "HEADS_MAX",
    "KERNELS",
    "KERNEL_GRID_POINTS",
    "MAX_CSV_BYTES",
    "MAX_CSV_MB",
    "MAX_CSV_ROWS",
    "QUERY_POINTS",
    "SEEDS_MAX",
    "STARTS",
    "STEPS_MAX",
    "TRAIN_MAX_POINTS",
    "AttentionFit",
    "AttentionPrediction",
    "CompileCount",
    "DataError",
    "Dataset",
    "Evaluation",
    "FitResult",
    "GaussianAttention",
    "HeadsPrediction",
    "InContextPrediction",
    "Kernel",
    "LengthscaleSearch",
    "Pretrained",
    "Prompts",
    "SelfAttentionWeights",
    "Smooth",
    "SweepRow",
    "WarmupReport",
    "Window",
    "as_self_attention",
    "attention_kernel",
    "attention_loo_error",
    "attention_predict",
    "attention_values",
    "best_fixed_lengthscale",
    "blog_data",
    "count_compilations",
    "d2l_data",
    "dataset_from_arrays",
    "dot_product_attention",
    "evaluate",
    "fit",
    "fit_attention",
    "fit_parametric",
    "fit_seeds",
    "gaussian_attention_params",
    "gaussian_layer",
    "get_kernel",
    "holdout_bucket",
    "holdout_chunks",
    "holdout_range",
    "in_context_error",
    "in_context_predict",
    "initial_lengthscales",
    "kernel_value",
    "kernel_values",
    "knn_average",
    "learned_kernel",
    "learned_window",
    "load_csv",
    "log_kernel",
    "loo_curve",
    "loo_lengthscale",
    "loo_window",
    "make_dataset",
    "multihead_self_attention",
    "nadaraya_watson",
    "predict_heads",
    "pretrain",
    "sample_prompts",
    "self_attention",
    "softmax_attention",
    "start_lengthscales",
    "subsample",
    "warmup",
    "warmup_tasks",
    "window_sweep",
]
