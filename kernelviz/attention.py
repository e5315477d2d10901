"""Dot-product attention: attention pooling (``kernelviz.pooling``) with a learned score and learned values.

A point is a token t = (1, x̃, x̃², ỹ) (x̃ = (x − c)/s maps the training data's range onto [−1, 1],
ỹ = y/max|y|). Head h has query and key maps W_q^h, W_k^h (3 × d_qk) that read its position part φ(x̃)
= (1, x̃, x̃²) (the post relabels a point as (x_i, y_i) and lets each map project on the component it needs)
and a value map W_v^h (4 × d_v) that reads the whole token:

    s_h(x, x′) = ⟨φ(x̃) W_q^h, φ(x̃′) W_k^h⟩ / √d_qk,      w_hi(x) = softmax_i s_h(x, x_i),
    head_h(x)  = Σ_i w_hi(x) t_i W_v^h ∈ R^{d_v},           f̂(x) = Σ_h head_h(x) U_h = Concat(heads) W_O,

U_h the d_v × 1 block of W_O of head h; pooling is the core's (``pooled_tokens``). With the points as queries
a head maps x_1 … x_n to x′_1 … x′_n ∈ R^{d_v}: the self-attention layer. The Gaussian smoother, and so
chapter 3's heads, are settings of the layer (``gaussian_attention_params``, ``gaussian_layer``). Training
is ``kernelviz.training.run`` with the hold-out objective, from one of ``STARTS``. Heads, d_qk and d_v are
padded (``HEADS_MAX``, ``D_QK_MAX``, ``D_V_MAX``): nothing recompiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz import pooling, post, training
from kernelviz.heads import initial_lengthscales
from kernelviz.loo import loo_lengthscale
from kernelviz.shapes import bucket, check_int, check_positive, pad, vector
from kernelviz.smoothing import HEADS_MAX, HEADS_QUERY_BLOCK, Smooth

__all__ = [
    "D_QK_MAX", "D_V_MAX", "STARTS", "AttentionFit", "AttentionPrediction",
    "GaussianAttention", "attention_kernel", "attention_loo_error", "attention_predict", "attention_values",
    "dot_product_attention", "features", "fit_attention", "gaussian_attention_params", "gaussian_layer",
    "score_matrices", "start_lengthscales", "tokens",
]

D_QK_MAX = 8  # query/key width is padded to this with a mask: d_qk never recompiles
D_V_MAX = 4  # value width, padded likewise
FEATURES = 3  # the position part φ(x̃) = (1, x̃, x̃²), read by W_q and W_k
TOKEN = 4  # the token t = (1, x̃, x̃², ỹ), read by W_v
Y = 3  # the token component that holds ỹ
STARTS = ("gaussian", "post", "random")
START_NOISE = 0.02  # entries of a Gaussian start get N(0, START_NOISE²) seeded noise
PARAM_LIMIT = 1e6  # a weight beyond this (scores ~1e12) counts as diverged


def features(x: Array) -> Array:
    """φ(x) = (1, x, x²) for each x: (..., 3)."""
    return jnp.stack([jnp.ones_like(x), x, x * x], axis=-1)


def tokens(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """t = (1, x, x², y) for each point: (n, 4)."""
    return np.stack([np.ones_like(x), x, x * x, y], axis=-1)


def dot_scores(maps: tuple[Array, Array], queries: Array, keys: Array, dim_mask: Array, d_qk: Array) -> Array:
    """s(x, x′) = ⟨φ(x) W_q, φ(x′) W_k⟩/√d_qk of one head, (q, n); ``maps`` = (W_q, W_k), 3 × d padded, of
    which ``dim_mask`` keeps the real d_qk columns."""
    w_q, w_k = maps
    return (features(queries) @ w_q * dim_mask) @ (features(keys) @ w_k * dim_mask).T / jnp.sqrt(d_qk)


def score_matrices(w_q: Array, w_k: Array, d_qk: object) -> Array:
    """A_h = W_q^h W_k^hᵀ/√d_qk for every head, (H, 3, 3): the same scores as ``dot_scores`` are
    s_h(x, x′) = φ(x̃) A_h φ(x̃′)ᵀ, a quadratic form in (1, x̃, x̃²) × (1, x̃′, x̃′²)."""
    return w_q @ w_k.swapaxes(-1, -2) / d_qk**0.5


def pooled_tokens(scores: Array, toks: Array, available: Array | None) -> tuple[Array, Array, Array]:
    """One head on the core: weights w = masked softmax of ``scores`` (q, n), the weighted mean Σ_i w_i t_i
    and variance Σ_i w_i (t_i − t̄)² of every token component (q, 4)."""
    w = pooling.masked_softmax(scores, available)
    mean, var = zip(*(pooling.moments(w, toks[:, f]) for f in range(TOKEN)), strict=True)
    return w, jnp.stack(mean, axis=-1), jnp.stack(var, axis=-1)


def _heads(maps, queries, keys, toks, available, dim_mask, d_qk) -> tuple[Array, Array, Array]:
    """``pooled_tokens`` of every head (``pooling.over_heads``): weights (H, q, n), moments (H, q, 4)."""
    return pooling.over_heads(lambda m: pooled_tokens(dot_scores(m, queries, keys, dim_mask, d_qk), toks,
                                                      available), maps)


@dataclass(frozen=True)
class GaussianAttention:
    """W_q, W_k (3 × 2), W_v (4 × 1) and the score scale 1/√d_qk that make a head the Gaussian smoother."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    score_scale: float


