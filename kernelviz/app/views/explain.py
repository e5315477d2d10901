"""Why the fit is where it is at one query x*: its weights over the data, largest first (chapter 1), its
heads mixed (chapter 3), and an attention layer's scores before the softmax (chapter 4).

``point_weights`` evaluates Nadaraya–Watson at x* alone, with its weights, so a page can write out
m(x*) = Σᵢ wᵢ(x*) yᵢ with the numbers; ``heads_point`` does the same for f̂(x*) = Σ_h u_h m_h(x*);
``layer_point`` for f̂(x*) = Σ_h Σᵢ softmaxᵢ(q_h(x*)·k_h(xᵢ)/√d) vₕᵢ; ``nearest_row`` finds the heatmap row
a selection highlights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelviz.models.attention import AttentionFit, attention_predict, score_matrices, tokens
from kernelviz.models.smoothing import nadaraya_watson, predict_heads
from kernelviz.runtime.i18n import _

__all__ = ["TOP_WEIGHTS", "HeadsPoint", "LayerPoint", "PointWeights", "head_keys_table", "heads_point",
           "heads_table", "layer_heads_table", "layer_point", "nearest_row", "point_weights", "weights_table"]

TOP_WEIGHTS = 5  # the largest weights a formula panel writes out one by one


@dataclass(frozen=True)
class PointWeights:
    """Nadaraya–Watson at one query ``x`` (x*): ``mean`` m(x*) = Σᵢ wᵢ(x*) yᵢ, ``std`` s(x*), where
    s(x*)² = Σᵢ wᵢ(x*) (yᵢ − m(x*))², and the ``weights`` wᵢ(x*) of every data point (n,), in the data's
    order (all 0 for an empty window). ``top`` indexes the largest weights, largest first (at most
    ``TOP_WEIGHTS``, only positive ones); ``rest_weight`` Σ wᵢ and ``rest_sum`` Σ wᵢ yᵢ over the others."""

    x: float
    mean: float
    std: float
    weights: np.ndarray
    top: np.ndarray
    rest_weight: float
    rest_sum: float

    @property
    def empty(self) -> bool:
        """True when no data point is in the kernel's window at x* (m(x*) is undefined: NaN)."""
        return not np.any(self.weights > 0)


def point_weights(x: np.ndarray, y: np.ndarray, x_star: float, lengthscale: float, kernel: str,
                  top: int = TOP_WEIGHTS) -> PointWeights:
    """``nadaraya_watson`` at the one query ``x_star`` on the data (x, y) (n,), with its weights."""
    s = nadaraya_watson(np.array([float(x_star)]), x, y, lengthscale, kernel, with_weights=True)
    w = np.asarray(s.weights[0], dtype=np.float64)
    order = np.argsort(-w, kind="stable")
    best = order[: max(0, top)]
    best = best[w[best] > 0]
    rest = np.setdiff1d(np.arange(w.shape[0]), best)
    yv = np.asarray(y, dtype=np.float64)
    return PointWeights(x=float(x_star), mean=float(s.mean[0]), std=float(s.std[0]), weights=w, top=best,
                        rest_weight=float(np.sum(w[rest])), rest_sum=float(np.sum(w[rest] * yv[rest])))


def nearest_row(queries: np.ndarray, x_star: float) -> int:
    """The index of the query nearest ``x_star`` (the first of two as near): the heatmap row to highlight."""
    q = np.asarray(queries, dtype=np.float64)
    return int(np.argmin(np.abs(q - float(x_star))))


