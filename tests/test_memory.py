"""The native-heap settings the app applies at start (kernelviz.runtime.memory)."""

import gc
import platform
import sys

import numpy as np
import pytest

from kernelviz.runtime import memory as _memory

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="the settings apply to glibc only; elsewhere they are no-ops")
def test_glibc_heap_settings_apply_and_trim_releases_freed_memory():
    assert _memory.limit_native_heap() is True
    assert _memory.limit_native_heap() is True  # once per process, then cached
    blocks = [np.ones(1000) for _ in range(20_000)]  # 160 MB of small heap blocks
    del blocks
    assert _memory.release_native_heap() is True  # freed heap pages went back to the OS


@pytest.mark.skipif(not glibc, reason="the settings apply to glibc only; elsewhere they are no-ops")
def test_each_compilation_hands_its_scratch_memory_back(monkeypatch):
    import jax
    import jax.numpy as jnp

    released = []
    monkeypatch.setattr(_memory, "release_native_heap", lambda: released.append(1) or True)
    assert _memory.release_after_compiles() is True
    assert _memory.release_after_compiles() is True  # registered once per process
    a = jnp.arange(7.0)
    before = len(released)
    jax.jit(lambda a: jnp.sin(a) * 3.25 + 0.5)(a)  # a program no other test compiles
    assert len(released) == before + 1


def test_no_ops_answer_false_without_glibc(monkeypatch):
    monkeypatch.setattr(_memory, "_glibc", lambda: None)
    assert _memory.release_native_heap() is False
    _memory.limit_native_heap.cache_clear()
    _memory.release_after_compiles.cache_clear()
    try:
        assert _memory.limit_native_heap() is False
        assert _memory.release_after_compiles() is False
    finally:
        _memory.limit_native_heap.cache_clear()
        _memory.release_after_compiles.cache_clear()


def test_freezing_takes_long_lived_objects_out_of_collections():
    try:
        frozen = _memory.freeze_long_lived_objects()
        assert frozen == gc.get_freeze_count() > 1000
        cycle: list = []
        cycle.append(cycle)  # garbage made after the freeze is still collected
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()


def test_programs_share_one_ir_context_and_lower_from_two_threads():
    import threading

    import jax
    import jax.numpy as jnp
    from jax._src.interpreters import mlir

    def contexts() -> int:
        gc.collect()
        return sum(isinstance(o, mlir.JaxIrContext) for o in gc.get_objects())

    assert _memory.share_ir_context() is True
    before = contexts()
    results: dict[int, np.ndarray] = {}

    def work(k: int) -> None:  # programs no other test compiles, lowered by two threads at once
        for n in range(3, 9):
            program = jax.jit(lambda a, k=k: jnp.cos(a) * (k + 1.5))
            results[k * 10 + n] = np.asarray(program(jnp.arange(float(n))))

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in (1, 2):
        for n in range(3, 9):
            np.testing.assert_allclose(results[k * 10 + n], np.cos(np.arange(float(n))) * (k + 1.5))
    assert contexts() == before  # twelve programs, no new context


def test_a_compilation_waits_for_the_one_in_progress():
    import threading

    import jax
    import jax.numpy as jnp

    assert _memory.one_compilation_at_a_time() is True
    a = jnp.arange(5.0)
    done = threading.Event()

    def compile_new() -> None:
        jax.jit(lambda v: jnp.tanh(v) * 4.75 - 0.125)(a).block_until_ready()  # a program no test compiles
        done.set()

    with _memory._TURN:  # as if another thread were compiling
        thread = threading.Thread(target=compile_new)
        thread.start()
        thread.join(timeout=1.5)
        assert not done.is_set()
    thread.join()
    assert done.is_set()
