"""Dot-product attention: attention pooling (``kernelviz.core.pooling``) with a learned score and learned
values.

A point is a token t = (1, x̃, x̃², ỹ) (x̃ = (x − c)/s maps the training data's range onto [−1, 1],
ỹ = y/max|y|). Head h has query and key maps W_q^h, W_k^h (3 × d_qk) that read its position part φ(x̃)
= (1, x̃, x̃²) (the post relabels a point as (x_i, y_i) and lets each map project on the component it needs)
and a value map W_v^h (4 × d_v) that reads the whole token:

    s_h(x, x′) = ⟨φ(x̃) W_q^h, φ(x̃′) W_k^h⟩ / √d_qk,      w_hi(x) = softmax_i s_h(x, x_i),
    head_h(x)  = Σ_i w_hi(x) t_i W_v^h ∈ R^{d_v},           f̂(x) = Σ_h head_h(x) U_h = Concat(heads) W_O,

U_h the d_v × 1 block of W_O of head h. The score is written once (``dot_scores``) and serves training
(``layer_output``), prediction (``attention_layer``, on ``pooling.multihead``) and the learned kernel
(``attention_kernel``). With the points as queries a head maps x_1 … x_n to x′_1 … x′_n ∈ R^{d_v}: the
self-attention layer. The Gaussian smoother, and so chapter 3's heads, are settings of the layer
(``gaussian_attention_params``, ``gaussian_layer``). Training is ``kernelviz.models.training.run`` with the
hold-out objective (``kernelviz.models.attention.training``). Heads, d_qk and d_v are padded (``HEADS_MAX``,
``D_QK_MAX``, ``D_V_MAX``): nothing recompiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.models.smoothing import HEADS_MAX, HEADS_QUERY_BLOCK, Smooth
from kernelviz.runtime import serve
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import param, vector

__all__ = [
    "D_QK_MAX", "D_V_MAX", "FEATURES", "TOKEN", "AttentionFit", "AttentionPrediction", "GaussianAttention",
    "Layer", "Y", "attention_kernel", "attention_layer", "attention_loo_error", "attention_predict",
    "attention_values", "dot_product_attention", "dot_scores", "features", "gaussian_attention_params",
    "gaussian_layer", "layer_model", "layer_output", "score_matrices", "token_frame", "tokens",
]

D_QK_MAX = 8  # query/key width is padded to this with a mask: d_qk never recompiles
D_V_MAX = 4  # value width, padded likewise
FEATURES = 3  # the position part φ(x̃) = (1, x̃, x̃²), read by W_q and W_k
TOKEN = 4  # the token t = (1, x̃, x̃², ỹ), read by W_v
Y = 3  # the token component that holds ỹ


def features(x: Array) -> Array:
    """φ(x) = (1, x, x²) for each x: (..., 3)."""
    return jnp.stack([jnp.ones_like(x), x, x * x], axis=-1)


def tokens(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """t = (1, x, x², y) for each point: (n, 4)."""
    return np.stack([np.ones_like(x), x, x * x, y], axis=-1)


def score_matrices(w_q: Array, w_k: Array, d_qk: object) -> Array:
    """A = W_q W_kᵀ/√d_qk (3 × 3; for every head at once given (H, 3, d_qk) maps): the score
    s(x, x′) = φ(x̃) A φ(x̃′)ᵀ is a quadratic form in (1, x̃, x̃²) × (1, x̃′, x̃′²)."""
    return w_q @ w_k.swapaxes(-1, -2) / d_qk**0.5


def dot_scores(w_q: Array, w_k: Array, queries: Array, keys: Array, d_qk: object) -> Array:
    """One head's scores s(x, x′) = ⟨φ(x̃) W_q, φ(x̃′) W_k⟩/√d_qk = φ(x̃) A φ(x̃′)ᵀ (``score_matrices``) of
    ``queries`` (q,) against ``keys`` (n,), both in token units: (q, n)."""
    return features(queries) @ score_matrices(w_q, w_k, d_qk) @ features(keys).T


def layer_output(params: tuple[Array, ...], queries: Array, keys: Array, toks: Array, available: Array,
                 d_qk: object) -> Array:
    """f̂(x) = Σ_h Σ_i w_hi(x) t_i W_v^h U_h, w_h = softmax_i s_h(x, x_i) over the ``available`` keys (r, n),
    params = (W_q, W_k, W_v, U): training's form of the layer, each head pooling the one number
    v_hi = t_i W_v^h U_h, the heads summed (``pooling.summed_heads``)."""
    w_q, w_k, w_v, u = params
    values = toks @ jnp.einsum("hfv,hv->fh", w_v, u)  # (n, H): v_ih = t_i W_v^h U_h
    return pooling.summed_heads(lambda maps, q, k: dot_scores(*maps, q, k, d_qk), (w_q, w_k), queries, keys,
                                available, values)


class Layer(NamedTuple):
    """A layer as prediction reads it, padded to ``HEADS_MAX`` heads and ``D_QK_MAX`` query/key dimensions
    (zeros): the maps ``w_q``, ``w_k``, the readout r_h = W_v^h U_h (H, 4), the heads' shares p_h of the
    band (H,) and ``d_qk``."""

    w_q: Array
    w_k: Array
    readout: Array
    band_mixing: Array
    d_qk: Array


def attention_layer(layer: Layer, queries: Array, hidden: Array, keys: Array, toks: Array, key_mask: Array,
                    with_weights: bool = False) -> pooling.Pooled:
    """The layer at the queries. Every head pools every token component on the core (``pooling.multihead``):
    t̄_h = Σ_i w_hi t_i, w_h = softmax_i s_h(x, x_i) over the keys but ``hidden`` (−1: none); then
    f̂ = Σ_h t̄_h W_v^h U_h and the band s² = Σ_h p_h Σ_i w_hi (ỹ_i − f̂)² = V̄ + (m̄ − f̂)², m̄ and V̄ the mean and
    variance of ỹ under the heads' weights pooled by p (``pooling.mix``).

    Returns f̂ (q,) and s² (q,) as mean and var, t̄ (4, H, q) and the heads' token variances (4, H, q) as
    head_means and head_vars, and with ``with_weights`` the weights (H, q, n)."""

    def scores(maps: tuple[Array, Array], qh: Array, k: Array) -> Array:  # qh = (x̃, hidden) per query
        s = dot_scores(*maps, qh[:, 0], k, layer.d_qk)
        return jnp.where(qh[:, 1:] == jnp.arange(k.shape[0]), -jnp.inf, s)

    def pool(values: Array) -> pooling.Pooled:  # one token component; the weights are the same for all
        return pooling.multihead(scores, (layer.w_q, layer.w_k), jnp.stack([queries, hidden], axis=-1), keys,
                                 values, key_mask, layer.band_mixing, block=HEADS_QUERY_BLOCK,
                                 with_weights=with_weights)

    # t: every field with the token components first (4, …), but the weights, the same for all
    t = jax.vmap(pool, 1, pooling.Pooled(mean=0, var=0, head_means=0, head_vars=0, weights=None))(toks)
    f = jnp.einsum("chq,hc->q", t.head_means, layer.readout)
    return t._replace(mean=f, var=t.var[Y] + jnp.square(t.mean[Y] - f))


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
    (``STARTS``) and the ℓ_h its Gaussian heads began at, ``start_lengthscales``; ``message`` for the page;
    ``snapshots`` (W_q, W_k, W_v, U), each with a leading axis, the layer after ``snapshot_steps``
    (``at_snapshot``)."""

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
    snapshot_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    snapshots: tuple[np.ndarray, ...] = ()

    @property
    def heads(self) -> int:
        return int(self.w_q.shape[0])

    @property
    def d_qk(self) -> int:
        return int(self.w_q.shape[2])

    def at_snapshot(self, j: int) -> AttentionFit:
        """The layer as training had it after ``snapshot_steps[j]`` steps (the last is the layer itself)."""
        w_q, w_k, w_v, u = (a[j] for a in self.snapshots)
        return replace(self, w_q=w_q, w_k=w_k, w_v=w_v, mixing=u)

    @property
    def readout(self) -> np.ndarray:
        """r_h = W_v^h U_h (heads, 4): what head h adds to f̂ per unit of each pooled token component."""
        return np.einsum("hfv,hv->hf", self.w_v, self.mixing)