def weights_table(pw: PointWeights, x: np.ndarray, y: np.ndarray) -> dict[str, list]:
    """The formula panel's table: the largest weights one row each (xᵢ, yᵢ, wᵢ(x*), wᵢ(x*) yᵢ), the other
    points summed in one row, and the total, whose last cell is m(x*)."""
    xv, yv, w = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), pw.weights
    others = w.shape[0] - pw.top.shape[0]
    rows: dict[str, list] = {"": [], "xᵢ": [], "yᵢ": [], "wᵢ(x*)": [], "wᵢ(x*) · yᵢ": []}

    def row(label: str, xi: float | None, yi: float | None, wi: float, wy: float) -> None:
        for col, v in zip(rows, (label, xi, yi, wi, wy), strict=True):
            rows[col].append(v)

    for i in pw.top:
        row(_("point {i}").format(i=i + 1), float(xv[i]), float(yv[i]), float(w[i]), float(w[i] * yv[i]))
    if others:
        row(_("the other {n:,} points").format(n=others), None, None, pw.rest_weight, pw.rest_sum)
    total = float(np.sum(w))
    row(_("all {n:,} points").format(n=w.shape[0]), None, None, total, pw.mean if total > 0 else None)
    return rows


@dataclass(frozen=True)
class HeadsPoint:
    """A multi-head model at one query ``x`` (x*): every head's ``head_means`` m_h(x*) (H,) with its
    ``lengthscales`` ℓ_h and ``mixing`` u_h, and the mixture ``mean`` f̂(x*) = Σ_h u_h m_h(x*) with its
    ``std``; ``points`` is, per head, how many data points it averages at x*: 1 / Σᵢ wₕᵢ(x*)² (n for
    equal weights, 1 for one point; 0 for an empty window)."""

    x: float
    head_means: np.ndarray
    lengthscales: np.ndarray
    mixing: np.ndarray
    mean: float
    std: float
    points: np.ndarray


def heads_point(x: np.ndarray, y: np.ndarray, x_star: float, lengthscales: object, mixing: object,
                kernel: str) -> HeadsPoint:
    """``predict_heads`` at the one query ``x_star`` on the data (x, y), with every head's weights."""
    p = predict_heads(np.array([float(x_star)]), x, y, lengthscales, mixing, kernel, with_weights=True)
    w = np.asarray(p.weights[:, 0, :], dtype=np.float64)
    squares = np.sum(w * w, axis=1)
    points = np.divide(1.0, squares, out=np.zeros_like(squares), where=squares > 0)
    return HeadsPoint(x=float(x_star), head_means=np.asarray(p.head_means[:, 0], dtype=np.float64),
                      lengthscales=np.asarray(lengthscales, dtype=np.float64).reshape(-1),
                      mixing=np.asarray(mixing, dtype=np.float64).reshape(-1), mean=float(p.mean[0]),
                      std=float(p.std[0]), points=points)


def heads_table(hp: HeadsPoint, names: list[str]) -> dict[str, list]:
    """The multi-head panel's table: per head ℓ_h, u_h, m_h(x*), how many points it averages and
    u_h · m_h(x*); then the mixture's row, whose last number is f̂(x*)."""
    terms = hp.mixing * hp.head_means
    return {"": [*names, _("mixture Σₕ uₕ mₕ(x*)")], "ℓₕ": [*map(float, hp.lengthscales), None],
            "uₕ": [*map(float, hp.mixing), float(np.sum(hp.mixing))],
            "mₕ(x*)": [*map(float, hp.head_means), None],
            _("points averaged"): [*map(float, hp.points), None],
            "uₕ · mₕ(x*)": [*map(float, terms), hp.mean]}


@dataclass(frozen=True)
class LayerPoint:
    """An attention layer at one query ``x`` (x*), per head h and data point i (arrays (H, n)): the
    ``scores`` sₕᵢ = qₕ(x*)·kₕ(xᵢ)/√d_qk before the softmax, the layer's own ``weights``
    wₕᵢ = softmaxᵢ(sₕᵢ) and the ``values`` vₕᵢ = tᵢ W_v^h U_h (in y units); every head's part
    ``head_outputs`` headₕ(x*)·Uₕ = Σᵢ wₕᵢ vₕᵢ (H,) and the layer's ``mean`` f̂(x*) = Σₕ of them, ``std``
    s(x*)."""

    x: float
    scores: np.ndarray
    weights: np.ndarray
    values: np.ndarray
    head_outputs: np.ndarray
    mean: float
    std: float


