"""Compile, once per server, every program a session can need, and count XLA compilations.

After ``warmup(n_points)`` changing the hold-out size, learning rate, seed, step count (1 … ``STEPS_MAX``),
kernel or head count for data of those sizes compiles nothing: every shape a page can produce was seen
(data buckets, hold-out buckets, ``QUERY_POINTS`` query points, ``KERNEL_GRID_POINTS`` heatmap points) and
everything else is a traced argument. JAX's persistent compilation cache (``kernelviz._jax.CACHE_DIR``)
keeps the compiled programs across restarts, so a warm-cache warm-up only loads them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import jax.monitoring
import numpy as np

from kernelviz import _jax
from kernelviz.attention import (
    attention_kernel,
    attention_predict,
    dot_product_attention,
    fit_attention,
    gaussian_attention_params,
)
from kernelviz.smoothing import loo_curve, nadaraya_watson
from kernelviz.training import (
    SEEDS_MAX,
    fit,
    fit_parametric,
    fit_seeds,
    holdout_buckets,
    holdout_range,
    predict_heads,
)

__all__ = [
    "KERNEL_GRID_POINTS",
    "QUERY_POINTS",
    "CompileCount",
    "WarmupReport",
    "count_compilations",
    "warmup",
]

QUERY_POINTS = 256  # the pages evaluate fits on this many query points
KERNEL_GRID_POINTS = 100  # the attention-kernel heatmap grid
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"  # every backend compile (or cache load)
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"  # a program loaded from the persistent cache


@dataclass
class CompileCount:
    """Backend compilations seen inside ``count_compilations``: ``requests`` programs needed, of which
    ``cache_hits`` came from the persistent cache; ``compiled`` = requests − cache_hits ran XLA."""

    requests: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    names: list[str] = field(default_factory=list)

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
    """What ``warmup`` did: data sizes, wall time, programs needed and how many came from the disk cache."""

    n_points: tuple[int, ...]
    seconds: float
    programs: int
    cache_hits: int
    compiled: int
    cache_dir: str | None


def _warm_one(n: int) -> None:
    x = np.linspace(-3.0, 3.0, n)
    y = np.sin(3.0 * x) + 0.1 * x
    queries = np.linspace(-3.5, 3.5, QUERY_POINTS)
    grid = np.linspace(-3.0, 3.0, KERNEL_GRID_POINTS)
    for q in (queries, x):  # the page's query grid, and the data themselves (residuals, heatmaps)
        nadaraya_watson(q, x, y, 0.3)
        predict_heads(q, x, y, [0.2, 0.5], [0.5, 0.5])
    loo_curve(x, y, np.geomspace(0.01, 10.0, 64))
    g = gaussian_attention_params(0.3)
    dot_product_attention(queries, x, y, g.w_q, g.w_k, g.score_scale)
    fit_parametric(x, y, steps=1)
    seeds = list(range(SEEDS_MAX))
    top = holdout_range(n)[1]
    for bucket_size in holdout_buckets(n):
        k = min(bucket_size, top)  # a hold-out size in this bucket
        for kernel in ("gaussian", "boxcar"):  # the gradient path and the search path
            fit(x, y, kernel=kernel, holdout=k, steps=1)
            fit_seeds(x, y, seeds, kernel=kernel, holdout=k, steps=1)
        att = fit_attention(x, y, holdout=k, steps=1)
    attention_predict(att, queries, x, y)
    attention_predict(att, x, x, y)
    attention_kernel(att, grid)


def warmup(n_points: int | Sequence[int] = (150, 50)) -> WarmupReport:
    """Compile everything a session needs for data of these sizes (the blog's 150 and d2l's 50 points).

    Programs: Nadaraya–Watson and multi-head prediction on ``QUERY_POINTS`` queries and on the data,
    the leave-one-out curve, d2l's leave-one-out fit, dot-product attention, and for every hold-out bucket
    ``fit`` and ``fit_seeds`` (gradient and search paths) and ``fit_attention``; attention prediction and
    its kernel on ``KERNEL_GRID_POINTS`` points. Each call runs one step, so the time is compilation (or
    loading from the persistent cache).
    """
    sizes = (int(n_points),) if isinstance(n_points, (int, np.integer)) else tuple(int(n) for n in n_points)
    if not sizes or min(sizes) < 3:
        raise ValueError("warm-up needs data sizes of at least 3 points")
    start = time.perf_counter()
    with count_compilations() as count:
        for n in sizes:
            _warm_one(n)
    return WarmupReport(
        n_points=sizes,
        seconds=time.perf_counter() - start,
        programs=count.requests,
        cache_hits=count.cache_hits,
        compiled=count.compiled,
        cache_dir=None if _jax.CACHE_DIR is None else str(_jax.CACHE_DIR),
    )
