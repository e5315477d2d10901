"""A replay with the keyboard alone: "Open at step" (a number input, reached by Tab like every control) moves
the replayed chart to any step kept by training, and the chart's accessible name says which step it shows;
Plotly's Play and Pause under the chart are buttons in the tab order that Enter and Space press
(``kernelviz/app/ui/widgets/access.py``). Plotly's frame slider stays out of the keyboard's reach. The code
under a chart opens and closes with Enter."""

from __future__ import annotations

from typing import Any

from tests.browser.harness import (
    FIRST_LOAD_TIMEOUT_S,
    StreamlitServer,
    exception_texts,
    number_input_step_up,
    page_state,
    wait_for_repaint,
    wait_until_drawn,
)
from tests.browser.test_chart_text import figures


def replay_title(page: Any) -> str:
    """The replayed fit's title, as a screen reader reads its figure."""
    (name,) = [n for n in figures(page) if n.startswith(("At the start", "After "))]
    return name.split(".")[0]


def test_a_replay_steps_with_the_keyboard_alone(warm_server: StreamlitServer, page: Any) -> None:
    page.goto(warm_server.url + "/masked-training?masked.replay=true&masked.step=0")
    wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
    assert replay_title(page).startswith("At the start")
    before = page_state(page)["signature"]
    for _ in range(2):  # to step 2: training kept every second step of its 100, so step 1 shows the start
        number_input_step_up(page, "Open at step")  # ArrowUp in the focused field: no mouse
        page.wait_for_timeout(300)
    wait_for_repaint(page, before)
    assert replay_title(page).startswith("After 2 steps")


def _shown_title(page: Any) -> str:
    """The replayed fit's title as drawn now (a frame of the animation sets it)."""
    return page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                         ".map(t => t.textContent)"
                         ".find(t => t.startsWith('At the start') || t.startsWith('After ')) || ''")


def test_play_and_pause_are_buttons_a_key_presses(warm_server: StreamlitServer, page: Any) -> None:
    page.goto(warm_server.url + "/masked-training?masked.replay=true&masked.step=0")
    wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
    play = page.locator('g.updatemenu-button[aria-label="Play the replay"]').first  # the fit's (the CV curve
    pause = page.locator('g.updatemenu-button[aria-label="Pause the replay"]').first  # has a replay too)
    assert play.get_attribute("tabindex") == "0" and play.get_attribute("role") == "button"
    assert _shown_title(page).startswith("At the start")
    play.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                           ".some(t => /^After \\d+ steps/.test(t.textContent))", timeout=10_000)
    pause.focus()
    page.keyboard.press("Space")
    page.wait_for_timeout(400)
    paused = _shown_title(page)
    page.wait_for_timeout(800)
    assert _shown_title(page) == paused  # Pause held it


def test_the_code_under_a_chart_opens_and_closes_with_the_keyboard(warm_server: StreamlitServer,
                                                                     page: Any) -> None:
    """A code expander draws its code only while open (``ui.show_code``): Enter on its title opens it and
    the code arrives; Enter again closes it and the code is gone."""
    page.goto(warm_server.url + "/kernel-regression")
    wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
    box = page.locator('[data-testid="stExpander"]').filter(has_text="The code that ran").first
    code = page.locator('[data-testid="stExpander"] [data-testid="stCode"]')
    assert code.count() == 0
    box.locator("summary").focus()
    page.keyboard.press("Enter")
    box.locator('[data-testid="stCode"]').first.wait_for(timeout=30_000)
    assert "def nadaraya_watson_model(" in box.inner_text()
    box.locator("summary").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('[data-testid=stExpander] [data-testid=stCode]')",
                           timeout=30_000)
    assert exception_texts(page) == []
