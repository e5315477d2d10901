"""kernelviz/runtime/devices.py: with the installed JAX every runtime device the server relies on is in
force, and one that is off is named, with why, in one warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from kernelviz.runtime import devices

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["heap settings", "heap release after compile", "shared IR context", "compile lock",
         "lean compilation", "one compute thread"]
SWITCHES = ("KERNELVIZ_HEAP_TUNING", "KERNELVIZ_SHARED_IR_CONTEXT", "KERNELVIZ_LEAN_COMPILE",
            "KERNELVIZ_XLA_THREADS")

PROBE = """
import json
from kernelviz.runtime import devices
print(json.dumps([d._asdict() for d in devices.set_up_server()]))
devices.set_up_server()  # a second call (a second script run) logs nothing more
"""


def serve(**switches: str) -> tuple[list[devices.Device], str]:
    """The devices as the app sets them up, in a fresh process, and what it logged."""
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    out = subprocess.run([sys.executable, "-c", PROBE], env={**env, **switches}, cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=120)
    return [devices.Device(**d) for d in json.loads(out.stdout.strip().splitlines()[-1])], out.stderr


linux_glibc_multicore = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="every device applies on Linux with glibc and two cores or more (the servers kernelviz targets)",
)


@linux_glibc_multicore
def test_every_device_is_in_force_with_the_installed_jax():
    found, logged = serve()
    assert [d.name for d in found] == NAMES
    off = [f"{d.name} ({d.why_off})" for d in found if not d.on]
    assert not off, f"off with jax {jax.__version__}: " + "; ".join(off)
    assert "kernelviz:" not in logged


@linux_glibc_multicore
def test_devices_switched_off_are_named_once_each_with_why():
    found, logged = serve(KERNELVIZ_HEAP_TUNING="0", KERNELVIZ_SHARED_IR_CONTEXT="0",
                          KERNELVIZ_LEAN_COMPILE="0", KERNELVIZ_XLA_THREADS="all")
    assert [d.on for d in found] == [False] * len(NAMES)
    for device in found:
        assert "is set" in device.why_off, device
        assert logged.count(f"kernelviz: {device.name} is off ({device.why_off})") == 1, logged
    assert "KERNELVIZ_XLA_THREADS=all is set" in logged


@linux_glibc_multicore
def test_one_switch_leaves_the_others_on():
    found, logged = serve(KERNELVIZ_LEAN_COMPILE="0")
    assert {d.name for d in found if not d.on} == {"lean compilation"}
    assert logged.count("kernelviz: ") == 1
    assert "150-260 MB more" in logged


def test_compute_threads_counts_xla_pool():
    threads = devices.compute_threads()
    if sys.platform.startswith("linux"):
        assert threads is not None and threads >= 1
    else:
        assert threads is None


def test_a_refused_option_is_named(monkeypatch):
    monkeypatch.setattr(devices._jax, "lean_options", lambda: None)
    monkeypatch.delenv("KERNELVIZ_LEAN_COMPILE", raising=False)
    lean = devices._lean()
    assert not lean.on
    assert "xla_cpu_use_fusion_emitters" in lean.why_off and jax.__version__ in lean.why_off
