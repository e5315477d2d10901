"""What WCAG 2.1 AA asks that Streamlit does not give, in one place: the app's CSS for contrast and for
scrollable regions (``tests/browser/test_axe.py`` runs axe-core on every page to check it), and the
sidebar's switch that puts each chart's numbers under it as tables (``text.show`` draws them).

* Captions: Streamlit draws them at 60 % of the text colour, 4.2:1 on white (AA asks 4.5:1); at 80 % they
  read 8:1 on the light theme's white and more on the dark theme's background.
* Labels of disabled widgets (the sidebar's data on chapter 5, which draws its own tasks): Streamlit greys
  them to 2.4:1; they keep the text colour (the widgets themselves still look and act disabled).
* Display formulas: KaTeX's struts stick out of their box by a few pixels, so each formula was a scrolling
  region (``overflow-x: auto``) that no key could reach; a little padding holds the struts.
* Display formulas on a narrow screen (at most 640 px): a formula wider than the column was such a region
  too. There they break into lines as TeX breaks a formula in running text, after a relation (=, ∼), a
  binary operator (+, −) or a ``\\allowbreak``, and their type is 10 % smaller, and smaller still below
  390 px (3.7 % of the width), so that every formula fits at the 320 px of WCAG's reflow; a part in braces
  ``{…}`` stays on one line. A formula of rows (``aligned``) cannot break, so its rows are written to fit.
* Touch screens (``pointer: coarse``): every button, choice, checkbox and the sidebar's and menu's buttons
  are at least 44 × 44 px, and a slider's 12 px thumb takes touches 16 px around it (an invisible margin).
* Replays by keyboard: Plotly draws a replay's Play and Pause as SVG that no key reaches. A small script
  (``KEYS``, put beside every chart that has them by ``replay_keys``, run once a page) makes each a
  button in the tab order, with a name, a focus ring and Enter or Space to press it (it looks for new ones
  twice a second); the steps themselves have *Open at step*. Only pages with such a chart carry it: on
  every page it made chapter 3's presses about 10 % slower.
* Narrow screens (at most 640 px, a window made narrow included): chart titles are set at 12 px so that
  they fit the width, and a segmented control's choices (a question's guesses, a section's pictures) wrap
  onto more lines instead of running past the edge, where only a sideways swipe found them.
* Charts on a phone (a browser whose User-Agent says ``Mobi``, as phones' do and tablets' do not,
  ``on_phone``): Plotly's toolbar, which a tap showed over the chart's title, is left out by Plotly's own
  ``displayModeBar`` (``text.show``'s ``config``; Streamlit's full-screen button is one of its buttons);
  and the server does not know the screen's width, so a grid of panels, whose titles and axis titles ran
  into each other in 60–120 px columns, is laid out again for a narrow screen (``kf.themed``'s ``phone``:
  fewer columns, titles in more lines, one x title under a row, thin colour bars).

The selectors and the script rely on Streamlit's and Plotly's insides, named in
``kernelviz/app/ui/platform.py`` with the tests that guard them.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from kernelviz.app.ui import platform
from kernelviz.runtime.i18n import _

__all__ = ["CSS", "KEYS", "NUMBERS", "apply", "numbers_switch", "numbers_wanted", "replay_keys"]

NUMBERS = "a11y.numbers"  # the switch's widget key

_WRAPPED = f'{platform.BUTTON_GROUP} [role="radiogroup"]'  # a segmented control's row of choices
_TOUCHED = (f"{platform.BUTTONS}, {platform.BUTTON_GROUP} button,\n"  # every button, 44 × 44 px
            f"  {platform.EXPAND_SIDEBAR}, {platform.MAIN_MENU} button,\n"
            f"  {platform.STEP_UP}, {platform.STEP_DOWN}")
_TALL = (f"{platform.CHECKBOX} label, {platform.NUMBER_INPUT},\n"  # fields and labels 44 px high
         f"  {platform.SELECTBOX} {platform.SELECT_FIELD}")
_KEYS_BOX = platform.keys_starting("kv-keys")  # ``replay_keys``' containers

CSS = f"""<style>
{platform.CAPTION} {{ color: inherit !important; opacity: 0.8; }}
{platform.WIDGET_LABEL}, {platform.WIDGET_LABEL} * {{ color: inherit !important; }}
{platform.FORMULA} {{ padding: 0 0.3em 0.5em; }}
@media (max-width: 640px) {{
  {platform.FORMULA} {{ font-size: min(0.9em, 3.7vw); }}
  {platform.FORMULA} > {platform.KATEX} {{ white-space: normal; }}
  {platform.PLOT_TITLE} {{ font-size: 12px !important; }}
  {_WRAPPED} {{ flex-wrap: wrap; }}
}}
@media (pointer: coarse) {{
  {_TOUCHED} {{
    min-height: 44px; min-width: 44px; }}
  {_TALL} {{ min-height: 44px; align-items: center; }}
  {platform.SLIDER} {platform.SLIDER_THUMB}::after {{
    content: ""; position: absolute; inset: -16px; }}
}}
{platform.LAYOUT_WRAPPER}:has(> {_KEYS_BOX}), {_KEYS_BOX} {{ display: none; }}
{platform.REPLAY_BUTTON}:focus {{ outline: 3px solid #0072B2; outline-offset: 2px; }}
</style>"""


REPLAY_BUTTON = _("{button} the replay")  # the accessible name of a replay's Play or Pause button

KEYS = platform.replay_keys_script(REPLAY_BUTTON)  # Play and Pause made buttons a key presses


def apply() -> None:
    """Put the CSS on the page (once per run, from app.py)."""
    st.markdown(CSS, unsafe_allow_html=True)


def replay_keys(box: Any, key: str) -> None:
    """Beside chart ``key`` (which has Play and Pause), in ``box``: the script that lets keys press them,
    in a container that takes no room."""
    with box.container(key=f"kv-keys-{key.replace('.', '-')}"):
        st.html(KEYS, unsafe_allow_javascript=True)


def numbers_switch() -> None:
    """In the sidebar: show every chart's numbers as tables under it (what a screen reader's user asks for
    first, and a way to read exact values off any chart)."""
    st.sidebar.toggle(_("Show the numbers under every chart"), key=NUMBERS,
                      help=_("Under each chart, its curves, points, bars and heatmap rows as small tables, "
                             "from the same numbers the chart is drawn from."))


MOBILE = "Mobi"  # in a phone browser's User-Agent, not in a tablet's or a computer's


def on_phone() -> bool:
    """Whether this session's browser is a phone's, by its User-Agent (``MOBILE``)."""
    return MOBILE in (st.context.headers.get("User-Agent") or "")


def numbers_wanted() -> bool:
    return bool(st.session_state.get(NUMBERS))
