"""The app's own CSS, in one place: what WCAG 2.1 AA asks of text contrast and of scrollable regions that
Streamlit's theme does not give (``tests/browser/test_axe.py`` runs axe-core on every page to check it).

* Captions: Streamlit draws them at 60 % of the text colour, 4.2:1 on white (AA asks 4.5:1); at 80 % they
  read 8:1 on the light theme's white and more on the dark theme's background.
* Labels of disabled widgets (the sidebar's data on chapter 5, which draws its own tasks): Streamlit greys
  them to 2.4:1; they keep the text colour (the widgets themselves still look and act disabled).
* Display formulas: KaTeX's struts stick out of their box by a few pixels, so each formula was a scrolling
  region (``overflow-x: auto``) that no key could reach; a little padding holds the struts.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["CSS", "apply"]

CSS = """<style>
[data-testid="stCaptionContainer"] { color: inherit !important; opacity: 0.8; }
[data-testid="stWidgetLabel"], [data-testid="stWidgetLabel"] * { color: inherit !important; }
.katex-display { padding: 0 0.3em 0.5em; }
</style>"""


def apply() -> None:
    """Put the CSS on the page (once per run, from app.py)."""
    st.markdown(CSS, unsafe_allow_html=True)
