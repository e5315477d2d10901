"""Class sessions and their answers in a database, through SQLAlchemy: a SQLite file by default, Postgres
when a URL names it (``kernelviz/app/ui/classroom/db.py`` opens it with ``st.connection``).

Two tables: ``kv_class_sessions``, one row per session (its join code, the hash of the teacher's key, the
scene shown, the question open and, once revealed, the backend's answer), and ``kv_class_answers``, one row
per student and round (the last answer counts). Each call is one transaction, committed before it returns,
so an answer a student saw acknowledged survives the server being killed. Nothing personal is kept: a
student is a random token, with no name, address or browser.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

import sqlalchemy as sa

from kernelviz.app.classroom.records import Answer, ClassError, Question, Session, Showing
from kernelviz.runtime.i18n import _

__all__ = [
    "ANSWER_GAP_S",
    "CODE_LENGTH",
    "CODE_LETTERS",
    "LIFETIME_S",
    "answer",
    "answers",
    "close",
    "create_schema",
    "engine_for",
    "expire",
    "find",
    "follow",
    "new_student",
    "normal_code",
    "reveal",
    "start",
    "teacher",
]

CODE_LETTERS = "ACDEFGHJKMNPQRTUVWXY"  # no B 8, I L 1, O 0, S 5, Z 2: a code read off a projector
CODE_LENGTH = 5  # 20⁵ = 3.2 million codes
LIFETIME_S = 12 * 3600  # a session and its answers are deleted this long after it starts
ANSWER_GAP_S = 1.0  # one answer a second from a student at most

META = sa.MetaData()
SESSIONS = sa.Table(
    "kv_class_sessions", META,
    sa.Column("code", sa.String(8), primary_key=True),
    sa.Column("key_hash", sa.String(64), nullable=False),
    sa.Column("lesson", sa.String(100), nullable=False),
    sa.Column("scene", sa.Integer, nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("question", sa.Text),  # Question.to_json(); NULL: the scene asks nothing
    sa.Column("answer", sa.Text),  # Answer.to_json() once revealed
    sa.Column("closed", sa.Boolean, nullable=False),
    sa.Column("expires", sa.Float, nullable=False),
)
ANSWERS = sa.Table(
    "kv_class_answers", META,
    sa.Column("code", sa.String(8), primary_key=True),
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("student", sa.String(40), primary_key=True),
    sa.Column("value", sa.JSON, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)


def _sqlite_pragmas(connection: object, _record: object) -> None:
    """Each SQLite connection: write-ahead log (readers do not wait for a writer), wait up to 10 s for a
    lock, and sync every commit to disk."""
    cursor = connection.cursor()
    for pragma in ("journal_mode=WAL", "busy_timeout=10000", "synchronous=FULL"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def create_schema(engine: sa.Engine) -> sa.Engine:
    """The tables, created if missing (and SQLite's settings on every new connection). Returns ``engine``."""
    if engine.dialect.name == "sqlite" and not sa.event.contains(engine, "connect", _sqlite_pragmas):
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    META.create_all(engine)
    return engine


def engine_for(url: str) -> sa.Engine:
    """An engine for ``url`` with the tables in place (for tests and benchmarks: the app opens its engine
    with ``st.connection``)."""
    return create_schema(sa.create_engine(url))


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_student() -> str:
    """A student's token: random, and all the store knows of them."""
    return secrets.token_urlsafe(12)


def start(engine: sa.Engine, lesson: str, showing: Showing, now: float | None = None) -> tuple[str, str]:
    """A new session of ``lesson``, showing a scene: returns its join code and the teacher's key (only its
    hash is stored)."""
    now = time.time() if now is None else now
    key = secrets.token_urlsafe(18)
    for _attempt in range(20):
        code = "".join(secrets.choice(CODE_LETTERS) for _letter in range(CODE_LENGTH))
        row = {"code": code, "key_hash": _hash(key), "lesson": lesson, "scene": showing.scene,
               "title": showing.title, "question": showing.question.to_json() if showing.question else None,
               "round": 1, "answer": None, "closed": False, "expires": now + LIFETIME_S}
        try:
            with engine.begin() as db:
                db.execute(SESSIONS.insert().values(**row))
            return code, key
        except sa.exc.IntegrityError:  # the code is taken: draw another
            continue
    raise ClassError(_("No free join code was found; try again."))


def _session(row: sa.Row) -> Session:
    return Session(row.code, row.lesson, row.scene, row.title, row.round,
                   Question.from_json(row.question) if row.question else None,
                   Answer.from_json(row.answer) if row.answer else None, bool(row.closed), row.expires)


def _row(db: sa.Connection, code: str, now: float) -> sa.Row:
    row = db.execute(sa.select(SESSIONS).where(SESSIONS.c.code == code)).first()
    if row is None or row.expires <= now:
        raise ClassError(_("There is no class session with the code {code}: check the code on the board.")
                         .format(code=code))
    return row


def normal_code(code: str) -> str:
    """A code as typed (any case, spaces) in the form the store keeps."""
    return "".join(str(code).split()).upper()[:8]


def find(engine: sa.Engine, code: str, now: float | None = None) -> Session:
    """The session with join ``code``; ``ClassError`` if there is none or it has expired."""
    with engine.connect() as db:
        return _session(_row(db, normal_code(code), time.time() if now is None else now))


def teacher(engine: sa.Engine, code: str, key: str, now: float | None = None) -> Session:
    """The session, if ``key`` is its teacher's key; ``ClassError`` otherwise."""
    with engine.connect() as db:
        row = _row(db, normal_code(code), time.time() if now is None else now)
    if not hmac.compare_digest(row.key_hash, _hash(str(key))):
        raise ClassError(_("Only the teacher who started this class session can do that."))
    return _session(row)


def follow(engine: sa.Engine, code: str, key: str, showing: Showing) -> Session:
    """The teacher shows another scene: the session follows, and a new round of
    answers starts (the class answers afresh). The scene already shown changes nothing."""
    now_at = teacher(engine, code, key)
    if Showing(now_at.scene, now_at.title, now_at.question) == showing:
        return now_at
    with engine.begin() as db:
        db.execute(SESSIONS.update().where(SESSIONS.c.code == now_at.code).values(
            scene=showing.scene, title=showing.title, answer=None, round=now_at.round + 1,
            question=showing.question.to_json() if showing.question else None))
    return find(engine, code)


def reveal(engine: sa.Engine, code: str, key: str, found: Answer) -> Session:
    """The teacher reveals the open question's answer: the round's answers are final."""
    at = teacher(engine, code, key)
    if at.question is None:
        raise ClassError(_("This scene asks no question."))
    with engine.begin() as db:
        db.execute(SESSIONS.update().where(SESSIONS.c.code == at.code).values(answer=found.to_json()))
    return find(engine, code)


def close(engine: sa.Engine, code: str, key: str) -> None:
    """The teacher ends the session: no more answers; it and its answers stay until it expires."""
    at = teacher(engine, code, key)
    with engine.begin() as db:
        db.execute(SESSIONS.update().where(SESSIONS.c.code == at.code).values(closed=True))


def answer(engine: sa.Engine, code: str, student: str, value: object, now: float | None = None) -> Session:
    """Student ``student``'s answer to the open question, committed before this returns; an earlier answer
    of theirs in this round is replaced. ``ClassError`` if there is no open question, the value does not
    fit it, or the student answered less than ``ANSWER_GAP_S`` ago."""
    now = time.time() if now is None else now
    try:
        return _answer(engine, normal_code(code), student, value, now)
    except sa.exc.IntegrityError:  # the same student's other answer, sent at the same instant
        raise ClassError(_("One answer a second: wait a moment and send it again.")) from None


def _answer(engine: sa.Engine, code: str, student: str, value: object, now: float) -> Session:
    with engine.begin() as db:
        at = _session(_row(db, code, now))
        if at.closed:
            raise ClassError(_("The teacher has closed this class session."))
        if at.open_question is None:
            raise ClassError(_("No question is open right now: wait for the teacher's next one."))
        value = at.question.check(value)
        mine = (ANSWERS.c.code == at.code) & (ANSWERS.c.student == student)
        last = db.execute(sa.select(sa.func.max(ANSWERS.c.at)).where(mine)).scalar()
        if last is not None and now - last < ANSWER_GAP_S:
            raise ClassError(_("One answer a second: wait a moment and send it again."))
        this_round = mine & (ANSWERS.c.round == at.round)
        if not db.execute(ANSWERS.update().where(this_round).values(value=value, at=now)).rowcount:
            db.execute(ANSWERS.insert().values(code=at.code, round=at.round, student=student, value=value,
                                               at=now))
    return at


def answers(engine: sa.Engine, code: str, round_: int) -> dict[str, object]:
    """The round's answers, student → value (the last each sent)."""
    with engine.connect() as db:
        rows = db.execute(sa.select(ANSWERS.c.student, ANSWERS.c.value)
                          .where((ANSWERS.c.code == normal_code(code)) & (ANSWERS.c.round == round_)))
        return {student: value for student, value in rows}


def expire(engine: sa.Engine, now: float | None = None) -> int:
    """Delete the sessions past their time, with their answers; returns how many sessions went."""
    now = time.time() if now is None else now
    with engine.begin() as db:
        gone = sa.select(SESSIONS.c.code).where(SESSIONS.c.expires <= now)
        db.execute(ANSWERS.delete().where(ANSWERS.c.code.in_(gone)))
        return db.execute(SESSIONS.delete().where(SESSIONS.c.expires <= now)).rowcount