def token_frame(x_real: np.ndarray) -> tuple[float, float]:
    """(c, s): x̃ = (x − c)/s maps the data's range onto [−1, 1]."""
    lo, hi = float(np.min(x_real)), float(np.max(x_real))
    return 0.5 * (lo + hi), (0.5 * (hi - lo) if hi > lo else 1.0)


@float64
def gaussian_layer(lengthscales: object, mixing: object, x: object, y: object) -> AttentionFit:
    """Chapter 3's multi-head kernel regression Σ_h u_h m_h(x; ℓ_h) as this layer: head h the Gaussian
    smoother at ℓ_h (``gaussian_attention_params``: d_qk = 2, W_v^h = e_y, d_v = 1) and U_h = u_h, in the
    token frame of the data (x, y). One head with u = 1 is the Gaussian smoother itself."""
    ells, u = vector("lengthscales", lengthscales), vector("mixing", mixing)
    if not 1 <= ells.shape[0] <= HEADS_MAX or ells.shape != u.shape:
        raise ValueError(f"give 1 … {HEADS_MAX} lengthscales and as many mixing weights")
    center, scale = token_frame(vector("x", x))
    maps = [gaussian_attention_params(ell, scale) for ell in ells]
    return AttentionFit(w_q=np.stack([g.w_q for g in maps]), w_k=np.stack([g.w_k for g in maps]),
                        w_v=np.stack([g.w_v for g in maps]), mixing=u[:, None], center=center, scale=scale,
                        y_scale=pooling.value_scale(vector("y", y)), start_lengthscales=ells)


