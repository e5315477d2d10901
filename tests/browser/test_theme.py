"""The charts wear the reader's theme: in the light and in the dark theme (the browser's colour scheme),
every chart's background is its page's and its tick labels are the theme's muted text (``kf.THEMES``, 4.5:1
or more), with no template; after a switch of theme in the app's menu, the next run draws them in the new
theme (``kernelviz/app/figures/theme.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from kernelviz.app.figures import THEMES
from tests.browser.harness import (
    RERUN_TIMEOUT_S,
    StreamlitServer,
    page_state,
    settled,
    slider_by_label,
    wait_for_repaint,
)

CHARTS_JS = """() => {
  const app = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor;
  const charts = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].map(p => ({
    paper: getComputedStyle(p.querySelector('svg.main-svg')).backgroundColor,
    ticks: [...new Set([...p.querySelectorAll('.xtick text, .ytick text')]
      .map(t => getComputedStyle(t).fill))],
    template: p.layout.template ?? null,
  }));
  return {app, charts};
}"""


def rgb(color: str) -> str:
    """``#RRGGBB`` as the browser writes a computed colour."""
    c = color.lstrip("#")
    return "rgb({}, {}, {})".format(*(int(c[i : i + 2], 16) for i in (0, 2, 4)))


def assert_in_theme(found: dict, kind: str) -> None:
    theme = THEMES[kind]
    assert found["app"] == rgb(theme.background), found["app"]
    assert found["charts"], "no chart drawn"
    for chart in found["charts"]:
        assert chart == {"paper": rgb(theme.background), "ticks": [rgb(theme.muted)], "template": None}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_charts_take_the_readers_theme(warm_server: StreamlitServer, browser: Any, scheme: str) -> None:
    context = browser.new_context(color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(warm_server.url + "/kernel-regression")
        page.wait_for_selector('[data-testid="stMain"] .js-plotly-plot', timeout=RERUN_TIMEOUT_S * 1e3)
        settled(page)
        assert_in_theme(page.evaluate(CHARTS_JS), scheme)
    finally:
        context.close()


def test_a_theme_chosen_in_the_menu_reaches_the_charts_on_the_next_run(warm_server: StreamlitServer,
                                                                       browser: Any) -> None:
    context = browser.new_context(color_scheme="light")
    try:
        page = context.new_page()
        page.goto(warm_server.url + "/kernel-regression")
        page.wait_for_selector('[data-testid="stMain"] .js-plotly-plot', timeout=RERUN_TIMEOUT_S * 1e3)
        settled(page)
        page.get_by_test_id("stMainMenu").click()
        page.get_by_role("menuitemradio", name="Dark").click()
        page.keyboard.press("Escape")
        before = page.evaluate(CHARTS_JS)
        assert before["charts"][0]["paper"] == rgb(THEMES["light"].background)  # drawn before the switch
        before = page_state(page)["signature"]
        thumb = slider_by_label(page, "Lengthscale ℓ")
        thumb.focus()
        page.keyboard.press("ArrowRight")
        wait_for_repaint(page, before)
        settled(page)
        assert_in_theme(page.evaluate(CHARTS_JS), "dark")
    finally:
        context.close()
