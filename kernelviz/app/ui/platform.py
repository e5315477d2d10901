"""What kernelviz relies on inside Streamlit and Plotly that neither promises as an API, in one module: the
frontend's ``data-testid`` names and ``st-key-*`` classes its CSS is keyed to, Plotly.js's and KaTeX's own
classes, the script that makes a replay's Play and Pause keyboard buttons, and what Streamlit does with a
figure. An upgrade that renames one of them breaks a feature without an error, so each name says what it
is for and which test fails once it stops matching; ``tests/browser/test_platform.py`` also loads a view
where each selector is used, checks that it still matches something there (``test_selectors_match``), and
that every test named here exists.

What a public option does is not here: a phone's Plotly toolbar is left out by ``st.plotly_chart``'s
``config`` (``displayModeBar``, ``kernelviz.app.ui.widgets.text.show``), the charts carry their theme
themselves (``theme=None``), and a grid of panels places its traces by its axes' names
(``kernelviz.app.figures.styling.Panels``).

The Plotly internals the figures use live beside them, in ``kernelviz.app.figures`` (which never imports
Streamlit, as ``tests/test_layers.py`` checks, while importing this module imports it), and are named here:
``unchecked`` and ``binary_arrays`` (``kernelviz/app/figures/styling.py``), ``Sent`` and ``SELECTABLE``
(``kernelviz/app/figures/theme.py``).
"""

from __future__ import annotations

import json

from kernelviz.app.figures.styling import binary_arrays, unchecked
from kernelviz.app.figures.theme import SELECTABLE, Sent

__all__ = [
    "BUTTONS",
    "BUTTON_GROUP",
    "CAPTION",
    "CHECKBOX",
    "EXPAND_SIDEBAR",
    "FORMULA",
    "KATEX",
    "LAYOUT_WRAPPER",
    "MAIN_BLOCK",
    "MAIN_MENU",
    "NUMBER_INPUT",
    "PLOT",
    "PLOT_TITLE",
    "REPLAY_BUTTON",
    "SELECTABLE",
    "SELECTBOX",
    "SELECT_FIELD",
    "SLIDER",
    "SLIDER_THUMB",
    "STEP_DOWN",
    "STEP_UP",
    "WIDGET_LABEL",
    "Sent",
    "binary_arrays",
    "key_class",
    "keys_starting",
    "replay_keys_script",
    "testid",
    "unchecked",
]


# Streamlit's frontend: its elements' ``data-testid`` names, and the classes of keyed elements --------------

# Streamlit's elements by their ``data-testid``: test_platform.py::test_selectors_match
def testid(name: str) -> str:
    """The CSS selector of Streamlit's elements whose ``data-testid`` is ``name``."""
    return f'[data-testid="{name}"]'


# What is drawn with ``key=``, by its class: test_platform.py::test_presenter_look
def key_class(key: str) -> str:
    """The selector of the container or element drawn with ``key=key`` (its class ``st-key-<key>``)."""
    return f".st-key-{key}"


# Every keyed element whose key starts so: test_platform.py::test_keys_box
def keys_starting(prefix: str) -> str:
    """The selector of every container or element whose key starts with ``prefix``."""
    return f'[class*="st-key-{prefix}"]'


# Captions, at 80 % of the text colour (4.5:1): test_axe.py::test_every_page_has_no_serious_violation
CAPTION = testid("stCaptionContainer")
# A widget's label, the text colour when disabled: test_axe.py::test_every_page_has_no_serious_violation
WIDGET_LABEL = testid("stWidgetLabel")
# A segmented control, wrapped when narrow: test_phone.py::test_a_phone_can_use_it_with_a_thumb
BUTTON_GROUP = testid("stButtonGroup")
# Every kind of button, 44 px on a touch screen: test_phone.py::test_a_phone_can_use_it_with_a_thumb
BUTTONS = '[data-testid^="stBaseButton-"]'
# The header's button that opens the sidebar, 44 px: test_platform.py::test_header_buttons
EXPAND_SIDEBAR = testid("stExpandSidebarButton")
# The header's menu, its button 44 px: test_platform.py::test_header_buttons
MAIN_MENU = testid("stMainMenu")
# A number input's +, 44 px: test_phone.py::test_a_phone_can_use_it_with_a_thumb
STEP_UP = testid("stNumberInputStepUp")
# A number input's −, 44 px: test_phone.py::test_a_phone_can_use_it_with_a_thumb
STEP_DOWN = testid("stNumberInputStepDown")
# A checkbox or toggle, its label 44 px high: test_platform.py::test_fields_take_a_thumb
CHECKBOX = testid("stCheckbox")
# A number input's field, 44 px high: test_platform.py::test_fields_take_a_thumb
NUMBER_INPUT = testid("stNumberInputContainer")
# A select box: test_platform.py::test_fields_take_a_thumb
SELECTBOX = testid("stSelectbox")
# The field in a select box (react-aria's group of its input and button), 44 px high:
# test_platform.py::test_fields_take_a_thumb
SELECT_FIELD = '[data-rac][role="group"]'
# A slider: test_phone.py::test_a_phone_can_use_it_with_a_thumb
SLIDER = testid("stSlider")
# A slider's thumb, touched around it: test_phone.py::test_a_phone_can_use_it_with_a_thumb
SLIDER_THUMB = '[data-rac]:has(> div > input[type="range"])'
# The box of a keyed container, hidden for the replay keys: test_platform.py::test_keys_box
LAYOUT_WRAPPER = testid("stLayoutWrapper")
# The main column, its room in the presenter and the join page: test_platform.py::test_presenter_look
MAIN_BLOCK = testid("stMainBlockContainer")


