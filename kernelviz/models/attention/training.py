"""Training chapter 4's attention layer (``kernelviz.models.attention``) by masked training.

``fit_attention`` = ``layer_start`` (the arguments checked, the data in token units, the start) and
``train_layer`` (one compiled ``kernelviz.models.training.run`` of Adam on the hold-out objective of the
layer, ``attention.layer_output``). A start (``STARTS``) puts Gaussian heads around the leave-one-out optimum
ℓ*, at the blog post's spread, or draws random maps; U_h starts at 1/H. Heads, d_qk and d_v are padded with
masks, so every setting of the controls runs one program per data size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.data import post
from kernelviz.models import training
from kernelviz.models.attention import (
    D_QK_MAX,
    D_V_MAX,
    FEATURES,
    TOKEN,
    AttentionFit,
    Y,
    gaussian_attention_params,
    layer_output,
    token_frame,
    tokens,
)
from kernelviz.models.heads import initial_lengthscales
from kernelviz.models.holdout import Holdout, holdout_objective, holdout_range, holdout_split
from kernelviz.models.loo import loo_lengthscale
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.runtime import train
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import check_int

__all__ = [
    "STARTS", "LayerRequest", "LayerRun", "LayerSettings", "LayerStart", "fit_attention", "layer_start",
    "start_lengthscales", "train_layer", "trained_layer",
]

STARTS = ("gaussian", "post", "random")
START_NOISE = 0.02  # entries of a Gaussian start get N(0, START_NOISE²) seeded noise
PARAM_LIMIT = 1e6  # a weight beyond this (scores ~1e12) counts as diverged


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


def _initial_params(ells: np.ndarray, scale: float, seed: int,
                    masks: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
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


class LayerRun(NamedTuple):
    """What the compiled run reads besides the parameters, every field traced: the points in token units,
    padded (``x``, ``toks``, ``y``, their ``mask``), ``d_qk``, the hold-out size, whether the step size
    ``decay``s (1.0 or 0.0) and the run's ``key``."""

    x: np.ndarray
    toks: np.ndarray
    y: np.ndarray
    mask: np.ndarray
    d_qk: float
    holdout: int
    decay: float
    key: np.ndarray


@dataclass(frozen=True)
class LayerRequest:
    """What a training run of the layer is asked for (``fit_attention``'s settings)."""

    heads: int = 2
    d_qk: int = 4
    holdout: int = 10
    steps: int = 500
    learning_rate: float = 0.05
    seed: int = 0
    d_v: int = 1
    start: str = "gaussian"
    decay: bool = True


@dataclass(frozen=True)
class LayerSettings:
    """What the trained layer's ``AttentionFit`` reports of its run: sizes, the frame, the data's note."""

    heads: int
    d_qk: int
    d_v: int
    center: float
    scale: float
    y_scale: float
    note: str
    steps: int
    holdout: int
    learning_rate: float
    seed: int
    start: str
    ells: np.ndarray


class LayerStart(NamedTuple):
    """A training run of the layer, set up (``layer_start``): the compiled run's input, the parameters
    (W_q, W_k, W_v, U) in their padded slots, the loop and the settings."""

    run: LayerRun
    params: tuple[train.Param, ...]
    loop: train.Loop
    settings: LayerSettings


def layer_start(x: object, y: object, req: LayerRequest = LayerRequest()) -> LayerStart:
    """``fit_attention``'s arguments checked and its run set up by the training adapter: the data prepared
    (``kernelviz.runtime.train.prepare``), the start (``start_lengthscales``, ``_initial_params``) and what
    trains (the real heads and widths)."""
    xs, ys = train.check_data(x, y)
    h, d = check_int("heads", req.heads, 1, HEADS_MAX), check_int("d_qk", req.d_qk, 1, D_QK_MAX)
    dv, loop = check_int("d_v", req.d_v, 1, D_V_MAX), train.check_loop(req.steps, req.learning_rate)
    ho = check_int("holdout", req.holdout, *holdout_range(xs.shape[0]))
    p = train.prepare(xs, ys, int(req.seed))
    ells = start_lengthscales(req.start, h, *p.real)
    (center, scale), masks = token_frame(p.real[0]), _masks(h, d, dv)
    xt = (p.x - center) / scale
    start = _initial_params(ells, scale, req.seed, masks)
    params = tuple(train.Param(a, real) for a, real in zip(start, ((h, FEATURES, d), (h, FEATURES, d),
                                                                    (h, TOKEN, dv), (h, dv)), strict=True))
    run = LayerRun(xt, tokens(xt, p.y), p.y, p.mask, float(d), ho, float(bool(req.decay)),
                   post.prng_key(req.seed))
    settings = LayerSettings(h, d, dv, center, scale, p.scale, p.note, loop.steps, ho, loop.learning_rate,
                             int(req.seed), req.start, ells)
    return LayerStart(run, params, loop, settings)


