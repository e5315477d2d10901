"""Chapters 3, 4 and 5 in Chromium: after a step of one of their sliders (the sidebar's number of points on
chapter 3), the server prepares the next step while it is idle (``kernelviz.app.ui.caching.ahead``), and
that step, drawn from what it prepared, shows what a new session opened at its URL shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.harness import (
    BrowserErrors,
    StreamlitServer,
    exception_texts,
    page_state,
    slider_by_label,
    wait_for_repaint,
    wait_until_drawn,
)
from tests.browser.test_fragments import charts_of_a_new_session
from tests.measure import cpu_seconds, wait_until_idle

pytestmark = pytest.mark.browser

# Settings no other test draws, so the step ahead is computed here, not found in the caches; two steps
# from the end of the slider, so that the second step reaches it (8 heads, 10 points) and asks for nothing
# more.
STEPS = {  # chapter: (URL parameters, the slider stepped twice, the key that steps it)
    "In context": ("?icl.seed=57&icl.steps=2000&icl.heads=6", "Number of heads", "ArrowRight"),
    "Attention": ("?attn.seed=77&attn.steps=2000&attn.heads=6", "Number of heads H", "ArrowRight"),
    "Multi-head": ("?data.seed=91&data.n=30&mh.steps=500", "Number of points n", "ArrowLeft"),
}
WARM_UP_QUIET_S = 5.0  # longer than the warm-up's pause after a run (server.QUIET_S)


def step(page: Any, label: str, key: str) -> None:
    before = page_state(page)["signature"]
    thumb = slider_by_label(page, label)
    thumb.focus()
    page.keyboard.press(key)
    wait_for_repaint(page, before)


def server_cpu_of(server: StreamlitServer, action: Callable[[], object]) -> float:
    """The server's CPU seconds from before ``action`` until it has been idle for a second after it."""
    used = cpu_seconds(server.pid)
    action()
    wait_until_idle(server.pid, quiet=1.0)
    return cpu_seconds(server.pid) - used


@pytest.mark.parametrize("chapter", list(STEPS))
def test_the_next_step_is_prepared_while_idle_and_drawn_from_it(
    warm_server: StreamlitServer, site_nav: list, browser: Any, page: Any, errors: BrowserErrors, chapter: str
) -> None:
    query, slider, key = STEPS[chapter]
    path = next(p for name, p in site_nav if chapter in name)
    page.goto(warm_server.url + path + query)
    wait_until_drawn(page)
    wait_until_idle(warm_server.pid, quiet=WARM_UP_QUIET_S)  # the warm-up has ended
    # 6 → 7 heads (30 → 20 points), trained in the run; then 8 (10), prepared after it
    first = server_cpu_of(warm_server, lambda: step(page, slider, key))
    # 7 → 8 heads (20 → 10 points), from the caches: a fraction of the first (without preparing, more:
    # 8 heads train longer; as long, for the points)
    second = server_cpu_of(warm_server, lambda: step(page, slider, key))
    assert second < 0.5 * first, (first, second)
    wait_until_drawn(page)
    assert page_state(page)["signature"] == charts_of_a_new_session(browser, page)
    assert exception_texts(page) == [] and errors.messages == []
    assert "Traceback" not in warm_server.log_tail(20_000)
