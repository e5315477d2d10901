"""Widget helpers: find, read and key sliders, read every widget's value, open and pick from select boxes."""

from __future__ import annotations

import json
import re
from typing import Any

from .probes import WIDGETS_JS

QUESTION = '[class*="st-key-kv-question"]'  # a question's box: its guess is not a control of the view


def sliders(page: Any) -> Any:
    """Every slider thumb a visitor can move on the page to change the view (main area and sidebar; not the
    disabled ones, nor a question's guess), as a Playwright locator."""
    return page.locator(f'[data-testid="stApp"] [role="slider"]:not([aria-disabled="true"], {QUESTION} *),'
                        f' [data-testid="stApp"] input[type="range"]:not([disabled], {QUESTION} *)')


def slider_by_label(page: Any, label: str) -> Any:
    """The (first) slider thumb whose accessible name is ``label``, e.g. "Hold-out size"."""
    # Not get_by_role: Streamlit's thumb is labelled by itself and by its group, so its accessible name
    # is the label twice ("Width Width"); the aria-label attribute holds the label once.
    name = json.dumps(label, ensure_ascii=False)  # as written: CSS does not read JSON's \u escapes
    return page.locator(
        f'[data-testid="stApp"] input[type="range"][aria-label={name}],'
        f' [data-testid="stApp"] [role="slider"][aria-label={name}]'
    ).first


def number_input_step_up(page: Any, label: str) -> None:
    """One step up of the (first) number input labelled ``label``: ArrowUp in its field, which Streamlit sends
    at once (its + and − buttons are hidden where the field is narrow)."""
    name = json.dumps(label, ensure_ascii=False)  # as written: CSS does not read JSON's \u escapes
    page.locator(f'[data-testid="stApp"] [data-testid="stNumberInput"] input[aria-label={name}]').first.press(
        "ArrowUp"
    )


def slider_label(thumb: Any) -> str:
    return thumb.get_attribute("aria-label") or thumb.evaluate(
        "(el) => el.closest('[data-testid=\"stSlider\"]')?.querySelector('label')?.innerText || ''"
    )


def slider_value(thumb: Any) -> str:
    """The slider's value as shown to the user (aria-valuetext, e.g. "0.50"), falling back to the number."""
    return (
        thumb.get_attribute("aria-valuetext")
        or thumb.get_attribute("aria-valuenow")
        or thumb.evaluate("(el) => String(el.value ?? '')")
    )


def slider_key_towards_middle(thumb: Any) -> str:
    """ArrowRight, or ArrowLeft when the thumb already sits at its maximum: the press always moves it."""
    info = thumb.evaluate(
        "(el) => ({v: Number(el.getAttribute('aria-valuenow') ?? el.value),"
        " max: Number(el.getAttribute('aria-valuemax') ?? el.max)})"
    )
    return "ArrowLeft" if info["v"] >= info["max"] else "ArrowRight"


def slider_values(page: Any) -> dict[str, str]:
    """Label → displayed value of every slider on the page."""
    out: dict[str, str] = {}
    for thumb in sliders(page).all():
        out[slider_label(thumb)] = slider_value(thumb)
    return out


def widget_values(page: Any) -> dict[str, str]:
    """Label → displayed value of every widget on the page (see WIDGETS_JS)."""
    return page.evaluate(WIDGETS_JS)


def _open_select(page: Any, label: str) -> Any:
    """Opens the list of the select box labelled ``label``; returns the locator of its options."""
    box = page.locator('[data-testid="stApp"] [data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=label)
    ).first
    # Streamlit's select box is a combo box with an "Open" button (older releases: a BaseWeb select).
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    opener = box.locator('button[aria-haspopup="listbox"], [data-baseweb="select"]').first
    options = page.get_by_role("option")
    for attempt in range(3):  # a click that lands while the page scrolls may not open the list
        opener.scroll_into_view_if_needed()
        opener.click()
        try:
            options.first.wait_for(timeout=5000)
            return options
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    return options


def choose_option(page: Any, label: str, option: str) -> None:
    """Opens the select box labelled ``label`` and picks the option whose text is ``option``."""
    _open_select(page, label).filter(has_text=re.compile(rf"^\s*{re.escape(option)}\s*$")).first.click()


def select_options(page: Any, label: str) -> list[str]:
    """The option texts of the select box labelled ``label`` (opens it, reads, closes with Escape)."""
    texts = [t.strip() for t in _open_select(page, label).all_inner_texts()]
    page.keyboard.press("Escape")
    return texts
