"""The native-heap settings the app applies at start (kernelviz._memory)."""

import gc
import platform
import sys

import numpy as np
import pytest

from kernelviz import _memory

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="the settings apply to glibc only; elsewhere they are no-ops")
def test_glibc_heap_settings_apply_and_trim_releases_freed_memory():
    assert _memory.limit_native_heap() is True
    assert _memory.limit_native_heap() is True  # once per process, then cached
    blocks = [np.ones(1000) for _ in range(20_000)]  # 160 MB of small heap blocks
    del blocks
    assert _memory.release_native_heap() is True  # freed heap pages went back to the OS


def test_no_ops_answer_false_without_glibc(monkeypatch):
    monkeypatch.setattr(_memory, "_glibc", lambda: None)
    assert _memory.release_native_heap() is False
    _memory.limit_native_heap.cache_clear()
    try:
        assert _memory.limit_native_heap() is False
    finally:
        _memory.limit_native_heap.cache_clear()


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
