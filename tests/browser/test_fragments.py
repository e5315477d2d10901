"""Chapter 2 in Chromium: its hold-out size reruns only the training section (a fragment), and its other
controls redraw the pictures outside that section too (``ui.rerun_page``): after either, the page
shows exactly what a new session opened at its URL shows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.harness import (
    BrowserErrors,
    StreamlitServer,
    exception_texts,
    page_state,
    slider_by_label,
    slider_key_towards_middle,
    wait_for_repaint,
    wait_until_drawn,
)

pytestmark = pytest.mark.browser


def change(page: Any, control: str) -> None:
    """Moves one of chapter 2's training controls (a slider by its label, the kernel's select box or the
    seed's number input) and waits for the repaint."""
    before = page_state(page)["signature"]
    main = page.locator('[data-testid="stMain"]')
    if control == "Kernel":
        main.locator('[data-testid="stSelectbox"]').filter(has_text="Kernel").first.click()
        page.get_by_role("option", name="Epanechnikov").click()
    elif control == "Seed":
        box = main.locator('[data-testid="stNumberInput"] input').first  # narrow: no step buttons
        box.fill("2025")
        box.press("Enter")
    else:
        thumb = slider_by_label(page, control)
        thumb.focus()
        page.keyboard.press(slider_key_towards_middle(thumb))
    wait_for_repaint(page, before)


def charts_of_a_new_session(browser: Any, page: Any) -> str:
    other = browser.new_context(viewport=page.viewport_size)
    try:
        fresh = other.new_page()
        fresh.goto(page.url)
        return wait_until_drawn(fresh)["signature"]
    finally:
        other.close()


@pytest.mark.parametrize("control", ["Hold-out size", "Training steps", "Learning rate", "Kernel", "Seed"])
def test_a_training_control_leaves_no_stale_picture(
    warm_server: StreamlitServer, site_nav: list, browser: Any, page: Any, errors: BrowserErrors, control: str
) -> None:
    """The hold-out size reruns its fragment; the other controls' callback reruns the whole page."""
    path = next(p for name, p in site_nav if "Masked training" in name)
    page.goto(warm_server.url + path)
    wait_until_drawn(page)
    change(page, control)
    wait_until_drawn(page)
    assert page_state(page)["signature"] == charts_of_a_new_session(browser, page), control
    assert exception_texts(page) == [] and errors.messages == []
