"""Importing kernelviz and calling its functions leave the caller's JAX as it was: 64-bit types, platforms,
the compilation cache, the default device, the CPU affinity; no JAX client is made at import. Each
top-level function runs in float64 all the same, giving the numbers the server computes."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import kernelviz as kv

ROOT = Path(__file__).resolve().parents[1]

CALLER = """
import json, os
import jax
from jax._src import xla_bridge

def state():
    return {"x64": jax.config.jax_enable_x64, "platforms": jax.config.jax_platforms,
            "cache": jax.config.jax_compilation_cache_dir, "device": str(jax.config.jax_default_device),
            "affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None}

before = state()
import kernelviz as kv
imported, client = state(), xla_bridge.backends_are_initialized()
d = kv.blog_data()
s = kv.nadaraya_watson(d.grid(64), d.x, d.y, 0.3, with_weights=True)
f = kv.fit(d.x, d.y, holdout=10, steps=50)
layer = kv.fit_attention(d.x, d.y, heads=2, steps=50)
p = kv.attention_predict(layer, d.grid(64), d.x, d.y)
print(json.dumps({"before": before, "imported": imported, "called": state(), "client_at_import": client,
                  "dtype": str(s.mean.dtype), "mean": s.mean.tolist(), "weights": s.weights.tolist(),
                  "ell": f.lengthscales.tolist(), "ell_star": kv.loo_lengthscale(d.x, d.y),
                  "attention": p.mean.tolist()}))
"""


def test_import_and_calls_change_nothing_and_compute_in_float64():
    out = subprocess.run([sys.executable, "-c", CALLER], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=600)
    got = json.loads(out.stdout)
    assert got["before"]["x64"] is False  # a fresh process: JAX's default
    assert got["imported"] == got["before"] and got["called"] == got["before"]
    assert got["client_at_import"] is False
    assert got["dtype"] == "float64"
    d = kv.blog_data()  # here under the server's settings (tests/conftest.py): the same numbers
    s = kv.nadaraya_watson(d.grid(64), d.x, d.y, 0.3, with_weights=True)
    np.testing.assert_array_equal(got["mean"], s.mean)
    np.testing.assert_array_equal(got["weights"], s.weights)
    np.testing.assert_allclose(got["ell"], kv.fit(d.x, d.y, holdout=10, steps=50).lengthscales, rtol=1e-12)
    assert got["ell_star"] == kv.loo_lengthscale(d.x, d.y)
    layer = kv.fit_attention(d.x, d.y, heads=2, steps=50)
    np.testing.assert_allclose(got["attention"], kv.attention_predict(layer, d.grid(64), d.x, d.y).mean,
                               rtol=1e-12)


def test_every_top_level_function_is_scoped_to_float64():
    functions = [n for n in kv.__all__ if inspect.isfunction(getattr(kv, n))]
    assert len(functions) >= 20
    assert [n for n in functions if not getattr(getattr(kv, n), "float64", False)] == []
