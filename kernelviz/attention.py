"""Dot-product attention as a kernel smoother on 1-D data, single and multi-head.

Every point is a token with features φ(x) = (1, x̃, x̃²), x̃ = (x − c)/s standardised by the training data's
mean c and standard deviation s. Head h has a query map W_q^h and a key map W_k^h (3 × d_qk), and scores

    s_h(x, x′) = ⟨φ(x) W_q^h, φ(x′) W_k^h⟩ / √d_qk,      K_h(x, x′) = exp s_h(x, x′),

so the head is a Nadaraya–Watson smoother with the learned kernel K_h: weights
a_hi(x) = softmax_i s_h(x, x_i), head output o_h(x) = Σ_i a_hi(x) y_i. The values are the y_i themselves
(W_v^h projects the token (x, y) onto y, d_v = 1). The heads are concatenated, o(x) = (o_1(x), …, o_H(x)),
and mixed by W_O ∈ R^{H×1}:

    f̂(x) = Concat(o_1, …, o_H) W_O = Σ_h U_h o_h(x),    U_h = (W_O)_h,

the blog post's U_h and the multi-head kernel regression's u_h. K_h is not symmetric unless
W_q^h (W_k^h)ᵀ is: the heatmap of a learned kernel shows it.

The Gaussian smoother is the special case (``gaussian_attention_params``): with φ(x) = (1, x, x²),

    −(x − x′)²/2ℓ² = x x′/ℓ² − x′²/2ℓ² − x²/2ℓ²;

x x′/ℓ² is a dot product, −x′²/2ℓ² a key bias (the key's 1-feature), and −x²/2ℓ² is the same for every
key of a query, so it cancels in the softmax.

Training is the same masked training as ``kernelviz.training``: each step holds out ``holdout`` random
points, masks them out as keys and predicts them from the rest; Adam on (W_q, W_k, U). Heads are padded to
``HEADS_MAX`` and d_qk to ``D_QK_MAX`` with masks, so neither recompiles; one compiled while loop per fit,
and, like ``kernelviz.training``, one program per data size whatever the hold-out size (each step loops
over chunks of ``HOLDOUT_ROWS`` held-out rows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from kernelviz.smoothing import Smooth, bucket, in_query_blocks
from kernelviz.training import (
    HEADS_MAX,
    STEPS_MAX,
    _check_data,
    _check_int,
    _check_rate,
    _chunked_sum,
    _holdout_split,
    _prepare,
    _seed_word,
    _vector,
    holdout_range,
    masked_softmax,
    mixture_moments,
)

__all__ = [
    "D_QK_MAX",
    "AttentionFit",
    "AttentionPrediction",
    "GaussianAttention",
    "attention_kernel",
    "attention_predict",
    "dot_product_attention",
    "features",
    "fit_attention",
    "gaussian_attention_params",
]

D_QK_MAX = 8  # query/key width is padded to this with a mask: d_qk never recompiles
FEATURES = 3  # φ(x) = (1, x, x²)
INIT_SCALE = 1.0  # W_q, W_k start as N(0, INIT_SCALE²) entries
PARAM_LIMIT = 1e6  # a weight beyond this (scores ~1e12) counts as diverged


def features(x: Array) -> Array:
    """φ(x) = (1, x, x²) for each x: (..., 3)."""
    x = jnp.asarray(x)
    return jnp.stack([jnp.ones_like(x), x, x * x], axis=-1)


@dataclass(frozen=True)
class GaussianAttention:
    """W_q, W_k (3 × 2) and the score scale 1/√d_qk that make attention the Gaussian smoother."""

    w_q: np.ndarray
    w_k: np.ndarray
    score_scale: float


def gaussian_attention_params(lengthscale: float, scale: float = 1.0) -> GaussianAttention:
    """Query and key maps for which dot-product attention equals Gaussian Nadaraya–Watson with ℓ.

    With tokens φ(x̃) = (1, x̃, x̃²), x̃ = (x − c)/``scale`` (any c) and ℓ̃ = ℓ/scale, d_qk = 2:

        q(x) = √2 (x̃/ℓ̃², 1),  k(x′) = (x̃′, −x̃′²/2ℓ̃²),  q·k/√2 = x̃ x̃′/ℓ̃² − x̃′²/2ℓ̃²
                                                      = −(x − x′)²/2ℓ² + x̃²/2ℓ̃²,

    and the last term is constant per query, so the softmax weights are the Gaussian kernel's.
    """
    ell = float(lengthscale) / float(scale)
    if not (math.isfinite(ell) and ell > 0):
        raise ValueError("the lengthscale and scale must be finite positive numbers")
    d = 2
    w_q = math.sqrt(d) * np.array([[0.0, 1.0], [1.0 / ell**2, 0.0], [0.0, 0.0]])
    w_k = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, -0.5 / ell**2]])
    return GaussianAttention(w_q=w_q, w_k=w_k, score_scale=1.0 / math.sqrt(d))


def _scores(qx: Array, kx: Array, w_q: Array, w_k: Array, score_scale: Array) -> Array:
    """s(x, x′) = φ(x)W_q · φ(x′)W_k × score_scale for one head: (q, n)."""
    return (features(qx) @ w_q) @ (features(kx) @ w_k).T * score_scale


@jax.jit
def _attend(qx, kx, values, key_mask, w_q, w_k, score_scale):
    w = masked_softmax(_scores(qx, kx, w_q, w_k, score_scale), key_mask[None, :])
    mean = w @ values
    var = jnp.sum(w * jnp.square(values[None, :] - mean[:, None]), axis=-1)
    return mean, jnp.sqrt(jnp.maximum(var, 0.0)), w


def dot_product_attention(
    queries: object,
    keys: object,
    values: object,
    w_q: object,
    w_k: object,
    score_scale: float | None = None,
    center: float = 0.0,
    scale: float = 1.0,
) -> Smooth:
    """One attention head as a smoother: weights softmax_i(φ(x̃)W_q · φ(x̃_i)W_k × score_scale).

    x̃ = (x − center)/scale for queries and keys; ``score_scale`` defaults to 1/√d_qk. Returns
    ``Smooth(mean, std, weights)`` like ``nadaraya_watson``: m = Σ a_i y_i, s² = Σ a_i (y_i − m)².
    """
    q = _vector("queries", queries)
    k = _vector("keys", keys)
    v = _vector("values", values)
    if k.shape != v.shape or k.shape[0] == 0:
        raise ValueError("keys and values must be non-empty and of the same length")
    wq = np.asarray(w_q, dtype=np.float64)
    wk = np.asarray(w_k, dtype=np.float64)
    if wq.ndim != 2 or wq.shape[0] != FEATURES or wq.shape != wk.shape:
        raise ValueError(f"w_q and w_k must both be {FEATURES} × d_qk")
    sc = 1.0 / math.sqrt(wq.shape[1]) if score_scale is None else float(score_scale)
    nq, n = q.shape[0], k.shape[0]
    qp, kp = bucket(nq), bucket(n)
    qpad = np.zeros(qp)
    qpad[:nq] = (q - center) / scale
    kpad = np.zeros(kp)
    kpad[:n] = (k - center) / scale
    top = float(np.max(np.abs(v)))
    vs = top if top > 0 else 1.0
    vpad = np.zeros(kp)
    vpad[:n] = v / vs
    mean, std, w = (np.asarray(a) for a in _attend(qpad, kpad, vpad, np.arange(kp) < n, wq, wk, sc))
    return Smooth(mean[:nq] * vs, std[:nq] * vs, np.array(w[:nq, :n]))


# ---------------------------------------------------------------------------------------------------------
# Multi-head attention, trained by masked training
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionFit:
    """A trained multi-head attention smoother.

    ``w_q``, ``w_k``: (heads, 3, d_qk); ``mixing``: U_h (heads,) (the column W_O); ``center`` and ``scale``
    standardise x for the tokens. ``losses`` (``steps_run``,) are the hold-out losses, truncated at the
    last finite step when ``diverged``; ``message`` is a sentence for the page or "".
    """

    w_q: np.ndarray
    w_k: np.ndarray
    mixing: np.ndarray
    center: float
    scale: float
    losses: np.ndarray
    diverged: bool
    message: str
    steps_run: int
    heads: int
    d_qk: int
    holdout: int
    learning_rate: float
    seed: int


@dataclass(frozen=True)
class AttentionPrediction:
    """mean Σ_h U_h o_h (q,), band std (q,), head_means / head_stds (H, q), weights (H, q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    head_means: np.ndarray
    head_stds: np.ndarray
    weights: np.ndarray | None


def _multi_scores(params, qx, kx, dim_mask, d_qk):
    """Scores of every head: (H, q, n)."""
    w_q, w_k, _ = params
    fq = features(qx)
    fk = features(kx)
    q = jnp.einsum("qf,hfd->hqd", fq, w_q) * dim_mask
    k = jnp.einsum("nf,hfd->hnd", fk, w_k) * dim_mask
    return jnp.einsum("hqd,hnd->hqn", q, k) / jnp.sqrt(d_qk)


def _attention_loss(params, xq, yq, row_weight, x, y, available, head_mask, dim_mask, d_qk):
    a = masked_softmax(_multi_scores(params, xq, x, dim_mask, d_qk), available)
    pred = (params[2] * head_mask) @ (a @ y)
    return jnp.sum(row_weight * jnp.square(pred - yq))


@jax.jit
def _train(x, y, mask, head_mask, dim_mask, d_qk, params0, holdout, steps, learning_rate, seed):
    """Adam on (W_q, W_k, U) from ``params0``, ``steps`` steps in one while loop (stopping at a non-finite
    step); each step's loss and gradient are summed over the chunks of its hold-out set, as in
    ``kernelviz.training``. One program per data size."""
    grad_mask = (
        head_mask[:, None, None] * dim_mask[None, None, :],
        head_mask[:, None, None] * dim_mask[None, None, :],
        head_mask,
    )
    opt = optax.adam(learning_rate)
    state0 = opt.init(params0)
    grad_fn = jax.value_and_grad(_attention_loss)
    zero = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params0))

    def cond(c):
        return (c[0] < steps) & c[1]

    def body(c):
        i, _, params, state, losses = c
        order, available = _holdout_split(seed, i, mask, holdout)

        def rows_loss(idx, row_weight):
            return grad_fn(params, x[idx], y[idx], row_weight, x, y, available, head_mask, dim_mask, d_qk)

        loss, grads = _chunked_sum(rows_loss, order, holdout, zero)
        grads = jax.tree.map(lambda g, m: g * m, grads, grad_mask)
        updates, new_state = opt.update(grads, state, params)
        new = optax.apply_updates(params, updates)
        good = jnp.isfinite(loss)
        for leaf in (*jax.tree.leaves(grads), *jax.tree.leaves(new)):
            good = good & jnp.all(jnp.isfinite(leaf))
        for leaf in jax.tree.leaves(new):
            good = good & jnp.all(jnp.abs(leaf) < PARAM_LIMIT)
        params = jax.tree.map(lambda a, b: jnp.where(good, a, b), new, params)
        state = jax.tree.map(lambda a, b: jnp.where(good, a, b), new_state, state)
        losses = losses.at[i].set(jnp.where(good, loss, 0.0))
        return i + good.astype(i.dtype), good, params, state, losses

    init = (jnp.asarray(0, jnp.int32), jnp.asarray(True), params0, state0, jnp.zeros(STEPS_MAX))
    steps_run, ok, params, _, losses = jax.lax.while_loop(cond, body, init)
    return params, losses, steps_run, ~ok


