"""In context: chapter 4's attention layer pretrained on many small regression prompts.

A prompt is n points (x_i, y_i) of a random task f and query points x (``kernelviz.data.tasks``). The layer is
chapter 4's dot-product score on the features φ(x) = (1, x, x²) (``attention.dot_scores``), pooling the
values y_i, head h times a learned output weight u_h:

    s_h(x, x′) = φ(x) A_h φ(x′)ᵀ,   A_h = W_q^h W_k^hᵀ/√d_qk,
    softmax:  f̂(x) = Σ_h u_h Σ_i softmax_i(s_h(x, x_i)) y_i           (``pooling.summed_heads``)
    linear:   f̂(x) = Σ_h u_h Σ_i (s_h(x, x_i)/n) y_i                   (no normalisation)

Pretraining (``pretrain``) runs Adam, its step cosine-decayed, on a fresh batch of ``BATCH`` prompts at
every step (step t's key folds t into the run's key: no prompt is seen twice), the loss the mean squared
error of f̂ against the true f on the query points. The score is a quadratic form in x′, s_h = c0 + c1 x′ +
c2 x′², so the softmax weights are exactly a Gaussian window in x′: its width ℓ = (−2 c2)^{−1/2} is a
lengthscale comparable to Nadaraya–Watson's (``learned_window``), and −(x − x′)²/2ℓ² is reachable exactly.
Pretrained on a family of tasks, the softmax layer becomes Nadaraya–Watson with the window that family
needs: narrower for rough tasks, wider for smooth tasks or noisy labels. The linear layer's weights
s_h/n are a quadratic in x′, not normalised: no narrow window around x can form.

One compiled program serves every control: heads are padded to ``HEADS_MAX`` and run one at a time in
loops with a traced trip count (f̂ is a sum of heads, so is its gradient, written out in
``kernelviz.models.incontext.gradient``), context points are padded to
``tasks.N_MAX`` and a traced branch index (``lax.switch``) picks the bucket of 32 or 64 points and the
layer kind: a step computes what its setting needs, and no setting recompiles.
Readouts (windows, reference smoothers, errors on fresh tasks) are in
``kernelviz.models.incontext.evaluation``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.pooling import linear_weights
from kernelviz.data import tasks
from kernelviz.models import training
from kernelviz.models.attention import dot_scores, gaussian_attention_params
from kernelviz.models.incontext.gradient import loss_by_heads
from kernelviz.models.smoothing import HEADS_MAX, HEADS_QUERY_BLOCK
from kernelviz.runtime import serve, train
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import check_int

__all__ = [
    "BATCH",
    "D_QK",
    "KINDS",
    "LEARNING_RATE",
    "STEPS",
    "ICLParams",
    "InContextPrediction",
    "PretrainRequest",
    "PretrainStart",
    "Pretrained",
    "head_scores",
    "in_context_predict",
    "layer_output",
    "linear_weights",
    "loss_by_heads",
    "prediction_model",
    "pretrain",
    "pretrain_args",
    "pretrained",
    "pretraining_loss",
]

KINDS = ("softmax", "linear")
D_QK = 2  # rank of each head's score matrix A_h: enough for −(x − x′)²/2ℓ²
BATCH = 32  # prompts per pretraining step (see STEPS)
POINT_BUCKETS = (32, tasks.N_MAX)  # a step draws the smallest bucket holding the n context points
INIT_LENGTHSCALE = 1.0  # heads start as Gaussian windows this wide on [−1, 1] (spread by √2 per head)
INIT_NOISE = 0.02  # plus N(0, INIT_NOISE²) on every active entry
PARAM_LIMIT = 1e6
# 1500 steps × 32 prompts at step size 0.6: 1.005x the best fixed window's error on sines and 1.011x on GP
# draws (mean of four seeds, 2048 fresh tasks), as 64 prompts at 0.4 gave (1.009x, 1.019x) in 0.55 of the
# time; at 0.4, 32 prompts gave 1.013x and 1.031x (python -m benchmarks.bench_incontext --batch --tasks 2048).
STEPS = 1500
LEARNING_RATE = 0.6  # the score entries must grow from ~1 to ~15 (1/ℓ² ≈ 200 for ℓ ≈ 0.07)


class ICLParams(NamedTuple):
    """The layer's parameters, padded to ``HEADS_MAX`` heads: W_q, W_k (H, 3, D_QK) and u (H,)."""

    w_q: Array
    w_k: Array
    u: Array


