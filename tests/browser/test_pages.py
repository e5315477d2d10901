"""Every page of the running app in Chromium: drawn without errors, sliders repaint, links restore the view.

The pages are the overview (the default page, ``/``) and one per file under ``chapters/``, in the sidebar's
order, so a chapter is covered as soon as its file exists; their URLs are read from the sidebar itself.
Each test opens its own browser context (a fresh Streamlit session) on the one server of the test session.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.browser.harness import (
    GROWN_MARGINS_JS,
    QUESTION,
    SCREENSHOT_DIR,
    BrowserErrors,
    StreamlitServer,
    app_pages,
    choose_option,
    exception_texts,
    full_page_screenshot,
    nav_links,
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

PAGES = list(enumerate(app_pages()))  # (position in the sidebar, name): 0 is the overview
PAGE_IDS = [name for _, name in PAGES]
REFERENCE = {"6_sources"}  # pages without controls of their own: a catalogue of links into the chapters
CONTROLLED = [(i, name) for i, name in PAGES if name not in REFERENCE]  # the overview and the chapters
CONTROLLED_IDS = [name for _, name in CONTROLLED]
CHAPTERS = CONTROLLED[1:]
CHAPTER_IDS = CONTROLLED_IDS[1:]


def open_page(page: Any, server: StreamlitServer, site_nav: list[tuple[str, str]], index: int) -> dict:
    assert index < len(site_nav), f"page {index} missing from the sidebar {site_nav}"
    page.goto(server.url + site_nav[index][1])
    return wait_until_drawn(page)


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def assert_clean(page: Any, errors: BrowserErrors) -> None:
    assert exception_texts(page) == [], f"exception box on {page.url}"
    assert errors.messages == [], f"browser console errors on {page.url}: {errors.messages}"


def main_sliders(page: Any) -> Any:
    """The sliders of the page itself (not the shared sidebar); the sidebar's when the page has none."""
    main = page.locator('[data-testid="stMain"]').locator(
        f'input[type="range"]:not({QUESTION} *), [role="slider"]:not({QUESTION} *)')
    return main if main.count() else sliders(page)


def press(page: Any, thumb: Any, key: str) -> str:
    """Presses ``key`` on the slider (turned around at the end it would not leave: ArrowRight at the maximum
    becomes ArrowLeft, End becomes Home) and waits for the repaint; returns the key pressed."""
    if key == "ArrowRight":
        key = slider_key_towards_middle(thumb)
    elif key == "End" and slider_key_towards_middle(thumb) == "ArrowLeft":
        key = "Home"
    before = page_state(page)["signature"]
    thumb.focus()
    page.keyboard.press(key)
    wait_for_repaint(page, before)
    return key


@pytest.mark.parametrize(("index", "name"), PAGES, ids=PAGE_IDS)
def test_page_draws_its_charts_without_errors(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors, index: int, name: str
) -> None:
    """The page loads, every chart is drawn with data, there is a title, no exception box and no console
    error. A full-page screenshot goes to artifacts/screenshots/<page>.png for people to look at."""
    state = open_page(page, warm_server, site_nav, index)
    assert state["charts"] >= 1
    assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip(), "page has no title"
    traces = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')]"
        ".map((gd) => (gd.data || []).length)"
    )
    assert traces and all(n > 0 for n in traces), f"a chart without traces: {traces}"
    grown = page.evaluate(GROWN_MARGINS_JS)
    assert not grown, f"Plotly grew these margins (so drew the chart again), asked → drawn: {grown}"
    full_page_screenshot(page, SCREENSHOT_DIR / f"{name}.png")
    assert_clean(page, errors)


@pytest.mark.parametrize(("index", "name"), CONTROLLED, ids=CONTROLLED_IDS)
def test_every_slider_repaints_the_charts_and_the_url(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors, index: int, name: str
) -> None:
    """Keying each slider of the page (ArrowRight, or ArrowLeft at the maximum) changes its value, the chart
    data and the URL query. (The shared sidebar slider: on the overview and in the navigation test.)"""
    open_page(page, warm_server, site_nav, index)
    count = main_sliders(page).count()
    assert count >= 1, "no slider on the page"
    i = 0
    while i < main_sliders(page).count():  # re-counted: a control may reveal others
        thumb = main_sliders(page).nth(i)
        label, before_value, before_url = slider_label(thumb), slider_value(thumb), page.url
        key = press(page, thumb, "ArrowRight")
        after_value = slider_value(main_sliders(page).nth(i))
        assert after_value != before_value, f"{label!r}: {key} did not move it from {before_value}"
        assert query(page.url) != query(before_url), f"{label!r}: the URL did not follow ({page.url})"
        i += 1
    assert i >= count
    assert_clean(page, errors)


@pytest.mark.parametrize(("index", "name"), CONTROLLED, ids=CONTROLLED_IDS)
def test_copied_url_restores_the_view(
    warm_server: StreamlitServer, site_nav: list, browser: Any, page: Any, errors: BrowserErrors,
    index: int, name: str,
) -> None:
    """After keying the first slider (ArrowRight) and the last one (End/Home), the page's URL opened in a new
    browser context (a new session, nothing shared) shows the same widget values and the same chart data."""
    open_page(page, warm_server, site_nav, index)
    own = page.locator('[data-testid="stMain"]').locator('input[type="range"], [role="slider"]').count() > 0
    press(page, main_sliders(page).first, "ArrowRight")
    # End; Home on the overview, whose only slider is the data size (its end, 5,000 points, is slow).
    press(page, main_sliders(page).last, "End" if own else "Home")
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


