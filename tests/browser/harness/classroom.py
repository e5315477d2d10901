"""A class session in the browser: the teacher's stage starts one, a phone answers its question (the tests
in ``tests/browser/test_class_session.py`` and ``test_replicas.py``, and ``benchmarks/bench_class.py``)."""

from __future__ import annotations

import re
from typing import Any

from .page import RERUN_TIMEOUT_S, settled

SCENE = "/?lesson=from-kernel-regression-to-attention&scene=3"  # the long lesson's wide-window question
PHONE_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
            "Version/17.0 Mobile/15E148 Safari/604.1")  # a phone's browser, as the app tells one (``Mobi``)
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True,
         "user_agent": PHONE_UA}


def answer_question(phone: Any, presses: int, key: str) -> None:
    """On a phone: move the guess slider ``presses`` times by ``key``, Send, and wait for the receipt."""
    thumb = phone.get_by_role("slider", name="Your answer")
    thumb.focus()
    for _ in range(presses):
        phone.keyboard.press(key)
    settled(phone)
    phone.get_by_role("button", name="Send").click()
    phone.get_by_text("Answer recorded").wait_for(timeout=RERUN_TIMEOUT_S * 1e3)


def start_class(stage: Any, url: str) -> str:
    """On the teacher's page: open the question scene at server ``url``, start a class session, and return
    its join code."""
    stage.goto(url + SCENE)
    settled(stage)
    stage.get_by_role("button", name="Class session").click()
    settled(stage)
    return re.search(r"class code ([A-Z]{5})", stage.inner_text("body")).group(1)
