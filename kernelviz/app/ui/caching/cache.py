"""Cached calls into the backend for the home page and chapters 1 and 2, keyed by the data set's key and
the scalar arguments.

Every cached function of kernelviz is decorated with ``cached`` (defined here, used by every ``cache_*``
module): ``st.cache_data(max_entries=…, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)``. Streamlit
hashes a ``Data`` by its key tuple (a CSV by its SHA-256), never by its arrays. A cached function takes the
``Data`` first, with the other arguments in the order of the backend function it wraps. Inside,
``data.ds`` is the whole data set and ``data.train`` the training subsample (at most
``TRAIN_MAX_POINTS`` points). Results go through pickle, so callers get their own copy: NumPy arrays,
views (``kernelviz.app.views``, ``kernelviz.app.views.training``) or dataclasses of them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz.app import defaults, views
from kernelviz.app.ui.caching import kept, one_run
from kernelviz.app.ui.caching.continuing import continued
from kernelviz.app.ui.widgets.sidebar import GRID_POINTS, Data, make_data
from kernelviz.app.views import HoldoutPanel, MaskedView, SeedSpread
from kernelviz.app.views.page_settings import LAYER, default_lengthscale
from kernelviz.app.views.training import MaskedSettings, ParametricSettings, ParametricView
from kernelviz.app.views.values import lengthscale_choice, log_options
from kernelviz.core.kernels import get_kernel, kernel_values
from kernelviz.data.post import post_holdouts
from kernelviz.models.heads import SEEDS_MAX, FitResult
from kernelviz.models.holdout import holdout_bucket, holdout_range
from kernelviz.models.parametric import batch_count
from kernelviz.models.smoothing import Smooth
from kernelviz.runtime.i18n import _
from kernelviz.runtime.shapes import bucket, even_indices

__all__ = [
    "CACHE_ENTRIES", "DATA_HASH_FUNCS", "HEATMAP_KEYS", "HEATMAP_QUERIES", "HEAVY_CACHE_ENTRIES", "Heat",
    "attention_preview", "average", "cached", "d2l_source", "default_lengthscale", "empty_share", "fit",
    "fit_parametric", "fit_seeds",
    "heads_preview", "heatmap_weights", "holdout_panel", "kernel_shapes", "knn", "lengthscale_panels",
    "loo_curve", "loo_optimum", "masked_view", "panel_holdouts", "parametric_view", "predict",
    "seed_spread", "start_lengthscale", "training_work",
]

CACHE_ENTRIES = 256  # cached results of small backend calls (fits, curves: tens of kB each)
HEAVY_CACHE_ENTRIES = 16  # cached views holding weight matrices (up to a few MB each)
HEATMAP_QUERIES = defaults.HEATMAP_ROWS  # rows of an attention heatmap
HEATMAP_KEYS = defaults.HEATMAP_KEYS  # keys of a heatmap: bigger data sets show an even subsample
Heat = views.Heatmap  # what ``heatmap_weights`` returns
LOO_CURVE_POINTS = 20  # lengthscales per decade of chapter 2's leave-one-out curve
PATH_POINTS = 60  # points of the training path drawn on that curve
TAIL = defaults.TAIL
SEED_WORK_MAX = 80_000_000  # kernel evaluations allowed for one run of the seed-spread panel
D2L_QUERIES = np.arange(0.0, 5.0, 0.1)  # d2l's test inputs x_test = arange(0, 5, 0.1)

# A Data is identified by its key: ("blog", n, seed), ("d2l", n, seed) or ("csv", sha256, x column, y column).
DATA_HASH_FUNCS: dict[type, Callable[[Any], Any]] = {Data: lambda d: d.key}


def cached(heavy: bool = False, *, bounded: bool = True) -> Callable:
    """``st.cache_data`` without a spinner, a ``Data`` argument hashed by its key: at most ``CACHE_ENTRIES``
    results, ``HEAVY_CACHE_ENTRIES`` when ``heavy`` (results that hold weight matrices), or no limit when
    not ``bounded`` (a call whose arguments take a handful of values, e.g. a fixed catalogue). A call a
    page makes at its defaults is served from the kept results (``kept``) on a fresh server; one made again
    in the same script run gets the run's copy (``one_run``)."""
    entries = (HEAVY_CACHE_ENTRIES if heavy else CACHE_ENTRIES) if bounded else None

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def served(*args: Any, **kwargs: Any) -> Any:
            result = kept.lookup(fn, args, kwargs)
            if result is kept.MISSING:
                result = fn(*args, **kwargs)
                kept.note(fn, args, kwargs, result)
            return result

        memo = st.cache_data(served, max_entries=entries, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            kept.mark(fn, args, kwargs)  # for the line under the chart's code: kept, nothing ran
            key = one_run.call_key(fn, args, kwargs)
            found = one_run.get(key)  # asked before in this run: the same copy again
            return one_run.keep(key, memo(*args, **kwargs)) if found is one_run.MISSING else found

        return call

    return decorate


def start_lengthscale(data: Data) -> float:
    """The value chapter 1's ℓ slider starts at: the option nearest (in log ℓ) to ``default_lengthscale``."""
    return lengthscale_choice(default_lengthscale(data), data.ds.span)


# ---------------------------------------------------------------------------------------------------------
# Chapter 1: Nadaraya–Watson
# ---------------------------------------------------------------------------------------------------------


@cached()
def predict(data: Data, lengthscale: float, kernel: str, num: int = GRID_POINTS) -> Smooth:
    """m(x), s(x) on ``data.grid(num)`` from all the data (no weights: beyond a few thousand points this
    streams over key blocks)."""
    ds = data.ds
    return kv.nadaraya_watson(ds.grid(num), ds.x, ds.y, lengthscale, kernel, with_weights=False)


@cached()
def empty_share(data: Data, lengthscale: float, kernel: str) -> float:
    """The share of the grid's queries whose kernel window holds no data point (m(x) undefined there)."""
    return float(np.mean(~np.isfinite(predict(data, lengthscale, kernel).mean)))


@cached(heavy=True)
def heatmap_weights(data: Data, lengthscale: float, kernel: str, queries: int = HEATMAP_QUERIES) -> Heat:
    """``views.weights_heatmap``: w_i(x) of ``queries`` grid points against the keys (subsampled above
    ``HEATMAP_KEYS``, with the sentence that says so)."""
    return views.weights_heatmap(data.ds, lengthscale, kernel, rows=queries)


@cached()
def average(data: Data, num: int = GRID_POINTS) -> np.ndarray:
    """d2l's average pooling on the grid: every query gets the mean of all yᵢ."""
    return np.full(num, float(np.mean(data.ds.y)))


@cached()
def knn(data: Data, k: int, num: int = GRID_POINTS) -> np.ndarray:
    """k-nearest-neighbour average on the grid (k clipped to n); large data sets use a subsample of keys."""
    keys, _note = views.heatmap_keys(data.ds)
    return kv.knn_average(data.ds.grid(num), keys.x, keys.y, int(k)).mean


@cached()
def lengthscale_panels(data: Data, kernel: str) -> list[tuple[str, np.ndarray]]:
    """The blog post's four panels ℓ_post = 3, 0.5, 0.25, 0.05: (title with both conventions, m(x))."""
    out = []
    for post in defaults.KERNEL_REGRESSION.panels:
        ell = defaults.post_lengthscale(post, data.ds.span)
        title = _("post ℓ = {post:g} → our ℓ = {ell:.3g}").format(post=post, ell=ell)
        out.append((title, predict(data, ell, kernel).mean))
    return out


@cached(bounded=False)
def kernel_shapes(points: int = defaults.KERNEL_SHAPE_POINTS) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """u on [−3, 3] and K(u) of every kernel of the zoo, by label (``kernel_values``: one program)."""
    u = np.linspace(-3.0, 3.0, points)
    values = np.asarray(kernel_values(u))
    return u, {get_kernel(name).label: row for name, row in zip(kv.KERNELS, values, strict=True)}


# ---------------------------------------------------------------------------------------------------------
# Chapter 2: masked training and leave-one-out
# ---------------------------------------------------------------------------------------------------------


@cached()
def fit(data: Data, s: MaskedSettings, arithmetic: str = "kernelviz") -> FitResult:
    """``kv.fit`` (the post's GaussianKernel: one head, ℓ alone, masked training) on the training points at
    the settings ``s``, computed with kernelviz's softmax or as the post computes it (``arithmetic``),
    continuing the longest shorter run of the same settings the server has kept (``continued``)."""
    train = data.train

    def run(start: FitResult | None) -> FitResult:
        return kv.fit(train.x, train.y, heads=1, kernel=s.kernel, holdout=s.holdout, steps=s.steps,
                      learning_rate=s.learning_rate, seed=s.seed, arithmetic=arithmetic, start=start)

    setting = ("fit", data.key, s.kernel, s.holdout, s.learning_rate, s.seed, arithmetic)
    return continued(setting, s.steps, run)


@cached()
def loo_curve(data: Data, lengthscales: tuple[float, ...], kernel: str) -> np.ndarray:
    """CV(ℓ) at each of ``lengthscales`` on the training points (+∞ where some window is empty)."""
    return kv.loo_curve(data.train.x, data.train.y, np.asarray(lengthscales), kernel)


@cached()
def loo_optimum(data: Data, kernel: str) -> float | None:
    """The exact leave-one-out optimum ℓ* on the training points, None when no ℓ predicts every point."""
    try:
        return kv.loo_lengthscale(data.train.x, data.train.y, kernel)
    except ValueError:
        return None


@cached()
def masked_view(data: Data, s: MaskedSettings) -> MaskedView:
    """``fit`` at chapter 2's settings ``s``, its predictions, and the leave-one-out curve over
    span/500 … 2 span with where ``fit`` went on it."""
    span = data.train.span
    ells = log_options(span / 500.0, span * 2.0, LOO_CURVE_POINTS)
    kernel = s.kernel
    result = fit(data, s)
    traj = result.trajectory[:, 0]
    path = traj[even_indices(traj.shape[0], PATH_POINTS)]
    learned = float(result.lengthscales[0])
    cv = loo_curve(data, ells, kernel)
    *path_cv, learned_cv = on_loo_curve(data, kernel, np.asarray(ells), cv, np.append(path, learned))
    best = loo_optimum(data, kernel)
    s = predict(data, learned, kernel)
    tail = result.losses[-TAIL:]
    return MaskedView(
        fit=result, status=views.training_status(result, span), mean=s.mean, std=s.std, best=best,
        best_mean=None if best is None else predict(data, best, kernel).mean,
        tail_loss=float(np.mean(tail)) if tail.size else float("nan"),
        ells=np.asarray(ells), cv=cv, path=path, path_cv=np.asarray(path_cv), learned_cv=float(learned_cv),
    )


def on_loo_curve(data: Data, kernel: str, ells: np.ndarray, cv: np.ndarray, at: np.ndarray) -> np.ndarray:
    """CV(ℓ) at each ℓ of ``at``, read off the drawn curve (``ells``, ``cv``) where it can be, so that the
    markers sit on the line; computed exactly (``loo_curve``) where not: outside the curve's range or
    beside a gap. Reading 61 points off costs nothing; computing them, some 15 ms of every press."""
    out = views.read_off(ells, cv, at)
    missing = np.isnan(out) & np.isfinite(at) & (at > 0)
    if missing.any():
        out[missing] = loo_curve(data, tuple(map(float, at[missing])), kernel)
    return out


def panel_holdouts(n: int) -> tuple[int, ...]:
    """The post's hold-out sizes 1, 10, n // 2 and int(0.8 n) for n training points, each clipped to the
    sizes allowed (1 … n − 2), repeats dropped."""
    lo, hi = holdout_range(n)
    return tuple(dict.fromkeys(min(max(k, lo), hi) for k in post_holdouts(n)))


@cached()
def holdout_panel(data: Data, kernel: str, holdout: int, steps: int, learning_rate: float,
                  seed: int) -> HoldoutPanel:
    """The post's run of one GaussianKernel with ``holdout`` points held out at every step, computed as the
    post computes it and with kernelviz's softmax, and its prediction from all the data."""
    s = MaskedSettings(kernel, holdout, steps, learning_rate, seed)
    result = fit(data, s, "post")
    ell = float(result.lengthscales[0])
    own = float(fit(data, s).lengthscales[0])
    return HoldoutPanel(holdout, ell, own, predict(data, ell, kernel).mean,
                        views.training_status(result, data.train.span))


def training_work(n: int, holdout: int, steps: int, seeds: int = 1) -> int:
    """Kernel evaluations of one-head masked training: seeds × steps × hold-out rows × keys, as padded.

    Rows are ``holdout_bucket(holdout)`` (the chunks a step runs), keys the padded data size. Pages use
    this to keep optional extra work (e.g. a spread over seeds) small enough to stay live.
    """
    return int(seeds) * int(steps) * holdout_bucket(int(holdout)) * bucket(int(n))


@cached()
def fit_seeds(data: Data, seeds: tuple[int, ...], kernel: str, holdout: int, steps: int,
              learning_rate: float) -> list[FitResult]:
    """``kv.fit_seeds`` (one head) on the training points: one FitResult per seed, continued as ``fit``'s."""
    train = data.train

    def run(start: list[FitResult] | None) -> list[FitResult]:
        return kv.fit_seeds(train.x, train.y, list(seeds), heads=1, kernel=kernel, holdout=holdout,
                            steps=steps, learning_rate=learning_rate, start=start)

    return continued(("fit_seeds", data.key, seeds, kernel, holdout, learning_rate), steps, run)


@cached()
def seed_spread(data: Data, kernel: str, steps: int, learning_rate: float, seeds: int,
                first_seed: int) -> SeedSpread:
    """``fit_seeds`` of the seeds ``first_seed`` … ``first_seed + seeds − 1`` for hold-out 1, 10 and n/2 (at
    most 300 steps); a size whose run would cost more than ``SEED_WORK_MAX`` kernel evaluations is halved
    until it does not."""
    n = len(data.train)
    lo, hi = holdout_range(n)
    run_steps = min(steps, 300)
    groups: dict[str, np.ndarray] = {}
    capped = []
    for k in sorted({lo, min(10, hi), max(lo, min(hi, n // 2))}):
        size = k
        while size > 1 and training_work(n, size, run_steps, SEEDS_MAX) > SEED_WORK_MAX:
            size //= 2
        if size != k:
            capped.append(k)
        runs = fit_seeds(data, tuple(range(first_seed, first_seed + seeds)), kernel, size, run_steps,
                         learning_rate)
        groups[_("hold-out {size}").format(size=size)] = np.array([r.lengthscales[0] for r in runs])
    return SeedSpread(groups, run_steps, tuple(capped))


@cached()
def fit_parametric(data: Data, kernel: str, s: ParametricSettings) -> FitResult:
    """``kv.fit_parametric`` on the training points, trained as ``s`` says (d2l's start and procedure unless
    it says otherwise)."""
    train = data.train
    return kv.fit_parametric(train.x, train.y, kernel=kernel, steps=s.steps, learning_rate=s.learning_rate,
                             w0=s.w0, seed=s.seed, include_self=s.include_self, batch_size=s.batch_size)


@st.cache_resource(show_spinner=False)
def d2l_source() -> Data:
    """kernelviz's draw of d2l's data set (d2l draws without a seed, so its own sample cannot be redrawn):
    50 points, x ~ U(0, 5) sorted, y = 2 sin x + x^0.8 + N(0, 0.5²)."""
    return make_data(("d2l", 50, 0), kv.d2l_data())


def _parametric_fit(data: Data, kernel: str, kotlin: bool, epochs: int,
                    seed: int) -> tuple[FitResult, int]:
    """(the fit, batches per epoch): d2l's procedure or the Kotlin/DJL port's (``defaults.D2L_KOTLIN``)."""
    if not kotlin:
        d2l = ParametricSettings(epochs, defaults.D2L.learning_rate, seed=seed)
        return fit_parametric(data, kernel, d2l), 1
    k = defaults.D2L_KOTLIN
    batches = batch_count(len(data.train), k.batch_size)
    port = ParametricSettings(epochs * batches, k.learning_rate, w0=k.w0, include_self=True,
                              batch_size=k.batch_size)
    return fit_parametric(data, kernel, port), batches


@cached(heavy=True)
def parametric_view(data: Data, kernel: str, kotlin: bool, epochs: int, seed: int) -> ParametricView:
    """Train w as d2l (or its Kotlin port) does and draw it as d2l does: queries arange(0, 5, 0.1) on d2l's
    data (else as many grid points), keys the sorted training inputs; the loss per epoch is d2l's Σ ½ error²
    (the port: the mean of its batches' L2Loss over the epoch, which kernelviz infers is what DJL's
    training listener logs; the port's text shows only its progress bars)."""
    result, batches = _parametric_fit(data, kernel, kotlin, epochs, seed)
    train, ds = data.train, data.ds
    queries = D2L_QUERIES if ds.name == "d2l" else ds.grid(D2L_QUERIES.shape[0])
    ell = float(result.lengthscales[0])
    fixed = kv.nadaraya_watson(queries, train.x, train.y, 1.0, kernel, with_weights=True)
    learned = kv.nadaraya_watson(queries, train.x, train.y, ell, kernel, with_weights=True)
    own = kv.nadaraya_watson(train.x, train.x, train.y, ell, kernel, with_weights=True).weights
    epochs_run = result.losses.shape[0] // batches
    best = loo_optimum(data, kernel)
    return ParametricView(
        x=np.asarray(train.x), y=np.asarray(train.y), queries=queries,
        truth=np.asarray(ds.true_mean(queries)) if data.synthetic else None,
        learned=learned.mean, fixed=fixed.mean,
        heatmap=views.Heatmap(queries, np.asarray(train.x), np.stack([fixed.weights, learned.weights]), ""),
        w_path=1.0 / result.trajectory[:, 0],
        w_epochs=1.0 / result.trajectory[: epochs_run * batches + 1 : batches, 0],
        epoch_losses=result.losses[: epochs_run * batches].reshape(epochs_run, batches).mean(axis=1),
        self_weight=float(np.mean(np.diag(own))),
        w_star=None if best is None else 1.0 / best,
        status=views.training_status(result, train.span),
    )


# ---------------------------------------------------------------------------------------------------------
# Home page previews of chapters 3 and 4
# ---------------------------------------------------------------------------------------------------------


@cached(heavy=True)
def heads_preview(data: Data) -> views.HeadsView:
    """Chapter 3's model with its default controls (the post's MultiheadGaussianKernel,
    ``defaults.MULTIHEAD``) trained on the training points, as ``views.heads_view``."""
    mh, train = defaults.MULTIHEAD, data.train
    result = kv.fit(train.x, train.y, heads=mh.heads, kernel=mh.kernel, holdout=mh.holdout, steps=mh.steps,
                    learning_rate=mh.learning_rate, seed=mh.seed, multihead=True)
    return views.heads_view(data.ds, tuple(result.lengthscales), tuple(result.mixing), mh.kernel)


@cached(heavy=True)
def attention_preview(data: Data) -> views.AttentionView:
    """Chapter 4's attention layer with its default controls (``LAYER.defaults``: a small data set holds
    fewer points out), trained on the training points, as ``views.attention_view``."""
    layer = kv.fit_attention(data.train.x, data.train.y, **dataclasses.asdict(LAYER.defaults(data)))
    return views.attention_view(data.ds, layer)
