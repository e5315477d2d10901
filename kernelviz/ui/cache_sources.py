"""The Sources page: the catalogue of the sources' figures, printed results and exercises, and the numbers
kernelviz computes beside the ones the sources printed."""

from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz import defaults
from kernelviz.ui.sidebar import native_sample

__all__ = ["OURS", "catalogue", "coverage", "ours"]

CATALOGUE = Path(__file__).resolve().parents[2] / "pages" / "prose" / "5_sources.toml"


@functools.cache
def catalogue() -> list[dict[str, Any]]:
    """The sources in order, each a dict with ``id``, ``title`` and its ``item`` list (see the TOML file).

    A link that names a built-in data set also gets its own size and seed (``data.n``, ``data.seed``), so
    it shows the source's sample whatever sample the session had.
    """
    with CATALOGUE.open("rb") as f:
        sources = tomllib.load(f)["source"]
    for item in (item for s in sources for item in s["item"]):
        params = item.setdefault("params", {})
        name = params.get("data.source")
        if name in kv.DATASETS:
            n, seed = native_sample(name)
            params.setdefault("data.n", str(n))
            params.setdefault("data.seed", str(seed))
    return sources


def coverage() -> tuple[np.ndarray, list[str], list[str]]:
    """(counts (sources, chapters), short source names, chapter names): how many catalogue entries of each
    source each chapter shows."""
    chapters = sorted({item["page"] for s in catalogue() for item in s["item"]})
    counts = np.array([[sum(item["page"] == page for item in s["item"]) for page in chapters]
                       for s in catalogue()])
    names = [Path(page).stem.split("_", 1)[1].replace("_", " ") for page in chapters]
    return counts, [s["short"] for s in catalogue()], names


def _blog_heads() -> list[dict[str, list[float]]]:
    """The post's MultiheadGaussianKernel for 1, 2, 4, 8 heads on the post's data (hold-out 1, 1,000 steps,
    Adam 0.2): learned u_h and ℓ_h in the post's convention ℓ_post = √2 ℓ."""
    ds = kv.blog_data()
    rows = []
    for heads in defaults.MULTIHEAD.panels:
        f = kv.fit(ds.x, ds.y, heads=heads, multihead=True, holdout=1, steps=defaults.MULTIHEAD.steps,
                   learning_rate=defaults.MULTIHEAD.learning_rate, seed=0)
        rows.append({"u": f.mixing.tolist(), "l_post": (f.lengthscales * math.sqrt(2.0)).tolist()})
    return rows


def _d2l_average() -> float:
    """Average pooling on d2l's 50 training points: the mean of the y_i."""
    return float(np.mean(kv.d2l_data().y))


def _d2l_w() -> dict[str, Any]:
    """d2l's parametric pooling as d2l runs it (SGD 0.5, 5 epochs from w ~ U(0, 1)): w and the losses."""
    ds = kv.d2l_data()
    f = kv.fit_parametric(ds.x, ds.y)
    return {"w": 1.0 / float(f.lengthscales[0]), "w0": 1.0 / float(f.trajectory[0, 0]),
            "losses": f.losses.tolist()}


OURS = {"blog_heads": _blog_heads, "d2l_average": _d2l_average, "d2l_w": _d2l_w}


@st.cache_data(show_spinner=False)
def ours(key: str) -> Any:
    """kernelviz's own numbers for the catalogue entry ``key`` (one of ``OURS``)."""
    return OURS[key]()
