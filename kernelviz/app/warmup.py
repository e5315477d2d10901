"""Compile, once per server, every program a session can need, and count XLA compilations.

After ``warmup(n_points)`` changing the hold-out size, learning rate, seed, step count (1 … ``STEPS_MAX``),
kernel or head count for data of those sizes compiles nothing: every shape a page can produce was seen
(data buckets, ``QUERY_POINTS`` query points, the heatmaps' rows) and everything else is a traced
argument. Training needs a few programs per data size whatever the hold-out size
(``kernelviz.models.training``: the gradient path and the search over ℓ, each for one head and for 2 … 8
heads, and attention), so the warm-up is short; it compiles the small prediction programs first
(``warmup_tasks``), and app.py runs it in a background thread. JAX's persistent compilation
cache (``kernelviz.runtime.jax_setup.set_up``) keeps the compiled programs across restarts, so a
warm-cache warm-up only loads them.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

import jax.monitoring
import numpy as np

from kernelviz.app import defaults
from kernelviz.app.views.training import MaskedSettings
from kernelviz.core.kernels import KERNELS, get_kernel, kernel_values
from kernelviz.data.datasets import blog_data, d2l_data
from kernelviz.models.attention import (
    AttentionFit,
    attention_kernel,
    attention_loo_error,
    attention_predict,
    dot_product_attention,
    gaussian_attention_params,
)
from kernelviz.models.attention.training import fit_attention
from kernelviz.models.heads import SEEDS_MAX, fit, fit_seeds
from kernelviz.models.holdout import holdout_range
from kernelviz.models.loo import loo_curve, loo_lengthscale
from kernelviz.models.parametric import fit_parametric, validation_losses
from kernelviz.models.smoothing import knn_average, nadaraya_watson, nadaraya_watson_path, predict_heads
from kernelviz.runtime import jax_setup as _jax
from kernelviz.runtime.memory import COMPILE_EVENT  # every backend compile (or cache load)

__all__ = [
    "QUERY_POINTS",
    "CompileCount",
    "WarmupReport",
    "count_compilations",
    "warmup",
    "warmup_tasks",
]

QUERY_POINTS = defaults.GRID_POINTS  # the pages evaluate fits on this many query points
HEATMAP_QUERIES = (defaults.HEATMAP_ROWS, 48)  # rows of the weight heatmaps: chapter pages, home preview
LARGER_SIZES = (1000, 2000)  # the sidebar's n past the first padded size (after everything else)
SCRUB_QUERIES = 96  # chapter 1's scrub through ℓ: its frames' query points
SEARCH_KERNELS = tuple(name for name in KERNELS if not get_kernel(name).differentiable)  # fitted by search
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"  # a program loaded from the persistent cache


@dataclass
class CompileCount:
    """Backend compilations seen inside ``count_compilations``: ``requests`` programs needed, of which
    ``cache_hits`` came from the persistent cache; ``compiled`` = requests − cache_hits ran XLA. Per
    program: its name, the thread that compiled it and when it was done."""

    requests: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    names: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)  # the thread each program was compiled on
    ended: list[float] = field(default_factory=list)  # when each compilation ended (time.monotonic)

    @property
    def compiled(self) -> int:
        return self.requests - self.cache_hits


@contextmanager
def count_compilations() -> Iterator[CompileCount]:
    """Count backend compilations (jax.monitoring events) while the block runs."""
    count = CompileCount()

    def on_duration(event: str, duration: float, **kwargs: object) -> None:
        if event == COMPILE_EVENT:
            count.requests += 1
            count.seconds += duration
            count.names.append(str(kwargs.get("fun_name", "")))
            count.threads.append(threading.current_thread().name)
            count.ended.append(time.monotonic())

    def on_event(event: str, **kwargs: object) -> None:
        if event == CACHE_HIT_EVENT:
            count.cache_hits += 1

    jax.monitoring.register_event_duration_secs_listener(on_duration)
    jax.monitoring.register_event_listener(on_event)
    try:
        yield count
    finally:
        jax.monitoring.unregister_event_duration_listener(on_duration)
        jax.monitoring.unregister_event_listener(on_event)


@dataclass(frozen=True)
class WarmupReport:
    """What ``warmup`` did: data sizes, wall time, programs needed and how many came from the disk cache.

    ``complete`` is False when the warm-up was stopped (``stop`` set) before its last task.
    """

    n_points: tuple[int, ...]
    seconds: float
    programs: int
    cache_hits: int
    compiled: int
    cache_dir: str | None
    complete: bool = True


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(-3.0, 3.0, n)
    return x, np.sin(3.0 * x) + 0.1 * x


def _queries() -> np.ndarray:
    """The pages' query grid, as the warm-up draws it: ``QUERY_POINTS`` points a little past the data."""
    return np.linspace(-3.5, 3.5, QUERY_POINTS)


