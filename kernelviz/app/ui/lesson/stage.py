"""The stage of a lesson scene: a slot for each chart the scene names, and its status line.

The presenter (``kernelviz/app/ui/lesson/presenter.py``) draws a scene's charts from its chapter's book
(``kernelviz.app.ui.charts``) with a ``Stage`` active: ``ui.show`` then draws each chart into its slot on the
stage, at a projector's height, and ``ui.busy`` says on the stage what is being computed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from kernelviz.app.ui.questions.predict import Question

__all__ = [
    "CHARTS", "CHART_HEIGHT", "QUESTION_ROOM", "Stage", "active", "drawn_charts", "note_chart", "on_stage",
    "place",
]

CHARTS = "kv._charts"  # session_state: the chart keys drawn in this run, in order (for "Copy as scene")

CHART_HEIGHT = 450  # px: a scene's charts fit under its title and note on a 1280 × 720 projector
QUESTION_ROOM = 100  # px of that a scene's question takes, above its charts (its prompt, guess and Reveal)


@dataclass
class Stage:
    """The visible slots of a scene: one container per chart key (and one for its question), one for status
    lines; ``drawn`` collects the keys of the charts drawn into them, ``asked`` the scene's question, drawn by
    the presenter once the charts are, ``described`` each chart's text alternative, which the presenter
    shows under the charts (``words``). ``chart_height``: the height of its charts, smaller under a question
    so that a chart still ends on a projector's first screen."""

    slots: dict[str, Any]
    status: Any
    words: Any = None
    drawn: set[str] = field(default_factory=set)
    described: dict[str, str] = field(default_factory=dict)
    asked: dict[str, Question] = field(default_factory=dict)
    chart_height: int = CHART_HEIGHT


_ACTIVE: ContextVar[Stage | None] = ContextVar("kernelviz_stage", default=None)


def active() -> Stage | None:
    """The stage of the scene being played in this script run, or None on a normal page."""
    return _ACTIVE.get()


@contextmanager
def on_stage(stage: Stage) -> Iterator[Stage]:
    """Make ``stage`` active while the chapter runs inside the block."""
    token = _ACTIVE.set(stage)
    try:
        yield stage
    finally:
        _ACTIVE.reset(token)


def note_chart(key: str) -> None:
    """Chart ``key`` was drawn in this run (``ui.show`` calls it)."""
    st.session_state.setdefault(CHARTS, {})[key] = None


def place(key: str) -> Any:
    """Where chart (or panel) ``key`` goes in this run: the page (``st``) on a normal page, its slot on a
    scene's stage when the scene names it, None when a scene plays without it (it is not drawn). Notes the
    key as drawn either way (``note_chart``)."""
    note_chart(key)
    scene = active()
    if scene is None:
        return st
    if key not in scene.slots:
        return None
    scene.drawn.add(key)
    return scene.slots[key]


def drawn_charts() -> list[str]:
    """The keys of the charts drawn in this run, in the order they were drawn."""
    return list(st.session_state.get(CHARTS, {}))
