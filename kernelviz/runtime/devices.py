"""The server's runtime devices for memory and speed: set up once, each checked, each named when it is off.

A 690 MB Streamlit Community Cloud container holds one visitor's walk through every chapter only with
all of these in force (``benchmarks/bench_memory.py --ablate`` measures each one off):

==========================  ============================================================================
heap settings               glibc's heap arenas capped, a fixed mmap threshold (``_memory.limit_native_heap``)
heap release after compile  each compilation's scratch memory handed back (``_memory.release_after_compiles``)
shared IR context           every program's IR in one MLIR context (``_memory.share_ir_context``)
compile lock                compilations take turns across threads (``_memory.one_compilation_at_a_time``)
lean compilation            the training programs compiled with XLA's classic emitters (``_jax.lean_options``)
one compute thread          XLA's CPU client with one intra-op thread (``jax_setup.one_compute_thread``)
==========================  ============================================================================

Several reach into JAX's or XLA's internals, so a JAX release can switch one off without an error.
``set_up_server`` applies them and logs one warning per device that is off, saying why and what it costs;
``tests/test_devices.py`` fails, naming the device, where the installed JAX leaves one off.
"""

from __future__ import annotations

import functools
import logging
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp

from kernelviz.runtime import jax_setup as _jax
from kernelviz.runtime import memory as _memory

__all__ = ["Device", "compute_threads", "set_up_server"]

LOG = logging.getLogger("kernelviz")


class Device(NamedTuple):
    """One runtime device: its name, whether it is in force, and why not (empty when it is)."""

    name: str
    on: bool
    why_off: str = ""


def compute_threads() -> int | None:
    """How many threads the largest of XLA's CPU thread pools has (threads named ``tf_XLA…``: the intra-op
    pool ``tf_XLAEigen``, and from jaxlib 0.12 on ``tf_XLAExecute`` and ``tf_XLACompile`` too), after one
    small program has run; None where the OS does not list a process's threads (not Linux)."""
    jnp.zeros(8).sum().block_until_ready()
    try:
        names = [(t / "comm").read_text().strip() for t in Path("/proc/self/task").iterdir()]
    except OSError:
        return None
    pools = Counter(name for name in names if name.startswith("tf_XLA"))
    return max(pools.values(), default=0)


def _env_off(variable: str, off_value: str) -> str:
    return f"{variable}={off_value} is set" if os.environ.get(variable) == off_value else ""


def _heap(name: str, turn_on: Callable[[], bool]) -> Device:
    if turn_on():
        return Device(name, True)
    why = _env_off("KERNELVIZ_HEAP_TUNING", "0") or "the C library is not glibc (macOS, Windows or musl)"
    return Device(name, False, why)


def _internal(name: str, turn_on: Callable[[], bool], where: str) -> Device:
    if turn_on():
        return Device(name, True)
    why = _env_off("KERNELVIZ_SHARED_IR_CONTEXT", "0") or f"jax {jax.__version__} has no {where}"
    return Device(name, False, why)


def _lean() -> Device:
    name = "lean compilation"
    if _jax.lean_options() is not None:
        return Device(name, True)
    options = ", ".join(_jax.LEAN_OPTIONS)
    why = _env_off(_jax.LEAN_ENV, "0") or f"jaxlib {jax.__version__}'s XLA refuses the option {options}"
    return Device(name, False, why)


def _threads() -> Device:
    name = "one compute thread"
    threads = compute_threads()
    made = _jax.set_up().one_compute_thread
    if made and threads in (1, None):
        return Device(name, True)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    if os.environ.get(_jax.THREADS_ENV, "1") != "1":
        why = f"{_jax.THREADS_ENV}={os.environ[_jax.THREADS_ENV]} is set"
    elif cores is None:
        why = "this OS gives no CPU affinity (macOS, Windows)"
    elif cores < 2:
        why = "the server has one core, so XLA makes one thread anyway"
        return Device(name, threads == 1, "" if threads == 1 else why)
    elif not made:
        why = "JAX's CPU client was made before the server's set-up"
    else:
        why = f"jax {jax.__version__} made a pool of {threads} compute threads"
    return Device(name, False, why)


COSTS = {
    "heap settings": "freed memory stays in fragmented heap arenas (about 100 MB more over a walk)",
    "heap release after compile": "each compilation's scratch memory stays in the heap until later",
    "shared IR context": "each program keeps an MLIR context of its own (about 100 MB more over a walk)",
    "compile lock": "the warm-up's and a page's compilations may overlap and add up",
    "lean compilation": "compiling a training program takes 150-260 MB more for a few seconds",
    "one compute thread": "programs split over every core, slower here and crowding other visitors",
}


def check() -> tuple[Device, ...]:
    """Each runtime device, in the table's order, as it stands now (applying those not applied yet, after
    JAX's set-up: ``jax_setup.set_up``)."""
    _jax.set_up()
    internal_ir = "jax._src.interpreters.mlir.make_ir_context to share"
    internal_compile = "jax._src.compiler.compile_or_get_cached to take turns"
    return (
        _heap("heap settings", _memory.limit_native_heap),
        _heap("heap release after compile", _memory.release_after_compiles),
        _internal("shared IR context", _memory.share_ir_context, internal_ir),
        _internal("compile lock", _memory.one_compilation_at_a_time, internal_compile),
        _lean(),
        _threads(),
    )


@functools.cache
def set_up_server() -> tuple[Device, ...]:
    """Apply the server's runtime devices, once per process, and log one warning for each that is off.

    Call it first in the app, before any program runs; later calls return the same records.
    """
    devices = check()
    for device in devices:
        if not device.on:
            LOG.warning(
                "kernelviz: %s is off (%s), so the server needs more memory or time: %s.",
                device.name, device.why_off, COSTS[device.name],
            )
    return devices
