"""A class session through the app (AppTest): the teacher starts one on a lesson's question scene, students
join with the code and answer, the stage counts them, the reveal shows the class's answers beside the
backend's answer, the students' view follows the teacher, and what a student or a stranger must not do is
refused with a message."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_app import KR, ok, start
from test_questions import nadaraya_watson_at

import kernelviz as kv
from kernelviz.app.classroom import store
from kernelviz.app.ui.classroom import db as class_db
from kernelviz.app.ui.classroom import join
from kernelviz.app.ui.classroom import session as classroom

LESSON = "from-kernel-regression-to-attention"
QUESTION_SCENE = 3  # the wide-window question, on chapter 1


def teacher_at(scene: int = QUESTION_SCENE, **more: str):
    return start(KR, {"lesson": LESSON, "scene": str(scene), **more})


def started():
    """A teacher's app with a class session started on the question scene, and its code and key."""
    at = teacher_at()
    at.button(key="class.start").click().run()
    ok(at)
    held = at.session_state[classroom.KEY]
    assert dict(at.query_params)["class"] in (held.code, [held.code])
    return at, held.code, held.key


def student(code: str):
    at = start(None, {"join": code})
    ok(at)
    return at


def send(at, value: float):
    (slider,) = [s for s in at.slider if s.key.startswith("join.guess.")]
    slider.set_value(value).run()
    (button,) = [b for b in at.button if b.label == "Send"]
    button.click().run()
    ok(at)
    return [m.value for m in (*at.success, *at.error)]


def test_a_class_answers_and_the_reveal_shows_the_spread_and_the_backends_answer():
    teacher, code, _ = started()
    assert any(code in m.value for m in teacher.markdown)
    phones = [student(code) for _ in range(3)]
    assert phones[0].header[0].value == "Predict: a very wide window"
    for phone, guess in zip(phones, (0.5, 0.6, 2.0), strict=True):
        assert any("Answer recorded" in s for s in send(phone, guess))
    teacher.run()
    assert [m.value for m in teacher.metric if m.label == "Answers so far"] == ["3"]
    teacher.button(key="class.reveal").click().run()
    ok(teacher)
    ds = kv.blog_data(n=150, seed=2024)
    fit = nadaraya_watson_at(ds.x, ds.y, 1.0, 3.0)  # the question's x = 1, ℓ = 3, as the page computes it
    said = re.sub(r"\\(.)", r"\1", " ".join(m.value for m in teacher.markdown))  # as shown: no escapes
    shown = float(re.search(r"The computed answer: \*\*(\S+)\*\*", said).group(1))
    assert shown == pytest.approx(fit, abs=0.006)
    right = sum(abs(g - fit) / np.ptp(ds.y) <= 0.15 for g in (0.5, 0.6, 2.0))
    assert f"**{right} of 3** came close enough" in said
    assert any(c.proto.alt.startswith("The class's answers (3 answers)") for c in teacher.get("plotly_chart"))
    for phone in phones:
        phone.run()
        (chart,) = [c for c in phone.get("plotly_chart") if "class's answers" in c.proto.alt]
        assert "your answer" in chart.proto.alt and "computed answer" in chart.proto.alt


def test_the_students_follow_the_teacher_and_see_the_end():
    teacher, code, _ = started()
    phone = student(code)
    teacher.button(key="lesson.next").click().run()
    ok(teacher)
    phone.run()
    assert phone.header[0].value == teacher.header[0].value != "Predict: a very wide window"
    assert any("when the teacher asks a question" in i.value for i in phone.info)
    teacher.button(key="class.end").click().run()
    phone.run()
    assert any("ended this class session" in i.value for i in phone.info)
    assert classroom.KEY not in teacher.session_state and "class" not in dict(teacher.query_params)


def test_a_reload_keeps_the_teachers_session_and_the_students_answer():
    _, code, key = started()
    again = teacher_at(**{"class": code, "key": key})
    assert again.session_state[classroom.KEY] == classroom.Teacher(code, key)
    phone = student(code)
    send(phone, 0.5)
    me = dict(phone.query_params)["me"]
    me = me[0] if isinstance(me, list) else me
    reloaded = start(None, {"join": code, "me": me})
    assert store.answers(class_db.engine(), code, store.find(class_db.engine(), code).round) == {me: 0.5}
    assert reloaded.session_state[join.ME] == me


def test_a_wrong_key_in_the_address_gives_no_teachers_power():
    _, code, key = started()
    stranger = teacher_at(**{"class": code, "key": key[:-2] + "xx"})
    assert classroom.KEY not in stranger.session_state
    assert [b.key for b in stranger.button if b.key and b.key.startswith("class.")] == ["class.start"]
    assert not any(key in m.value for m in stranger.markdown)


def test_a_students_page_never_holds_the_teachers_key():
    _, code, key = started()
    phone = student(code)
    shown = " ".join(str(e.value) for e in phone.markdown) + str(dict(phone.query_params))
    assert key not in shown and classroom.KEY not in phone.session_state


def test_an_unknown_code_asks_for_the_code_again_and_too_many_are_held_off(monkeypatch):
    monkeypatch.setattr(join, "_FAILS", {})
    monkeypatch.setattr(join, "_client", lambda: "203.0.113.9")  # AppTest's connection has no address
    phone = student("QQQQQ")
    assert any("no class session with the code QQQQQ" in e.value for e in phone.error)
    assert any(t.label == "The class code on the board" for t in phone.text_input)
    for _ in range(join.JOIN_TRIES):
        phone = student("QQQQQ")
    assert any("Too many wrong codes" in e.value for e in phone.error)


def test_an_answer_too_soon_after_the_last_is_refused_with_a_message():
    _, code, _ = started()
    phone = student(code)
    send(phone, 0.5)
    assert any("One answer a second" in e for e in send(phone, 0.7))


def test_an_empty_join_link_shows_the_form():
    phone = student("")
    assert not phone.error and any(t.label == "The class code on the board" for t in phone.text_input)


def test_the_class_chart_counts_every_answer():
    from kernelviz.app import figures as kf
    from kernelviz.app.classroom.records import Question

    choice = Question("q", "Which?", options=(1, 2, 3), labels=("a", "b", "c"))
    fig = kf.class_answers_figure([1, 2, 2, 3], choice, 2, mine=3)
    (bars,) = fig.data
    assert list(bars.y) == [1, 2, 1] and list(bars.x) == ["a", "b", "c"]
    assert bars.marker.color[1] == kf.COLORS["fit"] and bars.marker.line.width[2] > 0
    values = [-1.0, 0.1, 0.12, 2.9, 5.0]  # 5.0 lies past the range: counted in the last bin
    fig = kf.class_answers_figure(values, Question("q", "How much?", lo=-1.0, hi=3.0), 0.5, mine=0.1)
    hist, answer, mine = fig.data
    assert sum(hist.y) == 5 and hist.y[0] == 1 and hist.y[-1] == 2
    assert list(answer.x) == [0.5, 0.5] and list(mine.x) == [0.1, 0.1]
    assert "The class's answers (5 answers)" in kf.describe(fig).alt
