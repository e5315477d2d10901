"""The class session's store (kernelviz/app/classroom): codes, the teacher's key, rounds of answers, every bad
input with its message, expiry, and survival of a new engine (a restarted server), on SQLite and, when
``KERNELVIZ_TEST_POSTGRES`` names a server (CI starts one), on Postgres."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from services import fresh_database

from kernelviz.app.classroom import store
from kernelviz.app.classroom.records import Answer, ClassError, Question, Showing

NUMBER = Question("kr.wide_window", "Where will the fit pass?", lo=-1.5, hi=3.0, step=0.05)
CHOICE = Question("mh.largest_mixing", "Which head?", options=(1, 2, 3),
                  labels=("head 1", "head 2", "head 3"))


@pytest.fixture(params=["sqlite", "postgres"])
def url(request, tmp_path) -> str:
    """A new, empty database: a SQLite file, or a database of its own on the Postgres server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'class.sqlite3'}"
    return fresh_database(request.getfixturevalue("postgres"))


@pytest.fixture
def engine(url):
    eng = store.engine_for(url)
    yield eng
    eng.dispose()


def _open(engine, question=NUMBER):
    return store.start(engine, "ten-minutes", Showing(3, "Predict", question))


def test_a_code_is_five_unambiguous_letters_and_the_key_is_never_stored(engine):
    codes = {_open(engine)[0] for _ in range(30)}
    assert len(codes) == 30 and all(re.fullmatch(f"[{store.CODE_LETTERS}]{{5}}", c) for c in codes)
    assert not set("BIOSZ018") & set(store.CODE_LETTERS)
    code, key = _open(engine)
    with engine.connect() as db:
        (row,) = db.execute(sa.select(store.SESSIONS).where(store.SESSIONS.c.code == code)).all()
    assert key not in str(tuple(row)) and len(key) >= 24


def test_a_code_is_found_as_typed(engine):
    code, _ = _open(engine)
    assert store.find(engine, f" {code.lower()[:2]} {code.lower()[2:]} ").code == code


def test_answers_count_once_per_student_and_the_last_counts(engine):
    code, _ = _open(engine)
    store.answer(engine, code, "s1", 0.5, now=100.0)
    store.answer(engine, code, "s2", 1.0, now=100.0)
    store.answer(engine, code, "s1", 0.75, now=101.5)
    assert store.answers(engine, code, 1) == {"s1": 0.75, "s2": 1.0}


def test_a_choice_question_takes_its_options_only(engine):
    code, _ = _open(engine, CHOICE)
    store.answer(engine, code, "s1", 2)
    for bad in (4, "2", 2.5, True, None):
        with pytest.raises(ClassError, match="not one of the question's choices"):
            store.answer(engine, code, "s2", bad)
    assert store.answers(engine, code, 1) == {"s1": 2}


@pytest.mark.parametrize(("value", "message"), [
    (5.0, "from -1.5 to 3"), (-2, "from -1.5 to 3"), (float("nan"), "is a number"),
    (float("inf"), "is a number"), ("one", "is a number"), (None, "is a number"), (True, "is a number"),
])
def test_a_bad_number_is_refused_with_a_reason(engine, value, message):
    code, _ = _open(engine)
    with pytest.raises(ClassError, match=message):
        store.answer(engine, code, "s1", value)
    assert store.answers(engine, code, 1) == {}


def test_one_answer_a_second(engine):
    code, _ = _open(engine)
    store.answer(engine, code, "s1", 0.5, now=100.0)
    with pytest.raises(ClassError, match="One answer a second"):
        store.answer(engine, code, "s1", 0.6, now=100.4)
    store.answer(engine, code, "s2", 0.6, now=100.4)  # another student is not held up
    assert store.answers(engine, code, 1) == {"s1": 0.5, "s2": 0.6}


def test_unknown_and_expired_codes(engine):
    with pytest.raises(ClassError, match="no class session with the code QQQQQ"):
        store.find(engine, "qqqqq")
    code, _ = store.start(engine, "ten-minutes", Showing(1, "Start", NUMBER), now=1000.0)
    late = 1000.0 + store.LIFETIME_S
    with pytest.raises(ClassError, match="no class session"):
        store.find(engine, code, now=late)
    with pytest.raises(ClassError, match="no class session"):
        store.answer(engine, code, "s1", 0.5, now=late)


def test_expiry_deletes_a_session_with_its_answers(engine):
    old, _ = store.start(engine, "ten-minutes", Showing(1, "Start", NUMBER), now=1000.0)
    store.answer(engine, old, "s1", 0.5, now=1001.0)
    kept, _ = _open(engine)
    assert store.expire(engine, now=1000.0 + store.LIFETIME_S) == 1
    assert store.answers(engine, old, 1) == {} and store.find(engine, kept).code == kept


def test_only_the_teacher_follows_reveals_or_closes(engine):
    code, key = _open(engine)
    for act in (lambda k: store.follow(engine, code, k, Showing(4, "Next")),
                lambda k: store.reveal(engine, code, k, Answer(1.0, "1", "why")),
                lambda k: store.close(engine, code, k)):
        for wrong in ("", "x" * 24, key[:-1], None):
            with pytest.raises(ClassError, match="Only the teacher"):
                act(wrong)
    assert store.find(engine, code).scene == 3 and store.find(engine, code).answer is None


def test_a_round_per_question_and_no_answer_after_the_reveal(engine):
    code, key = _open(engine)
    store.answer(engine, code, "s1", 0.5, now=100.0)
    revealed = store.reveal(engine, code, key, Answer(0.9, "0.9", "Because.", right=(0.5,)))
    assert revealed.answer == Answer(0.9, "0.9", "Because.", right=(0.5,)) and revealed.open_question is None
    with pytest.raises(ClassError, match="No question is open"):
        store.answer(engine, code, "s2", 0.5)
    moved = store.follow(engine, code, key, Showing(4, "The answer"))
    assert (moved.scene, moved.round, moved.question, moved.answer) == (4, 2, None, None)
    with pytest.raises(ClassError, match="No question is open"):
        store.answer(engine, code, "s2", 0.5)
    again = store.follow(engine, code, key, Showing(3, "Predict", NUMBER))
    assert again.round == 3 and store.follow(engine, code, key, Showing(3, "Predict", NUMBER)).round == 3
    store.answer(engine, code, "s1", 1.0, now=200.0)
    assert store.answers(engine, code, 3) == {"s1": 1.0} and store.answers(engine, code, 1) == {"s1": 0.5}


def test_a_closed_session_takes_no_answer_but_keeps_them(engine):
    code, key = _open(engine)
    store.answer(engine, code, "s1", 0.5)
    store.close(engine, code, key)
    with pytest.raises(ClassError, match="closed"):
        store.answer(engine, code, "s2", 0.5)
    assert store.find(engine, code).closed and store.answers(engine, code, 1) == {"s1": 0.5}


def test_what_was_acknowledged_is_there_for_a_new_engine(url):
    first = store.engine_for(url)
    code, key = _open(first)
    for k in range(20):
        store.answer(first, code, f"s{k}", k / 10)
    first.dispose()  # the server is gone; a new one opens the same database
    second = store.engine_for(url)
    assert len(store.answers(second, code, 1)) == 20
    assert store.teacher(second, code, key).code == code
    second.dispose()
