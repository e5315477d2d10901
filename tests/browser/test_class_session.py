"""A class session in Chromium: a teacher starts one in the presenter view at 1280 × 720, two phones
(390 × 844, touch) open the join link, answer with the slider and Send, the stage counts two answers, and
the reveal shows both answers beside the backend's answer, on the stage and on each phone (thumb-sized
targets, and nothing axe-core finds serious). And a server killed mid-question loses no answer."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

import kernelviz as kv
from tests.browser.harness import (
    PHONE,
    RERUN_TIMEOUT_S,
    StreamlitServer,
    answer_question,
    settled,
    start_class,
    start_streamlit,
)
from tests.browser.test_axe import serious
from tests.browser.test_chart_text import figures
from tests.browser.test_phone import MEASURE_JS, TARGETS
from tests.test_questions import nadaraya_watson_at


def test_a_teacher_and_two_phones_run_a_question(warm_server: StreamlitServer, browser: Any) -> None:
    stage = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    code = start_class(stage, warm_server.url)
    assert f"class={code}" in stage.url
    phones = [browser.new_context(**PHONE).new_page() for _ in range(2)]
    for phone, (presses, key) in zip(phones, ((10, "ArrowRight"), (10, "ArrowLeft")), strict=True):
        phone.goto(f"{warm_server.url}/?join={code}")
        settled(phone)
        assert "key=" not in phone.url and "Predict: a very wide window" in phone.inner_text("body")
        thumb_sized = phone.evaluate(MEASURE_JS, TARGETS)
        assert thumb_sized["small"] == [] and all(thumb_sized["thumbs"]) and thumb_sized["sideways"] <= 0
        answer_question(phone, presses, key)
    stage.wait_for_function("() => /Answers so far\\s*2/.test(document.body.innerText)",
                            timeout=RERUN_TIMEOUT_S * 1e3)  # the live count, without a click
    assert serious(stage) == []  # the join panel: its QR code, link and count
    stage.get_by_role("button", name="Reveal the class's answers").click()
    stage.get_by_text("The computed answer:").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)
    settled(stage)
    ds = kv.blog_data(n=150, seed=2024)
    fit = nadaraya_watson_at(ds.x, ds.y, 1.0, 3.16)
    said = stage.inner_text("body")
    shown = float(re.search(r"The computed answer: (\S+?)\.\s", said).group(1))
    assert shown == pytest.approx(fit, abs=0.006)
    assert [n for n in figures(stage) if n.startswith("The class's answers (2 answers)")]
    for phone in phones:  # each phone follows the reveal within a few seconds, its own answer marked
        phone.get_by_text("The computed answer:").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)
        settled(phone)
        (chart,) = [n for n in figures(phone) if n.startswith("The class's answers (2 answers)")]
        assert re.search(r"your answer -?\d", chart) and "computed answer" in chart
        assert serious(phone) == []
    assert serious(stage) == []
    for page in (stage, *phones):
        page.context.close()


def test_a_killed_server_loses_no_acknowledged_answer(browser: Any, tmp_path: Path) -> None:
    """Three phones have their answers acknowledged, the server is killed (SIGKILL: no shutdown at all),
    a new one starts on the same database: the teacher's address brings back the same session, the stage
    counts all three answers, and a phone goes on with the same code."""
    env = {"KERNELVIZ_CLASS_DB": f"sqlite:///{tmp_path / 'class.sqlite3'}"}
    first = start_streamlit(env=env)
    try:
        first.wait_healthy()
        stage = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        code = start_class(stage, first.url)
        address = stage.url.removeprefix(first.url)  # the teacher's, with the class code and key
        phones = [browser.new_context(**PHONE).new_page() for _ in range(3)]
        for phone, presses in zip(phones, (3, 6, 9), strict=True):
            phone.goto(f"{first.url}/?join={code}")
            settled(phone)
            answer_question(phone, presses, "ArrowRight")
        os.killpg(first.pid, signal.SIGKILL)
        first.process.wait(timeout=10)
    finally:
        first.stop()
    second = start_streamlit(env=env)
    try:
        second.wait_healthy()
        stage.goto(second.url + address)
        stage.wait_for_function("() => /Answers so far\\s*3/.test(document.body.innerText)",
                                timeout=RERUN_TIMEOUT_S * 1e3)
        assert f"class code {code}" in stage.inner_text("body")
        phone = phones[0]
        phone.goto(second.url + "/?" + phone.url.split("?", 1)[1])  # the same link, on the new server
        settled(phone)
        assert "Predict: a very wide window" in phone.inner_text("body")
        answer_question(phone, 1, "ArrowRight")  # a changed answer: still three students
        stage.get_by_role("button", name="Reveal the class's answers").click()
        stage.get_by_text("The computed answer:").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)
        settled(stage)
        assert [n for n in figures(stage) if n.startswith("The class's answers (3 answers)")]
    finally:
        for page in (stage, *phones):
            page.context.close()
        second.stop()
