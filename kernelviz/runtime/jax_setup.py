"""JAX set-up: float64 for kernelviz's own calls, and the server's set-up (``set_up``): one compute thread,
the CPU platform, the persistent compilation cache. Lean compilation for the large programs (``lean_jit``).

Importing kernelviz changes none of JAX's settings: a model needs float64, so each public function runs
inside ``float64`` (JAX's ``enable_x64`` context, for that call only); a notebook keeps its own settings,
its GPU and its threads. The server asks for everything at once with ``set_up`` (called by
``kernelviz.runtime.devices.set_up_server``, the first line of ``app.py``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import jax

F = TypeVar("F", bound=Callable[..., Any])


def float64(fun: F) -> F:
    """``fun`` run with JAX's 64-bit types on for the length of each call (``jax.enable_x64``), whatever the
    caller's ``jax_enable_x64``; marked ``fun.float64 = True`` for the tests."""

    @functools.wraps(fun)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        with jax.enable_x64(True):
            return fun(*args, **kwargs)

    scoped.float64 = True  # type: ignore[attr-defined]
    return scoped  # type: ignore[return-value]


THREADS_ENV = "KERNELVIZ_XLA_THREADS"  # "1" (the default): one XLA compute thread; "all": one per core


def _tasks() -> set[int]:
    try:
        return {int(t.name) for t in Path("/proc/self/task").iterdir()}
    except OSError:
        return set()


def one_compute_thread() -> bool:
    """Make JAX's CPU client with an intra-op thread pool of one thread; True when it ran (the client is
    then one-threaded unless something had made it before).

    XLA sizes that pool by the cores the process may run on when the client is made, and splits every
    program over all of them. This package's programs are small (a few hundred points, scans of steps):
    on two cores the split costs more than it gains (chapter 4's training 113 ms against 73 ms on one
    thread, ``benchmarks/bench_threads.py``) and keeps both cores busy, where one thread leaves a core to
    the browser or to another visitor's rerun. So the client is made while this thread may use one core,
    and every thread made meanwhile gets all the cores back. A no-op where the OS has no CPU affinity
    (macOS, Windows), on one core or with ``KERNELVIZ_XLA_THREADS=all``; without effect on a client that
    exists already.
    """
    if os.environ.get(THREADS_ENV, "1") != "1" or not hasattr(os, "sched_setaffinity"):
        return False
    cores = os.sched_getaffinity(0)
    if len(cores) < 2:
        return False
    before = _tasks()
    os.sched_setaffinity(0, {min(cores)})
    try:
        jax.devices()  # makes the client (and its thread pool) if it does not exist yet
    finally:
        for task in (_tasks() - before) | {threading.get_native_id()}:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(task, cores)
    return True


def _cache_dir() -> Path:
    """Where compiled XLA programs are kept across server restarts (``KERNELVIZ_JAX_CACHE`` overrides)."""
    env = os.environ.get("KERNELVIZ_JAX_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kernelviz" / "jax"


def enable_compilation_cache() -> Path | None:
    """Turn on JAX's persistent compilation cache; returns the folder, or None where it cannot be written."""
    path = _cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return path


class Setup(NamedTuple):
    """What ``set_up`` did: the compilation cache's folder (None where it cannot be written) and whether
    JAX's CPU client was made with one compute thread."""

    cache_dir: Path | None
    one_compute_thread: bool


@functools.cache
def set_up() -> Setup:
    """The server's JAX settings, once per process, before any program runs: float64 everywhere, the CPU
    platform, the persistent compilation cache (``KERNELVIZ_JAX_CACHE``) and one compute thread
    (``KERNELVIZ_XLA_THREADS``). Also what the tests and benchmarks run under."""
    jax.config.update("jax_enable_x64", True)
    with contextlib.suppress(RuntimeError):  # the backend exists already: it stays as it is
        jax.config.update("jax_platforms", "cpu")
    cache_dir = enable_compilation_cache()
    return Setup(cache_dir, one_compute_thread())


LEAN_ENV = "KERNELVIZ_LEAN_COMPILE"  # "0": compile the large programs with XLA's defaults
LEAN_OPTIONS = {"xla_cpu_use_fusion_emitters": False}


@functools.cache
def lean_options() -> dict[str, object] | None:
    """XLA options for ``lean_jit``'s programs: ``LEAN_OPTIONS``, or None with ``KERNELVIZ_LEAN_COMPILE=0``
    or where this JAX or XLA does not take them (checked once, by compiling a one-line program with them).

    XLA:CPU emits each fused loop through MLIR by default. For a program with a loop of training steps (a
    few hundred fusions) that takes 170–260 MB of scratch memory while it compiles; XLA's classic emitters
    compile the same program with 30–75 MB and a quarter faster, into code that runs about 10 % slower
    (0.8–1.4x the time). ``benchmarks/bench_lean.py`` prints these figures; ``benchmarks/bench_memory.py
    --ablate``, the server's peak both ways (578 against 722 MB). On a 690 MB server that is the difference
    between fitting and being restarted.
    """
    if os.environ.get(LEAN_ENV) == "0":
        return None
    try:
        jax.jit(lambda a: a + 1.0, compiler_options=LEAN_OPTIONS).lower(1.0).compile()
    except Exception:  # an older jax without compiler_options, or an XLA without the option
        return None
    return dict(LEAN_OPTIONS)


def lean_jit(fun: Callable | None = None, **kwargs: Any) -> Callable:
    """``jax.jit`` with ``lean_options()``, for the largest programs: the training loops of chapters 2–5 and
    the search for ℓ*. (d2l's SGD run keeps XLA's defaults: it compiles in some 80 MB either way and runs
    1.6x slower lean.) Use like ``jax.jit``, with or without keyword arguments."""
    if fun is None:
        return functools.partial(lean_jit, **kwargs)
    return _LeanJit(fun, kwargs)


class _LeanJit:
    """``jax.jit(fun, compiler_options=lean_options(), ...)``, made at the first call, so that defining a
    program at import compiles nothing and makes no JAX client (``lean_options`` compiles its probe)."""

    def __init__(self, fun: Callable, kwargs: dict[str, Any]) -> None:
        functools.update_wrapper(self, fun)
        self._fun, self._kwargs = fun, kwargs
        self._jitted: Callable | None = None
        self._lock = threading.Lock()

    @property
    def jitted(self) -> Callable:
        """The one ``jax.jit`` wrapper (made once, whichever thread calls first)."""
        with self._lock:
            if self._jitted is None:
                options = lean_options()
                extra = {} if options is None else {"compiler_options": options}
                self._jitted = jax.jit(self._fun, **extra, **self._kwargs)
            return self._jitted

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.jitted(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # lower, _cache_size, _jit_info ...: the jitted function's
        if name.startswith("__") or name in ("_fun", "_kwargs", "_jitted", "_lock"):
            raise AttributeError(name)
        return getattr(self.jitted, name)
