"""A link into a page is the first thing a fresh server sees (a restarted Cloud app, a link in a handout).

Streamlit's first script run on a new server reads the ``pages/`` folder (its older multipage mode) and
shows a "Page not found" notice for a URL path that is not a file name there; app.py's navigation then
opens the linked page all the same, with the link's settings.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.browser.harness import FIRST_LOAD_TIMEOUT_S, VIEWPORT, start_streamlit


def test_a_link_into_a_page_opens_that_page_on_a_fresh_server(browser: Any) -> None:
    server = start_streamlit("app.py")  # no visitor before this one: Streamlit's first script run
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(server.url + "/kernel-regression?data.seed=7&kr.kernel=laplace")
        heading = page.get_by_role("heading", level=1).filter(has_text="Kernel regression")
        heading.wait_for(timeout=FIRST_LOAD_TIMEOUT_S * 1e3)
        page.wait_for_url(lambda u: urlsplit(u).path == "/kernel-regression")
        settings = dict(parse_qsl(urlsplit(page.url).query))
        assert (settings.get("data.seed"), settings.get("kr.kernel")) == ("7", "laplace")
    finally:
        context.close()
        server.stop()