def _train(run: LayerRun, params0: tuple[Array, ...], trainable: tuple[Array, ...], loop: train.Loop, *,
           model: Callable[..., Array], snapshots: bool = True) -> training.Trained:
    """Adam on (W_q, W_k, W_v, U) from ``params0`` by masked training of ``model``, its step at step t
    learning_rate · (1 + cos(π t/steps))/2 (``decay`` 1) or constant (``decay`` 0): one program per data
    size, keeping ``training.SNAPSHOTS`` snapshots of the params (``snapshots=False``: none, for the
    benchmark of what they cost)."""

    def predict(p: tuple[Array, ...], xq: Array, available: Array) -> Array:
        return model(p, xq, run.x, run.toks, available, run.d_qk)

    def schedule(t: Array) -> Array:
        angle = jnp.pi * jnp.minimum(t, loop.steps) / loop.steps
        return loop.learning_rate * (1 - run.decay * (1 - jnp.cos(angle)) / 2)

    data = Holdout(run.x, run.y, run.mask, run.holdout, run.key)
    objective = holdout_objective(predict, data, split=train.fast(holdout_split))
    settings = training.Settings("adam", schedule, loop.steps, PARAM_LIMIT, lambda p: jnp.zeros(0))
    return training.run(objective, params0, trainable, settings, snapshots=snapshots)


def trained_layer(model: Callable[..., Array], run: LayerStart, snapshots: bool = True) -> train.Fitted:
    """The layer ``model`` trained from ``run`` in one compiled call (``_train`` through the training
    adapter), cut to its real heads and widths, its losses in y units²."""
    out = train.fit(_train, run.run, run.params, run.loop, static={"model": model, "snapshots": snapshots})
    readout = train.Readout(run.params, run.loop.steps, run.settings.y_scale**2)
    return train.cut(out, readout, training.snapshot_steps)


def train_layer(model: Callable[..., Array], run: LayerStart) -> AttentionFit:
    """The layer ``model`` (``layer_output``'s signature) trained from ``run`` (``layer_start``), in one
    compiled call, as an ``AttentionFit`` in the data's units."""
    f, s = trained_layer(model, run), run.settings
    w_q, w_k, w_v, u = f.params
    message = [training.diverged_message(f.steps_run, s.steps, s.learning_rate)] if f.diverged else []
    return AttentionFit(
        w_q=w_q, w_k=w_k, w_v=w_v, mixing=u, center=s.center, scale=s.scale, y_scale=s.y_scale,
        losses=f.losses, diverged=f.diverged, message=" ".join(message + ([s.note] if s.note else [])),
        steps_run=f.steps_run, holdout=s.holdout, learning_rate=s.learning_rate, seed=s.seed, start=s.start,
        start_lengthscales=s.ells, snapshot_steps=f.snapshot_steps, snapshots=f.snapshots,
    )


@float64
def fit_attention(x: object, y: object, heads: int = 2, d_qk: int = 4, holdout: int = 10, steps: int = 500,
                  learning_rate: float = 0.05, seed: int = 0, *, d_v: int = 1, start: str = "gaussian",
                  decay: bool = True) -> AttentionFit:
    """Masked training of an H-head attention layer on (x, y), in one compiled call: each step holds out
    ``holdout`` random points (1 … n − 2), masks them out as keys and predicts them from the rest
    (``layer_output``); Adam on W_q, W_k, W_v and U, its step ``learning_rate`` · (1 + cos(π t/steps))/2
    (constant with ``decay=False``), from ``start`` (``start_lengthscales``, noise from ``seed``). Data
    above ``TRAIN_MAX_POINTS`` points use a random subsample."""
    req = LayerRequest(heads, d_qk, holdout, steps, learning_rate, seed, d_v, start, decay)
    return train_layer(layer_output, layer_start(x, y, req))
