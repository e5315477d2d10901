"""kernelviz: attention grown out of kernel regression.

What a notebook needs, one chapter at a time (every function takes NumPy arrays or lists and returns NumPy
arrays in named records; float64 inside each call, whatever the caller's JAX settings)::

    import kernelviz as kv
    data = kv.blog_data()                                    # the blog post's 150 points
    s = kv.nadaraya_watson(data.grid(256), data.x, data.y, 0.3, with_weights=True)
    s.mean, s.std, s.weights                                 # f̂(x*), s(x*) and w_i(x*)

Data
    ``Dataset`` (x, y, the truth where known), ``DATASETS`` (the built-in names), ``make_dataset(name)``,
    ``blog_data()`` (the blog post's own sample) and ``d2l_data()`` (kernelviz's draw of d2l's data set, which
    d2l draws without a seed), ``load_csv`` and
    ``dataset_from_arrays`` (your data, checked; ``DataInfo`` its title, labels, source and truth),
    ``DataError`` (what is wrong with an input, in words).
Chapter 1 · Nadaraya–Watson
    ``KERNELS`` (their names), ``kernel_value(u, kernel)`` K(u), ``nadaraya_watson`` f̂(x) = Σᵢ wᵢ(x) yᵢ with
    wᵢ = softmax(log K((x − xᵢ)/ℓ)) and its band, ``knn_average`` (k nearest neighbours),
    ``loo_curve`` and ``loo_lengthscale`` (leave-one-out error over ℓ, and its minimiser ℓ*).
Chapters 2 and 3 · masked training, multi-head kernel regression
    ``fit`` (ℓ, or H heads' ℓ_h and mixing u_h, learned on random hold-out sets; ``start=`` an earlier
    result continues it to more steps), ``fit_seeds`` (several seeds in one call), ``predict_heads``
    (Σ_h u_h m_h(x)), ``fit_parametric`` (d2l's learned w = 1/ℓ).
Chapter 4 · dot-product attention
    ``fit_attention`` (a trained attention layer on tokens (1, x̃, x̃², ỹ)), ``attention_predict``,
    ``attention_loo_error`` (its leave-one-out error),
    ``dot_product_attention`` softmax(q·k/√d) v, ``self_attention`` (the notes' module, in JAX).
Chapter 5 · in-context learning
    ``sample_prompts`` (small regression tasks of a ``Task`` family), ``pretrain`` (one attention layer on
    many tasks), ``in_context_predict``, ``learned_window`` (the window it learned), ``evaluate`` (its error
    against the best fixed kernel).

Everything else lives in the layers: ``kernelviz.core`` (kernels, pooling), ``kernelviz.data``,
``kernelviz.models`` (one module per chapter), ``kernelviz.runtime`` (JAX set-up and the server's devices)
and ``kernelviz.app`` (the dashboard). Importing kernelviz changes nothing in JAX's settings.
"""

from kernelviz.core.kernels import KERNELS, kernel_value
from kernelviz.data.csvfile import DataInfo, dataset_from_arrays, load_csv
from kernelviz.data.datasets import DATASETS, DataError, Dataset, blog_data, d2l_data, make_dataset
from kernelviz.data.tasks import Task, sample_prompts
from kernelviz.models.attention import attention_loo_error, attention_predict, dot_product_attention
from kernelviz.models.attention.selfattention import self_attention
from kernelviz.models.attention.training import fit_attention
from kernelviz.models.heads import fit, fit_seeds
from kernelviz.models.incontext import in_context_predict, pretrain
from kernelviz.models.incontext.evaluation import evaluate, learned_window
from kernelviz.models.loo import loo_curve, loo_lengthscale
from kernelviz.models.parametric import fit_parametric
from kernelviz.models.smoothing import knn_average, nadaraya_watson, predict_heads

__all__ = [
    "DATASETS",
    "KERNELS",
    "DataError",
    "DataInfo",
    "Dataset",
    "Task",
    "attention_loo_error",
    "attention_predict",
    "blog_data",
    "d2l_data",
    "dataset_from_arrays",
    "dot_product_attention",
    "evaluate",
    "fit",
    "fit_attention",
    "fit_parametric",
    "fit_seeds",
    "in_context_predict",
    "kernel_value",
    "knn_average",
    "learned_window",
    "load_csv",
    "loo_curve",
    "loo_lengthscale",
    "make_dataset",
    "nadaraya_watson",
    "predict_heads",
    "pretrain",
    "sample_prompts",
    "self_attention",
]