# Plotly.js's and KaTeX's own classes in the page -----------------------------------------------------------

# A chart as Plotly draws it: test_keyboard.py::test_play_and_pause_are_buttons_a_key_presses
PLOT = ".js-plotly-plot"
# A chart's title, 12 px on a narrow screen: test_phone.py::test_a_phone_can_use_it_with_a_thumb
PLOT_TITLE = f"{PLOT} .gtitle"
# A replay's Play or Pause: test_keyboard.py::test_play_and_pause_are_buttons_a_key_presses
REPLAY_BUTTON = f"{PLOT} g.updatemenu-button"
# A display formula, padded, in lines when narrow: test_axe.py::test_no_serious_violation_on_a_phone
FORMULA = ".katex-display"
# A formula's type, larger on a lesson's stage: test_platform.py::test_presenter_look
KATEX = ".katex"


# Scripts put in the page ----------------------------------------------------------------------------------

REPLAY_POLL_MS = 500  # how often the replay keys' script looks for new Play and Pause buttons

_REPLAY_KEYS = """<script>
(() => {
  if (window.kvReplayKeys) return;  // once a page: the timer below finds every chart drawn later
  window.kvReplayKeys = true;
  const press = (button, event) => {
    if (event.key !== "Enter" && event.key !== " ") return;
    event.preventDefault();
    button.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  };
  const reach = () => document.querySelectorAll(__BUTTONS__)
    .forEach(button => {
      button.setAttribute("tabindex", "0");
      button.setAttribute("role", "button");
      const label = button.textContent.trim();  // Play or Pause
      button.setAttribute("aria-label", __REPLAY_BUTTON__.replace("{button}", () => label));
      button.addEventListener("keydown", event => press(button, event));
    });
  // a look twice a second: a MutationObserver on the page made every chart's drawing 12 % slower
  setInterval(reach, __POLL_MS__);
  reach();
})();
</script>"""


# Play and Pause made buttons: test_keyboard.py::test_play_and_pause_are_buttons_a_key_presses
def replay_keys_script(name: str) -> str:
    """The script (for ``st.html``) that makes every replay's Play and Pause a button in the tab order that
    Enter and Space press, named ``name`` with ``{button}`` replaced by the button's text. It runs once a
    page and looks for new buttons every ``REPLAY_POLL_MS`` ms (``REPLAY_BUTTON`` without a tab index):
    Plotly draws a chart's buttons after Streamlit has mounted it, and again as it redraws, and neither
    says so in an event the page can hear (a MutationObserver would, at 12 % of every chart's drawing;
    Plotly's own ``plotly_afterplot`` needs each chart's element, which comes and goes with no event
    either)."""
    return (_REPLAY_KEYS.replace("__BUTTONS__", json.dumps(f"{REPLAY_BUTTON}:not([tabindex])"), 1)
            .replace("__REPLAY_BUTTON__", json.dumps(name, ensure_ascii=False), 1)
            .replace("__POLL_MS__", str(REPLAY_POLL_MS), 1))


# Named here, defined beside the figures (see the module's docstring):
# ``Sent``, read by Streamlit's ``to_dict``: test_theme.py::test_charts_take_the_readers_theme
# ``SELECTABLE``, Streamlit's clicks: test_second_draw.py::test_a_charts_second_draw_changes_only_its_width
# ``unchecked``, Plotly's ``_validate=False``: test_platform.py::test_plotly_internals
# ``binary_arrays``, Plotly's typed arrays: test_platform.py::test_plotly_internals
