"""The home page's previews: one small picture per chapter, as the chapter opens on the current data.

Each preview is two steps: its *inputs* (the arrays the picture needs, which for chapters 2 to 5 come from
training) and its *figure* (drawn from those arrays alone). For the data set a first visitor sees (the blog
post's own sample) the inputs are kept in ``previews.npz`` beside this module (``preview_store``), so the
home page draws on a fresh server without compiling or training anything; for any other data they are
computed, with a line that says what is being prepared.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from kernelviz.app import defaults
from kernelviz.app import figures as kf
from kernelviz.app.ui import cache, cache_incontext, preview_store
from kernelviz.app.ui.sidebar import Data, make_data
from kernelviz.app.views.incontext import Settings
from kernelviz.data.datasets import make_dataset
from kernelviz.models import incontext
from kernelviz.models.training import holdout_range

__all__ = ["PREVIEWS", "Inputs", "Preview", "attention", "in_context", "kernel_regression",
           "masked_training", "multihead",
           "write_kept"]

Inputs = dict[str, np.ndarray]  # a preview's arrays by name (a number is a 0-d array)


class Preview(NamedTuple):
    """One chapter's preview: what it shows while its inputs are computed, how they are computed from the
    data, and how its figure is drawn from them (and the data's points)."""

    preparing: str
    inputs: Callable[[Data], Inputs]
    figure: Callable[[Data, Inputs], go.Figure]


def _kr_inputs(data: Data) -> Inputs:
    """Chapter 1 as it opens: m(x), s(x) of the Gaussian fit at its starting ℓ on the grid."""
    s = cache.predict(data, cache.start_lengthscale(data), defaults.KERNEL_REGRESSION.kernel)
    return {"mean": np.asarray(s.mean), "std": np.asarray(s.std)}


def _kr_figure(data: Data, a: Inputs) -> go.Figure:
    truth = data.truth()
    curve = kf.Curve("fit m(x)", a["mean"], kf.COLORS["fit"], std=a["std"], band_name="m(x) ± 2s(x)")
    fig = kf.fit_figure(data.ds.x, data.ds.y, data.grid(), [curve], truth=None if truth is None else truth[0],
                        x_title="x", y_title="y")
    return kf.thumbnail(fig)


def _masked_inputs(data: Data) -> Inputs:
    """Chapter 2 as it opens: the exact leave-one-out curve, the path masked training took on it, its ℓ."""
    m = defaults.MASKED
    holdout = min(m.holdout, holdout_range(len(data.train))[1])
    view = cache.masked_view(data, m.kernel, holdout, m.steps, m.learning_rate, m.seed)
    best = np.nan if view.best is None else view.best
    return {"ells": view.ells, "cv": view.cv, "best": np.asarray(best), "path": view.path,
            "path_cv": view.path_cv, "learned": np.asarray(view.learned),
            "learned_cv": np.asarray(view.learned_cv)}


def _masked_figure(data: Data, a: Inputs) -> go.Figure:
    best = float(a["best"])
    fig = kf.loo_figure(a["ells"], a["cv"], optimum=None if np.isnan(best) else best, trajectory=a["path"],
                        trajectory_cv=a["path_cv"], learned=float(a["learned"]),
                        learned_cv=float(a["learned_cv"]))
    return kf.thumbnail(fig)


def _heads_inputs(data: Data) -> Inputs:
    """Chapter 3's default model: each head's fit and their mixture on the grid."""
    view = cache.heads_preview(data)
    return {"grid": view.grid, "head_means": view.head_means, "mean": view.mean}


def _heads_figure(data: Data, a: Inputs) -> go.Figure:
    names = [f"head {h + 1}" for h in range(a["head_means"].shape[0])]
    fig = kf.heads_fit_figure(data.ds.x, data.ds.y, a["grid"], a["head_means"], a["mean"], None, names)
    return kf.thumbnail(fig)


def _attention_inputs(data: Data) -> Inputs:
    """Chapter 4's default layer: its first head's attention weights of grid queries over the keys."""
    heat = cache.attention_preview(data).cross
    return {"weights": heat.weights[0], "queries": heat.queries, "keys": heat.keys}


def _attention_figure(data: Data, a: Inputs) -> go.Figure:
    fig = kf.heatmap_figure(a["weights"], a["queries"], a["keys"], x_title="keys xᵢ", y_title="queries x")
    fig.update_layout(coloraxis_showscale=False)
    return kf.thumbnail(fig)


DEFAULT_IN_CONTEXT = Settings("sine", 3.0, 0.1, 32, 1, incontext.STEPS, "softmax", 0)  # as chapter 5 opens


def _in_context_inputs(data: Data) -> Inputs:
    """Chapter 5 as it opens (its own tasks, whatever the data): the learned window at three queries and
    Nadaraya–Watson's best fixed ℓ, from the chapter's cached pretraining."""
    s = DEFAULT_IN_CONTEXT
    view = cache_incontext.kernels(s)
    best = cache_incontext.best_lengthscale(s.family, s.roughness, s.noise, s.n).best
    return {"offsets": view.offsets, "queries": np.asarray(view.queries), "kernels": view.kernels,
            "best": np.asarray(best)}


def _in_context_figure(data: Data, a: Inputs) -> go.Figure:
    queries = [float(q) for q in a["queries"]]
    fig = kf.thumbnail(kf.learned_kernel_figure(a["offsets"], queries, a["kernels"], float(a["best"])))
    return fig.update_layout(margin={"r": 24})  # room for the last x tick label at the right edge


PREVIEWS = {
    "kernel_regression": Preview("Smoothing the data for chapter 1's preview …", _kr_inputs, _kr_figure),
    "masked_training": Preview("Training ℓ for chapter 2's preview …", _masked_inputs, _masked_figure),
    "multihead": Preview("Training the heads for chapter 3's preview …", _heads_inputs, _heads_figure),
    "attention": Preview("Training the attention layer for chapter 4's preview …", _attention_inputs,
                         _attention_figure),
    "in_context": Preview("Pretraining chapter 5's layer for its preview …", _in_context_inputs,
                          _in_context_figure),
}


def _draw(name: str, data: Data) -> go.Figure:
    """The preview ``name`` on ``data``: from the kept inputs where they are this data's, else computed
    under a spinner that names what is being prepared."""
    preview = PREVIEWS[name]
    inputs = preview_store.kept(name, data)
    if inputs is None:
        with st.spinner(preview.preparing):
            inputs = preview.inputs(data)
    return preview.figure(data, inputs)


def kernel_regression(data: Data) -> go.Figure:
    """Chapter 1 as it opens: the Gaussian fit at the post's ℓ_post = 0.25 with its band."""
    return _draw("kernel_regression", data)


def masked_training(data: Data) -> go.Figure:
    """Chapter 2 as it opens: where masked training took ℓ on the exact leave-one-out curve."""
    return _draw("masked_training", data)


def multihead(data: Data) -> go.Figure:
    """Chapter 3's default model: each head's fit and their mixture."""
    return _draw("multihead", data)


def attention(data: Data) -> go.Figure:
    """Chapter 4's default layer: the first head's attention weights of grid queries over the keys."""
    return _draw("attention", data)


def in_context(data: Data) -> go.Figure:
    """Chapter 5 as it opens (its own tasks, whatever the data): the learned window at three queries beside
    Nadaraya–Watson's best fixed window, from the chapter's cached pretraining."""
    return _draw("in_context", data)


def write_kept(path: Path = preview_store.STORE) -> Path:
    """Compute every preview's inputs for ``preview_store.KEPT_DATA`` and write them to ``path``."""
    name, n, seed = preview_store.KEPT_DATA
    data = make_data(preview_store.KEPT_DATA, make_dataset(name, n=n, seed=seed))
    flat = {f"{preview}.{field}": np.asarray(value)
            for preview, p in PREVIEWS.items() for field, value in p.inputs(data).items()}
    np.savez_compressed(path, **flat)
    preview_store.load.cache_clear()
    return path


if __name__ == "__main__":  # python -m kernelviz.app.ui.previews: rewrite the kept inputs
    import logging

    from kernelviz.runtime import jax_setup

    # st.cache_data outside a server warns at every call
    logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)
    jax_setup.set_up()
    print(f"wrote {write_kept()}")
