"""A class session on the presenter's stage: "Class session" (beside Next) starts one, with a join code, a
link and its QR code; the session follows the teacher's scene; a scene's question is answered by the class
on their phones (``kernelviz/app/ui/classroom/join.py``), the stage counts the answers live, and "Reveal"
draws the class's answers beside the answer the backend computes at the scene's values.

The teacher's key is kept in their session and their address (``?lesson=…&class=CODE&key=KEY``), so that a
reload keeps the session; the store checks it for every act of the teacher.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlsplit

import segno
import streamlit as st

from kernelviz.app import figures as kf
from kernelviz.app.classroom import store
from kernelviz.app.classroom.records import Answer, ClassError, Question, Session, Showing
from kernelviz.app.mdtable import md_escape
from kernelviz.app.ui import server
from kernelviz.app.ui.classroom import db as class_db
from kernelviz.app.ui.questions.predict import Guess, Reveal
from kernelviz.app.ui.widgets import text
from kernelviz.runtime.i18n import _

__all__ = [
    "COUNT_EVERY_S", "Teacher", "as_question", "bar", "join_url", "params", "show_result", "stage_question",
    "summary",
]

KEY = "kv.class"  # session_state: the Teacher of the session this browser started
REVEAL = "kv.class.reveal"  # session_state: the round whose answer the teacher asked to reveal
COUNT_EVERY_S = 1.0  # the stage's count of answers is read again this often while a question is open


class Teacher(NamedTuple):
    """The session a teacher started: its join code and the teacher's key."""

    code: str
    key: str


def _following(showing: Showing) -> tuple[Teacher, Session] | None:
    """This browser's class session (from its session or its address), following ``showing``: the store
    checks the key as it follows. None if there is none, or the one in the address is unknown, expired or
    not this key's."""
    held = st.session_state.get(KEY)
    if held is None and "class" in st.query_params and "key" in st.query_params:
        held = Teacher(st.query_params["class"], st.query_params["key"])
    if held is None:
        return None
    try:
        session = store.follow(class_db.engine(), held.code, held.key, showing)
    except ClassError:
        _forget()
        return None
    st.session_state[KEY] = held
    return held, session


def params() -> dict[str, str]:
    """The address's part that keeps the class session across scenes and reloads."""
    held = st.session_state.get(KEY)
    return {"class": held.code, "key": held.key} if held else {}


def _forget() -> None:
    st.session_state.pop(KEY, None)
    for name in ("class", "key"):
        st.query_params.pop(name, None)


def _start(lesson: str, showing: Showing) -> None:
    engine = class_db.engine()
    store.expire(engine)  # the sessions past their time go, with their answers
    code, key = store.start(engine, lesson, showing)
    st.session_state[KEY] = Teacher(code, key)
    st.query_params.update(params())


def _close(held: Teacher) -> None:
    store.close(class_db.engine(), held.code, held.key)
    _forget()


def join_url(code: str) -> str:
    """The address students open: this server's, with ``?join=CODE``."""
    here = urlsplit(st.context.url or "http://localhost:8501/")
    return f"{here.scheme}://{here.netloc}/?join={code}"


def _qr(url: str) -> str:
    """The QR code of ``url`` as an image with a text alternative (st.image gives an image none)."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="png", scale=6, border=2, dark="#1B2430")
    data = base64.b64encode(out.getvalue()).decode()
    alt = html.escape(_("QR code of the join link, {url}").format(url=url))
    return f'<img src="data:image/png;base64,{data}" width="170" alt="{alt}">'



def as_question(name: str, prompt: str, guess: Guess) -> Question:
    """A chapter's question as a class session asks it: the same prompt, options or slider."""
    if guess.options:
        labels = tuple(guess.labels or map(str, guess.options))
        return Question(name, prompt, options=tuple(guess.options), labels=labels)
    lo, hi, step = guess.notches()
    return Question(name, prompt, lo=lo, hi=hi, step=step)


START_HELP = _("Start a class session: students join on their phones with a code and answer the lesson's "
               "questions; the stage shows the spread of their answers, then the computed one.")