def _initial_params(seed: int, head_mask: np.ndarray, dim_mask: np.ndarray):
    """W_q, W_k entries N(0, ``INIT_SCALE``²) from ``seed`` on the active heads and dimensions (0 on the
    padded ones), U_h = 1/H: drawn in NumPy, so the compiled program holds no random-number generator."""
    rng = np.random.default_rng(int(seed) % 2**32)
    shape = (HEADS_MAX, FEATURES, D_QK_MAX)
    active = head_mask[:, None, None] * dim_mask[None, None, :]
    w_q = INIT_SCALE * rng.standard_normal(shape) * active
    w_k = INIT_SCALE * rng.standard_normal(shape) * active
    return w_q, w_k, head_mask / np.sum(head_mask)


def fit_attention(
    x: object,
    y: object,
    heads: int = 2,
    d_qk: int = 4,
    holdout: int = 10,
    steps: int = 500,
    learning_rate: float = 0.05,
    seed: int = 0,
) -> AttentionFit:
    """Masked training of H-head dot-product attention on (x, y): see the module docstring.

    Each step holds out ``holdout`` random points (1 … n − 2), masks them out as keys and predicts them from
    the rest; Adam on W_q, W_k (entries start N(0, 1) from ``seed``) and U_h (start 1/H). Data above
    ``TRAIN_MAX_POINTS`` points use a random subsample. One compiled call.
    """
    xs, ys = _check_data(x, y)
    h = _check_int("heads", heads, 1, HEADS_MAX)
    d = _check_int("d_qk", d_qk, 1, D_QK_MAX)
    st = _check_int("steps", steps, 1, STEPS_MAX)
    lo, hi = holdout_range(xs.shape[0])
    ho = _check_int("holdout", holdout, lo, hi)
    lr = _check_rate(learning_rate)
    prep = _prepare(xs, ys, int(seed))
    real = prep.x[: prep.n]
    center = float(np.mean(real))
    scale = float(np.std(real))
    xt = (prep.x - center) / scale
    head_mask = (np.arange(HEADS_MAX) < h).astype(np.float64)
    dim_mask = (np.arange(D_QK_MAX) < d).astype(np.float64)
    params, losses, steps_run, diverged = _train(
        xt, prep.y, prep.mask, head_mask, dim_mask, float(d), _initial_params(seed, head_mask, dim_mask),
        ho, st, lr, _seed_word(seed),
    )
    w_q, w_k, u = (np.asarray(p) for p in params)
    run = int(steps_run)
    bad = bool(diverged)
    sentences = []
    if bad:
        sentences.append(
            f"Training diverged at step {run + 1} of {st} (the learning rate {lr:g} is too high for this "
            f"loss); the fit stops at the last finite parameters, after {run} steps."
        )
    if prep.note:
        sentences.append(prep.note)
    return AttentionFit(
        w_q=np.array(w_q[:h, :, :d]),
        w_k=np.array(w_k[:h, :, :d]),
        mixing=np.array(u[:h]) * 1.0,
        center=center,
        scale=scale,
        losses=np.array(np.asarray(losses)[:run]) * prep.scale**2,
        diverged=bad,
        message=" ".join(sentences),
        steps_run=run,
        heads=h,
        d_qk=d,
        holdout=ho,
        learning_rate=lr,
        seed=int(seed),
    )


