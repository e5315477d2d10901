"""kernelviz, the front door: `streamlit run app.py`.

Navigation over a home page and the chapters, the shared data sidebar, and one compile warm-up per server.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

import kernelviz as kv
from kernelviz import _memory, defaults, ui
from kernelviz import figures as kf
from kernelviz.ui import cache, pages

_memory.limit_native_heap()  # before any program runs: a small, unfragmented C heap (see _memory)

st.set_page_config(
    page_title="kernelviz: from kernel regression to attention",
    page_icon=str(Path(__file__).parent / "docs" / "favicon.png"),  # a local file: no icon fetched from a CDN
    layout="wide",
)


class _Runs:
    """How many script runs (of any session) are in progress: the warm-up waits while one is."""

    count = 0
    lock = threading.Lock()

    @classmethod
    @contextmanager
    def running(cls) -> Iterator[None]:
        with cls.lock:
            cls.count += 1
        try:
            yield
        finally:
            with cls.lock:
                cls.count -= 1

    @classmethod
    def busy(cls) -> bool:
        return cls.count > 0


def _warm_up() -> None:
    """Compile every JAX program a session can need; a failure only costs speed, so it is logged."""
    try:
        kv.warmup(yield_to=_Runs.busy)
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


def preview_kernel_regression(data: ui.Data) -> go.Figure:
    """Chapter 1 as it opens: the Gaussian fit at the post's ℓ_post = 0.25 with its band."""
    s = cache.predict(data, cache.start_lengthscale(data), defaults.KERNEL_REGRESSION.kernel)
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
    """Chapter 2 as it opens: where masked training took ℓ on the exact leave-one-out curve."""
    m = defaults.MASKED
    holdout = min(m.holdout, kv.holdout_range(len(data.train))[1])
    view = cache.masked_view(data, m.kernel, holdout, m.steps, m.learning_rate, m.seed)
    return kf.thumbnail(cache.loo_figure(view))


def preview_multihead(data: ui.Data) -> go.Figure:
    """Chapter 3's default model: each head's fit and their mixture."""
    view = cache.heads_preview(data)
    names = [f"head {h + 1}" for h in range(view.head_means.shape[0])]
    fig = kf.heads_fit_figure(data.ds.x, data.ds.y, view.grid, view.head_means, view.mean, None, names)
    return kf.thumbnail(fig)


def preview_attention(data: ui.Data) -> go.Figure:
    """Chapter 4's default layer: the first head's attention weights of grid queries over the keys."""
    heat = cache.attention_preview(data).cross
    fig = kf.heatmap_figure(heat.weights[0], heat.queries, heat.keys, x_title="keys xᵢ", y_title="queries x")
    fig.update_layout(coloraxis_showscale=False)
    return kf.thumbnail(fig)


@dataclass(frozen=True)
class Chapter:
    """One chapter: its page file (its URL path is in ``kernelviz/ui/pages.py``), title, icon, a one-line
    summary and a preview builder."""

    path: str
    title: str
    icon: str
    summary: str
    preview: Callable[[ui.Data], go.Figure]


CHAPTERS = (
    Chapter(
        "pages/1_kernel_regression.py",
        "1 · Kernel regression",
        ":material/show_chart:",
        "Average nearby y values with kernel weights. Move the lengthscale ℓ and watch the fit, its ±2σ band "
        "and the attention-weight heatmap change together.",
        preview_kernel_regression,
    ),
    Chapter(
        "pages/2_masked_training.py",
        "2 · Masked training",
        ":material/model_training:",
        "Learn ℓ instead of choosing it: hold points out, predict them from the rest, follow the gradient. "
        "Compare with the exact leave-one-out optimum; train d2l's parametric pooling w = 1/ℓ as d2l does.",
        preview_masked_training,
    ),
    Chapter(
        "pages/3_multihead.py",
        "3 · Multi-head kernel regression",
        ":material/stacked_line_chart:",
        "Several kernels with their own lengthscales, mixed by learned weights uₕ: the heads of attention.",
        preview_multihead,
    ),
    Chapter(
        "pages/4_attention.py",
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
        "grows attention out of Nadaraya–Watson kernel regression in four steps. Every control retrains the "
        "model live, so you can see what each idea changes."
    )
    st.latex(
        r"\hat f(x) = \sum_{i=1}^n w_i(x)\, y_i, \qquad "
        r"w_i(x) = \frac{K\!\left(\frac{x - x_i}{\ell}\right)}{\sum_{j} K\!\left(\frac{x - x_j}{\ell}\right)}"
        r" = \operatorname{softmax}_i\, \log K\!\left(\tfrac{x - x_i}{\ell}\right)"
    )
    st.markdown(
        "**In order:** (1) kernel regression with a hand-picked lengthscale ℓ; (2) learning ℓ by masked "
        "training, predicting held-out points from the others (a little like BERT's masked tokens), and "
        "d2l's parametric pooling with a learnable w = 1/ℓ; (3) several heads with their own ℓ, mixed by "
        "learned weights; (4) dot-product attention, where the kernel itself is learned. Pick a data set in "
        "the sidebar (or upload your own CSV): every chapter uses it."
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
        "regression” and “Attention pooling”; lecture notes “Attention / Kernel Regression”."
    )


# ---------------------------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------------------------

PAGES = {c.path: pages.page(c.path, title=c.title, icon=c.icon) for c in CHAPTERS}
SOURCES = pages.page("pages/5_sources.py", title="Sources", icon=":material/menu_book:")
page = st.navigation(
    [st.Page(home, title="Overview", icon=":material/home:", default=True), *PAGES.values(), SOURCES]
)

with _Runs.running():
    warm_up_in_background()  # its thread starts its compilations after this run (see _Runs)
    ui.enter_page(page.url_path)  # a link into a page with parameters sets its controls, sidebar included
    data = ui.data_sidebar()
    ui.data_messages(data)
    page.run()
    ui.sync_url()
_memory.release_native_heap()  # XLA's temporaries of this run, freed but still held by the C heap
