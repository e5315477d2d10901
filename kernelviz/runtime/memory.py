"""Keep the server's memory small and its reruns quick: glibc malloc settings, handing freed memory back to
the OS, and taking long-lived objects out of Python's garbage collector.

XLA runs its programs on buffers from the C heap. With glibc's defaults a long-lived Streamlit server
keeps much of that memory after it is freed: every script-run thread may get a heap arena of its own
(up to 8 per core), and the mmap threshold grows with each large buffer freed, so later large temporaries
come from the heap and fragment it. On a 690 MB Streamlit Community Cloud container that is the
difference between fitting and being restarted (``benchmarks/bench_memory.py`` prints the figures).

The heap functions are no-ops where the C library is not glibc (macOS, Windows, musl), and where the
environment sets ``KERNELVIZ_HEAP_TUNING=0`` (``benchmarks/bench_memory.py --ablate`` measures both).
Three more hold down what compiling costs: the scratch memory of each compilation goes back at once
(``release_after_compiles``), all programs' IR is built in one MLIR context (``share_ir_context``), and
compilations take turns (``one_compilation_at_a_time``). The largest programs also compile lean, with
XLA's classic emitters (``kernelviz.runtime.jax_setup.lean_jit``, everywhere, not only in the app).

Streamlit runs a full garbage collection after every script run. With JAX, Plotly and Streamlit loaded
that walks some 280,000 objects (about 0.1 s, a large part of a slider's repaint); almost all of them
(modules, compiled-program wrappers) live as long as the server. ``freeze_long_lived_objects`` moves
them into the collector's permanent generation once, so each later collection walks only what the
sessions created since (about 1 ms for one session). kernelviz's ``.streamlit/config.toml`` turns that
collection after every run off (``runner.postScriptGC``): with thirty sessions it walked all of their
objects, about 24 ms of a chapter 2 rerun's 83 ms of CPU (``bench_sessions.py``); Python's own
collections, by its thresholds, still run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
import sys
import threading
from collections.abc import Callable

import jax.monitoring

M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's <malloc.h>
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

ARENAS = 2  # heap arenas shared by all threads
MMAP_THRESHOLD_BYTES = 1 << 20  # blocks of 1 MiB and more are mapped and unmapped, never kept in a heap
TRIM_THRESHOLD_BYTES = 8 << 20  # free memory above this at a heap's top goes back at once


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux") or os.environ.get("KERNELVIZ_HEAP_TUNING") == "0":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018  (raises AttributeError outside glibc)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc


@functools.cache
def limit_native_heap() -> bool:
    """Cap glibc's heap arenas at ``ARENAS`` and fix the mmap threshold at ``MMAP_THRESHOLD_BYTES``.

    Process-wide and once per process; returns whether the settings were applied (glibc only).
    """
    libc = _glibc()
    if libc is None:
        return False
    ok = libc.mallopt(M_ARENA_MAX, ARENAS) == 1
    ok &= libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    ok &= libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    return bool(ok)


def release_native_heap() -> bool:
    """Hand the free pages of every heap arena back to the OS (``malloc_trim(0)``, a few milliseconds).

    Returns whether any memory was released.
    """
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"  # jax.monitoring: one XLA compilation ended


def _after_compile(event: str, duration: float, **kwargs: object) -> None:
    if event == COMPILE_EVENT:
        release_native_heap()


@functools.cache
def release_after_compiles() -> bool:
    """Hand the C heap's free pages back to the OS after every XLA compilation, in whichever thread it ran.

    Compiling one training program takes 30–75 MB of scratch memory
    (``kernelviz.runtime.jax_setup.lean_jit``; 170–260 MB with XLA's defaults) that XLA frees at the end, but
    in small blocks that stay in the heap; released at once, the next compilation (the warm-up's next, or a
    page's) starts from the memory the programs really keep. Once per process; returns whether it is on.
    """
    if _glibc() is None:
        return False
    jax.monitoring.register_event_duration_secs_listener(_after_compile)
    return True


@functools.cache
def share_ir_context() -> bool:
    """Build every program's IR in one MLIR context instead of a new one per program.

    JAX lowers each program in a fresh MLIR context with all its dialects loaded, and the context lives as
    long as the program's lowering is cached, that is as long as the server: about 2.8 MB a program, some
    250 MB for the programs one visitor's walk needs. One shared context holds them all for a few MB (the
    types and attributes they share are stored once). Lowerings then take turns (``_TURN``; each takes well
    under a second), so two threads never build IR in the context at once. Off where
    ``KERNELVIZ_SHARED_IR_CONTEXT=0`` (``benchmarks/bench_memory.py --ablate`` measures both) or where JAX
    no longer has these functions; returns whether it is on.
    """
    from jax._src.interpreters import mlir

    make, lower = getattr(mlir, "make_ir_context", None), getattr(mlir, "lower_jaxpr_to_module", None)
    if os.environ.get("KERNELVIZ_SHARED_IR_CONTEXT") == "0" or make is None or lower is None:
        return False
    shared = make()
    mlir.make_ir_context = lambda: shared
    mlir.lower_jaxpr_to_module = _in_turn(lower)
    return True


_TURN = threading.RLock()  # held while a program is lowered or compiled


def _in_turn(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def in_turn(*args: object, **kwargs: object) -> object:
        with _TURN:
            return fn(*args, **kwargs)

    return in_turn


@functools.cache
def one_compilation_at_a_time() -> bool:
    """Let XLA compilations take turns across threads (the warm-up's and the pages').

    Compiling a training program needs 30–75 MB of scratch memory for a few seconds (170–260 MB with XLA's
    defaults, ``kernelviz.runtime.jax_setup.lean_jit``); two at once, the warm-up's and a page's, add up. A
    page that needs a program while the warm-up compiles another waits for it, as it would wait for the
    shared cores anyway. Off where ``KERNELVIZ_SHARED_IR_CONTEXT=0`` (with the shared context) or where JAX
    no longer has the function; returns whether it is on.
    """
    from jax._src import compiler

    compile_ = getattr(compiler, "compile_or_get_cached", None)
    if os.environ.get("KERNELVIZ_SHARED_IR_CONTEXT") == "0" or compile_ is None:
        return False
    compiler.compile_or_get_cached = _in_turn(compile_)
    return True


def freeze_long_lived_objects() -> int:
    """Collect garbage once, then freeze everything still alive (``gc.freeze``); returns how many objects
    are frozen. Call once the server is warmed up: what exists then lives as long as the process."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