def _layer(fit: AttentionFit) -> Layer:
    """``fit`` padded for ``attention_layer``, the band's p_h ∝ |(W_v^h U_h)_y| (how much of y head h passes
    on; 1/H each when no head passes any)."""
    h, maps = fit.heads, np.zeros((2, HEADS_MAX, FEATURES, D_QK_MAX))
    readout, p = np.zeros((HEADS_MAX, TOKEN)), np.zeros(HEADS_MAX)
    maps[:, :h, :, : fit.d_qk] = fit.w_q, fit.w_k
    readout[:h] = fit.readout
    c = np.abs(fit.readout[:, Y])
    p[:h] = c / c.sum() if c.sum() > 0 else 1.0 / h
    return Layer(maps[0], maps[1], readout, p, float(fit.d_qk))


def layer_model(queries: Array, keys: Array, values: Array, available: Array, layer: Layer, hidden: Array,
                with_weights: bool) -> pooling.Pooled:
    """``attention_layer`` reading the points as tokens t_i = (φ(x̃_i), ỹ_i) = (1, x̃_i, x̃_i², ỹ_i), all in
    the layer's frame."""
    toks = jnp.concatenate([features(keys), values[:, None]], axis=-1)
    return attention_layer(layer, queries, hidden, keys, toks, available, with_weights)


def _run_layer(fit: AttentionFit, queries: object, x: object, y: object, hidden: np.ndarray | None = None,
               with_weights: bool = False) -> serve.Served:
    """``layer_model`` at ``queries`` against the points (x, y) in the layer's frame (x̃ = (x − c)/s,
    ỹ = y/y_scale), served by ``kernelviz.runtime.serve``: f̂ and s in y units, the pooled tokens' means and
    stds (4, H, q) in token units (``head_means``, ``head_stds``), the weights (H, q, n) or None."""
    q, xs, ys = vector("queries", queries), vector("x", x), vector("y", y)
    p = serve.problem((q - fit.center) / fit.scale, (xs - fit.center) / fit.scale, ys / fit.y_scale,
                      scaled=False)
    hide = param(np.full(p.nq, -1.0) if hidden is None else hidden, p.queries.shape[0], -1.0)
    out = serve.serve(layer_model, p, _layer(fit), hide, heads=fit.heads,
                      static={"with_weights": bool(with_weights)})
    return out._replace(mean=out.mean * fit.y_scale, std=out.std * fit.y_scale)


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


