"""Every page of the running app in Chromium: drawn without errors, sliders repaint, links restore the view.

Pages are the overview (``/``) and one per file under ``pages/`` (``/kernel_regression``, …), so a chapter is
covered as soon as its file exists. Each test opens its own browser context (a fresh Streamlit session) on the
one server of the test session.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from kvbrowser import (
    SCREENSHOT_DIR,
    BrowserErrors,
    StreamlitServer,
    app_pages,
    choose_option,
    exception_texts,
    full_page_screenshot,
    page_state,
    select_options,
    slider_key_towards_middle,
    slider_label,
    slider_value,
    sliders,
    wait_for_repaint,
    wait_until_drawn,
    widget_values,
)

pytestmark = pytest.mark.browser

# (test id, URL path): the overview is the default page at "/", the chapters follow their file names.
PAGES = [("overview", "/")] + [(url_path, "/" + url_path) for _, url_path in app_pages()]
PAGE_IDS = [name for name, _ in PAGES]


def open_page(page: Any, server: StreamlitServer, path: str) -> dict:
    page.goto(server.url + path)
    return wait_until_drawn(page)


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def assert_clean(page: Any, errors: BrowserErrors) -> None:
    assert exception_texts(page) == [], f"exception box on {page.url}"
    assert errors.messages == [], f"browser console errors on {page.url}: {errors.messages}"


@pytest.mark.parametrize(("name", "path"), PAGES, ids=PAGE_IDS)
def test_page_draws_its_charts_without_errors(
    warm_server: StreamlitServer, page: Any, errors: BrowserErrors, name: str, path: str
) -> None:
    """The page loads, every chart is drawn, there is a title, no exception box and no console error.

    A full-page screenshot is saved to artifacts/screenshots/<page>.png for people to look at.
    """
    state = open_page(page, warm_server, path)
    assert state["charts"] >= 1
    title = page.locator('[data-testid="stMain"] h1').first
    assert title.inner_text().strip(), "page has no title"
    # Every chart has axes with data in it (an empty figure would still count as a drawn chart).
    traces = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')]"
        ".map((gd) => (gd.data || []).length)"
    )
    assert traces and all(n > 0 for n in traces), f"a chart without traces: {traces}"
    full_page_screenshot(page, SCREENSHOT_DIR / f"{name}.png")
    assert_clean(page, errors)


@pytest.mark.parametrize(("name", "path"), PAGES, ids=PAGE_IDS)
def test_every_slider_repaints_the_charts_and_the_url(
    warm_server: StreamlitServer, page: Any, errors: BrowserErrors, name: str, path: str
) -> None:
    """Keying each slider (sidebar and main area) changes its value, the chart data and the URL query."""
    open_page(page, warm_server, path)
    count = sliders(page).count()
    assert count >= 1, "no slider on the page (the sidebar's data-size slider should always be there)"
    moved = []
    i = 0
    while i < sliders(page).count():  # re-counted: a control may reveal others
        thumb = sliders(page).nth(i)
        label, before_value = slider_label(thumb), slider_value(thumb)
        before_url, before = page.url, page_state(page)["signature"]
        key = slider_key_towards_middle(thumb)
        thumb.focus()
        page.keyboard.press(key)
        wait_for_repaint(page, before)
        thumb = sliders(page).nth(i)
        after_value = slider_value(thumb)
        assert after_value != before_value, f"{label!r}: {key} did not move it from {before_value}"
        assert query(page.url) != query(before_url), f"{label!r}: the URL did not follow ({page.url})"
        moved.append((label, before_value, after_value))
        i += 1
    assert len(moved) >= count
    assert_clean(page, errors)


@pytest.mark.parametrize(("name", "path"), PAGES, ids=PAGE_IDS)
def test_copied_url_restores_the_view(
    warm_server: StreamlitServer, browser: Any, page: Any, errors: BrowserErrors, name: str, path: str
) -> None:
    """After moving the first and last slider (End and ArrowLeft), the page's URL opened in a new browser
    context (a new session, no shared state) shows the same widget values and the same chart data."""
    open_page(page, warm_server, path)
    moves = [(0, "End"), (sliders(page).count() - 1, "ArrowLeft")]
    for index, key in moves:
        thumb = sliders(page).nth(index)
        before = page_state(page)["signature"]
        thumb.focus()
        page.keyboard.press(key)
        wait_for_repaint(page, before)
    url = page.url
    assert query(url), f"no query parameters in {url}"
    want_widgets = widget_values(page)
    want_charts = page_state(page)["signature"]

    other = browser.new_context(viewport=page.viewport_size)
    try:
        fresh = other.new_page()
        fresh_errors = BrowserErrors().attach(fresh)
        fresh.goto(url)
        got = wait_until_drawn(fresh)
        assert widget_values(fresh) == want_widgets
        assert got["signature"] == want_charts, "same URL, different chart data"
        assert query(fresh.url) == query(url)
        assert_clean(fresh, fresh_errors)
    finally:
        other.close()
    assert_clean(page, errors)


def kernel_pages() -> list[tuple[str, str]]:
    return [(name, path) for name, path in PAGES if name != "overview"]


@pytest.mark.parametrize(("name", "path"), kernel_pages(), ids=[n for n, _ in kernel_pages()])
def test_every_kernel_choice_repaints(
    warm_server: StreamlitServer, page: Any, errors: BrowserErrors, name: str, path: str
) -> None:
    """On chapters with a "Kernel" select box, each kernel in it can be chosen and redraws the charts
    without an exception (compact kernels may leave gaps; boxcar falls back to a search over ℓ)."""
    open_page(page, warm_server, path)
    widgets = widget_values(page)
    if "Kernel" not in widgets:
        assert not page.locator('[data-testid="stSelectbox"]').filter(has_text="Kernel").count()
        return
    options = select_options(page, "Kernel")
    assert len(options) >= 4, options
    current = widgets["Kernel"]
    for option in [o for o in options if o != current] + [current]:
        before = page_state(page)["signature"]
        choose_option(page, "Kernel", option)
        wait_for_repaint(page, before)
        assert widget_values(page)["Kernel"] == option
    assert_clean(page, errors)


def test_sidebar_navigation_reaches_every_chapter(
    warm_server: StreamlitServer, page: Any, errors: BrowserErrors
) -> None:
    """The sidebar links every page; clicking through them keeps the session's data choice (a sidebar
    slider moved on the overview stays put) and draws each chapter."""
    open_page(page, warm_server, "/")
    links = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    hrefs = [urlsplit(h).path.rstrip("/") or "/" for h in (a.get_attribute("href") for a in links.all())]
    expected = [p for _, p in PAGES]
    assert sorted(hrefs) == sorted(expected), f"sidebar links {hrefs}, page files give {expected}"

    n_slider = page.locator('[data-testid="stSidebar"] input[type="range"]').first
    assert n_slider.count(), "no slider in the sidebar"
    before = page_state(page)["signature"]
    n_slider.focus()
    page.keyboard.press("ArrowLeft")
    wait_for_repaint(page, before)
    sidebar_value = slider_value(n_slider)

    titles = []
    for href in hrefs:
        page.locator(f'[data-testid="stSidebarNavLink"][href$="{href.rstrip("/")}"]').first.click()
        page.wait_for_url(lambda u, href=href: (urlsplit(u).path.rstrip("/") or "/") == href)
        wait_until_drawn(page)
        titles.append(page.locator('[data-testid="stMain"] h1').first.inner_text().strip())
        n_slider = page.locator('[data-testid="stSidebar"] input[type="range"]').first
        assert slider_value(n_slider) == sidebar_value, f"the data choice was lost on {href}"
    assert len(set(titles)) == len(titles), f"two pages share a title: {titles}"
    assert_clean(page, errors)
