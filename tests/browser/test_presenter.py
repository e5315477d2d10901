"""The presenter view in a real browser: a teacher plays the short lesson with the keyboard, scene by scene,
on a projector's 1280 × 720 window."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from kernelviz.app.ui.lesson import files as lesson_files
from kernelviz.app.ui.questions.predict import QUESTION_CHAPTERS
from tests.browser.harness import (
    FIRST_LOAD_TIMEOUT_S,
    BrowserErrors,
    StreamlitServer,
    page_state,
    wait_for_repaint,
    wait_until_drawn,
)

pytestmark = pytest.mark.browser
PROJECTOR = {"width": 1280, "height": 720}


def scene_of(page: Any) -> int:
    return int(parse_qs(urlsplit(page.url).query)["scene"][0])


def chart_tops(page: Any) -> list[float]:
    return page.evaluate("() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
                         ".map(e => e.getBoundingClientRect().top)")


def test_the_short_lesson_plays_with_the_arrow_keys(warm_server: StreamlitServer, browser: Any) -> None:
    lesson = lesson_files.load_lesson(lesson_files.lesson_path("ten-minutes"), QUESTION_CHAPTERS)
    context = browser.new_context(viewport=PROJECTOR)
    errors = BrowserErrors()
    try:
        page = context.new_page()
        errors.attach(page)
        page.goto(f"{warm_server.url}/?lesson=ten-minutes")
        state = wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
        seen = [state["signature"]]
        for scene in lesson.scenes:
            assert scene_of(page) == scene.number
            assert urlsplit(page.url).path == f"/{scene.chapter.url}"
            assert page.get_by_role("heading", name=scene.title).is_visible()
            assert min(chart_tops(page)) < PROJECTOR["height"]  # its first chart on the first screen
            assert page.locator('[data-testid="stSidebar"][data-collapsed="true"]').count() == 1
            if scene.number < len(lesson.scenes):
                page.keyboard.press("ArrowRight")
                state = wait_for_repaint(page, seen[-1], timeout=FIRST_LOAD_TIMEOUT_S)
                seen.append(state["signature"])
        assert len(set(seen)) == len(lesson.scenes)  # every scene drew charts of its own
        page.keyboard.press("PageUp")  # a presentation clicker's "back"
        wait_for_repaint(page, seen[-1], timeout=FIRST_LOAD_TIMEOUT_S)
        assert scene_of(page) == len(lesson.scenes) - 1
        assert errors.messages == [], errors.messages
    finally:
        context.close()


def test_explore_this_leaves_the_lesson_at_the_scenes_values(warm_server: StreamlitServer,
                                                             browser: Any) -> None:
    context = browser.new_context(viewport=PROJECTOR)
    try:
        page = context.new_page()
        page.goto(f"{warm_server.url}/?lesson=ten-minutes&scene=2")
        before = wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)["signature"]
        page.keyboard.press("PageDown")
        wait_for_repaint(page, before, timeout=FIRST_LOAD_TIMEOUT_S)
        assert scene_of(page) == 3
        page.get_by_role("button", name="Explore this").click()
        page.wait_for_url(lambda u: "lesson" not in parse_qs(urlsplit(u).query), timeout=60_000)
        wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
        time.sleep(0.5)
        query = parse_qs(urlsplit(page.url).query)
        assert urlsplit(page.url).path == "/masked-training"
        assert query["masked.holdout"] == ["10"]  # the scene's value, now the chapter's own control
        assert page_state(page)["charts"] > 3  # the whole chapter, not the scene's two charts
        assert page.get_by_role("heading", name="2 · Masked training").is_visible()
    finally:
        context.close()