@float64
def attention_predict(fit: AttentionFit, queries: object, x: object, y: object,
                      with_weights: bool = True) -> AttentionPrediction:
    """The layer at ``queries`` with keys and values the points (x, y) (``attention_layer``): cross-attention,
    or, the points themselves as queries, self-attention, the map x_1 … x_n ↦ x′_1 … x′_n (``head_vectors``;
    ``mean`` is Σ_h x′_hi U_h). ``with_weights=False`` leaves the (H, q, n) weights out, for big data."""
    out = _run_layer(fit, queries, x, y, with_weights=with_weights)
    mean, std = out.head_means, out.head_stds
    return AttentionPrediction(
        mean=out.mean, std=out.std, head_vectors=np.einsum("fhq,hfv->hqv", mean, fit.w_v),
        head_outputs=np.einsum("fhq,hf->hq", mean, fit.readout) * fit.y_scale,
        head_means=mean[Y] * fit.y_scale, head_stds=std[Y] * fit.y_scale,
        centres=mean[1] * fit.scale + fit.center, widths=std[1] * fit.scale, weights=out.weights,
    )


@float64
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


@float64
def attention_loo_error(fit: AttentionFit, x: object, y: object) -> float:
    """The leave-one-out error (1/n) Σ_i (y_i − f̂_{−i}(x_i))², f̂_{−i} the layer with key i hidden: each
    point predicted from all the others (for one Gaussian head, ``loo_curve`` at its ℓ)."""
    xs, ys = vector("x", x), vector("y", y)
    if xs.shape[0] < 2:
        raise ValueError("leave-one-out needs at least two points")
    f = _run_layer(fit, xs, xs, ys, hidden=np.arange(xs.shape[0], dtype=np.float64)).mean
    return float(np.mean(np.square(f - ys)))


@float64
def attention_values(fit: AttentionFit, x: object, y: object) -> np.ndarray:
    """Every head's values v_hi = t_i W_v^h of the points (x_i, y_i): (H, n, d_v), in token units."""
    xs, ys = vector("x", x), vector("y", y)
    return np.einsum("nf,hfv->hnv", tokens((xs - fit.center) / fit.scale, ys / fit.y_scale), fit.w_v)


def _grid_scores(layer: Layer, grid: Array) -> Array:
    """Every head's ``dot_scores`` of the grid against itself, (H, g, g)."""
    heads = jax.vmap(dot_scores, in_axes=(0, 0, None, None, None))
    return heads(layer.w_q, layer.w_k, grid, grid, layer.d_qk)


@float64
def attention_kernel(fit: AttentionFit, grid: object, kind: str = "log_kernel") -> np.ndarray:
    """The learned kernels on a grid, (H, g, g), row x = query, column x′ = key: scores s_h (``dot_scores``,
    ``kind="scores"``), or log K_h = s_h + c_h(x) (``"log_kernel"``), c_h(x) = (A_01 − A_10) x̃ +
    (A_02 − A_20) x̃² (A_h = ``score_matrices``) a per-query constant no weight sees that leaves A_h symmetric
    but for A_12 ≠ A_21: the Gaussian's log K is −(x − x′)²/2ℓ²; asymmetry lives only in the x̃ x̃′², x̃² x̃′
    terms."""
    if kind not in ("scores", "log_kernel"):
        raise ValueError(f"kind must be 'scores' or 'log_kernel', not {kind!r}")
    gt = (vector("grid", grid) - fit.center) / fit.scale
    s = serve.cut(serve.call(_grid_scores, _layer(fit), gt), (fit.heads,))
    a = score_matrices(fit.w_q, fit.w_k, fit.d_qk)
    c = (a[:, 0, 1] - a[:, 1, 0])[:, None] * gt + (a[:, 0, 2] - a[:, 2, 0])[:, None] * gt**2
    return s if kind == "scores" else s + c[:, :, None]
