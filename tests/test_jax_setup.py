"""kernelviz/runtime/jax_setup.py: JAX's CPU client gets one compute thread, and no thread is left on one
core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, os
from pathlib import Path
from kernelviz.runtime import jax_setup
made = jax_setup.set_up().one_compute_thread
import jax.numpy as jnp
(jnp.arange(1000.0) ** 2).sum().block_until_ready()
tasks = [t for t in Path("/proc/self/task").iterdir()]
names = [(t / "comm").read_text().strip() for t in tasks]
print(json.dumps({
    "made": made,
    "pool": names.count("tf_XLAEigen"),  # the intra-op pool (jaxlib 0.12 adds tf_XLAExecute, tf_XLACompile)
    "pools": [name for name in names if name.startswith("tf_XLA")],
    "cores": sorted(os.sched_getaffinity(0)),
    "pinned": [t.name for t in tasks if os.sched_getaffinity(int(t.name)) != os.sched_getaffinity(0)],
}))
"""

needs_affinity = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="CPU affinity on a machine of two cores or more (Linux)",
)


def probe(threads: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "KERNELVIZ_XLA_THREADS"}
    if threads is not None:
        env["KERNELVIZ_XLA_THREADS"] = threads
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=ROOT, check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@needs_affinity
def test_one_compute_thread_by_default_and_every_thread_keeps_every_core():
    seen = probe(None)
    assert seen["made"] is True
    assert seen["pool"] == 1
    assert all(seen["pools"].count(name) == 1 for name in seen["pools"])  # every pool of XLA's: one thread
    assert seen["cores"] == sorted(os.sched_getaffinity(0))  # the process was not left on one core
    assert seen["pinned"] == []  # nor any of its threads


@needs_affinity
def test_all_threads_leaves_xla_its_own_pool():
    seen = probe("all")
    assert seen["made"] is False
    assert seen["pool"] == len(os.sched_getaffinity(0))
    assert seen["pinned"] == []
