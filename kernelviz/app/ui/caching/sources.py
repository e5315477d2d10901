"""The Sources page: the catalogue of the sources' figures, printed results and exercises, and the numbers
kernelviz computes beside the ones the sources printed.

The catalogue's words (each source's ``title`` and ``short`` name, each entry's ``what``, each unshown
thing's ``what`` and ``why``) are read through ``i18n.localized``; its ids, kinds, pages, params and numbers
as they are."""

from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.widgets.sidebar import DATA_CONTROLS, Data, make_data, native_sample
from kernelviz.app.views.training import MaskedSettings
from kernelviz.runtime.i18n import _, localized

__all__ = ["OURS", "blog_source", "catalogue", "coverage", "ours"]

CATALOGUE = Path(__file__).resolve().parents[4] / "chapters" / "prose" / "6_sources.toml"
WORDS = {"source": ("title", "short"), "item": ("what",), "unshown": ("what", "why")}  # what a person reads
# the coverage figure's chapter names, by the stem of the chapter's file
CHAPTER_NAMES = {
    "1_kernel_regression": _("kernel regression"), "2_masked_training": _("masked training"),
    "3_multihead": _("multihead"), "4_attention": _("attention"), "5_in_context": _("in context"),
}


@functools.cache
def catalogue() -> list[dict[str, Any]]:
    """The sources in order, each a dict with ``id``, ``title`` and its ``item`` list (see the TOML file).

    A link that names a built-in data set also gets its own size and seed (``data.n``, ``data.seed``), so
    it shows the source's sample whatever sample the session had.
    """
    with CATALOGUE.open("rb") as f:
        sources = tomllib.load(f)["source"]
    for s in sources:
        _localize(s, WORDS["source"])
        for part in ("item", "unshown"):
            for entry in s.get(part, []):
                _localize(entry, WORDS[part])
    for item in (item for s in sources for item in s["item"]):
        params = item.setdefault("params", {})
        name = params.get(DATA_CONTROLS.key("source"))
        if name in kv.DATASETS:
            n, seed = native_sample(name)
            params.setdefault(DATA_CONTROLS.key("n"), str(n))
            params.setdefault(DATA_CONTROLS.key("seed"), str(seed))
    return sources


def _localize(entry: dict[str, Any], fields: tuple[str, ...]) -> None:
    """The words of ``fields`` in ``entry`` in the server's language (``localized``), in place."""
    for name in fields:
        if name in entry:
            entry[name] = localized(entry[name])


def coverage() -> tuple[np.ndarray, list[str], list[str]]:
    """(counts (sources, chapters), short source names, chapter names): how many catalogue entries of each
    source each chapter shows (the ``unshown`` lists are not entries)."""
    chapters = sorted({item["page"] for s in catalogue() for item in s["item"]})
    counts = np.array([[sum(item["page"] == page for item in s["item"]) for page in chapters]
                       for s in catalogue()])
    stems = [Path(page).stem for page in chapters]
    names = [CHAPTER_NAMES.get(stem, stem.split("_", 1)[1].replace("_", " ")) for stem in stems]
    return counts, [s["short"] for s in catalogue()], names


def blog_source() -> Data:
    """The blog post's data set as chapter 2 and 3 see it by default (150 points, the post's key 2024), so
    the numbers here are those chapters' own (their caches are shared)."""
    n, seed = native_sample("blog")
    return make_data(("blog", n, seed), kv.make_dataset("blog", n=n, seed=seed))


def _blog_holdouts() -> list[float]:
    """Chapter 2's four panels of the post's figure at their defaults (Gaussian, 100 steps, Adam 0.2, the
    default seed): the learned ℓ of each hold-out size 1, 10, n/2, 0.8 n in the post's convention √2 ℓ."""
    data, m = blog_source(), MaskedSettings()
    return [cache.holdout_panel(data, "gaussian", k, m.steps, m.learning_rate, m.seed).lengthscale
            * math.sqrt(2.0) for k in cache.panel_holdouts(len(data.train))]


def _blog_heads() -> list[dict[str, list[float]]]:
    """Chapter 3's panels of the post's experiment at their defaults (MultiheadGaussianKernel with 1, 2, 4,
    8 heads, hold-out 1, 1,000 steps, Adam 0.2, the default seed): learned u_h and ℓ_h in the post's
    convention ℓ_post = √2 ℓ."""
    mh = defaults.MULTIHEAD
    return [{"u": p.mixing.tolist(), "l_post": (p.lengthscales * math.sqrt(2.0)).tolist()}
            for p in cache_heads.panels(blog_source(), mh.kernel, mh.learning_rate, mh.seed)]


def _d2l_average() -> float:
    """Average pooling on d2l's 50 training points: the mean of the y_i."""
    return float(np.mean(kv.d2l_data().y))


def _d2l_w() -> dict[str, Any]:
    """d2l's parametric pooling as d2l runs it (SGD 0.5, 5 epochs from w ~ U(0, 1)): w and the losses."""
    ds = kv.d2l_data()
    f = kv.fit_parametric(ds.x, ds.y)
    return {"w": 1.0 / float(f.lengthscales[0]), "w0": 1.0 / float(f.trajectory[0, 0]),
            "losses": f.losses.tolist()}


OURS = {"blog_holdouts": _blog_holdouts, "blog_heads": _blog_heads, "d2l_average": _d2l_average,
        "d2l_w": _d2l_w}


@cache.cached(bounded=False)
def ours(key: str) -> Any:
    """kernelviz's own numbers for the catalogue entry ``key`` (one of ``OURS``)."""
    return OURS[key]()
