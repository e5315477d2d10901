"""A replay with the keyboard alone: "Open at step" (a number input, reached by Tab like every control) moves
the replayed chart to any step kept by training, and the chart's accessible name says which step it shows.
(Plotly's own Play / Pause and frame slider under the chart are SVG, out of the keyboard's reach.)"""

from __future__ import annotations

from typing import Any

from tests.browser.harness import (
    FIRST_LOAD_TIMEOUT_S,
    StreamlitServer,
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
