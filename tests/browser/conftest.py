"""Real-browser fixtures: one `streamlit run app.py` and one Chromium per test session.

The browser tests drive Debian's Chromium (``/usr/bin/chromium``) through Playwright's sync API. Without
Chromium or Playwright they are skipped with a reason, except under ``CI=true``, where they fail instead:
CI must never pass by skipping them. The helpers the fixtures and tests use live in
``tests/browser/harness/``, which the scripts in ``benchmarks/`` import too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.harness import (
    FIRST_LOAD_TIMEOUT_S,
    REPO_ROOT,
    RERUN_TIMEOUT_S,
    VIEWPORT,
    BrowserErrors,
    StreamlitServer,
    browser_unavailable_reason,
    in_ci,
    launch_chromium,
    nav_links,
    start_streamlit,
    wait_until_drawn,
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks every test in this folder ``browser`` (so ``-m "not browser"`` leaves them all out), and skips
    them where Chromium or Playwright is missing, unless CI=true (then they fail)."""
    here = REPO_ROOT / "tests" / "browser"
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.browser)
    reason = browser_unavailable_reason()
    if reason is None or in_ci():
        return
    skip = pytest.mark.skip(reason=f"browser test skipped: {reason} (under CI=true this is a failure)")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def streamlit_server() -> Iterator[StreamlitServer]:
    """One `streamlit run app.py` for the whole session, stopped (terminate, then kill) at the end."""
    reason = browser_unavailable_reason()
    if reason is not None:
        pytest.fail(f"CI=true requires the browser tests to run, but {reason}", pytrace=False)
    if not (REPO_ROOT / "app.py").exists():
        pytest.fail("app.py is missing: nothing to test in the browser", pytrace=False)
    server = start_streamlit("app.py")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance: Any) -> Iterator[Any]:
    """One Chromium for the whole session; each test opens its own context (cookies, storage, tabs)."""
    reason = browser_unavailable_reason()
    if reason is not None:
        pytest.fail(f"CI=true requires the browser tests to run, but {reason}", pytrace=False)
    b = launch_chromium(playwright_instance)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="session")
def site_nav(streamlit_server: StreamlitServer, browser: Any) -> list[tuple[str, str]]:
    """The sidebar's (label, URL path) links, read once the first page has been drawn (so the one-off
    warm-up is not charged to any single test)."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(streamlit_server.url + "/")
        wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
        return nav_links(page)
    finally:
        context.close()


@pytest.fixture(scope="session")
def warm_server(streamlit_server: StreamlitServer, site_nav: list[tuple[str, str]]) -> StreamlitServer:
    """The server after its first page has been drawn."""
    return streamlit_server


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.set_default_timeout(RERUN_TIMEOUT_S * 1e3)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def errors() -> BrowserErrors:
    return BrowserErrors()


@pytest.fixture
def page(context: Any, errors: BrowserErrors) -> Any:
    """A fresh tab whose console errors and uncaught exceptions end up in ``errors``."""
    p = context.new_page()
    errors.attach(p)
    return p
