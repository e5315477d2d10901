"""Words and figures on the page: titles, prompts, spinners, escaped user text and Plotly charts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import plotly.graph_objects as go
import streamlit as st

from kernelviz import figures as kf

__all__ = ["busy", "chapter_header", "md_escape", "show", "try_this"]

_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|$~:")


def md_escape(text: object) -> str:
    """``text`` with every Markdown/LaTeX/HTML special character backslash-escaped, for user strings."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def chapter_header(title: str, *, lead: str, source: str) -> None:
    """Page title, one paragraph saying what the chapter shows, and which source it follows."""
    st.title(title)
    st.markdown(lead)
    st.caption(f"Follows: {source}")


def try_this(prompts: Sequence[str]) -> None:
    """The closing "Try this" list: two or three experiments for the class."""
    st.subheader("Try this")
    st.markdown("\n".join(f"{i}. {p}" for i, p in enumerate(prompts, 1)))


@contextmanager
def busy(text: str) -> Iterator[None]:
    """A spinner that says what the long-running work is doing (with elapsed time)."""
    with st.spinner(text, show_time=True):
        yield


def show(fig: go.Figure, key: str, filename: str | None = None) -> None:
    """Draw a Plotly figure with the Streamlit theme (light or dark) and a PNG download in the modebar."""
    st.plotly_chart(fig, key=key, theme="streamlit", config=kf.png_config(filename or key.replace(".", "-")))
