"""kernelviz, the front door: `streamlit run app.py`.

Navigation over a home page and the chapters, the shared data sidebar, and one compile warm-up per server.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import kernelviz as kv
from kernelviz import _memory, ui
from kernelviz import figures as kf

_memory.limit_native_heap()  # before any program runs: a small, unfragmented C heap (see _memory)

st.set_page_config(
    page_title="kernelviz: from kernel regression to attention", page_icon=":material/search:", layout="wide"
)


def _warm_up() -> None:
    """Compile every JAX program a session can need; a failure only costs speed, so it is logged."""
    try:
        kv.warmup()
    except Exception:
        logging.getLogger("kernelviz").exception("warm-up failed; programs will compile on first use")
    finally:
        _memory.freeze_long_lived_objects()  # later post-run collections skip modules and programs
        _memory.release_native_heap()  # the compiler's scratch memory


@st.cache_resource(show_spinner=False)
def warm_up_in_background() -> threading.Thread:
    """Start the warm-up once per server process, in a daemon thread.

    The first visitor does not wait for it: a page compiles what it needs on first use (JAX compilation
    is thread-safe), while the thread compiles the rest, so later slider moves never wait for a compile.
    Compiled programs also land in JAX's persistent cache, so a restarted server loads them from disk.
    """
    thread = threading.Thread(target=_warm_up, name="kernelviz-warmup", daemon=True)
    thread.start()
    return thread


# ---------------------------------------------------------------------------------------------------------
# Previews: one small picture per chapter, from the current data
# ---------------------------------------------------------------------------------------------------------


def _default_ell(data: ui.Data) -> float:
    lo, hi = data.ds.domain
    return (hi - lo) / 24.0


def preview_kernel_regression(data: ui.Data) -> go.Figure:
    s = ui.predict(data, _default_ell(data), "gaussian")
    truth = data.truth()
    fig = kf.fit_figure(
        data.ds.x,
        data.ds.y,
        data.grid(),
        [kf.Curve("fit m(x)", s.mean, kf.COLORS["fit"], std=s.std, band_name="m(x) ± 2s(x)")],
        truth=None if truth is None else truth[0],
        x_title="x",
        y_title="y",
    )
    return kf.thumbnail(fig)


def preview_masked_training(data: ui.Data) -> go.Figure:
    lo, hi = data.train.domain
    ells = tuple(ui.log_options((hi - lo) / 300.0, (hi - lo) * 2.0, 8))
    cv = ui.loo_curve(data, "gaussian", ells)
    best = ui.loo_optimum(data, "gaussian")
    return kf.thumbnail(kf.loo_figure(np.asarray(ells), cv, optimum=best))


def preview_multihead(data: ui.Data) -> go.Figure:
    span = data.ds.domain[1] - data.ds.domain[0]
    curves = [
        kf.Curve(f"head ℓ = {ell:.2g}", ui.predict(data, ell, "gaussian").mean, kf.HEAD_COLORS[i])
        for i, ell in enumerate((span / 60.0, span / 12.0, span / 2.5))
    ]
    return kf.thumbnail(kf.fit_figure(data.ds.x, data.ds.y, data.grid(), curves))


def preview_attention(data: ui.Data) -> go.Figure:
    heat = ui.heatmap_weights(data, _default_ell(data), "gaussian", 48)
    fig = kf.heatmap_figure(heat.weights, heat.queries, heat.keys, x_title="keys xᵢ", y_title="queries x")
    fig.update_layout(coloraxis_showscale=False)
    return kf.thumbnail(fig)


@dataclass(frozen=True)
class Chapter:
    """One chapter: its page file, URL path, title, icon, a one-line summary and a preview builder.

    The URL path must differ from the file's own slug ("kernel_regression"): Streamlit also registers the
    files of pages/ by that slug, and a request for it would run the page file alone, without this
    entry point (no sidebar, no warm-up).
    """

    path: str
    url_path: str
    title: str
    icon: str
    summary: str
    preview: Callable[[ui.Data], go.Figure]


CHAPTERS = (
    Chapter(
        "pages/1_kernel_regression.py",
        "kernel-regression",
        "1 · Kernel regression",
        ":material/show_chart:",
        "Average nearby y values with kernel weights. Move the lengthscale ℓ and watch the fit, its ±2σ band "
        "and the attention-weight heatmap change together.",
        preview_kernel_regression,
    ),
    Chapter(
        "pages/2_masked_training.py",
        "masked-training",
        "2 · Masked training",
        ":material/model_training:",
        "Learn ℓ instead of choosing it: hold points out, predict them from the rest, follow the gradient. "
        "Compare with the exact leave-one-out optimum.",
        preview_masked_training,
    ),
    Chapter(
        "pages/3_multihead.py",
        "multi-head",
        "3 · Multi-head kernel regression",
        ":material/stacked_line_chart:",
        "Several kernels with their own lengthscales, mixed by learned weights u_h: the heads of attention.",
        preview_multihead,
    ),
    Chapter(
        "pages/4_attention.py",
        "dot-product-attention",
        "4 · Attention",
        ":material/center_focus_strong:",
        "Replace the distance by a dot product of learned queries and keys: softmax(QKᵀ/√d)V is a kernel "
        "smoother with a learned kernel.",
        preview_attention,
    ),
)


# ---------------------------------------------------------------------------------------------------------
# Home page
# ---------------------------------------------------------------------------------------------------------


def home() -> None:
    st.title("kernelviz: from kernel regression to attention")
    st.markdown(
        "Attention, the heart of the transformer, is a **kernel smoother**: a prediction at a query x is a "
        "weighted average of values yᵢ, with weights that say how similar x is to each key xᵢ. kernelviz "
        "grows "
        "attention out of Nadaraya–Watson kernel regression in four steps. Every control retrains the model "
        "live, so you can see what each idea changes."
    )
    st.latex(
        r"\hat f(x) = \sum_{i=1}^n w_i(x)\, y_i, \qquad "
        r"w_i(x) = \frac{K\!\left(\frac{x - x_i}{\ell}\right)}{\sum_{j} K\!\left(\frac{x - x_j}{\ell}\right)}"
        r" = \operatorname{softmax}_i\, \log K\!\left(\tfrac{x - x_i}{\ell}\right)"
    )
    st.markdown(
        "**In order:** (1) kernel regression with a hand-picked lengthscale ℓ; (2) learning ℓ by masked "
        "training, the same trick as BERT's masked tokens; (3) several heads with their own ℓ, mixed by "
        "learned "
        "weights; (4) dot-product attention, where the kernel itself is learned. Pick a data set in the "
        "sidebar (or upload your own CSV): every chapter uses it."
    )
    data = ui.current_data()
    ui.data_summary(data)
    for row in range(0, len(CHAPTERS), 2):
        cols = st.columns(2)
        for col, ch in zip(cols, CHAPTERS[row : row + 2], strict=False):
            with col, st.container(border=True):
                st.page_link(PAGES[ch.path], label=ch.title, icon=ch.icon)
                st.caption(ch.summary)
                ui.show(
                    ch.preview(data),
                    key=f"home.preview.{Path(ch.path).stem}",
                    filename=f"kernelviz-{Path(ch.path).stem}",
                )
    st.caption(
        "Sources: Paweł Czyż, “From kernel regression to the transformer” (blog post); “Attention as a "
        "kernel smoothing problem” (blog post); Dive into Deep Learning, “Nadaraya–Watson kernel "
        "regression” and “Attention pooling”; lecture notes “Kernel regression → attention”."
    )


# ---------------------------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------------------------

PAGES = {
    c.path: st.Page(c.path, title=c.title, icon=c.icon, url_path=c.url_path) for c in CHAPTERS
}
page = st.navigation([st.Page(home, title="Overview", icon=":material/home:", default=True), *PAGES.values()])

warm_up_in_background()

data = ui.data_sidebar()
ui.data_messages(data)
page.run()
ui.sync_url()
_memory.release_native_heap()  # XLA's temporaries of this run, freed but still held by the C heap