def _padded_params(fit: AttentionFit):
    h, d = fit.heads, fit.d_qk
    w_q = np.zeros((HEADS_MAX, 3, D_QK_MAX))
    w_k = np.zeros((HEADS_MAX, 3, D_QK_MAX))
    w_q[:h, :, :d] = fit.w_q
    w_k[:h, :, :d] = fit.w_k
    u = np.zeros(HEADS_MAX)
    u[:h] = fit.mixing
    head_mask = (np.arange(HEADS_MAX) < h).astype(np.float64)
    dim_mask = (np.arange(D_QK_MAX) < d).astype(np.float64)
    return (w_q, w_k, u), head_mask, dim_mask


PREDICT_QUERY_BLOCK = 64  # queries per block of a prediction: temporaries are H × 64 × n, not H × q × n


@partial(jax.jit, static_argnames=("with_weights",))
def _predict(params, qx, kx, values, key_mask, head_mask, dim_mask, d_qk, with_weights=True):
    u = params[2] * head_mask
    absu = jnp.abs(u)
    total = jnp.sum(absu)
    pool = absu / jnp.where(total > 0, total, 1.0)

    def block(qb):
        a = masked_softmax(_multi_scores(params, qb, kx, dim_mask, d_qk), key_mask[None, None, :])
        out = mixture_moments(a, values, u, pool)
        return (*out, a) if with_weights else out

    axes = (0, 0, 1, 1, 1) if with_weights else (0, 0, 1, 1)
    mean, var, head_means, head_var, *weights = in_query_blocks(block, qx, PREDICT_QUERY_BLOCK, axes)
    std = jnp.where(total > 0, jnp.sqrt(jnp.maximum(var, 0.0)), jnp.nan)
    head_stds = jnp.sqrt(jnp.maximum(head_var, 0.0))
    return jnp.where(total > 0, mean, jnp.nan), std, head_means, head_stds, (weights or [None])[0]


