"""A student's view of a class session, ``/?join=CODE``, made for a phone: the scene the teacher shows, its
question with a guess and "Send", then the class's answers beside the computed one. No account and no
name: a student is a random token kept in their session and their address (``&me=…``), so a reload keeps
their answer theirs. The view follows the teacher's scene by reading the store every ``POLL_S`` seconds.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque

import streamlit as st

from kernelviz.app.classroom import store
from kernelviz.app.classroom.records import ClassError, Question, Session
from kernelviz.app.mdtable import md_escape
from kernelviz.app.ui import platform, server
from kernelviz.app.ui.classroom import db as class_db
from kernelviz.app.ui.classroom import session as classroom
from kernelviz.runtime.i18n import _

__all__ = ["JOIN_TRIES", "POLL_S", "page", "requested"]

POLL_S = 2.0  # the view reads its session again this often
# Wrong codes from one address at most, per minute and server. A class behind one NAT shares an address: 30
# typos a minute before it waits. Guessing any of ten open sessions' codes (of 3.2 million) at that rate
# takes a week.
JOIN_TRIES, JOIN_WINDOW_S = 30, 60.0
ME = "kv.join.me"  # session_state: this student's token
SAID = "kv.join.said"  # session_state: (round, message) of the last answer sent, or of its refusal
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16}")
_FAILS: dict[str, deque] = {}
_LOCK = threading.Lock()

CSS = f"""<style>
{platform.MAIN_BLOCK} {{ max-width: 34rem; padding-top: 2rem; }}
{platform.MAIN_BLOCK} p {{ font-size: 1.15rem; }}
</style>"""  # Streamlit's insides: ``kernelviz/app/ui/platform.py``


def requested() -> str | None:
    """The join code of ``?join=CODE`` (empty: the form to type one), None when the address has none."""
    return st.query_params.get("join")


def _me() -> str:
    """This student's token: from the session, else the address (a reload), else a new one."""
    if ME not in st.session_state:
        given = st.query_params.get("me", "")
        st.session_state[ME] = given if _TOKEN.fullmatch(given) else store.new_student()
    st.query_params["me"] = st.session_state[ME]
    return st.session_state[ME]


def _client() -> str:
    """Who is asking, for counting wrong codes only (never stored): the first address a proxy forwards,
    else the connection's."""
    forwarded = (st.context.headers.get("X-Forwarded-For") or "").split(",")[0].strip()
    return forwarded or st.context.ip_address or "unknown"


def _too_many(client: str, failed: bool = False) -> bool:
    """Whether ``client`` has typed ``JOIN_TRIES`` wrong codes in the last ``JOIN_WINDOW_S`` s (counting
    one more when ``failed``)."""
    now = time.monotonic()
    with _LOCK:
        tries = _FAILS.setdefault(client, deque())
        while tries and now - tries[0] > JOIN_WINDOW_S:
            tries.popleft()
        if failed:
            tries.append(now)
        return len(tries) >= JOIN_TRIES


def _type_code(message: str | None) -> None:
    """The form to type a class code, under what went wrong."""
    st.title(_("Join a class"))
    if message:
        st.error(message, icon=":material/error:")
    code = st.text_input(_("The class code on the board"), max_chars=8, key="join.code")
    if st.button(_("Join"), type="primary", icon=":material/login:", disabled=not code):
        st.query_params["join"] = store.normal_code(code)
        st.rerun()


def _find(code: str) -> Session | None:
    """The session of ``code``, or None after saying why not (a wrong code counts against the client)."""
    client = _client()
    if _too_many(client):
        _type_code(_("Too many wrong codes from here: wait a minute, then type the code on the board."))
        return None
    try:
        return store.find(class_db.engine(), code)
    except ClassError as wrong:
        _too_many(client, failed=True)
        _type_code(str(wrong) if code else None)
        return None


@server.fragment(run_every=POLL_S)
def _follow(code: str, seen: tuple) -> None:
    """Read the session again; when the teacher has moved on (another scene, a reveal, the end), draw the
    whole view anew."""
    try:
        now = store.find(class_db.engine(), code)
    except ClassError:
        st.rerun(scope="app")
    if now.moment != seen:
        st.rerun(scope="app")


def _send(code: str, me: str, question: Question, round_: int) -> None:
    value = st.session_state.get(f"join.guess.{round_}")
    try:
        store.answer(class_db.engine(), code, me, value)
        said = _("Answer recorded: **{answer}**. You can change it until the reveal.").format(
            answer=md_escape(question.label(value)))
        st.session_state[SAID] = (round_, "success", said)
    except ClassError as refused:
        st.session_state[SAID] = (round_, "error", str(refused))


def _guess(question: Question, key: str) -> object:
    if question.options:
        names = dict(zip(question.options, question.labels, strict=True))
        return st.radio(_("Your answer"), question.options, format_func=names.get, key=key, index=None)
    middle = round((question.lo + question.hi) / 2 / question.step) * question.step
    return st.slider(_("Your answer"), min_value=question.lo, max_value=question.hi, step=question.step,
                     value=middle, key=key)


def _answer(session: Session, me: str) -> None:
    """The open question: the guess, "Send", and what became of the last answer sent."""
    key = f"join.guess.{session.round}"
    value = _guess(session.question, key)
    st.button(_("Send"), type="primary", icon=":material/send:", disabled=value is None, width="stretch",
              on_click=_send, args=(session.code, me, session.question, session.round))
    said = st.session_state.get(SAID)
    if said and said[0] == session.round:
        (st.success if said[1] == "success" else st.error)(said[2])


def page(code: str) -> None:
    """The student's view of class session ``code``."""
    st.markdown(CSS, unsafe_allow_html=True)
    session = _find(store.normal_code(code))
    if session is None:
        return
    me = _me()
    _follow(session.code, session.moment)
    st.caption(_("Class {code} · scene {scene}").format(code=session.code, scene=session.scene))
    st.header(session.title, anchor=False)
    if session.closed:
        st.info(_("The teacher has ended this class session. Thank you for taking part!"))
    elif session.question is None:
        st.info(_("Watch the screen: when the teacher asks a question, it appears here."))
    else:
        st.markdown(_("**Predict.** {prompt}").format(prompt=session.question.prompt))
        if session.answer is None:
            _answer(session, me)
        else:
            values = store.answers(class_db.engine(), session.code, session.round)
            classroom.show_result(session, list(values.values()), key="join.answers", mine=values.get(me))