def _prediction_views(n: int) -> list[Callable[[], object]]:
    """The small programs the pages draw with for n points, whatever was trained: Nadaraya–Watson on the
    ``QUERY_POINTS`` grid, on the heatmap rows and on the data (chapter 1), k-NN, the leave-one-out curve,
    multi-head prediction (chapter 3) and dot-product attention with a Gaussian kernel (chapter 4)."""
    x, y = _data(n)
    queries = _queries()
    return [
        *_grid_views(queries, x, y),
        lambda: nadaraya_watson(x, x, y, 0.3),
        lambda: loo_curve(x, y, np.geomspace(0.01, 10.0, 64)),
        lambda: predict_heads(x, x, y, [0.2, 0.5], [0.5, 0.5]),
        lambda: dot_product_attention(queries, x, y, *_gaussian(0.3)),
    ]


def _grid_views(queries: np.ndarray, x: np.ndarray, y: np.ndarray) -> list[Callable[[], object]]:
    """The predictions on the query grid from the points (x, y): Nadaraya–Watson on the grid and on the
    heatmap rows, k-NN and multi-head prediction."""
    return [
        lambda: nadaraya_watson(queries, x, y, 0.3, with_weights=False),
        *(partial(nadaraya_watson, queries[:q], x, y, 0.3) for q in HEATMAP_QUERIES),
        lambda: knn_average(queries, x, y, 10),
        lambda: predict_heads(queries, x, y, [0.2, 0.5], [0.5, 0.5]),
    ]


def _training_views(n: int) -> list[Callable[[], object]]:
    """What chapters 2 to 4 train with their default controls for n points, in page order: the search for
    ℓ*, ``fit`` and its seed spread, several heads, the post's experiments as kernelviz re-runs them in the
    post's arithmetic (one head and several), d2l's w (chapter 2; chapter 3's ``fit`` is chapter 2's
    program), then attention: training, prediction on the grid and the data, its leave-one-out error and
    the learned kernel on its grid (chapter 4)."""
    x, y = _data(n)
    queries = _queries()
    lo, hi = holdout_range(n)
    page = min(MaskedSettings().holdout, hi)  # the default hold-out of chapters 2 and 4
    seeds = list(range(SEEDS_MAX))
    state: dict[str, AttentionFit] = {}

    def attention() -> None:
        state["fit"] = fit_attention(x, y, holdout=page, steps=1)

    return [
        lambda: loo_lengthscale(x, y),
        lambda: fit(x, y, holdout=page, steps=1),
        lambda: fit_seeds(x, y, seeds, holdout=lo, steps=1),
        lambda: fit(x, y, heads=2, holdout=page, steps=1),
        lambda: fit(x, y, holdout=lo, steps=1, arithmetic="post"),
        lambda: fit(x, y, heads=2, holdout=lo, steps=1, arithmetic="post"),
        lambda: fit_parametric(x, y, steps=1),
        attention,
        lambda: attention_predict(state["fit"], queries, x, y),
        lambda: attention_predict(state["fit"], x, x, y),
        lambda: attention_loo_error(state["fit"], x, y),
        lambda: attention_kernel(state["fit"], np.linspace(-3.0, 3.0, defaults.KERNEL_GRID_POINTS)),
    ]


