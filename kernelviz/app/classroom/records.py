"""The records a class session keeps: the question it asks now (``Question``), what the backend answered
once the teacher revealed it (``Answer``), the session itself (``Session``), and ``ClassError``, the one
exception, whose message is written for the person who caused it."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import NamedTuple

from kernelviz.runtime.i18n import _

__all__ = ["Answer", "ClassError", "Question", "Session", "Showing"]


class ClassError(ValueError):
    """Anything a class session refuses, with a message for the student or teacher who asked."""


@dataclass(frozen=True)
class Question:
    """A question as the students see it: its ``name`` (a chapter's question), its ``prompt`` and the guess
    it takes: a number from ``lo`` to ``hi`` in steps of ``step``, or one of ``options`` named ``labels``."""

    name: str
    prompt: str
    lo: float = 0.0
    hi: float = 1.0
    step: float = 0.01
    options: tuple = ()
    labels: tuple[str, ...] = ()

    def check(self, value: object) -> float | str | int:
        """``value`` as this question takes it, or ``ClassError`` saying what is wrong with it."""
        if self.options:
            if isinstance(value, bool) or value not in self.options:
                raise ClassError(_("That is not one of the question's choices."))
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ClassError(_("The answer to this question is a number."))
        if not self.lo - 1e-9 <= float(value) <= self.hi + 1e-9:
            raise ClassError(_("Answer with a number from {lo:g} to {hi:g}.").format(lo=self.lo, hi=self.hi))
        return float(value)

    def label(self, value: object) -> str:
        """How an answer reads: its choice's label, or the number to three digits."""
        if self.options:
            names = dict(zip(self.options, self.labels or map(str, self.options), strict=True))
            return names.get(value, str(value))
        return f"{float(value):.3g}"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Question:
        d = json.loads(text)
        return cls(**{**d, "options": tuple(d["options"]), "labels": tuple(d["labels"])})


@dataclass(frozen=True)
class Answer:
    """The answer the backend computed at the scene's data: its ``value``, how it reads (``label``), why
    (``why``, Markdown), and which of the class's answers counted as right (``right``)."""

    value: float | str | int
    label: str
    why: str
    right: tuple = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Answer:
        d = json.loads(text)
        return cls(**{**d, "right": tuple(d["right"])})


class Showing(NamedTuple):
    """What the teacher's stage shows: scene number ``scene`` of the lesson, its ``title``, and its
    ``question`` (None: it asks none)."""

    scene: int
    title: str
    question: Question | None = None


@dataclass(frozen=True)
class Session:
    """A class session as the store holds it: its join ``code``, the ``lesson`` and ``scene`` (with its
    ``title``) the teacher shows, the ``round`` of answers (a new one each time a question opens), the
    ``question`` asked (None: the scene asks none), its ``answer`` once revealed, whether the teacher has
    ``closed`` it, and when it ``expires`` (seconds since the epoch)."""

    code: str
    lesson: str
    scene: int
    title: str
    round: int
    question: Question | None
    answer: Answer | None
    closed: bool
    expires: float

    @property
    def moment(self) -> tuple[int, int, bool, bool]:
        """Where the class is: its scene and round, whether the answer is out, whether it has ended (a
        student's view draws itself anew when this changes)."""
        return self.scene, self.round, self.answer is not None, self.closed

    @property
    def open_question(self) -> Question | None:
        """The question the class may answer now: asked, not yet revealed, the session not closed."""
        return None if self.closed or self.answer is not None else self.question
