"""axe-core (bundled in axe-playwright-python) on every page in Chromium: no serious or critical violation of
the WCAG 2.1 A and AA rules, on every page at its defaults in the light and the dark theme, with the
explanation of x* open, with a replay on, in a lesson scene, and in the copy-as-scene dialog; and on a phone
(390 × 844) and at WCAG's reflow width (320 px), where a display formula wider than the column would be a
scrolling region no key reaches."""

from __future__ import annotations

from typing import Any

import pytest

from kernelviz.app.ui.pages import CHAPTERS, SOURCES
from tests.browser.harness import PHONE, RERUN_TIMEOUT_S, StreamlitServer, settled

RULES = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
         "resultTypes": ["violations"]}
STATES = {  # a page in a state the defaults do not show: (path and query, the button pressed there)
    "chapter 1, x* explained": ("/kernel-regression?kr.explain=true&kr.x=1", None),
    "chapter 2, replay on": ("/masked-training?masked.replay=true", None),
    "chapter 4, replay on": ("/dot-product-attention?attn.replay=true", None),
    "a lesson scene": ("/?lesson=from-kernel-regression-to-attention&scene=1", None),
    "a lesson question, revealed": ("/?lesson=from-kernel-regression-to-attention&scene=3", "Reveal"),
    "copy-as-scene dialog": ("/multi-head", "Copy this view as a lesson scene"),
}


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical WCAG 2.1 A/AA violations on the page, one line each."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page, options=RULES).response["violations"]
    return [f"{v['id']} ({v['impact']}): {n['target']} {n.get('failureSummary', '')[:160]}"
            for v in found if v["impact"] in ("serious", "critical") for n in v["nodes"]]


VERDICT = "/Right\\.|Not this time\\.|Spot on\\.|Close\\.|Not quite\\./"


WIDE = {"viewport": {"width": 1280, "height": 900}}
NARROW = {"390 × 844": PHONE, "320 × 640": {**PHONE, "viewport": {"width": 320, "height": 640}}}


def audit(browser: Any, url: str, scheme: str, press: str | None = None, screen: dict = WIDE) -> list[str]:
    context = browser.new_context(**screen, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector('[data-testid="stMain"]', timeout=RERUN_TIMEOUT_S * 1e3)
        settled(page)
        if press is not None:
            page.get_by_role("button", name=press).click()
            page.wait_for_function(f"() => document.querySelector('[role=dialog]') || "
                                   f"{VERDICT}.test(document.body.innerText)", timeout=RERUN_TIMEOUT_S * 1e3)
            settled(page)
        return serious(page)
    finally:
        context.close()


PAGES = {"overview": "/", **{c.title: f"/{c.url}" for c in (*CHAPTERS, SOURCES)}}  # the sidebar's pages
EXPLAINED = ((CHAPTERS[0], "kr."), (CHAPTERS[2], "mh."), (CHAPTERS[3], "attn."))  # the pages with x*
ON_A_PHONE = {**PAGES,
              **{f"{c.title}, x* explained": f"/{c.url}?{p}explain=true&{p}x=1" for c, p in EXPLAINED}}


def test_the_audit_covers_every_page_of_the_sidebar(site_nav: list) -> None:
    assert sorted(path.rstrip("/") for _, path in site_nav) == sorted(p.rstrip("/") for p in PAGES.values())


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_has_no_serious_violation(warm_server: StreamlitServer, browser: Any, name: str,
                                             scheme: str) -> None:
    assert audit(browser, warm_server.url + PAGES[name], scheme) == []


@pytest.mark.parametrize("state", list(STATES))
def test_no_serious_violation_in_other_states(warm_server: StreamlitServer, browser: Any, state: str) -> None:
    path, press = STATES[state]
    assert audit(browser, warm_server.url + path, "light", press) == []


@pytest.mark.parametrize("screen", list(NARROW))
@pytest.mark.parametrize("name", list(ON_A_PHONE))
def test_no_serious_violation_on_a_phone(warm_server: StreamlitServer, browser: Any, name: str,
                                         screen: str) -> None:
    assert audit(browser, warm_server.url + ON_A_PHONE[name], "light", screen=NARROW[screen]) == []