def _larger_views(n: int) -> list[Callable[[], object]]:
    """The predictions a press of the sidebar's n redraws from n keys (its larger padded sizes): the
    prediction views, the trained layer's on the grid, and chapter 1's scrub through ℓ. Training runs on at
    most ``TRAIN_MAX_POINTS`` points, whose programs the first size compiled."""
    x, y = _data(n)
    queries = _queries()
    state: dict[str, AttentionFit] = {}

    def attention() -> None:
        state["fit"] = fit_attention(x[:: max(1, n // 150)], y[:: max(1, n // 150)], steps=1)
        attention_predict(state["fit"], queries, x, y)
        attention_predict(state["fit"], queries, x, y, with_weights=False)

    return [
        *_grid_views(queries, x, y),
        lambda: predict_heads(queries, x, y, [0.2, 0.5], [0.5, 0.5], with_weights=False),
        attention,
        lambda: nadaraya_watson_path(queries[:SCRUB_QUERIES], x, y, np.geomspace(0.03, 12.0, 31)),
    ]


def _gaussian(ell: float) -> tuple[np.ndarray, np.ndarray, float]:
    g = gaussian_attention_params(ell)
    return g.w_q, g.w_k, g.score_scale


def _other_views(n: int) -> list[Callable[[], object]]:
    """The remaining training programs for n points: the search over ℓ for kernels without a useful
    gradient, for one head and for several, and nothing else (one program serves every hold-out size)."""
    x, y = _data(n)
    return [
        partial(fit, x, y, heads=heads, kernel=name, holdout=1, steps=1)
        for name in SEARCH_KERNELS
        for heads in (1, 2)
    ]


def _data_sets() -> None:
    """The blog post's sample at every n of the sidebar: its x = linspace(−3, 3, n) is one small program
    per n, its noise and sines one per padded size, so a press of the sidebar's n draws its data compiling
    nothing."""
    for n in defaults.POINT_CHOICES:
        blog_data(n)


def _kernel_shapes() -> None:
    """Chapter 1's kernel-shape figure: every kernel's K(u) on the page's grid (one program)."""
    np.asarray(kernel_values(np.linspace(-3.0, 3.0, defaults.KERNEL_SHAPE_POINTS)))


def _d2l_views() -> None:
    """d2l's nonparametric pooling as chapter 1 draws it (its 50 test inputs, the heatmap) and the Kotlin
    port's validation loss (its 50 noise-free points): small programs on kernelviz's draw of d2l's data
    set (d2l draws without a seed)."""
    from kernelviz.app.views import d2l_pooling  # views pulls in the figure helpers: not at import time

    ds = d2l_data()
    view = d2l_pooling(ds)
    validation_losses(ds.x, ds.y, view.queries, view.truth, [1.0], batch_size=10)


def _in_context_views() -> list[Callable[[], object]]:
    """Chapter 5 at its default controls (its own tasks, whatever the data): the pretraining program (one
    step; one program serves every control), the learned kernel, the fresh task's prediction beside
    Nadaraya–Watson, the family's best fixed ℓ and leave-one-out ℓ*, and the in-context errors of the
    softmax and the linear layer, each at the page's shapes (n = 32 padded, 96 task queries)."""
    from kernelviz.app.views.incontext import kernel_view, task_view
    from kernelviz.models.incontext import (
        evaluation as ev,  # the views below pull in the page's helpers: not at import
    )
    from kernelviz.models.incontext import pretrain

    state: dict[str, object] = {}

    def layer(kind: str) -> None:
        state[kind] = pretrain(steps=1, kind=kind)

    return [
        partial(layer, "softmax"),
        lambda: kernel_view(state["softmax"]),
        lambda: ev.best_fixed_lengthscale(),
        lambda: task_view(state["softmax"], 0.1),  # type: ignore[arg-type]
        lambda: ev.in_context_error(state["softmax"]),  # type: ignore[arg-type]
        partial(layer, "linear"),
        lambda: ev.in_context_error(state["linear"]),  # type: ignore[arg-type]
        lambda: ev.loo_window(),
    ]


def warmup_tasks(n_points: int | Sequence[int] = (150, 50)) -> list[Callable[[], object]]:
    """The warm-up's calls in priority order: for the first size the prediction programs and chapter 1's
    kernel shapes (small programs: a page asked for meanwhile waits for a short compilation at most);
    chapter 5's pretraining, whose compilation needs the most scratch memory (some 75 MB,
    ``benchmarks/bench_lean.py``), while the server holds few programs; the first size's training
    programs and d2l's views; chapter 5's other default views; the default views of the other sizes;
    then everything else for each size. Calls already compiled (or in the persistent cache) cost little."""
    sizes = _sizes(n_points)
    first, *others = sizes
    pretraining, *in_context = _in_context_views()
    tasks: list[Callable[[], object]] = [*_prediction_views(first), _kernel_shapes, pretraining]
    tasks.extend((*_training_views(first), _d2l_views, *in_context, _data_sets))
    for n in others:
        tasks.extend((*_prediction_views(n), *_training_views(n)))
    for n in sizes:
        tasks.extend(_other_views(n))
    for n in LARGER_SIZES:
        tasks.extend(_larger_views(n))
    return tasks


def _sizes(n_points: int | Sequence[int]) -> tuple[int, ...]:
    sizes = (int(n_points),) if isinstance(n_points, (int, np.integer)) else tuple(int(n) for n in n_points)
    if not sizes or min(sizes) < 3:
        raise ValueError("warm-up needs data sizes of at least 3 points")
    return sizes


YIELD_MAX_S = 15.0  # the longest the warm-up waits for page runs before each call


def _wait_while(busy: Callable[[], bool] | None) -> None:
    """Sleep while ``busy()`` holds, at most ``YIELD_MAX_S``."""
    deadline = time.monotonic() + YIELD_MAX_S
    while busy is not None and busy() and time.monotonic() < deadline:
        time.sleep(0.02)


def warmup(n_points: int | Sequence[int] = (150, 50), *, stop: threading.Event | None = None,
           yield_to: Callable[[], bool] | None = None, gate: threading.Lock | None = None) -> WarmupReport:
    """Compile everything a session needs for data of these sizes (the blog's 150 and d2l's 50 points).

    The programs and their order are ``warmup_tasks``'s. Each call runs one step, so the time is
    compilation (or loading from the persistent cache). The counts cover every compilation
    in the process while it runs (any thread).

    Thread-safe: pages may call the same functions while it runs (a program both need may compile twice;
    results are unaffected). Setting ``stop`` ends it between two calls (``complete=False``); everything
    compiled so far stays in the persistent cache. Before each call it waits while ``yield_to()`` is true
    (app.py: while a page is running), and it holds ``gate`` while a call runs (app.py: a page run waits
    for it before it starts), so a page's run and the warm-up's compilation do not overlap: together they
    can need more memory than a 690 MB server has. It runs under the server's JAX settings
    (``jax_setup.set_up``: float64, the compilation cache, one compute thread), which it applies if need be.
    """
    sizes = _sizes(n_points)
    setup = _jax.set_up()
    start = time.perf_counter()
    complete = True
    with count_compilations() as count:
        for task in warmup_tasks(sizes):
            _wait_while(yield_to)
            if stop is not None and stop.is_set():
                complete = False
                break
            with gate or contextlib.nullcontext():
                task()
    return WarmupReport(
        n_points=sizes,
        seconds=time.perf_counter() - start,
        programs=count.requests,
        cache_hits=count.cache_hits,
        compiled=count.compiled,
        cache_dir=None if setup.cache_dir is None else str(setup.cache_dir),
        complete=complete,
    )
