"""What WCAG 2.1 AA asks that Streamlit does not give, in one place: the app's CSS for contrast and for
scrollable regions (``tests/browser/test_axe.py`` runs axe-core on every page to check it), and the
sidebar's switch that puts each chart's numbers under it as tables (``text.show`` draws them).

* Captions: Streamlit draws them at 60 % of the text colour, 4.2:1 on white (AA asks 4.5:1); at 80 % they
  read 8:1 on the light theme's white and more on the dark theme's background.
* Labels of disabled widgets (the sidebar's data on chapter 5, which draws its own tasks): Streamlit greys
  them to 2.4:1; they keep the text colour (the widgets themselves still look and act disabled).
* Display formulas: KaTeX's struts stick out of their box by a few pixels, so each formula was a scrolling
  region (``overflow-x: auto``) that no key could reach; a little padding holds the struts.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["CSS", "NUMBERS", "apply", "numbers_switch", "numbers_wanted"]

NUMBERS = "a11y.numbers"  # the switch's widget key

CSS = """<style>
[data-testid="stCaptionContainer"] { color: inherit !important; opacity: 0.8; }
[data-testid="stWidgetLabel"], [data-testid="stWidgetLabel"] * { color: inherit !important; }
.katex-display { padding: 0 0.3em 0.5em; }
</style>"""


def apply() -> None:
    """Put the CSS on the page (once per run, from app.py)."""
    st.markdown(CSS, unsafe_allow_html=True)


def numbers_switch() -> None:
    """In the sidebar: show every chart's numbers as tables under it (what a screen reader's user asks for
    first, and a way to read exact values off any chart)."""
    st.sidebar.toggle("Show the numbers under every chart", key=NUMBERS,
                      help="Under each chart, its curves, points, bars and heatmap rows as small tables, "
                      "from the same numbers the chart is drawn from.")


def numbers_wanted() -> bool:
    return bool(st.session_state.get(NUMBERS))