def bar(box: object, lesson: str, showing: Showing) -> Session | None:
    """In the scene's header: "Class session" (which starts one), or the running session (which follows
    ``showing``) as a button named by its code that opens its link, QR code and "End"; returns it."""
    following = _following(showing)
    if following is None:
        box.button(_("Class session"), key="class.start", icon=":material/groups:", on_click=_start,
                   args=(lesson, showing), width="stretch", help=START_HELP)
        return None
    held, session = following
    url = join_url(held.code)
    with box.popover(_("Class {code}").format(code=held.code), icon=":material/groups:", width="stretch"):
        st.markdown(_("Students join at [{url}]({url}), class code **{code}**.").format(url=url,
                                                                                         code=held.code))
        st.markdown(_qr(url), unsafe_allow_html=True)
        st.button(_("End the class session"), key="class.end", icon=":material/logout:", on_click=_close,
                  args=(held,), help=_("No more answers; the answers are kept until the session expires."))
    return session


def _ask_reveal(round_: int) -> None:
    st.session_state[REVEAL] = round_


def _plain(value: object) -> object:
    """A NumPy scalar as the Python value it holds (the store writes JSON)."""
    return value.item() if hasattr(value, "item") else value


def _reveal_now(held: Teacher, session: Session, reveal: Callable[[object], Reveal]) -> Session:
    """The backend's answer at the scene's values, which of the class's answers it counts right, stored:
    from now on the students see it."""
    q = session.question
    values = list(store.answers(class_db.engine(), held.code, session.round).values())
    with text.busy(_("Computing the answer…")):
        judged = {v: reveal(v) for v in dict.fromkeys(values)}  # each distinct answer judged once
        found = judged[values[0]] if values else reveal(q.options[0] if q.options else (q.lo + q.hi) / 2)
    right = tuple(v for v, verdict in judged.items() if verdict.right)
    answer = _plain(found.answer)
    return store.reveal(class_db.engine(), held.code, held.key,
                        Answer(answer, q.label(answer), found.why, tuple(map(_plain, right))))


@server.fragment(run_every=COUNT_EVERY_S)
def _count(code: str, round_: int) -> None:
    """How many have answered, read again every ``COUNT_EVERY_S`` s."""
    st.metric(_("Answers so far"), len(store.answers(class_db.engine(), code, round_)))


def _waiting(held: Teacher, session: Session) -> None:
    """While the question is open: the QR code and link to join, the live count, and Reveal."""
    url = join_url(held.code)
    code_box, words = st.columns([1.0, 3.0], vertical_alignment="center")
    code_box.markdown(_qr(url), unsafe_allow_html=True)
    words.markdown(_("Answer on your phone: scan the code or open **{url}** (class code **{code}**)")
                   .format(url=url, code=held.code))
    with words:
        _count(held.code, session.round)
    words.button(_("Reveal the class's answers"), key="class.reveal", icon=":material/visibility:",
                 type="primary", on_click=_ask_reveal, args=(session.round,))


def summary(session: Session, values: list) -> str:
    """How the class did: how many were right (a choice) or close enough, and how far off they were."""
    q, a, n = session.question, session.answer, len(values)
    if not n:
        return _("Nobody answered this question.")
    right = sum(v in a.right for v in values)
    if q.options:
        return _("**{right} of {n}** chose the computed answer.").format(right=right, n=n)
    off = sorted(abs(float(v) - float(a.value)) for v in values)[(n - 1) // 2]
    return _("**{right} of {n}** came close enough to count as right; half the class was within {off:.3g} "
             "of the computed answer.").format(right=right, n=n, off=off)


def show_result(session: Session, values: list, key: str, mine: object = None) -> None:
    """After the reveal: the class's answers beside the computed one (``mine`` marked), how the class did,
    and why."""
    q, a = session.question, session.answer
    fig = kf.class_answers_figure(values, q, a.value, mine=mine)
    text.show(fig, key=key)
    st.markdown(summary(session, values))
    st.markdown(_("The computed answer: **{answer}**. {why}").format(answer=md_escape(a.label), why=a.why))


def stage_question(session: Session, prompt: str, reveal: Callable[[object], Reveal]) -> None:
    """A scene's question while a class session runs (``bar`` has checked the teacher's key in this run):
    the class answers, not the teacher. Open, it shows how to join and how many have answered; revealed,
    the class's answers and the computed answer."""
    held = st.session_state[KEY]
    st.markdown(_("**Predict, then reveal.** {prompt}").format(prompt=prompt))
    if session.answer is None and st.session_state.get(REVEAL) == session.round:
        session = _reveal_now(held, session, reveal)
    if session.answer is None:
        _waiting(held, session)
    else:
        show_result(session, list(store.answers(class_db.engine(), held.code, session.round).values()),
                    key="class.answers")
