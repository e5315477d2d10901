"""Plain reference forms of kernelviz's masked training, for tests and benchmarks to compare against.

kernelviz computes the post's model with two speed devices (``kernelviz/models/heads.py``,
``kernelviz/models/training.py``): the heads are pooled in float32 with their gradient written out
(``pooling.pooled_heads``), and a step predicts only its held-out rows, in chunks
(``chunked_sum``). Here are the forms without them:
``plain_predictor`` pools each head in float64 and lets JAX differentiate it, ``all_rows_objective``
predicts every padded row with weights 1/k on the held-out ones, ``plain_post_model`` is the post's own
arithmetic differentiated by JAX. ``reference_fit`` trains with any pair of
them through the same loop (``training.run``), so a benchmark prints what each device buys in one run.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.kernels import kernel_index, kernel_scores
from kernelviz.data import post
from kernelviz.models import heads, training
from kernelviz.models.holdout import Holdout, holdout_objective, holdout_split

OUTSIDE = heads.OUTSIDE


def plain_predictor(x: Array, y: Array, kernel: Array) -> Callable:
    """f̂(x_rows) = Σ_h u_h m_h(x_rows) in float64, each head ``pooling.pool`` of its kernel scores."""

    def predict(params, xq, available):
        log_ell, u = params
        means = pooling.over_heads(
            lambda le: pooling.pool(kernel_scores(xq, x, jnp.exp(le), kernel, OUTSIDE), y, available).mean,
            log_ell,
        )
        return u @ means

    return predict


def plain_post_model(x: Array, y: Array, kernel: Array) -> Callable:
    """The blog post's arithmetic as written: u @ (w @ y), w_i = K_i / (Σ_j K_j + 1e-16) (``masked_softmax``
    with the post's sink), float32, JAX's own gradient (``heads.post_model`` writes the gradient out)."""
    xk, yk = jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32)

    def predict(params, xq, available):
        log_ell, u = params

        def weights(le):
            scores = kernel_scores(jnp.asarray(xq, jnp.float32), xk, jnp.exp(le), kernel, OUTSIDE)
            return pooling.masked_softmax(scores, available, sink=heads.POST_SINK)

        return u @ (pooling.over_heads(weights, log_ell) @ yk)

    return predict


def all_rows_objective(predict: Callable, x: Array, y: Array, mask: Array, holdout: Array,
                       key: Array) -> Callable:
    """``holdout_objective`` without chunks: every padded row predicted, weights 1/k or 0."""
    keys = post.step_keys(key, training.STEPS_MAX)

    def rows_loss(params, order, available):
        weight = jnp.where(jnp.arange(order.shape[0]) < holdout, 1.0 / holdout, 0.0)
        return jnp.sum(weight * jnp.square(predict(params, x[order], available) - y[order]))

    def objective(params, step):
        order, available = holdout_split(keys[step], mask, holdout)
        return jax.value_and_grad(rows_loss)(params, order, available)

    return objective


@partial(jax.jit, static_argnames=("plain", "all_rows"))
def _run(xt, yt, mask, params0, trainable, kernel, holdout, steps, key, plain, all_rows):
    predict = (plain_predictor if plain else heads.predictor)(xt, yt, kernel)
    if all_rows:
        objective = all_rows_objective(predict, xt, yt, mask, holdout, key)
    else:
        objective = holdout_objective(predict, Holdout(xt, yt, mask, holdout, key))
    settings = training.Settings("adam", 0.2, steps, heads.LOG_ELL_LIMIT, lambda p: jnp.exp(p[0]))
    return training.run(objective, params0, trainable, settings)


def reference_fit(x: np.ndarray, y: np.ndarray, n_heads: int, holdout: int, steps: int, seed: int = 2024, *,
                  plain: bool = True, all_rows: bool = True) -> np.ndarray:
    """The post's MultiheadGaussianKernel trained as ``kv.fit(..., multihead=True)`` trains it, with the
    plain predictor (``plain``) and/or every row at every step (``all_rows``): the learned ℓ_h."""
    prep = training.prepare(np.asarray(x, float), np.asarray(y, float), seed)
    slots = heads.head_slots(n_heads)
    active = (np.arange(slots) < n_heads).astype(np.float64)
    ell0 = heads.initial_lengthscales(n_heads, prep.x[: prep.n], True) / prep.span
    params0 = (np.log(np.where(active > 0, np.resize(ell0, slots), 1.0)), active / n_heads)
    key = post.experiment_key(seed, post.experiment_of(True, n_heads, holdout, prep.n))
    out = _run(prep.xt, prep.y, prep.mask, params0, (active, active), kernel_index("gaussian"), holdout,
               steps, key, plain, all_rows)
    return np.exp(np.asarray(out.params[0])[:n_heads]) * prep.span
