"""Three visitors at once on one server: each keeps its own settings, URL and charts.

Three browser contexts (three Streamlit sessions) open the masked-training chapter and step its "Hold-out
size" slider and its "Seed" number input up a different number of times, interleaved, without waiting for
each other, so the server reruns their scripts at the same time. No timing is asserted here
(benchmarks/bench_sessions.py measures ten sessions).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.browser.harness import (
    RERUN_TIMEOUT_S,
    VIEWPORT,
    BrowserErrors,
    StreamlitServer,
    exception_texts,
    number_input_step_up,
    page_state,
    slider_by_label,
    wait_until_drawn,
    widget_values,
)

pytestmark = pytest.mark.browser

SESSIONS = 3
CONTROLS = {"Hold-out size": "masked.holdout", "Seed": "masked.seed"}  # label → URL parameter
NUMBER_INPUTS = {"Seed"}  # the others are sliders


def step_up(page: Any, label: str) -> None:
    """One step up: the "+" of a number input, ArrowRight on a slider."""
    if label in NUMBER_INPUTS:
        number_input_step_up(page, label)
    else:
        slider_by_label(page, label).focus()
        page.keyboard.press("ArrowRight")


def chapter_path(site_nav: list[tuple[str, str]], label_part: str) -> str:
    for label, path in site_nav:
        if label_part.lower() in label.lower():
            return path
    raise AssertionError(f"no {label_part!r} page in the sidebar: {site_nav}")


def test_concurrent_sessions_keep_their_own_settings_and_data(
    warm_server: StreamlitServer, site_nav: list[tuple[str, str]], browser: Any
) -> None:
    path = chapter_path(site_nav, "masked training")
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(SESSIONS)]
    try:
        pages, errors = [], []
        for ctx in contexts:
            page = ctx.new_page()
            errors.append(BrowserErrors().attach(page))
            page.goto(warm_server.url + path)
            pages.append(page)
        for page in pages:
            wait_until_drawn(page)
        start = widget_values(pages[0])
        assert all(widget_values(p) == start for p in pages[1:]), "fresh sessions start differently"

        # Session i steps each control up i + 1 times; the presses of all sessions are interleaved.
        expected = []
        for i in range(SESSIONS):
            want = dict(start)
            for label in CONTROLS:
                want[label] = str(int(start[label]) + i + 1)
            expected.append(want)
        # A round presses one key in every session still due one, then waits until each of those
        # sessions' servers took it (its URL shows the new value) before that session's next press, as a
        # person watching the control would; the sessions never wait for each other.
        for step in range(SESSIONS):
            for label, name in CONTROLS.items():
                due = [i for i in range(SESSIONS) if step <= i]
                for i in due:
                    step_up(pages[i], label)
                for i in due:
                    want = str(int(start[label]) + step + 1)
                    pages[i].wait_for_function(
                        "([name, want]) => new URLSearchParams(location.search).get(name) === want",
                        arg=[name, want],
                        timeout=RERUN_TIMEOUT_S * 1e3,
                    )

        signatures = []
        for i, page in enumerate(pages):
            state = wait_until_drawn(page)
            signatures.append(state["signature"])
            got = widget_values(page)
            assert got == expected[i], f"session {i} shows {got}, expected {expected[i]}"
            params = dict(parse_qsl(urlsplit(page.url).query))
            for label, name in CONTROLS.items():
                assert params.get(name) == expected[i][label], f"session {i}: URL {page.url}"
            assert exception_texts(page) == []
            assert errors[i].messages == [], errors[i].messages
        assert len(set(signatures)) == SESSIONS, "two sessions with different settings show the same charts"

        # Each session's charts are exactly what a brand-new session at its URL shows.
        for i, page in enumerate(pages):
            ctx = browser.new_context(viewport=VIEWPORT)
            try:
                fresh = ctx.new_page()
                fresh.goto(page.url)
                assert wait_until_drawn(fresh)["signature"] == signatures[i], f"session {i}: data differ"
            finally:
                ctx.close()
        # And nobody's view moved while the others were checked.
        for i, page in enumerate(pages):
            assert page_state(page)["signature"] == signatures[i]
            assert widget_values(page) == expected[i]
    finally:
        for ctx in contexts:
            ctx.close()
