"""Kernel regression that learns its lengthscales: the blog post's GaussianKernel and
MultiheadGaussianKernel, trained by masked training.

The model is H Nadaraya–Watson heads (``kernelviz.models.smoothing``) mixed by u_h,

    f̂(x) = Σ_h u_h m_h(x),     m_h(x) = Σ_i softmax_i(log K((x − x_i)/ℓ_h)) y_i,

trained by ``kernelviz.models.training.run`` (Adam on log ℓ_h and u_h). As in the post:

* one head (``multihead=False``, the post's GaussianKernel) trains ℓ alone from ℓ_post = 1; u = 1 is not a
  parameter;
* ``multihead=True`` (the post's MultiheadGaussianKernel, any H ≥ 1) trains log ℓ_h and u_h from
  ℓ_post = linspace(0.1, 3, H) and u_h = 1/H; the u_h are free (negative, or not summing to 1).

Lengthscale convention: K(u) = exp(−u²/2), u = (x − x′)/ℓ; the post writes exp(−((x − x′)/ℓ_post)²), so
ℓ_post = √2 ℓ. The post's data span 6 units (x ∈ [−3, 3]); on other data the starting lengthscales are
scaled by span/6, so the start is the same fraction of the data (exactly the post's on its data).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import Array

from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel, kernel_index, kernel_scores
from kernelviz.data import post
from kernelviz.models import results, training
from kernelviz.models.holdout import Holdout, holdout_objective, holdout_range, holdout_split
from kernelviz.models.loo import loo_bounds
from kernelviz.models.results import FitResult
from kernelviz.models.smoothing import HEADS_MAX
from kernelviz.runtime import train as adapter
from kernelviz.runtime.i18n import _
from kernelviz.runtime.jax_setup import float64
from kernelviz.runtime.shapes import check_int, vector

__all__ = [
    "SEEDS_MAX",
    "FitResult",
    "fit",
    "fit_seeds",
    "initial_lengthscales",
]

SEEDS_MAX = 8  # fit_seeds trains up to this many seeds in one compiled call
OUTSIDE = -1e4  # log-kernel of an out-of-support key inside training: finite, far below any real score
LOG_ELL_LIMIT = 700.0  # |log ℓ| beyond this over/underflows exp: the run counts as diverged
SEARCH_GRID = 64  # lengthscales tried by the search used for kernels without a useful gradient
SEARCH_ROWS = 2000  # the search scores each lengthscale on about this many held-out predictions
POST_SINK = math.log(1e-16)  # the blog post's ks / (sum(ks) + 1e-16): a key of kernel value 1e-16, value 0
ARITHMETIC = ("kernelviz", "post")


@float64
def initial_lengthscales(heads: int, x: object | None = None, multihead: bool | None = None) -> np.ndarray:
    """The blog post's starting lengthscales in this package's convention (ℓ = ℓ_post/√2).

    GaussianKernel (``multihead`` False): ℓ_post = 1. MultiheadGaussianKernel: ℓ_post = linspace(0.1, 3, H).
    ``multihead=None`` means H ≥ 2. With data ``x`` they are scaled by span(x)/6, the post's data span.
    """
    h = check_int("heads", heads, 1, HEADS_MAX)
    many = h > 1 if multihead is None else bool(multihead)
    if not many and h != 1:
        raise ValueError("the single-kernel model has one head; ask multihead=True for several")
    post = np.linspace(0.1, 3.0, h) if many else np.array([1.0])
    scale = 1.0 if x is None else float(np.ptp(vector("x", x))) / 6.0
    return post / math.sqrt(2.0) * (scale if scale > 0 else 1.0)


LOG_ELL_F32 = 80.0  # log ℓ (of standardised x) is clipped here in float32: its gradient is 0 beyond
Predict = Callable[[tuple[Array, Array], Array, Array], Array]


def model(x: Array, y: Array, kernel: Array, *, sink: float | None = None,
          limit: float = LOG_ELL_F32) -> Predict:
    """Chapters 2 and 3's model as training reads it: ``predict(params, x_rows, available)``, params =
    (log ℓ_h, u_h), keys x_i and values y_i the (standardised) data,

        f̂(x) = Σ_h u_h m_h(x),   m_h(x) = Σ_i w_hi(x) y_i,   w_hi(x) = softmax_i log K((x − x_i)/ℓ_h)

    over the available keys (the heads pooled by ``pooling.scalar_heads``, log ℓ_h clipped to ±``limit``;
    ``sink``: one more key of that score and value 0 in every softmax, as ``post_model`` has)."""

    def scores(log_ell: Array, xq: Array, keys: Array) -> Array:  # s_hi(x) = log K((x − x_i)/ℓ_h)
        return kernel_scores(xq, keys, jnp.exp(log_ell), kernel, OUTSIDE)

    def predict(params: tuple[Array, Array], xq: Array, available: Array) -> Array:
        log_ell, u = params
        values = y[:, None] * u[None, :]  # head h pools u_h y_i
        return pooling.scalar_heads(scores, log_ell, xq, x, available, values, limit=limit, sink=sink)

    return predict


def post_model(x: Array, y: Array, kernel: Array) -> Predict:
    """``model`` computed as the blog post computes it: on float32 data (x, y), with
    w_i = K_i / (Σ_j K_j + 1e-16) (``pooling.masked_softmax`` with ``sink = log 1e-16``), so that a
    held-out point whose every kernel value underflows predicts 0; log ℓ_h is not clipped."""
    return model(x, y, kernel, sink=POST_SINK, limit=math.inf)


def predictor(x: Array, y: Array, kernel: Array, arithmetic: str = "kernelviz") -> Predict:
    """``model`` ("kernelviz") on this data, or ``post_model`` ("post") on it in float32, as the post
    computed."""
    if arithmetic == "post":
        return post_model(jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32), kernel)
    return model(x, y, kernel)


class Runs(NamedTuple):
    """What ``_adam_run`` and ``_search_run`` share, every field traced: the data in standardised units
    (``x``, ``y`` and the ``mask`` of real points), the ``kernel``'s index, the ``holdout`` size, and the run
    ``keys`` of which the first ``n_seeds`` are used."""

    x: Array
    y: Array
    mask: Array
    kernel: Array
    holdout: Array
    keys: Array
    n_seeds: Array


def _adam_run(runs: Runs, params0: tuple[Array, Array], trainable: tuple[Array, Array], loop: adapter.Loop,
              start: training.Start, arithmetic: str = "kernelviz") -> training.Trained:
    """Masked training with Adam for each of the first ``n_seeds`` run keys, each from its ``start`` (a
    leading seed axis; step 0 starts fresh): one program per data size.

    ``arithmetic`` is ``predictor``'s: "post" trains in float32 as the blog post does, its learning rate
    too."""
    dtype = jnp.float32 if arithmetic == "post" else jnp.asarray(loop.learning_rate).dtype
    predict = predictor(runs.x, runs.y, runs.kernel, arithmetic)
    settings = training.Settings("adam", jnp.asarray(loop.learning_rate).astype(dtype), loop.steps,
                                 LOG_ELL_LIMIT, lambda p: jnp.exp(p[0]))

    def one(seed: tuple[Array, training.Start]) -> training.Trained:
        key, at = seed
        data = Holdout(runs.x, runs.y, runs.mask, runs.holdout, key)
        objective = holdout_objective(predict, data, split=adapter.fast(holdout_split))
        return training.run(objective, params0, trainable, settings, start=at)

    return training.each_seed(one, (runs.keys, start), runs.n_seeds)


def _search_run(runs: Runs, candidates: tuple[Array, Array], sets: Array) -> training.Trained:
    """The search over lengthscales on the same hold-out sets, for each run key (kernels with no gradient)."""
    predict = predictor(runs.x, runs.y, runs.kernel)

    def one(key: Array) -> training.Trained:
        data = Holdout(runs.x, runs.y, runs.mask, runs.holdout, key)
        objective = holdout_objective(predict, data, with_grad=False, chunks=(1, 0),
                                      split=adapter.fast(holdout_split))
        return training.search(objective, candidates, sets, record=lambda p: jnp.exp(p[0]))

    return training.each_seed(one, runs.keys, runs.n_seeds)


def search_sets(steps: int, holdout: int) -> int:
    """Hold-out sets the search scores: the first min(steps, ⌈SEARCH_ROWS/holdout⌉) of the run's sets
    (1,000 sets of 1 point, 200 of 10, 27 of 75: about ``SEARCH_ROWS`` predictions per lengthscale)."""
    return max(1, min(int(steps), -(-SEARCH_ROWS // int(holdout))))


@dataclass(frozen=True)
class Request:
    """What a training run is asked for (``fit``'s arguments): ``arithmetic`` "kernelviz" or "post" (the blog
    post's float32 and + 1e-16, ``_predictor``); ``experiment`` which of the post's experiments' keys the run
    takes (``kernelviz.data.post.EXPERIMENTS``; None: the one it repeats, ``post.experiment_of``)."""

    heads: int = 1
    kernel: str = "gaussian"
    holdout: int = 1
    steps: int = 1000
    learning_rate: float = 0.2
    multihead: bool | None = None
    arithmetic: str = "kernelviz"
    experiment: int | None = None


@dataclass(frozen=True)
class _Run:
    """A checked training request: the prepared data, the loop and the parameters (log ℓ_h, u_h) in their
    head slots (float32 for the post's arithmetic)."""

    prep: adapter.Prepared
    heads: int
    holdout: int
    loop: adapter.Loop
    params: tuple[adapter.Param, adapter.Param]
    experiment: int


def _setup(x, y, req: Request, seed: int) -> _Run:
    xs, ys = adapter.check_data(x, y)
    h = check_int("heads", req.heads, 1, HEADS_MAX)
    many = h > 1 if req.multihead is None else bool(req.multihead)
    loop = adapter.check_loop(req.steps, req.learning_rate)
    ho = check_int("holdout", req.holdout, *holdout_range(xs.shape[0]))
    if req.arithmetic not in ARITHMETIC:
        raise ValueError(f"arithmetic must be one of {ARITHMETIC}, not {req.arithmetic!r}")
    prep = adapter.prepare(xs, ys, int(seed))
    slots = head_slots(h)
    ell0 = initial_lengthscales(h, prep.real[0], many) / prep.span  # standardised units
    mixing = np.full(h, 1.0 / h) if many else np.ones(h)
    dtype = np.float32 if req.arithmetic == "post" else np.float64  # the post's parameters and optimizer
    params = (adapter.param(np.log(ell0), slots, dtype=dtype), adapter.param(mixing, slots, trains=many,
                                                                            dtype=dtype))
    experiment = post.experiment_of(many, h, ho, prep.n) if req.experiment is None else int(req.experiment)
    return _Run(prep, h, ho, loop, params, experiment)


def head_slots(heads: int) -> int:
    """Head slots a compiled training program carries: 1 for one head (an eighth of the work of eight
    masked slots, for the common case of chapter 2 and the seed spread), else ``HEADS_MAX``."""
    return 1 if heads == 1 else HEADS_MAX


def _run_keys(seeds: list[int], experiment: int) -> np.ndarray:
    """The key each seed's run starts from: experiment ``experiment`` of ``PRNGKey(seed)``, (SEEDS_MAX, 2)."""
    keys = [post.experiment_key(s, experiment) for s in seeds]
    return np.stack(keys + [keys[0]] * (SEEDS_MAX - len(keys)))


def _fingerprint(r: _Run, kernel: str, arithmetic: str, seed: int) -> str:
    """What a run is of (``results.fingerprint``): its data, start, settings but steps, and seed."""
    p = r.prep
    params0, trainable = adapter.starts(r.params)
    return results.fingerprint(p.xt, p.y, p.mask, p.scale, p.span, *params0, *trainable, kernel,
                                 r.holdout, r.loop.learning_rate, arithmetic, r.experiment, seed)


class _How(NamedTuple):
    """How a run was trained: its ``method`` ("adam" or "search"), ``kernel`` and the ``extra`` sentence."""

    method: str
    kernel: str
    extra: str


def _result(f: adapter.Fitted, r: _Run, how: _How, seed: int, earlier: FitResult | None,
            fingerprint: str) -> FitResult:
    """One seed's FitResult (``earlier``: the run it continues) with its ``TrainState`` for Adam's runs."""
    sentences = [s for s in (how.extra, r.prep.note) if s]
    if f.diverged:
        sentences.insert(0, training.diverged_message(f.steps_run, r.loop.steps, r.loop.learning_rate))
    log_ell, u = f.params
    losses, trajectory = results.joined(earlier, 0 if earlier is None else earlier.state.step, f.losses,
                                        f.trajectory)
    return FitResult(
        lengthscales=np.exp(log_ell) * r.prep.span,
        mixing=u,
        losses=losses,
        trajectory=trajectory,
        method=how.method,
        diverged=f.diverged,
        message=" ".join(sentences),
        steps_run=f.steps_run,
        kernel=how.kernel,
        holdout=r.holdout,
        learning_rate=r.loop.learning_rate,
        seed=seed,
        state=results.state_of(f.out, fingerprint) if how.method == "adam" else None,
    )


def _searched(runs: Runs, r: _Run, label: str) -> tuple[training.Trained, str]:
    """``_search_run`` over ``SEARCH_GRID`` lengthscales (the heads' starting ladder scaled together), and
    the sentence that says so."""
    p = r.prep
    sets = search_sets(r.loop.steps, r.holdout)
    lo, hi = loo_bounds(p.real[0])
    grid = np.log(np.geomspace(lo, hi, SEARCH_GRID) / p.span)
    log_ell0, u0 = adapter.starts(r.params)[0]
    ladder = log_ell0 - log_ell0[0]
    mixing = np.broadcast_to(u0, (SEARCH_GRID, ladder.size))
    text = _("The {kernel} kernel's loss is flat in ℓ almost everywhere (its gradient is zero), so ℓ was "
             "chosen by a search over {grid} lengthscales, each scored on the same {sets} random hold-out "
             "sets (loss averaged).").format(kernel=label, grid=SEARCH_GRID, sets=sets)
    if r.heads > 1:
        text += " " + _("With several heads the search scales the starting lengthscales together; u_h stay "
                        "1/H.")
    return adapter.call(_search_run, runs, (grid[:, None] + ladder[None, :], mixing), sets), text


def _trained(x: object, y: object, seeds: list[int], req: Request,
             start: Sequence[FitResult] | None) -> tuple[list[adapter.Fitted], _Run, _How, list[str]]:
    """The compiled run of every seed, cut to the real heads and steps by the training adapter
    (``kernelviz.runtime.train``)."""
    k = get_kernel(req.kernel)
    r = _setup(x, y, req, seeds[0])
    p = r.prep
    runs = Runs(p.xt, p.y, p.mask, kernel_index(k.name), r.holdout, _run_keys(seeds, r.experiment),
                len(seeds))
    if start is not None and not k.differentiable:
        raise ValueError(f"the {k.label} kernel is fitted by a search, which has no run to continue")
    prints = [_fingerprint(r, k.name, req.arithmetic, s) for s in seeds]
    states = results.check_starts(start, prints, r.loop.steps)
    if k.differentiable:
        params0 = adapter.starts(r.params)[0]
        at = results.starts(states + [None] * (SEEDS_MAX - len(seeds)), params0, SEEDS_MAX, "adam")
        out = adapter.fit(_adam_run, runs, r.params, r.loop, at, static={"arithmetic": req.arithmetic})
        how = _How("adam", k.name, "")
    else:
        out, extra = _searched(runs, r, k.label)
        how = _How("search", k.name, extra)
    readout = adapter.Readout(r.params, r.loop.steps, p.scale**2, p.span, r.heads)
    return [adapter.cut(o, readout) for o in adapter.seeds_of(out, len(seeds))], r, how, prints


def train(x: object, y: object, seeds: Sequence[int], req: Request,
               start: Sequence[FitResult] | None = None) -> list[FitResult]:
    """The compiled training run behind ``fit`` and ``fit_seeds``: one FitResult per seed, each continuing
    its run of ``start`` when given (``kernelviz.models.results``)."""
    seeds = [int(s) for s in seeds]
    fitted, r, how, prints = _trained(x, y, seeds, req, start)
    earlier = [None] * len(seeds) if start is None else list(start)
    return [_result(f, r, how, s, earlier[i], prints[i])
            for i, (f, s) in enumerate(zip(fitted, seeds, strict=True))]


@float64
def fit(
    x: object,
    y: object,
    heads: int = 1,
    kernel: str = "gaussian",
    holdout: int = 1,
    steps: int = 1000,
    learning_rate: float = 0.2,
    seed: int = 2024,
    *,
    multihead: bool | None = None,
    arithmetic: str = "kernelviz",
    experiment: int | None = None,
    start: FitResult | None = None,
) -> FitResult:
    """Masked training of H-head kernel regression f̂(x) = Σ_h u_h m_h(x) (see the module docstring).

    Each of ``steps`` steps holds out ``holdout`` random points (1 … n − 2) and predicts them from the rest;
    Adam (``learning_rate``) moves log ℓ_h (and u_h for the multi-head model) down the hold-out squared
    error. Kernels whose gradient in ℓ is zero almost everywhere (the boxcar) are fitted by a search over ℓ
    on the same hold-out sets instead (``method="search"``). One compiled call.

    The hold-out sets are the blog post's: ``PRNGKey(seed)`` split as the post splits it, the run taking the
    key of the post's experiment it repeats (``kernelviz.data.post``), so that seed 2024 on the post's sample
    repeats the post's runs. ``arithmetic="post"`` computes as the post does (float32, K_i/(Σ_j K_j + 1e-16)).

    ``start``, a result of the same data, seed and settings with fewer steps, is continued to ``steps``:
    the result is the fresh run's, number for number, for the cost of the steps it adds.
    """
    req = Request(heads=heads, kernel=kernel, holdout=holdout, steps=steps, learning_rate=learning_rate,
                  multihead=multihead, arithmetic=arithmetic, experiment=experiment)
    return train(x, y, [seed], req, None if start is None else [start])[0]


@float64
def fit_seeds(
    x: object,
    y: object,
    seeds: Sequence[int],
    heads: int = 1,
    kernel: str = "gaussian",
    holdout: int = 1,
    steps: int = 1000,
    learning_rate: float = 0.2,
    *,
    multihead: bool | None = None,
    arithmetic: str = "kernelviz",
    experiment: int | None = None,
    start: Sequence[FitResult] | None = None,
) -> list[FitResult]:
    """``fit`` for several seeds (1 … ``SEEDS_MAX``) in one compiled call; one FitResult per seed.

    The seeds run one after another inside the program ``fit`` uses (``fit(seed=s)`` gives the same
    result). With more than ``TRAIN_MAX_POINTS`` points every seed trains on the first seed's subsample.
    ``start`` (one result per seed) continues those runs, as ``fit``'s does.
    """
    seed_list = [int(s) for s in seeds]
    if not 1 <= len(seed_list) <= SEEDS_MAX:
        raise ValueError(f"give between 1 and {SEEDS_MAX} seeds, not {len(seed_list)}")
    req = Request(heads=heads, kernel=kernel, holdout=holdout, steps=steps, learning_rate=learning_rate,
                  multihead=multihead, arithmetic=arithmetic, experiment=experiment)
    return train(x, y, seed_list, req, start)
