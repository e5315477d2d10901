"""JAX set-up shared by every module: float64 arithmetic and the persistent compilation cache.

Imported first by ``kernelviz/__init__.py`` so the settings hold before any array is made.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")


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


CACHE_DIR = enable_compilation_cache()