def head_scores(maps: tuple[Array, Array], queries: Array, keys: Array) -> Array:
    """One head's s(x, x′) = φ(x) W_q W_kᵀ φ(x′)ᵀ/√D_QK (``attention.dot_scores``): (q, n)."""
    return dot_scores(maps[0], maps[1], queries, keys, D_QK)


def layer_output(params: ICLParams, kind: int, queries: Array, x: Array, y: Array, available: Array) -> Array:
    """f̂(x) = Σ_h u_h Σ_i w_hi(x) y_i at ``queries`` from the context (x, y) (``available`` keys): w_h the
    softmax of s_h (``kind`` 0, ``pooling.summed_heads``) or s_h/n (``kind`` 1, ``linear_weights``).
    ``kind`` is static."""
    maps = (params.w_q, params.w_k)
    if kind == 0:
        return pooling.summed_heads(head_scores, maps, queries, x, available, y[:, None] * params.u[None, :])
    s = pooling.over_heads(head_scores, maps, queries, x)
    w = linear_weights(s, available, jnp.sum(available))
    return jnp.einsum("hqn,n,h->q", w, y, params.u)


# ---------------------------------------------------------------------------------------------------------
# Pretraining
# ---------------------------------------------------------------------------------------------------------


def pretraining_loss(params: ICLParams, kind: int, prompts: tasks.Prompts, available: Array) -> Array:
    """What pretraining minimises: L = mean over the prompts b and their queries x_q of
    (f̂_b(x_q) − f_b(x_q))², f̂_b the layer (``layer_output``) reading prompt b's context (x, y) of
    ``available`` points."""
    f = jax.vmap(lambda x, y, xq: layer_output(params, kind, xq, x, y, available))(*prompts[:3])
    return jnp.mean(jnp.square(f - prompts.fq))


_LOSSES = tuple(loss_by_heads(k) for k in range(len(KINDS)))


def _step_branch(points: int):
    """One step's loss and gradient on ``BATCH`` fresh prompts of ``points`` slots (the first n real),
    drawn from the step's key (``tasks.draw_prompts``: the points this bucket needs, no more)."""

    def branch(params, key, task, sizes, kind):
        prompts = tasks.draw_prompts(key, tasks.Task(task[0].astype(jnp.int32), task[1], task[2]), BATCH,
                                      points)
        return jax.lax.switch(kind, _LOSSES, params, prompts, jnp.arange(points) < sizes[0], sizes[1])

    return branch


_STEPS = tuple(_step_branch(m) for m in POINT_BUCKETS)


class PretrainRun(NamedTuple):
    """What ``_pretrain`` reads besides the parameters, every field traced: the run's random ``key``,
    ``task`` = (family, r, σ), ``sizes`` = (n, heads) and ``branches`` = (point bucket, kind)."""

    key: Array
    task: Array
    sizes: Array
    branches: Array


def _pretrain(run: PretrainRun, params0: tuple[Array, ...], trainable: tuple[Array, ...], loop: train.Loop, *,
              snapshots: bool = True) -> training.Trained:
    """``training.run`` of Adam on fresh prompts, step size lr (1 + cos(π t/steps))/2: one program for
    every run, keeping ``training.SNAPSHOTS`` snapshots of the params (``snapshots=False``: none, for the
    benchmark of what they cost)."""

    def objective(params: ICLParams, step: Array) -> tuple[Array, ICLParams]:
        key = jax.random.fold_in(run.key, step)
        return jax.lax.switch(run.branches[0], _STEPS, params, key, run.task, run.sizes, run.branches[1])

    def schedule(t: Array) -> Array:
        return loop.learning_rate * (1 + jnp.cos(jnp.pi * jnp.minimum(t, loop.steps) / loop.steps)) / 2

    settings = training.Settings("adam", schedule, loop.steps, PARAM_LIMIT, lambda p: jnp.zeros(0))
    return training.run(objective, ICLParams(*params0), ICLParams(*trainable), settings, snapshots=snapshots)


