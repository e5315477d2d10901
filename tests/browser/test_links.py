"""A link into a page is the first thing a fresh server sees (a restarted Cloud app, a link in a handout).

Streamlit takes an app with a ``pages/`` folder beside its main script for its older multipage layout until
the app's first run has named its pages, and showed a "Page not found" notice over any deep link on a fresh
server (with the keyboard's focus trapped in its Close button). kernelviz's chapters live in ``chapters/``,
so the first run is app.py's own navigation: the linked page opens with its settings and no notice.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.browser.harness import FIRST_LOAD_TIMEOUT_S, VIEWPORT, start_streamlit, wait_until_drawn

LINKS = {  # a chapter with its settings, and a lesson scene: (path, heading, settings kept)
    "chapter": ("/kernel-regression?data.seed=7&kr.kernel=laplace", "Kernel regression",
                {"data.seed": "7", "kr.kernel": "laplace"}),
    "lesson": ("/?lesson=ten-minutes&scene=2", "Too small a window follows the noise",
               {"lesson": "ten-minutes", "scene": "2"}),
}


@pytest.mark.parametrize("link", list(LINKS))
def test_a_link_opens_its_page_on_a_fresh_server_with_no_notice(browser: Any, link: str) -> None:
    path, title, kept = LINKS[link]
    server = start_streamlit("app.py")  # no visitor before this one: Streamlit's first script run
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(server.url + path)
        page.get_by_role("heading").filter(has_text=title).first.wait_for(timeout=FIRST_LOAD_TIMEOUT_S * 1e3)
        wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
        settings = dict(parse_qsl(urlsplit(page.url).query))
        assert {k: settings.get(k) for k in kept} == kept
        assert page.get_by_text("Page not found").count() == 0
        assert page.get_by_role("dialog").count() == 0  # nothing holds the keyboard's focus
    finally:
        context.close()
        server.stop()
