"""Cached calls into the backend, keyed by the data set's key and the scalar arguments.

Every cached function takes the ``Data`` itself as its first argument and is decorated with
``st.cache_data(max_entries=…, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)``: Streamlit hashes a
``Data`` by its key tuple (a CSV by its SHA-256), never by its arrays. Inside, ``data.ds`` is the whole data
set and ``data.train`` the training subsample (at most ``kv.TRAIN_MAX_POINTS`` points). Results go through
pickle, so callers get their own copy: return NumPy arrays or dataclasses of them, never shared state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz.shapes import bucket
from kernelviz.ui.sidebar import GRID_POINTS, Data

__all__ = [
    "CACHE_ENTRIES",
    "DATA_HASH_FUNCS",
    "HEATMAP_KEYS",
    "HEATMAP_QUERIES",
    "HEAVY_CACHE_ENTRIES",
    "Heat",
    "fit",
    "fit_parametric",
    "fit_seeds",
    "heatmap_weights",
    "knn",
    "loo_curve",
    "loo_optimum",
    "predict",
    "training_work",
]

CACHE_ENTRIES = 256  # cached results of small backend calls (fits, curves: tens of kB each)
HEAVY_CACHE_ENTRIES = 16  # cached views holding weight matrices (up to a few MB each)
HEATMAP_QUERIES = 96  # rows of an attention heatmap
HEATMAP_KEYS = 1500  # keys of a heatmap: bigger data sets show an even subsample of this size

# A Data is identified by its key: ("blog", n, seed), ("d2l", n, seed) or ("csv", sha256, x column, y column).
DATA_HASH_FUNCS: dict[type, Callable[[Any], Any]] = {Data: lambda d: d.key}


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def predict(data: Data, lengthscale: float, kernel: str, num: int = GRID_POINTS) -> kv.Smooth:
    """m(x), s(x) on ``data.grid(num)`` from all the data (no weights: beyond a few thousand points this
    streams over key blocks)."""
    ds = data.ds
    return kv.nadaraya_watson(ds.grid(num), ds.x, ds.y, lengthscale, kernel, with_weights=False)


@dataclass(frozen=True)
class Heat:
    """Weights for a heatmap: ``weights`` (q, k) of ``queries`` against ``keys``; ``note`` says what is
    shown."""

    queries: np.ndarray
    keys: np.ndarray
    weights: np.ndarray
    note: str


@st.cache_data(max_entries=HEAVY_CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def heatmap_weights(data: Data, lengthscale: float, kernel: str, queries: int = HEATMAP_QUERIES) -> Heat:
    """Attention weights w_i(x) for ``queries`` grid points against the keys (≤ HEATMAP_KEYS, subsampled)."""
    ds = data.ds
    sub = kv.subsample(ds, HEATMAP_KEYS) if len(ds) > HEATMAP_KEYS else ds
    q = ds.grid(queries)
    s = kv.nadaraya_watson(q, sub.x, sub.y, lengthscale, kernel, with_weights=True)
    note = ""
    if len(sub) < len(ds):
        note = (
            f"The heatmap uses an even subsample of {len(sub):,} of the {len(ds):,} points as keys, so it "
            "stays readable and light; the fit above uses all of them."
        )
    return Heat(q, np.asarray(sub.x), np.asarray(s.weights), note)


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def knn(data: Data, k: int, num: int = GRID_POINTS) -> np.ndarray:
    """k-nearest-neighbour average on the grid (k clipped to n); large data sets use a subsample of keys."""
    ds = data.ds
    sub = kv.subsample(ds, HEATMAP_KEYS) if len(ds) > HEATMAP_KEYS else ds
    return kv.knn_average(ds.grid(num), sub.x, sub.y, int(k)).mean


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def loo_curve(data: Data, kernel: str, lengthscales: tuple[float, ...]) -> np.ndarray:
    """CV(ℓ) at each of ``lengthscales`` on the training points (+∞ where some window is empty)."""
    return kv.loo_curve(data.train.x, data.train.y, np.asarray(lengthscales), kernel)


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def loo_optimum(data: Data, kernel: str) -> float | None:
    """The exact leave-one-out optimum ℓ* on the training points, None when no ℓ predicts every point."""
    try:
        return kv.loo_lengthscale(data.train.x, data.train.y, kernel)
    except ValueError:
        return None


def training_work(n: int, holdout: int, steps: int, seeds: int = 1) -> int:
    """Kernel evaluations of one-head masked training: seeds × steps × hold-out rows × keys, as padded.

    Rows are ``kv.holdout_bucket(holdout)`` (the chunks a step runs), keys the padded data size. Pages use
    this to keep optional extra work (e.g. a spread over seeds) small enough to stay live.
    """
    return int(seeds) * int(steps) * kv.holdout_bucket(int(holdout)) * bucket(int(n))


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def fit(data: Data, kernel: str, holdout: int, steps: int, learning_rate: float, seed: int) -> kv.FitResult:
    """``kv.fit`` (one head, masked training) on the training points."""
    train = data.train
    return kv.fit(
        train.x,
        train.y,
        heads=1,
        kernel=kernel,
        holdout=holdout,
        steps=steps,
        learning_rate=learning_rate,
        seed=seed,
    )


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def fit_seeds(
    data: Data, kernel: str, holdout: int, steps: int, learning_rate: float, seeds: tuple[int, ...]
) -> list[kv.FitResult]:
    """``kv.fit_seeds`` (one head) on the training points: one FitResult per seed."""
    train = data.train
    return kv.fit_seeds(
        train.x,
        train.y,
        list(seeds),
        heads=1,
        kernel=kernel,
        holdout=holdout,
        steps=steps,
        learning_rate=learning_rate,
    )


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False, hash_funcs=DATA_HASH_FUNCS)
def fit_parametric(data: Data, kernel: str, steps: int, learning_rate: float) -> kv.FitResult:
    """``kv.fit_parametric``: d2l's w = 1/ℓ trained leave-one-out on the training points."""
    train = data.train
    return kv.fit_parametric(train.x, train.y, kernel=kernel, steps=steps, learning_rate=learning_rate)