@pytest.mark.parametrize(("index", "name"), CHAPTERS, ids=CHAPTER_IDS)
def test_kernel_choice_repaints(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors, index: int, name: str
) -> None:
    """Where a chapter has a "Kernel" select box, another kernel redraws the charts without an exception:
    every kernel on the first chapter; boxcar (no gradient in ℓ, so training falls back to a search) on the
    training chapters, where each choice retrains."""
    open_page(page, warm_server, site_nav, index)
    widgets = widget_values(page)
    if "Kernel" not in widgets:
        assert not [w for w in widgets if "kernel" in w.lower() and not w.startswith("sidebar")]
        return
    options = select_options(page, "Kernel")
    assert len(options) >= 4, options
    current = widgets["Kernel"]
    if index == 1:
        choices = [o for o in options if o != current] + [current]
    else:
        choices = ["Boxcar" if "Boxcar" in options and current != "Boxcar" else options[-1]]
    for option in choices:
        before = page_state(page)["signature"]
        choose_option(page, "Kernel", option)
        wait_for_repaint(page, before)
        assert widget_values(page)["Kernel"] == option
    assert_clean(page, errors)


def test_sidebar_navigation_reaches_every_chapter(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    """The sidebar links the overview and every chapter file; clicking through them draws each page and
    keeps the session's data choice (the shared sidebar slider, moved on the overview, stays put)."""
    open_page(page, warm_server, site_nav, 0)
    links = nav_links(page)
    assert len(links) == len(PAGES), f"sidebar {links}, expected the overview, the chapters and {REFERENCE}"
    assert links[0][1] == "/", "the overview is not the default page"
    assert len({p for _, p in links}) == len(links), f"two links share a URL: {links}"

    n_slider = page.locator('[data-testid="stSidebar"] input[type="range"]').first
    assert n_slider.count(), "no slider in the sidebar"
    press(page, n_slider, "ArrowLeft")
    sidebar_value = slider_value(n_slider)

    titles = []
    anchors = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    for position, (_, path) in enumerate(links):
        anchors.nth(position).click()
        page.wait_for_url(lambda u, path=path: (urlsplit(u).path or "/") == path)
        wait_until_drawn(page)
        titles.append(page.locator('[data-testid="stMain"] h1').first.inner_text().strip())
        n_slider = page.locator('[data-testid="stSidebar"] input[type="range"]').first
        assert slider_value(n_slider) == sidebar_value, f"the data choice was lost on {path}"
    assert len(set(titles)) == len(titles), f"two pages share a title: {titles}"
    assert_clean(page, errors)


def test_a_sources_link_opens_its_chapter_with_the_controls_set(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    """On the Sources page, the link of d2l's nonparametric pooling (the Gaussian with ℓ = 1 on d2l's data)
    opens chapter 1 with that lengthscale and d2l's sample (50 points; the seed 0 is kernelviz's, d2l sets
    none), although the session was on the blog post's data."""
    index = next(i for i, name in PAGES if name == "6_sources")
    open_page(page, warm_server, site_nav, index)
    link = page.locator('a[href*="data.source=d2l&kr.kernel=gaussian&kr.lengthscale=1&"]')
    link.first.click()
    page.wait_for_url(lambda u: urlsplit(u).path.endswith("kernel-regression"))
    wait_until_drawn(page)
    q = query(page.url)
    keys = ("kr.lengthscale", "data.source", "data.n", "data.seed")
    assert [q.get(k) for k in keys] == ["1", "d2l", "50", "0"], q
    w = widget_values(page)
    assert w.get("sidebar: Data set", "").startswith("2 sin x"), w
    assert (w.get("sidebar: Number of points n"), w.get("sidebar: Noise seed")) == ("50", "0"), w
    assert_clean(page, errors)


def test_scrubbing_the_lengthscale_repaints_the_fit_in_the_browser(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    """Chapter 1's chart carries a frame per ℓ: clicking its own slider redraws the fit, its band and the
    title at once, while the page's ℓ control and the URL keep their value (no rerun)."""
    index = next(i for i, name in PAGES if name == "1_kernel_regression")
    open_page(page, warm_server, site_nav, index)
    chart = "document.querySelector('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')"
    before = page.evaluate(f"() => [{chart}.layout.title.text, Array.from({chart}._fullData.at(-1).y)]")
    url_before = query(page.url).get("kr.lengthscale")
    rail_rect = page.locator('[data-testid="stPlotlyChart"] .slider-rail-rect').first
    rail_rect.scroll_into_view_if_needed()
    rail = rail_rect.bounding_box()
    page.mouse.click(rail["x"] + rail["width"] * 0.85, rail["y"] + rail["height"] / 2)
    page.wait_for_function(f"(t) => {chart}.layout.title.text !== t", arg=before[0], timeout=10_000)
    after = page.evaluate(f"() => [{chart}.layout.title.text, Array.from({chart}._fullData.at(-1).y)]")
    assert after[1] != before[1], "the fit did not change"
    assert "ℓ = " in after[0]
    assert query(page.url).get("kr.lengthscale") == url_before
    assert_clean(page, errors)