def attention_predict(
    fit: AttentionFit, queries: object, x: object, y: object, with_weights: bool = True
) -> AttentionPrediction:
    """The fitted attention smoother at ``queries`` with keys/values (x, y).

    mean(x) = Σ_h U_h o_h(x); the band uses the pooled weights ā = Σ_h |U_h| a_h / Σ_h |U_h| (U_h may be
    negative): s²(x) = Σ_i ā_i(x) (y_i − mean(x))², always finite and ≥ 0 (as ``predict_heads``).
    Queries run in blocks of ``PREDICT_QUERY_BLOCK``, so memory beyond the result is O(H × block × n);
    ``with_weights=False`` does not return the (H, q, n) weights (``weights`` is None), for big data.
    """
    q = _vector("queries", queries)
    xs, ys = _vector("x", x), _vector("y", y)
    if xs.shape != ys.shape or xs.shape[0] == 0:
        raise ValueError("x and y must be non-empty and of the same length")
    nq, n = q.shape[0], xs.shape[0]
    qp, kp = bucket(nq), bucket(n)
    qpad = np.zeros(qp)
    qpad[:nq] = (q - fit.center) / fit.scale
    kpad = np.zeros(kp)
    kpad[:n] = (xs - fit.center) / fit.scale
    top = float(np.max(np.abs(ys)))
    vs = top if top > 0 else 1.0
    vpad = np.zeros(kp)
    vpad[:n] = ys / vs
    params, head_mask, dim_mask = _padded_params(fit)
    mean, std, hm, hs, a = _predict(
        params, qpad, kpad, vpad, np.arange(kp) < n, head_mask, dim_mask, float(fit.d_qk),
        with_weights=bool(with_weights),
    )
    h = fit.heads
    return AttentionPrediction(
        mean=np.asarray(mean)[:nq] * vs,
        std=np.asarray(std)[:nq] * vs,
        head_means=np.asarray(hm)[:h, :nq] * vs,
        head_stds=np.asarray(hs)[:h, :nq] * vs,
        weights=None if a is None else np.array(np.asarray(a)[:h, :nq, :n]),
    )


