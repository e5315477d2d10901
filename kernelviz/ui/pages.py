"""Where each page lives: its file and its URL path, shared by app.py's navigation and every link to a page.

A URL path differs from the file's own slug ("kernel_regression"), which Streamlit would otherwise use,
so that a link copied from any page opens through app.py (sidebar, warm-up) at a readable address.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["PAGE_URLS", "page"]

PAGE_URLS = {
    "pages/1_kernel_regression.py": "kernel-regression",
    "pages/2_masked_training.py": "masked-training",
    "pages/3_multihead.py": "multi-head",
    "pages/4_attention.py": "dot-product-attention",
    "pages/5_sources.py": "sources",
}


def page(path: str, **kwargs: object) -> st.Page:
    """``st.Page`` for the file ``path`` at its URL path (title, icon … in ``kwargs``)."""
    return st.Page(path, url_path=PAGE_URLS[path], **kwargs)