def initial_params(heads: int, seed: int) -> ICLParams:
    """The start in ``HEADS_MAX`` head slots (``Param``s): head h a Gaussian window of ℓ_h =
    ``INIT_LENGTHSCALE`` · 2^{(h − c)/2} (c = ⌊(H − 1)/2⌋, ``attention.gaussian_attention_params``: nearly
    flat on [−1, 1]) plus N(0, ``INIT_NOISE``²) on each entry, u_h = 1/H; padded heads 0."""
    rng = np.random.default_rng(int(seed) % 2**32)
    w = np.zeros((2, HEADS_MAX, 3, D_QK))
    for h in range(heads):
        g = gaussian_attention_params(INIT_LENGTHSCALE * 2.0 ** ((h - (heads - 1) // 2) / 2.0))
        w[:, h] = g.w_q, g.w_k
    w[:, :heads] += INIT_NOISE * rng.standard_normal((2, heads, 3, D_QK))
    real = (heads, 3, D_QK)
    return ICLParams(train.Param(w[0], real), train.Param(w[1], real),
                     train.param(np.full(heads, 1.0 / heads), HEADS_MAX))


@dataclass(frozen=True)
class Pretrained:
    """A pretrained layer: ``w_q``, ``w_k`` (heads, 3, D_QK), ``mixing`` u (heads,), its ``kind``, the task
    family and controls it was pretrained on, and the run: ``losses`` (steps_run,) of the query MSE, and
    ``snapshots`` (W_q, W_k, u), each with a leading axis, the layer after ``snapshot_steps``
    (``at_snapshot``)."""

    w_q: np.ndarray
    w_k: np.ndarray
    mixing: np.ndarray
    kind: str
    family: str
    roughness: float
    noise: float
    n: int
    steps: int
    learning_rate: float
    seed: int
    losses: np.ndarray = field(default_factory=lambda: np.zeros(0))
    steps_run: int = 0
    diverged: bool = False
    snapshot_steps: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    snapshots: tuple[np.ndarray, ...] = ()

    @property
    def heads(self) -> int:
        return int(self.w_q.shape[0])

    def at_snapshot(self, j: int) -> Pretrained:
        """The layer as pretraining had it after ``snapshot_steps[j]`` steps (the last: the layer itself)."""
        w_q, w_k, u = (a[j] for a in self.snapshots)
        return replace(self, w_q=w_q, w_k=w_k, mixing=u)

    @property
    def params(self) -> ICLParams:
        """The parameters in ``HEADS_MAX`` head slots (zeros), as the adapters pad them for the compiled
        functions (``Param``)."""
        leaves = (self.w_q, self.w_k, self.mixing)
        return ICLParams(*(train.param(a, (HEADS_MAX, *a.shape[1:])) for a in leaves))

    @property
    def score_matrices(self) -> np.ndarray:
        """A_h = W_q^h W_k^hᵀ/√D_QK (heads, 3, 3): s_h(x, x′) = φ(x) A_h φ(x′)ᵀ."""
        return self.w_q @ np.swapaxes(self.w_k, -1, -2) / np.sqrt(D_QK)


@dataclass(frozen=True)
class PretrainRequest:
    """What a pretraining run is asked for (``pretrain``'s controls)."""

    family: str = "sine"
    roughness: float = 3.0
    noise: float = 0.1
    n: int = 32
    heads: int = 1
    steps: int = STEPS
    learning_rate: float = LEARNING_RATE
    kind: str = "softmax"
    seed: int = 0


class PretrainStart(NamedTuple):
    """A pretraining run, set up (``pretrain_args``): the compiled run's input, the parameters in their head
    slots and the loop."""

    run: PretrainRun
    params: ICLParams
    loop: train.Loop


def pretrain_args(req: PretrainRequest) -> PretrainStart:
    """The checked controls as ``_pretrain``'s run (a ValueError names a control out of range)."""
    fam, r, s, m = tasks.check_task(req.family, req.roughness, req.noise, req.n)
    h = check_int("heads", req.heads, 1, HEADS_MAX)
    loop = train.check_loop(req.steps, req.learning_rate)
    if req.kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {req.kind!r}")
    nb = next(i for i, b in enumerate(POINT_BUCKETS) if m <= b)
    branches = np.array([nb, KINDS.index(req.kind)], np.int32)
    run = PretrainRun(jax.random.PRNGKey(int(req.seed)), np.array([fam, r, s]), np.array([m, h], np.int32),
                      branches)
    steps = train.Loop(np.int32(loop.steps), loop.learning_rate)
    return PretrainStart(run, initial_params(h, req.seed), steps)


def pretrained(start: PretrainStart, snapshots: bool = True) -> train.Fitted:
    """The run ``start`` pretrained in one compiled call (``_pretrain`` through the training adapter), cut
    to its real heads."""
    out = train.fit(_pretrain, start.run, start.params, start.loop, static={"snapshots": snapshots})
    return train.cut(out, train.Readout(start.params, int(start.loop.steps)), training.snapshot_steps)


@float64
def pretrain(family: str = "sine", roughness: float = 3.0, noise: float = 0.1, n: int = 32, heads: int = 1,
             steps: int = STEPS, learning_rate: float = LEARNING_RATE, kind: str = "softmax",
             seed: int = 0) -> Pretrained:
    """Pretrain an H-head ``kind`` layer (``layer_output``) on prompts of ``family`` at roughness r and
    label noise σ, n context points each, in one compiled call: ``steps`` Adam steps (≤ ``STEPS_MAX``),
    step size ``learning_rate`` · (1 + cos(π t/steps))/2, each on ``BATCH`` fresh prompts, minimising
    L = mean (f̂(x_q) − f(x_q))² over their query points."""
    req = PretrainRequest(family, roughness, noise, n, heads, steps, learning_rate, kind, seed)
    f = pretrained(pretrain_args(req))
    (w_q, w_k, u) = f.params
    return Pretrained(
        w_q=w_q, w_k=w_k, mixing=u, kind=kind, family=family, roughness=float(roughness), noise=float(noise),
        n=int(n), steps=int(steps), learning_rate=float(learning_rate), seed=int(seed), losses=f.losses,
        steps_run=f.steps_run, diverged=f.diverged, snapshot_steps=f.snapshot_steps, snapshots=f.snapshots,
    )


# ---------------------------------------------------------------------------------------------------------
# Prediction on one prompt
# ---------------------------------------------------------------------------------------------------------


class InContextPrediction(NamedTuple):
    """The layer on one prompt: f̂ ``mean`` and its band ``std`` (q,), so f̂ ± 2 std; the heads'
    ``head_means`` (H, q) and attention ``weights`` (H, q, n) for a heatmap."""

    mean: np.ndarray
    std: np.ndarray
    head_means: np.ndarray
    weights: np.ndarray


def _linear_pool(scores: Array, values: Array, available: Array) -> pooling.Pooled:
    """Linear attention's head: m = Σ_i (s_i/n) y_i; its spread the variance of y under |w|/Σ|w|."""
    w = linear_weights(scores, available, jnp.sum(available))
    a = jnp.abs(w)
    _, var = pooling.moments(a / jnp.maximum(jnp.sum(a, axis=-1, keepdims=True), 1e-300), values)
    return pooling.Pooled(mean=w @ values, var=var, weights=w)


def prediction_model(queries: Array, x: Array, y: Array, available: Array, params: ICLParams,
                     kind: int) -> pooling.Pooled:
    """The layer at the queries from a prompt's context (x, y): f̂(x) = Σ_h u_h Σ_i w_hi(x) y_i, its band
    s² = Σ_h p_h Σ_i w_hi (y_i − f̂)² (``pooling.mix``, p_h ∝ |u_h|), the heads' means and variances, and
    the weights w_h: the softmax of s_h (``pooling.multihead``) or s_h/n (``linear_weights``)."""
    if kind == 0:
        return pooling.multihead(head_scores, (params.w_q, params.w_k), queries, x, y, available, params.u,
                                 block=HEADS_QUERY_BLOCK, with_weights=True)
    heads = pooling.over_heads(lambda m: _linear_pool(head_scores(m, queries, x), y, available),
                               (params.w_q, params.w_k))
    mean, var = pooling.mix(heads.mean, heads.var, params.u)
    return pooling.Pooled(mean=mean, var=var, head_means=heads.mean, head_vars=heads.var,
                          weights=heads.weights)


@float64
def in_context_predict(fit: Pretrained, x: object, y: object, queries: object) -> InContextPrediction:
    """The pretrained layer at ``queries`` with the prompt's context (x, y) as keys and values: the mean
    f̂(x) = Σ_h u_h Σ_i w_hi(x) y_i, the band s²(x) = Σ_h p_h Σ_i w_hi (y_i − f̂)² (p_h = |u_h|/Σ|u|, as
    ``pooling.mix``), the heads' means and the weights (H, q, n)."""
    p = serve.problem(queries, x, y)
    out = serve.serve(prediction_model, p, fit.params, heads=fit.heads,
                      static={"kind": KINDS.index(fit.kind)})
    return InContextPrediction(out.mean, out.std, out.head_means, out.weights)
