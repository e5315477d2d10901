"""Lean compilation of the large programs (``kernelviz.runtime.jax_setup.lean_jit``): what it asks of XLA,
where it applies, and that it saves memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from kernelviz.models import heads, incontext, loo, parametric
from kernelviz.models.attention import training as attention_training
from kernelviz.runtime import jax_setup as _jax
from kernelviz.runtime import train

REPO = Path(__file__).resolve().parents[1]


def test_options_are_on_by_default_and_off_by_switch(monkeypatch):
    monkeypatch.delenv(_jax.LEAN_ENV, raising=False)
    _jax.lean_options.cache_clear()
    try:
        assert _jax.lean_options() == {"xla_cpu_use_fusion_emitters": False}
        monkeypatch.setenv(_jax.LEAN_ENV, "0")
        _jax.lean_options.cache_clear()
        assert _jax.lean_options() is None
    finally:
        _jax.lean_options.cache_clear()


def test_an_xla_without_the_options_gets_none(monkeypatch):
    """A later XLA may drop the option (it then refuses to compile with it): the programs keep XLA's
    defaults instead of failing."""
    monkeypatch.delenv(_jax.LEAN_ENV, raising=False)
    monkeypatch.setattr(_jax, "LEAN_OPTIONS", {"xla_cpu_no_such_option": False})
    _jax.lean_options.cache_clear()
    try:
        assert _jax.lean_options() is None
        assert _jax.lean_jit(lambda a: a * 2.0)(3.0) == 6.0
    finally:
        _jax.lean_options.cache_clear()


def test_lean_jit_gives_the_same_numbers_as_jit():
    def f(a):
        return jnp.sum(jnp.exp(-0.5 * jnp.square(a[:, None] - a[None, :])), axis=1)

    a = jnp.linspace(-3.0, 3.0, 37)
    assert jnp.allclose(_jax.lean_jit(f)(a), jax.jit(f)(a), rtol=1e-14, atol=0)
    assert _jax.lean_jit(static_argnums=1)(lambda a, k: a * k)(a, 3).shape == (37,)


@pytest.mark.parametrize("program", [
    train.compiled(heads._adam_run, ("arithmetic",)), train.compiled(heads._search_run),
    train.compiled(loo._optimum, ("smooth",)),
    train.compiled(attention_training._train, ("model", "snapshots")),
    train.compiled(incontext._pretrain, ("snapshots",)),
])
def test_every_training_and_search_program_compiles_lean(program):
    """The options sit on the program's jit wrapper (JAX's record of them, ``_jit_info``): the training
    adapter compiles them (``kernelviz.runtime.train.compiled``)."""
    assert dict(program._jit_info.compiler_options_kvs) == _jax.LEAN_OPTIONS


def test_d2l_parametric_run_keeps_xla_defaults():
    """Its compilation adds some 80 MB either way, and lean code runs it 1.6x slower
    (``benchmarks/bench_lean.py``)."""
    program = train.compiled(parametric._parametric_run, ("optimizer",), lean=False)
    assert not program._jit_info.compiler_options_kvs


PEAK = """
import json
import kernelviz as kv
from kernelviz.runtime import jax_setup
from kernelviz.runtime import memory as _memory
from tests.measure import peak_rss

jax_setup.set_up()  # as the server

ds = kv.blog_data()
kv.nadaraya_watson([0.0], ds.x, ds.y, 0.3)
_memory.release_native_heap()
with peak_rss() as mem:
    kv.fit(ds.x, ds.y, holdout=10, steps=1, arithmetic="post")
print(json.dumps(mem["peak"] - mem["start"]))
"""


def _compile_peak_bytes(lean: bool, cache: Path) -> int:
    env = {**os.environ, _jax.LEAN_ENV: "1" if lean else "0", "KERNELVIZ_JAX_CACHE": str(cache)}
    out = subprocess.run([sys.executable, "-c", PEAK], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=300, check=True)
    return int(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the resident memory from /proc")
def test_compiling_a_training_program_lean_needs_far_less_memory(tmp_path):
    """The blog post's training program, compiled in a fresh process with an empty cache: the peak it
    adds (resident memory sampled every 2 ms) is some 250 MB with XLA's defaults and some 60 MB lean."""
    lean = _compile_peak_bytes(True, tmp_path / "lean")
    default = _compile_peak_bytes(False, tmp_path / "default")
    assert 0 < lean < default / 2, f"lean {lean / 1e6:.0f} MB against {default / 1e6:.0f} MB"
