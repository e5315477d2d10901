"""A class session in Chromium: a teacher starts one in the presenter view at 1280 × 720, two phones
(390 × 844, touch) open the join link, answer with the slider and Send, the stage counts two answers, and
the reveal shows both answers beside the backend's answer, on the stage and on each phone."""

from __future__ import annotations

import re
from typing import Any

import pytest

import kernelviz as kv
from tests.browser.harness import RERUN_TIMEOUT_S, StreamlitServer
from tests.browser.test_axe import settled
from tests.browser.test_chart_text import figures
from tests.browser.test_phone import PHONE
from tests.test_questions import nadaraya_watson_at

SCENE = "/?lesson=from-kernel-regression-to-attention&scene=3"  # the wide-window question


def _answer(phone: Any, presses: int, key: str) -> None:
    thumb = phone.get_by_role("slider", name="Your answer")
    thumb.focus()
    for _ in range(presses):
        phone.keyboard.press(key)
    settled(phone)
    phone.get_by_role("button", name="Send").click()
    phone.get_by_text("Answer recorded").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)


def test_a_teacher_and_two_phones_run_a_question(warm_server: StreamlitServer, browser: Any) -> None:
    stage = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    stage.goto(warm_server.url + SCENE)
    settled(stage)
    stage.get_by_role("button", name="Start a class session").click()
    settled(stage)
    code = re.search(r"class code ([A-Z]{5})", stage.inner_text("body")).group(1)
    assert f"class={code}" in stage.url
    phones = [browser.new_context(**PHONE).new_page() for _ in range(2)]
    for phone, (presses, key) in zip(phones, ((10, "ArrowRight"), (10, "ArrowLeft")), strict=True):
        phone.goto(f"{warm_server.url}/?join={code}")
        settled(phone)
        assert "key=" not in phone.url and "Predict: a very wide window" in phone.inner_text("body")
        _answer(phone, presses, key)
    stage.wait_for_function("() => /Answers so far\\s*2/.test(document.body.innerText)",
                            timeout=RERUN_TIMEOUT_S * 1e3)  # the live count, without a click
    stage.get_by_role("button", name="Reveal the class's answers").click()
    stage.get_by_text("The computed answer:").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)
    settled(stage)
    ds = kv.blog_data(n=150, seed=2024)
    fit = nadaraya_watson_at(ds.x, ds.y, 1.0, 3.0)
    said = stage.inner_text("body")
    shown = float(re.search(r"The computed answer: (\S+?)\.\s", said).group(1))
    assert shown == pytest.approx(fit, abs=0.006)
    assert [n for n in figures(stage) if n.startswith("The class's answers (2 answers)")]
    for phone in phones:  # each phone follows the reveal within a few seconds, its own answer marked
        phone.get_by_text("The computed answer:").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)
        settled(phone)
        (chart,) = [n for n in figures(phone) if n.startswith("The class's answers (2 answers)")]
        assert re.search(r"your answer -?\d", chart) and "computed answer" in chart
    for page in (stage, *phones):
        page.context.close()
