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
* Phones (a touch screen at most 640 px wide): Plotly's toolbar, which a tap shows over the chart's title,
  is not drawn (Streamlit's own full-screen button stays). On every screen that narrow, a window made
  narrow included, chart titles are set at 12 px so that they fit the width, and a segmented control's
  choices (a question's guesses, a section's pictures) wrap onto more lines instead of running past the
  edge, where only a sideways swipe found them.
* Charts on a phone (a browser whose User-Agent says ``Mobi``, as phones' do and tablets' do not,
  ``on_phone``): the server does not know the screen's width, so a grid of panels, whose titles and axis
  titles ran into each other in 60–120 px columns, is laid out again for a narrow screen (``kf.themed``'s
  ``phone``: fewer columns, titles in more lines, one x title under a row, thin colour bars).
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from kernelviz.runtime.i18n import _

__all__ = ["CSS", "KEYS", "NUMBERS", "apply", "numbers_switch", "numbers_wanted", "replay_keys"]

NUMBERS = "a11y.numbers"  # the switch's widget key

CSS = """<style>
[data-testid="stCaptionContainer"] { color: inherit !important; opacity: 0.8; }
[data-testid="stWidgetLabel"], [data-testid="stWidgetLabel"] * { color: inherit !important; }
.katex-display { padding: 0 0.3em 0.5em; }
@media (max-width: 640px) {
  .katex-display { font-size: min(0.9em, 3.7vw); }
  .katex-display > .katex { white-space: normal; }
  .js-plotly-plot .gtitle { font-size: 12px !important; }
  [data-testid="stButtonGroup"] [role="radiogroup"] { flex-wrap: wrap; }
}
@media (pointer: coarse) {
  [data-testid^="stBaseButton-"], [data-testid="stButtonGroup"] button,
  [data-testid="stExpandSidebarButton"], [data-testid="stMainMenu"] button,
  [data-testid="stNumberInputStepUp"], [data-testid="stNumberInputStepDown"] {
    min-height: 44px; min-width: 44px; }
  [data-testid="stCheckbox"] label, [data-testid="stNumberInputContainer"],
  [data-testid="stSelectbox"] [data-baseweb="select"] > div { min-height: 44px; align-items: center; }
  [data-testid="stSlider"] [data-rac]:has(> div > input[type="range"])::after {
    content: ""; position: absolute; inset: -16px; }
}
[data-testid="stLayoutWrapper"]:has(> [class*="st-key-kv-keys"]), [class*="st-key-kv-keys"] { display: none; }
.js-plotly-plot g.updatemenu-button:focus { outline: 3px solid #0072B2; outline-offset: 2px; }
@media (pointer: coarse) and (max-width: 640px) {
  .js-plotly-plot .modebar-container { display: none !important; }
}
</style>"""


REPLAY_BUTTON = _("{button} the replay")  # the accessible name of a replay's Play or Pause button

KEYS = """<script>
(() => {
  if (window.kvReplayKeys) return;  // once a page: the timer below finds every chart drawn later
  window.kvReplayKeys = true;
  const press = (button, event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    button.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  };
  const reach = () => document.querySelectorAll(".js-plotly-plot g.updatemenu-button:not([tabindex])")
    .forEach(button => {
      button.setAttribute("tabindex", "0");
      button.setAttribute("role", "button");
      const label = button.textContent.trim();  // Play or Pause
      button.setAttribute("aria-label", __REPLAY_BUTTON__.replace("{button}", () => label));
      button.addEventListener("keydown", event => press(button, event));
    });
  // a look twice a second: a MutationObserver on the page made every chart's drawing 12 % slower
  setInterval(reach, 500);
  reach();
})();
</script>""".replace("__REPLAY_BUTTON__", json.dumps(REPLAY_BUTTON, ensure_ascii=False), 1)


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