def gaussian_attention_params(lengthscale: float, scale: float = 1.0) -> GaussianAttention:
    """Maps for which a dot-product attention head is Gaussian Nadaraya–Watson with lengthscale ℓ.

    With x̃ = (x − c)/``scale`` (any c), ℓ̃ = ℓ/scale, a = 2^{1/4}/ℓ̃ and d_qk = 2:

        q(x) = a (x̃, 1),  k(x′) = a (x̃′, −x̃′²/2),  q·k/√2 = x̃ x̃′/ℓ̃² − x̃′²/2ℓ̃² = −(x − x′)²/2ℓ² + x̃²/2ℓ̃²,

    the last term the same for every key of a query: the softmax weights are the Gaussian kernel's. W_v = e_y
    makes a token's value its y. Both maps carry the factor a, so neither dwarfs the other in training."""
    ell = float(lengthscale) / float(scale)
    if not (math.isfinite(ell) and ell > 0):
        raise ValueError("the lengthscale and scale must be finite positive numbers")
    w_q, w_k = 2.0**0.25 / ell * np.array([[[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
                                          [[0.0, 0.0], [1.0, 0.0], [0.0, -0.5]]])
    return GaussianAttention(w_q=w_q, w_k=w_k, w_v=np.eye(TOKEN)[:, Y:], score_scale=1.0 / math.sqrt(2.0))


@dataclass(frozen=True)
class AttentionFit:
    """A multi-head attention layer: ``w_q``, ``w_k`` (heads, 3, d_qk), ``w_v`` (heads, 4, d_v), ``mixing``
    U (heads, d_v), row h = U_h; tokens use x̃ = (x − ``center``)/``scale``, ỹ = y/``y_scale``. Its training:
    ``losses`` (``steps_run``,) in y units², truncated at the last finite step when ``diverged``; ``start``
    (``STARTS``) and the ℓ_h its Gaussian heads began at, ``start_lengthscales``; ``message`` for the page."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    mixing: np.ndarray
    center: float
    scale: float
    y_scale: float
    losses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    diverged: bool = False
    message: str = ""
    steps_run: int = 0
    holdout: int = 0
    learning_rate: float = 0.0
    seed: int = 0
    start: str = "gaussian"
    start_lengthscales: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def heads(self) -> int:
        return int(self.w_q.shape[0])

    @property
    def d_qk(self) -> int:
        return int(self.w_q.shape[2])

    @property
    def readout(self) -> np.ndarray:
        """r_h = W_v^h U_h (heads, 4): what head h adds to f̂ per unit of each pooled token component."""
        return np.einsum("hfv,hv->hf", self.w_v, self.mixing)


def _frame(x_real: np.ndarray) -> tuple[float, float]:
    """(c, s): x̃ = (x − c)/s maps the data's range onto [−1, 1]."""
    lo, hi = float(np.min(x_real)), float(np.max(x_real))
    return 0.5 * (lo + hi), (0.5 * (hi - lo) if hi > lo else 1.0)


def _masks(heads: int, d_qk: int, d_v: int = 1) -> tuple[np.ndarray, ...]:
    """0/1 masks of the real heads, query/key dimensions and value dimensions among the padded ones."""
    return tuple((np.arange(m) < k) * 1.0 for m, k in ((HEADS_MAX, heads), (D_QK_MAX, d_qk), (D_V_MAX, d_v)))


def start_lengthscales(start: str, heads: int, x: object, y: object) -> np.ndarray:
    """The ℓ_h a start puts its Gaussian heads at (none for "random"). "gaussian": ℓ_h = ℓ* · 2^{(h − c)/2},
    h = 0 … H − 1, c = ⌊(H − 1)/2⌋, around the exact leave-one-out optimum ℓ* of (x, y) (0.71, 1, 1.41, 2 × ℓ*
    for four heads); "post": the blog post's ℓ_post = linspace(0.1, 3, H), scaled by span/6 (chapter 3's)."""
    if start not in STARTS:
        raise ValueError(f"start must be one of {STARTS}, not {start!r}")
    if start != "gaussian":
        return np.zeros(0) if start == "random" else initial_lengthscales(heads, x, multihead=True)
    return loo_lengthscale(x, y) * 2.0 ** ((np.arange(heads) - (heads - 1) // 2) / 2.0)


def _initial_params(ells: np.ndarray, scale: float, seed: int, masks: tuple[np.ndarray, ...]):
    """The padded start (W_q, W_k, W_v, U), 0 on padded heads and dimensions, U_h = (1/H, 0, …): Gaussian
    heads at ``ells`` (``gaussian_attention_params`` in two query/key dimensions times (d_qk/2)^{1/4}, for the
    score's 1/√d_qk; d_qk = 1 keeps the x x′ one), W_v^h = e_y, plus N(0, ``START_NOISE``²) on every active
    entry; or, no ``ells``, W_q, W_k, W_v entries N(0, 1)."""
    head_mask, dim_mask, v_mask = masks
    heads, d_qk, rng = int(head_mask.sum()), int(dim_mask.sum()), np.random.default_rng(int(seed) % 2**32)
    qk = np.broadcast_to(head_mask[:, None, None] * dim_mask, (HEADS_MAX, FEATURES, D_QK_MAX))
    vv = np.broadcast_to(head_mask[:, None, None] * v_mask, (HEADS_MAX, TOKEN, D_V_MAX))
    active = (qk, qk, vv, head_mask[:, None] * v_mask)
    noise = [rng.standard_normal(a.shape) * a for a in active]
    u = np.outer(head_mask / heads, np.eye(D_V_MAX)[0])
    if ells.size == 0:
        return (*noise[:3], u)
    (w_q, w_k), w_v = np.zeros((2, HEADS_MAX, FEATURES, D_QK_MAX)), np.zeros((HEADS_MAX, TOKEN, D_V_MAX))
    cols, factor = min(2, d_qk), (d_qk / 2.0) ** 0.25
    for h, ell in enumerate(ells):
        g = gaussian_attention_params(ell, scale)
        w_q[h, :, :cols], w_k[h, :, :cols] = factor * g.w_q[:, :cols], factor * g.w_k[:, :cols]
    w_v[:heads, Y, 0] = 1.0
    return tuple((b + START_NOISE * z) * a for b, z, a in zip((w_q, w_k, w_v, u), noise, active, strict=True))


def _readout_predictor(kx, toks, dim_mask, d_qk, fast=True):
    """f̂(x_rows) = Σ_h (Σ_i w_hi t_i) W_v^h U_h from the available keys; params = (W_q, W_k, W_v, U).

    ``fast`` (training's form) takes the products first: scores φ(x) A_h φ(x′)ᵀ (``score_matrices``), values
    the scalars t_i · W_v^h U_h, pooled and summed over heads by ``pooling.pooled_sum`` in float32. ``fast=
    False`` is the plain float64 form differentiated by JAX (``benchmarks/bench_training.py`` times both)."""
    phi_k = features(kx).astype(jnp.float32)

    def plain(params, xq, available):
        means = _heads(params[:2], xq, kx, toks, available, dim_mask, d_qk)[1]
        return jnp.einsum("hrf,hfv,hv->r", means, params[2], params[3])

    def predict(params, xq, available):
        w_q, w_k, w_v, u = params
        a = score_matrices(w_q * dim_mask, w_k * dim_mask, d_qk)
        values = toks @ jnp.einsum("hfv,hv->hf", w_v, u).T
        scores = jnp.einsum("rf,hfg,ng->hrn", features(xq).astype(jnp.float32), a.astype(jnp.float32), phi_k)
        return pooling.pooled_sum(scores, available, values.astype(jnp.float32)).astype(toks.dtype)

    return predict if fast else plain


@partial(jax.jit, static_argnames=("fast",))
def _train(x, toks, y, mask, masks, d_qk, params0, holdout, steps, learning_rate, decay, key, fast=True):
    """Adam on (W_q, W_k, W_v, U) from ``params0`` by masked training, its step at step t learning_rate ·
    (1 + cos(π t/steps))/2 (``decay`` 1) or constant (``decay`` 0): one program per data size."""
    head_mask, dim_mask, v_mask = masks
    qk = head_mask[:, None, None] * dim_mask[None, None, :]
    trainable = (qk, qk, head_mask[:, None, None] * v_mask, head_mask[:, None] * v_mask)
    objective = training.holdout_objective(_readout_predictor(x, toks, dim_mask, d_qk, fast), x, y, mask,
                                           holdout, key)
    return training.run(objective, params0, trainable, optimizer="adam", steps=steps, limit=PARAM_LIMIT,
                        learning_rate=lambda t: learning_rate * (1 - decay * (1 - jnp.cos(
                            jnp.pi * jnp.minimum(t, steps) / steps)) / 2), record=lambda p: jnp.zeros(0))


def fit_attention(x: object, y: object, heads: int = 2, d_qk: int = 4, holdout: int = 10, steps: int = 500,
                  learning_rate: float = 0.05, seed: int = 0, *, d_v: int = 1, start: str = "gaussian",
                  decay: bool = True, fast: bool = True) -> AttentionFit:
    """Masked training of an H-head attention layer on (x, y), in one compiled call: each step holds out
    ``holdout`` random points (1 … n − 2), masks them out as keys and predicts them from the rest; Adam on
    W_q, W_k, W_v and U, its step ``learning_rate`` · (1 + cos(π t/steps))/2 (constant with ``decay=False``),
    from ``start`` (``start_lengthscales``, ``_initial_params``, noise from ``seed``). Data above
    ``TRAIN_MAX_POINTS`` points use a random subsample. ``fast=False`` trains the plain float64 form
    (``_readout_predictor``)."""
    xs, ys = training.check_data(x, y)
    h, d = check_int("heads", heads, 1, HEADS_MAX), check_int("d_qk", d_qk, 1, D_QK_MAX)
    dv, st = check_int("d_v", d_v, 1, D_V_MAX), check_int("steps", steps, 1, training.STEPS_MAX)
    ho = check_int("holdout", holdout, *training.holdout_range(xs.shape[0]))
    lr = check_positive("the learning rate", learning_rate)
    p = training.prepare(xs, ys, int(seed))
    ells = start_lengthscales(start, h, p.x[: p.n], p.y[: p.n])
    (center, scale), masks = _frame(p.x[: p.n]), _masks(h, d, dv)
    xt = (p.x - center) / scale
    out = _train(xt, tokens(xt, p.y), p.y, p.mask, masks, float(d), _initial_params(ells, scale, seed, masks),
                 ho, st, lr, float(bool(decay)), post.prng_key(seed), fast=bool(fast))
    (w_q, w_k, w_v, u), run = (np.asarray(a) for a in out.params), int(out.steps_run)
    return AttentionFit(
        w_q=np.array(w_q[:h, :, :d]), w_k=np.array(w_k[:h, :, :d]), w_v=np.array(w_v[:h, :, :dv]),
        mixing=np.array(u[:h, :dv]), center=center, scale=scale, y_scale=p.scale,
        losses=np.array(np.asarray(out.losses)[:run]) * p.scale**2, diverged=bool(out.diverged),
        message=" ".join(([training.diverged_message(run, st, lr)] if bool(out.diverged) else [])
                         + ([p.note] if p.note else [])), steps_run=run, holdout=ho,
        learning_rate=lr, seed=int(seed), start=start, start_lengthscales=ells,
    )


def gaussian_layer(lengthscales: object, mixing: object, x: object, y: object) -> AttentionFit:
    """Chapter 3's multi-head kernel regression Σ_h u_h m_h(x; ℓ_h) as this layer: head h the Gaussian
    smoother at ℓ_h (``gaussian_attention_params``: d_qk = 2, W_v^h = e_y, d_v = 1) and U_h = u_h, in the
    token frame of the data (x, y). One head with u = 1 is the Gaussian smoother itself."""
    ells, u = vector("lengthscales", lengthscales), vector("mixing", mixing)
    if not 1 <= ells.shape[0] <= HEADS_MAX or ells.shape != u.shape:
        raise ValueError(f"give 1 … {HEADS_MAX} lengthscales and as many mixing weights")
    center, scale = _frame(vector("x", x))
    maps = [gaussian_attention_params(ell, scale) for ell in ells]
    return AttentionFit(w_q=np.stack([g.w_q for g in maps]), w_k=np.stack([g.w_k for g in maps]),
                        w_v=np.stack([g.w_v for g in maps]), mixing=u[:, None], center=center, scale=scale,
                        y_scale=pooling.value_scale(vector("y", y)), start_lengthscales=ells)


@partial(jax.jit, static_argnames=("with_weights",))
def _pooled(maps, qx, hidden, kx, toks, key_mask, dim_mask, d_qk, with_weights):
    """Every head's pooled tokens and their variances (H, q, 4) [and weights (H, q, n)]; key ``hidden[j]``
    is not available to query j (−1: none), which makes the same program the leave-one-out predictor."""
    index = jnp.arange(kx.shape[0])

    def one_block(block):
        available = key_mask[None, :] & (block[:, 1, None] != index[None, :])
        w, mean, var = _heads(maps, block[:, 0], kx, toks, available, dim_mask, d_qk)
        return (mean, var, w) if with_weights else (mean, var)

    axes = (1, 1, 1) if with_weights else (1, 1)
    return pooling.over_query_blocks(one_block, jnp.stack([qx, hidden], axis=-1), HEADS_QUERY_BLOCK, axes)


def _heads_pooled(fit: AttentionFit, queries: object, x: object, y: object, hidden: np.ndarray | None = None,
                  with_weights: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(pooled tokens (H, q, 4), their variances (H, q, 4), weights (H, q, n) or None) of ``queries``
    against the points (x, y), in token units."""
    q, xs, ys = vector("queries", queries), vector("x", x), vector("y", y)
    if xs.shape != ys.shape or xs.shape[0] == 0:
        raise ValueError("x and y must be non-empty and of the same length")
    nq, n, h = q.shape[0], xs.shape[0], fit.heads
    qp, kp, maps = bucket(nq), bucket(n), np.zeros((2, HEADS_MAX, FEATURES, D_QK_MAX))
    maps[:, :h, :, : fit.d_qk] = fit.w_q, fit.w_k
    xt = pad((xs - fit.center) / fit.scale, kp)
    hide = pad(np.full(nq, -1.0) if hidden is None else hidden, qp, -1.0)
    out = _pooled((maps[0], maps[1]), pad((q - fit.center) / fit.scale, qp), hide, xt,
                  tokens(xt, pad(ys / fit.y_scale, kp)), np.arange(kp) < n, _masks(h, fit.d_qk)[1],
                  float(fit.d_qk), with_weights=bool(with_weights))
    mean, var = (np.asarray(a)[:h, :nq] for a in out[:2])
    return mean, var, np.array(np.asarray(out[2])[:h, :nq, :n]) if with_weights else None


def _readout(fit: AttentionFit, mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, ...]:
    """(f̂, band s, head parts head_h U_h (H, q)) in y units from pooled tokens t̄_h: f̂ = Σ_h t̄_h W_v^h U_h,
    s² = Σ_h p_h Σ_i w_hi (y_i − f̂)² = Σ_h p_h (s_h² + (m_h − f̂)²), m_h, s_h² the moments of y under head
    h, p_h ∝ |(W_v^h U_h)_y| (how much of y head h passes on)."""
    r = fit.readout
    parts = np.einsum("hqf,hf->hq", mean, r)
    f = parts.sum(axis=0)
    c = np.abs(r[:, Y])
    p = c / c.sum() if c.sum() > 0 else np.full(fit.heads, 1.0 / fit.heads)
    s2 = np.einsum("h,hq->q", p, var[..., Y] + np.square(mean[..., Y] - f))
    return f * fit.y_scale, np.sqrt(s2) * fit.y_scale, parts * fit.y_scale


@dataclass(frozen=True)
class AttentionPrediction:
    """The layer at q queries: f̂ ``mean``, band ``std`` (q,), ``head_vectors`` head_h(x) (H, q, d_v); per
    head (H, q): ``head_outputs`` head_h(x) U_h (summing to f̂), ``head_means`` Σ_i w_hi y_i, ``head_stds``,
    ``centres`` Σ_i w_hi x_i, ``widths`` (Σ_i w_hi (x_i − centre)²)^{1/2}; ``weights`` (H, q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    head_vectors: np.ndarray
    head_outputs: np.ndarray
    head_means: np.ndarray
    head_stds: np.ndarray
    centres: np.ndarray
    widths: np.ndarray
    weights: np.ndarray | None


def attention_predict(fit: AttentionFit, queries: object, x: object, y: object,
                      with_weights: bool = True) -> AttentionPrediction:
    """The layer at ``queries`` with keys and values the points (x, y): cross-attention, or, the points
    themselves as queries, self-attention, the map x_1 … x_n ↦ x′_1 … x′_n (``head_vectors``; ``mean`` is
    Σ_h x′_hi U_h). ``with_weights=False`` leaves the (H, q, n) weights out, for big data."""
    mean, var, w = _heads_pooled(fit, queries, x, y, with_weights=with_weights)
    f, s, parts = _readout(fit, mean, var)
    return AttentionPrediction(
        mean=f, std=s, head_vectors=np.einsum("hqf,hfv->hqv", mean, fit.w_v), head_outputs=parts,
        head_means=mean[..., Y] * fit.y_scale, head_stds=np.sqrt(var[..., Y]) * fit.y_scale,
        centres=mean[..., 1] * fit.scale + fit.center, widths=np.sqrt(var[..., 1]) * fit.scale, weights=w,
    )


def dot_product_attention(queries: object, keys: object, values: object, w_q: object, w_k: object,
                          score_scale: float | None = None, center: float = 0.0,
                          scale: float = 1.0) -> Smooth:
    """One head with values y_i (W_v = e_y): a_i = softmax_i(c φ(x̃)W_q · φ(x̃_i)W_k), x̃ = (x − center)/scale,
    c = ``score_scale`` (default 1/√d_qk); ``Smooth(m, s, a)`` with m = Σ a_i y_i, s² = Σ a_i (y_i − m)²."""
    wq, wk = np.asarray(w_q, dtype=np.float64), np.asarray(w_k, dtype=np.float64)
    if wq.ndim != 2 or wq.shape[0] != FEATURES or wq.shape != wk.shape or wq.shape[1] > D_QK_MAX:
        raise ValueError(f"w_q and w_k must both be {FEATURES} × d_qk with d_qk ≤ {D_QK_MAX}")
    c = 1.0 if score_scale is None else float(score_scale) * math.sqrt(wq.shape[1])
    head = AttentionFit(w_q=c * wq[None], w_k=wk[None], w_v=np.eye(TOKEN)[None, :, Y:], mixing=np.eye(1),
                        center=center, scale=scale, y_scale=pooling.value_scale(vector("values", values)))
    p = attention_predict(head, queries, keys, values)
    return Smooth(p.head_means[0], p.head_stds[0], p.weights[0])


def attention_loo_error(fit: AttentionFit, x: object, y: object) -> float:
    """The leave-one-out error (1/n) Σ_i (y_i − f̂_{−i}(x_i))², f̂_{−i} the layer with key i hidden: each
    point predicted from all the others (for one Gaussian head, ``loo_curve`` at its ℓ)."""
    xs, ys = vector("x", x), vector("y", y)
    if xs.shape[0] < 2:
        raise ValueError("leave-one-out needs at least two points")
    mean, var, _ = _heads_pooled(fit, xs, xs, ys, hidden=np.arange(xs.shape[0], dtype=np.float64))
    return float(np.mean(np.square(_readout(fit, mean, var)[0] - ys)))


def attention_values(fit: AttentionFit, x: object, y: object) -> np.ndarray:
    """Every head's values v_hi = t_i W_v^h of the points (x_i, y_i): (H, n, d_v), in token units."""
    xs, ys = vector("x", x), vector("y", y)
    return np.einsum("nf,hfv->hnv", tokens((xs - fit.center) / fit.scale, ys / fit.y_scale), fit.w_v)


def attention_kernel(fit: AttentionFit, grid: object, kind: str = "log_kernel") -> np.ndarray:
    """The learned kernels on a grid, (H, g, g), row x = query, column x′ = key: scores s_h = φ(x̃) A_h φ(x̃′)ᵀ
    (``score_matrices``, ``kind="scores"``), or log K_h = s_h + c_h(x) (``"log_kernel"``), c_h(x) =
    (A_01 − A_10) x̃ + (A_02 − A_20) x̃² a per-query constant no weight sees that leaves A_h symmetric but for
    A_12 ≠ A_21: the Gaussian's log K is −(x − x′)²/2ℓ²; asymmetry lives only in the x̃ x̃′², x̃² x̃′ terms."""
    if kind not in ("scores", "log_kernel"):
        raise ValueError(f"kind must be 'scores' or 'log_kernel', not {kind!r}")
    gt = (vector("grid", grid) - fit.center) / fit.scale
    a, phi = score_matrices(fit.w_q, fit.w_k, fit.d_qk), tokens(gt, gt)[:, :FEATURES]  # φ(x̃), in NumPy
    s = np.einsum("gf,hfk,jk->hgj", phi, a, phi)
    c = (a[:, 0, 1] - a[:, 1, 0])[:, None] * gt + (a[:, 0, 2] - a[:, 2, 0])[:, None] * gt**2
    return s if kind == "scores" else s + c[:, :, None]