def _features(fit: AttentionFit, v: np.ndarray) -> np.ndarray:
    """φ(x̃) = (1, x̃, x̃²) in the layer's token frame, x̃ = (x − c)/s: (..., 3)."""
    t = (np.asarray(v, dtype=np.float64) - fit.center) / fit.scale
    return np.stack([np.ones_like(t), t, t * t], axis=-1)


def layer_point(fit: AttentionFit, x: np.ndarray, y: np.ndarray, x_star: float) -> LayerPoint:
    """The layer ``fit`` at the one query ``x_star`` on the data (x, y): its weights, parts and output from
    ``attention_predict``, and the scores φ(x̃*) A_h φ(x̃ᵢ)ᵀ (A_h = ``score_matrices``) and values
    tᵢ W_v^h U_h written out in NumPy."""
    xv, yv = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    p = attention_predict(fit, np.array([float(x_star)]), xv, yv)
    a = score_matrices(fit.w_q, fit.w_k, fit.d_qk)
    scores = np.einsum("f,hfg,ng->hn", _features(fit, np.array(float(x_star))), a, _features(fit, xv))
    toks = tokens((xv - fit.center) / fit.scale, yv / fit.y_scale)
    return LayerPoint(x=float(x_star), scores=scores, weights=np.asarray(p.weights[:, 0, :], np.float64),
                      values=(toks @ fit.readout.T).T * fit.y_scale,
                      head_outputs=np.asarray(p.head_outputs[:, 0], np.float64), mean=float(p.mean[0]),
                      std=float(p.std[0]))


def layer_heads_table(lp: LayerPoint, names: list[str]) -> dict[str, list]:
    """The layer panel's first table: per head its largest score, how many points it averages
    (1 / Σᵢ wₕᵢ²) and its part headₕ(x*)·Uₕ; then the layer's row, whose last number is f̂(x*)."""
    averaged = 1.0 / np.sum(lp.weights**2, axis=1)
    return {"": [*names, _("layer Σₕ headₕ(x*)·Uₕ")],
            _("largest score sₕᵢ"): [*map(float, lp.scores.max(axis=1)), None],
            _("points averaged"): [*map(float, averaged), None],
            "headₕ(x*)·Uₕ": [*map(float, lp.head_outputs), lp.mean]}


def head_keys_table(lp: LayerPoint, h: int, x: np.ndarray, top: int = TOP_WEIGHTS) -> dict[str, list]:
    """Head h's keys at x*: the points of largest weight one row each (xᵢ, the score sₕᵢ, the weight wₕᵢ,
    the value vₕᵢ and wₕᵢ vₕᵢ), the others summed, and the total, whose last cell is headₕ(x*)·Uₕ."""
    w, v, s, xv = lp.weights[h], lp.values[h], lp.scores[h], np.asarray(x, dtype=np.float64)
    best = np.argsort(-w, kind="stable")[:top]
    rest = np.setdiff1d(np.arange(w.shape[0]), best)
    rows: dict[str, list] = {"": [], "xᵢ": [], _("score sₕᵢ"): [], _("weight wₕᵢ"): [], _("value vₕᵢ"): [],
                             "wₕᵢ · vₕᵢ": []}

    def row(*cells: object) -> None:
        for col, cell in zip(rows, cells, strict=True):
            rows[col].append(cell)

    for i in best:
        row(_("point {i}").format(i=i + 1), float(xv[i]), float(s[i]), float(w[i]), float(v[i]),
            float(w[i] * v[i]))
    if rest.size:
        row(_("the other {n:,} points").format(n=rest.size), None, None, float(np.sum(w[rest])), None,
            float(np.sum(w[rest] * v[rest])))
    row(_("all {n:,} points").format(n=w.shape[0]), None, None, float(np.sum(w)), None,
        float(lp.head_outputs[h]))
    return rows
