"""Dot-product attention: attention pooling (``kernelviz.pooling``) with a learned score.

Every point is a token φ(x) = (1, x̃, x̃²), x̃ = (x − c)/s standardised by the training data's mean c and
standard deviation s. Head h has a query map W_q^h and a key map W_k^h (3 × d_qk) and scores

    s_h(x, x′) = ⟨φ(x) W_q^h, φ(x′) W_k^h⟩ / √d_qk,      K_h(x, x′) = exp s_h(x, x′),

so the head is a Nadaraya–Watson smoother whose kernel K_h is learned (and need not be symmetric). The
values are the y_i; the heads' outputs o_h are mixed by W_O = (U_1, …, U_H)ᵀ, f̂ = Σ_h U_h o_h(x), the
blog post's U_h and chapter 3's u_h. Compared with ``kernelviz.smoothing`` only the score function differs.

The Gaussian smoother is one setting of the maps (``gaussian_attention_params``): with φ(x) = (1, x, x²),
−(x − x′)²/2ℓ² = x x′/ℓ² − x′²/2ℓ² − x²/2ℓ²; x x′/ℓ² is a dot product, −x′²/2ℓ² a key bias (the key's
1-feature), and −x²/2ℓ² is the same for every key of a query, so it cancels in the softmax.

Training is ``kernelviz.training.run`` with the hold-out objective: Adam on (W_q, W_k, U). Heads are padded
to ``HEADS_MAX`` and d_qk to ``D_QK_MAX`` with masks, so neither recompiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz import pooling, training
from kernelviz.shapes import bucket, check_int, check_positive, pad, vector
from kernelviz.smoothing import HEADS_MAX, HEADS_QUERY_BLOCK, Smooth

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


def dot_scores(maps: tuple[Array, Array], queries: Array, keys: Array, dim_mask: Array | None = None,
               d_qk: Array | float | None = None) -> Array:
    """s(x, x′) = ⟨φ(x) W_q, φ(x′) W_k⟩/√d_qk for one head, (q, n); ``maps`` = (W_q, W_k), 3 × d.

    ``dim_mask`` zeroes padded query/key dimensions; ``d_qk`` is the real width (default: all columns).
    """
    w_q, w_k = maps
    mask = 1.0 if dim_mask is None else dim_mask
    d = w_q.shape[-1] if d_qk is None else d_qk
    return (features(queries) @ w_q * mask) @ (features(keys) @ w_k * mask).T / jnp.sqrt(d)


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
    w_q = math.sqrt(2.0) * np.array([[0.0, 1.0], [1.0 / ell**2, 0.0], [0.0, 0.0]])
    w_k = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, -0.5 / ell**2]])
    return GaussianAttention(w_q=w_q, w_k=w_k, score_scale=1.0 / math.sqrt(2.0))


@jax.jit
def _attend(qx, kx, values, key_mask, w_q, w_k, score_scale):
    return pooling.pool(dot_scores((w_q, w_k), qx, kx, d_qk=1.0) * score_scale, values, key_mask)


def _tokens(a: np.ndarray, size: int, center: float, scale: float) -> np.ndarray:
    return pad((a - center) / scale, size)


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
    q, k, v = vector("queries", queries), vector("keys", keys), vector("values", values)
    if k.shape != v.shape or k.shape[0] == 0:
        raise ValueError("keys and values must be non-empty and of the same length")
    wq, wk = np.asarray(w_q, dtype=np.float64), np.asarray(w_k, dtype=np.float64)
    if wq.ndim != 2 or wq.shape[0] != FEATURES or wq.shape != wk.shape:
        raise ValueError(f"w_q and w_k must both be {FEATURES} × d_qk")
    sc = 1.0 / math.sqrt(wq.shape[1]) if score_scale is None else float(score_scale)
    nq, n = q.shape[0], k.shape[0]
    qp, kp = bucket(nq), bucket(n)
    vs = pooling.value_scale(v)
    out = _attend(_tokens(q, qp, center, scale), _tokens(k, kp, center, scale), pad(v / vs, kp),
                  np.arange(kp) < n, wq, wk, sc)
    return Smooth(np.asarray(out.mean)[:nq] * vs, np.sqrt(np.asarray(out.var)[:nq]) * vs,
                  np.array(np.asarray(out.weights)[:nq, :n]))


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


def _masks(heads: int, d_qk: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.arange(HEADS_MAX) < heads).astype(np.float64), (np.arange(D_QK_MAX) < d_qk).astype(np.float64)


def _predictor(x, y, dim_mask, d_qk):
    """f̂(x_rows) = Σ_h U_h o_h(x_rows) from the available keys; params = (W_q, W_k, U)."""

    def predict(params, xq, available):
        w_q, w_k, u = params
        heads = pooling.over_heads(
            lambda m: pooling.pool(dot_scores(m, xq, x, dim_mask, d_qk), y, available).mean, (w_q, w_k)
        )
        return u @ heads

    return predict


@jax.jit
def _train(x, y, mask, head_mask, dim_mask, d_qk, params0, holdout, steps, learning_rate, seed):
    """Adam on (W_q, W_k, U) from ``params0`` by masked training: one program per data size."""
    cell = head_mask[:, None, None] * dim_mask[None, None, :]
    objective = training.holdout_objective(_predictor(x, y, dim_mask, d_qk), x, y, mask, holdout, seed)
    return training.run(objective, params0, (cell, cell, head_mask), optimizer="adam",
                        learning_rate=learning_rate, steps=steps, limit=PARAM_LIMIT,
                        record=lambda p: jnp.zeros(0))


def _initial_params(seed: int, head_mask: np.ndarray, dim_mask: np.ndarray):
    """W_q, W_k entries N(0, ``INIT_SCALE``²) from ``seed`` on the active heads and dimensions (0 on the
    padded ones), U_h = 1/H."""
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
    xs, ys = training.check_data(x, y)
    h = check_int("heads", heads, 1, HEADS_MAX)
    d = check_int("d_qk", d_qk, 1, D_QK_MAX)
    st = check_int("steps", steps, 1, training.STEPS_MAX)
    ho = check_int("holdout", holdout, *training.holdout_range(xs.shape[0]))
    lr = check_positive("the learning rate", learning_rate)
    p = training.prepare(xs, ys, int(seed))
    real = p.x[: p.n]
    center, scale = float(np.mean(real)), float(np.std(real))
    head_mask, dim_mask = _masks(h, d)
    out = _train((p.x - center) / scale, p.y, p.mask, head_mask, dim_mask, float(d),
                 _initial_params(seed, head_mask, dim_mask), ho, st, lr, np.uint32(int(seed) % 2**32))
    w_q, w_k, u = (np.asarray(a) for a in out.params)
    run = int(out.steps_run)
    sentences = [training.diverged_message(run, st, lr)] if bool(out.diverged) else []
    sentences += [p.note] if p.note else []
    return AttentionFit(
        w_q=np.array(w_q[:h, :, :d]), w_k=np.array(w_k[:h, :, :d]), mixing=np.array(u[:h]),
        center=center, scale=scale, losses=np.array(np.asarray(out.losses)[:run]) * p.scale**2,
        diverged=bool(out.diverged), message=" ".join(sentences), steps_run=run, heads=h, d_qk=d,
        holdout=ho, learning_rate=lr, seed=int(seed),
    )


def _padded_params(fit: AttentionFit) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    h, d = fit.heads, fit.d_qk
    w_q, w_k = np.zeros((HEADS_MAX, FEATURES, D_QK_MAX)), np.zeros((HEADS_MAX, FEATURES, D_QK_MAX))
    w_q[:h, :, :d], w_k[:h, :, :d] = fit.w_q, fit.w_k
    return (w_q, w_k, pad(fit.mixing, HEADS_MAX)), _masks(h, d)[1]


@partial(jax.jit, static_argnames=("with_weights",))
def _predict(params, qx, kx, values, key_mask, dim_mask, d_qk, with_weights):
    w_q, w_k, u = params

    def score(maps, q, k):
        return dot_scores(maps, q, k, dim_mask, d_qk)

    return pooling.multihead(score, (w_q, w_k), qx, kx, values, key_mask, u, block=HEADS_QUERY_BLOCK,
                             with_weights=with_weights)


def attention_predict(
    fit: AttentionFit, queries: object, x: object, y: object, with_weights: bool = True
) -> AttentionPrediction:
    """The fitted attention smoother at ``queries`` with keys/values (x, y).

    mean(x) = Σ_h U_h o_h(x) with the band of ``pooling.mix`` (the heads' weights pooled by |U_h|).
    ``with_weights=False`` does not return the (H, q, n) weights (``weights`` is None), for big data.
    """
    q, xs, ys = vector("queries", queries), vector("x", x), vector("y", y)
    if xs.shape != ys.shape or xs.shape[0] == 0:
        raise ValueError("x and y must be non-empty and of the same length")
    nq, n, h = q.shape[0], xs.shape[0], fit.heads
    qp, kp = bucket(nq), bucket(n)
    vs = pooling.value_scale(ys)
    params, dim_mask = _padded_params(fit)
    tokens = _tokens(q, qp, fit.center, fit.scale), _tokens(xs, kp, fit.center, fit.scale)
    mean, var, hm, hv, *w = _predict(
        params, *tokens, pad(ys / vs, kp), np.arange(kp) < n, dim_mask, float(fit.d_qk),
        with_weights=bool(with_weights),
    )
    return AttentionPrediction(
        mean=np.asarray(mean)[:nq] * vs,
        std=np.sqrt(np.asarray(var)[:nq]) * vs,
        head_means=np.asarray(hm)[:h, :nq] * vs,
        head_stds=np.sqrt(np.asarray(hv)[:h, :nq]) * vs,
        weights=np.array(np.asarray(w[0])[:h, :nq, :n]) if w else None,
    )


@jax.jit
def _grid_scores(params, g, dim_mask, d_qk):
    return pooling.over_heads(lambda m: dot_scores(m, g, g, dim_mask, d_qk), params[:2])


def attention_kernel(fit: AttentionFit, grid: object, kind: str = "kernel") -> np.ndarray:
    """The learned kernels on a grid, (H, g, g), row x = query, column x′ = key, for a heatmap.

    ``kind="scores"``: s_h(x, x′). ``kind="kernel"``: K_h(x, x′) = exp s_h(x, x′), divided by its maximum
    over the grid (exp s overflows for sharp heads; a constant factor changes no weight). ``kind="weights"``:
    each row softmax-normalised over the grid, the attention a query on the grid pays to keys on it.
    """
    if kind not in ("scores", "kernel", "weights"):
        raise ValueError(f"kind must be 'scores', 'kernel' or 'weights', not {kind!r}")
    gx = vector("grid", grid)
    ng = gx.shape[0]
    params, dim_mask = _padded_params(fit)
    gpad = _tokens(gx, bucket(ng), fit.center, fit.scale)
    s = np.asarray(_grid_scores(params, gpad, dim_mask, float(fit.d_qk)))[: fit.heads, :ng, :ng]
    if kind == "scores":
        return np.array(s)
    if kind == "kernel":
        return np.exp(s - s.max(axis=(1, 2), keepdims=True))
    e = np.exp(s - s.max(axis=2, keepdims=True))
    return e / e.sum(axis=2, keepdims=True)
