"""Click and replay in Chromium: on chapter 1 a click on a data point of the fit explains the fit there (the
formula panel with its numbers, the weights on the chart, the URL), and the toggle clears it; on chapters 2
and 4 Play replays training in the browser, without a message to the server, and chapter 4's opens at the
step its URL (or a lesson scene) asks for."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.browser.harness import (
    BrowserErrors,
    StreamlitServer,
    exception_texts,
    page_state,
    wait_for_repaint,
    wait_until_drawn,
)

pytestmark = pytest.mark.browser

PANEL = "Why the fit is where it is"

# The page position of data point ``index`` of the chart keyed ``key`` (its CSS class st-key-<key>, dots as
# dashes), scrolled into view: Plotly's own axes map it to pixels.
POINT_JS = """([index, key]) => {
    const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
    gd.scrollIntoView({block: 'center'});
    const trace = gd._fullData.find(t => t.name.startsWith('data'));
    const x = trace.x[index], y = trace.y[index];
    const box = gd.getBoundingClientRect(), size = gd._fullLayout._size;
    return {x: x, px: box.left + size.l + gd._fullLayout.xaxis.l2p(x),
            py: box.top + size.t + gd._fullLayout.yaxis.l2p(y)};
}"""


def query(page: Any) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(page.url).query))


def test_clicking_a_data_point_explains_the_fit_there(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    path = next(p for name, p in site_nav if "Kernel regression" in name)
    page.goto(warm_server.url + path)
    wait_until_drawn(page)
    assert page.get_by_text(PANEL).count() == 0
    point = page.evaluate(POINT_JS, [60, "kr-fit"])
    before = page_state(page)["signature"]
    page.mouse.move(point["px"], point["py"])
    page.mouse.click(point["px"], point["py"])
    wait_for_repaint(page, before)
    wait_until_drawn(page)
    page.get_by_text(PANEL).first.wait_for()
    url = query(page)
    assert url["kr.explain"] == "true"
    assert float(url["kr.x"]) == pytest.approx(point["x"], abs=0.01)  # snapped to x*'s step
    names = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[0]._fullData.map(t => t.name)")
    assert any(n.startswith("weights") for n in names) and any(n.startswith("m(x*)") for n in names)

    before = page_state(page)["signature"]
    page.get_by_text("Explain the fit at x*").click()
    wait_for_repaint(page, before)
    wait_until_drawn(page)
    assert page.get_by_text(PANEL).count() == 0 and query(page)["kr.explain"] == "false"
    assert exception_texts(page) == [] and errors.messages == []


TITLE_JS = "() => document.querySelectorAll('.js-plotly-plot')[0].layout.title.text"


def test_playing_the_training_replay_changes_the_fit_without_the_server(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    sent: list[object] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    path = next(p for name, p in site_nav if "Masked training" in name)
    page.goto(warm_server.url + path + "?masked.replay=true")
    wait_until_drawn(page)
    assert "Fit after training (Gaussian kernel)" in page.evaluate(TITLE_JS)  # the still chart first
    before = len(sent)
    page.locator(".js-plotly-plot").first.locator("g.updatemenu-button", has_text="Play").click()
    page.wait_for_function(f"() => ({TITLE_JS})().startsWith('After ')")  # a step's frame, not the still
    page.wait_for_function(f"() => ({TITLE_JS})().includes('After 100 steps')", timeout=30_000)
    assert len(sent) == before, "playing the frames sent a message to the server"
    assert page_state(page)["script"] == "notRunning"
    assert exception_texts(page) == [] and errors.messages == []


REPLAYED_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .findIndex(g => (g.layout.sliders || []).length && g.layout.title && g.layout.title.text)"""
FIT_JS = """(i) => {
    const gd = document.querySelectorAll('.js-plotly-plot')[i];
    return {title: gd.layout.title.text, active: gd.layout.sliders[0].active,
            y: Array.from(gd._fullData.find(t => t.name.startsWith('attention')).y)};
}"""


def test_chapter_4_opens_its_replay_at_the_step_asked_and_plays_in_the_browser(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    sent: list[object] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    path = next(p for name, p in site_nav if "Attention" in name)
    page.goto(warm_server.url + path + "?attn.replay=true&attn.step=0")  # as a lesson scene sets it
    wait_until_drawn(page)
    i = page.evaluate(REPLAYED_JS)
    start = page.evaluate(FIT_JS, i)
    assert "At the start, before training" in start["title"] and start["active"] == 0  # (drawn in bold)
    before = len(sent)
    page.locator(".js-plotly-plot").nth(i).locator("g.updatemenu-button", has_text="Play").click()
    page.wait_for_function(f"() => ({FIT_JS})({i}).title.includes('After 1,000 steps')", timeout=30_000)
    end = page.evaluate(FIT_JS, i)
    assert max(abs(a - b) for a, b in zip(start["y"], end["y"], strict=True)) > 0.05  # the layer learned
    assert len(sent) == before, "playing the frames sent a message to the server"
    assert page_state(page)["script"] == "notRunning"
    assert exception_texts(page) == [] and errors.messages == []