@jax.jit
def _grid_scores(params, g, dim_mask, d_qk):
    return _multi_scores(params, g, g, dim_mask, d_qk)


def attention_kernel(fit: AttentionFit, grid: object, kind: str = "kernel") -> np.ndarray:
    """The learned kernels on a grid, (H, g, g), row x = query, column x′ = key, for a heatmap.

    ``kind="scores"``: s_h(x, x′). ``kind="kernel"``: K_h(x, x′) = exp s_h(x, x′), divided by its maximum
    over the grid (exp s overflows for sharp heads; a constant factor changes no weight). ``kind="weights"``:
    each row softmax-normalised over the grid, the attention a query on the grid pays to keys on it.
    """
    if kind not in ("scores", "kernel", "weights"):
        raise ValueError(f"kind must be 'scores', 'kernel' or 'weights', not {kind!r}")
    gx = _vector("grid", grid)
    ng = gx.shape[0]
    gp = bucket(ng)
    gpad = np.zeros(gp)
    gpad[:ng] = (gx - fit.center) / fit.scale
    params, _, dim_mask = _padded_params(fit)
    s = np.asarray(_grid_scores(params, gpad, dim_mask, float(fit.d_qk)))[: fit.heads, :ng, :ng]
    if kind == "scores":
        return np.array(s)
    if kind == "kernel":
        return np.exp(s - s.max(axis=(1, 2), keepdims=True))
    e = np.exp(s - s.max(axis=2, keepdims=True))
    return e / e.sum(axis=2, keepdims=True)
