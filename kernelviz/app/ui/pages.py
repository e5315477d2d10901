"""The one registry of pages: each chapter's file, URL path, title, icon, summary and home-page preview.

app.py's navigation, the home page and every link to a page (the Sources page's) read it. A URL path differs
from the file's own slug ("kernel_regression"), which Streamlit would otherwise use, so that a link copied
from any page opens through app.py (sidebar, warm-up) at a readable address.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from kernelviz.app.ui import previews
from kernelviz.app.ui.widgets.sidebar import Data
from kernelviz.runtime.i18n import _

__all__ = ["CHAPTERS", "OWN_DATA_URLS", "PAGE_URLS", "SOURCES", "Chapter", "page"]


@dataclass(frozen=True)
class Chapter:
    """One page: its file, URL path, title, Material icon, and for a chapter a one-line summary, the
    builder of its home-page preview and whether it uses the sidebar's data set. The file and URL path
    identify the page; the title and summary are only shown (in the server's language)."""

    path: str
    url: str
    title: str
    icon: str
    summary: str = ""
    preview: Callable[[Data], go.Figure] | None = None
    uses_data: bool = True


CHAPTERS = (
    Chapter(
        "chapters/1_kernel_regression.py", "kernel-regression", _("1 · Kernel regression"),
        ":material/show_chart:",
        _("Average nearby y values with kernel weights. Move the lengthscale ℓ and watch the fit, its ±2σ "
          "band and the attention-weight heatmap change together."),
        previews.kernel_regression,
    ),
    Chapter(
        "chapters/2_masked_training.py", "masked-training", _("2 · Masked training"),
        ":material/model_training:",
        _("Learn ℓ instead of choosing it: hold points out, predict them from the rest, follow the gradient. "
          "Compare with the exact leave-one-out optimum; train d2l's parametric pooling w = 1/ℓ as d2l "
          "does."),
        previews.masked_training,
    ),
    Chapter(
        "chapters/3_multihead.py", "multi-head", _("3 · Multi-head kernel regression"),
        ":material/stacked_line_chart:",
        _("Several kernels with their own lengthscales, mixed by learned weights uₕ: the heads of "
          "attention."),
        previews.multihead,
    ),
    Chapter(
        "chapters/4_attention.py", "dot-product-attention", _("4 · Attention"),
        ":material/center_focus_strong:",
        _("Replace the distance by a dot product of learned queries and keys: softmax(QKᵀ/√d)V is a kernel "
          "smoother with a learned kernel."),
        previews.attention,
    ),
    Chapter(
        "chapters/5_in_context.py", "in-context", _("5 · In context"), ":material/school:",
        _("Pretrain one attention layer on many small regression tasks: on a new task it predicts from the "
          "prompt alone, and can become Nadaraya–Watson with a window suited to the family."),
        previews.in_context,
        uses_data=False,
    ),
)
SOURCES = Chapter("chapters/6_sources.py", "sources", _("Sources"), ":material/menu_book:")
PAGE_URLS = {c.path: c.url for c in (*CHAPTERS, SOURCES)}
OWN_DATA_URLS = frozenset(c.url for c in CHAPTERS if not c.uses_data)  # pages whose sidebar data is disabled


def page(path: str, **kwargs: object) -> st.Page:
    """``st.Page`` for the file ``path`` at its URL path (title, icon … in ``kwargs``)."""
    return st.Page(path, url_path=PAGE_URLS[path], **kwargs)
