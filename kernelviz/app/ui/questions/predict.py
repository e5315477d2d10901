"""Predict, then reveal: a question the student answers with a guess before the page draws the answer.

Each chapter asks at least one. The answer is computed by the backend at the current data and controls,
through the same cached calls as the chapter's charts, and only when the student asks to see it; the
reveal says how close the guess was and why. A lesson scene can show a question (``question = "NAME"``):
then it is drawn on the scene's stage (``kernelviz/app/ui/lesson/stage.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import streamlit as st

from kernelviz.app.mdtable import md_escape
from kernelviz.runtime.i18n import _

__all__ = ["QUESTION_CHAPTERS", "Guess", "Question", "Reveal", "ask", "forget"]

# A question's name → the URL path of the chapter that asks it (lesson files name questions by these).
QUESTION_CHAPTERS: dict[str, str] = {
    "kr.wide_window": "kernel-regression",
    "masked.largest_holdout": "masked-training",
    "mh.largest_mixing": "multi-head",
    "attn.beats_gaussian": "dot-product-attention",
    "icl.rough_window": "in-context",
}


WIDE_LABELS = 60  # characters (with each button's padding) that fill half a page's row of options
ROW_LABELS = 100  # characters that fill a page's whole row: more options are radio buttons, which wrap


@dataclass(frozen=True)
class Guess:
    """How the student answers: a number on a slider (``lo`` … ``hi``), or one of ``options`` (with their
    ``labels``)."""

    lo: float = 0.0
    hi: float = 1.0
    options: tuple = ()
    labels: tuple[str, ...] = ()

    def draw(self, key: str, on_change: Callable[[], None]) -> object:
        """The guess widget; returns the guess."""
        if self.options:
            names = dict(zip(self.options, self.labels or map(str, self.options), strict=True))
            if self._width() > ROW_LABELS:  # more than a row of buttons: radio buttons, which wrap
                return st.radio(_("Your guess"), self.options, format_func=names.get, key=key, index=None,
                                horizontal=True, on_change=on_change)
            return st.segmented_control(_("Your guess"), self.options, format_func=names.get, key=key,
                                        on_change=on_change)
        lo, hi, step = self.notches()
        return st.slider(_("Your guess"), min_value=lo, max_value=hi, step=step,
                         value=round((lo + hi) / 2 / step) * step, key=key, on_change=on_change)

    def _width(self) -> int:
        """The options' words in characters, with each button's padding."""
        return sum(len(label) + 4 for label in self.labels or map(str, self.options))

    def wide(self) -> bool:
        """Whether the options' words need the whole row (``WIDE_LABELS`` characters or more in all)."""
        return bool(self.options) and self._width() >= WIDE_LABELS

    def notches(self) -> tuple[float, float, float]:
        """A number's slider: from, to and step (about a hundredth of the range, one significant digit)."""
        step = float(f"{(self.hi - self.lo) / 100:.1g}") or 0.01
        lo, hi = math.floor(self.lo / step) * step, math.ceil(self.hi / step) * step
        return round(lo, 6), round(hi, 6), step


class Reveal(NamedTuple):
    """What the page says once the student has guessed: the verdict (how close), what it says of this guess
    (``yours``), and the answer with why (``why``, the same for every guess); ``answer`` is the backend's
    answer itself (a number, or the right option), which a class session draws beside the class's."""

    right: bool
    verdict: str
    why: str
    answer: object = None
    yours: str = ""


def _key(name: str, part: str) -> str:
    """The session key of a question's ``part`` ("guess", "reveal", "shown"): under "q.", apart from the
    controls (and from the URL, which mirrors controls only)."""
    return f"q.{name}.{part}"


def box_key(name: str) -> str:
    """The key of the container a question stands in (its CSS class ``st-key-kv-question-…``): its guess is
    not a control of the view, and the browser tests and benchmarks leave it out of the page's sliders."""
    return "kv-question-" + name.replace(".", "-")


def _shown(name: str) -> str:
    return _key(name, "shown")


def forget(name: str) -> None:
    """Hide the answer of question ``name`` again (a new guess, or a lesson scene entered anew)."""
    st.session_state[_shown(name)] = False


def _reveal(name: str) -> None:
    st.session_state[_shown(name)] = True


class Question(NamedTuple):
    """A question as a chapter poses it at its data and settings: its ``name`` (a lesson names it), the
    ``prompt``, how the student answers (``guess``) and ``reveal(guess)``, computed only once asked."""

    name: str
    prompt: str
    guess: Guess
    reveal: Callable[[object], Reveal]


def ask(question: Question) -> None:
    """``question`` on a normal page: the prompt, the guess and "Reveal" in a bordered box, then the answer
    once the student asks. A lesson scene asks its question from the chapter's book
    (``kernelviz.app.ui.charts``) and draws it on its stage."""
    with st.container(border=True, key=box_key(question.name)):
        draw(*question)


def draw(name: str, prompt: str, guess: Guess, reveal: Callable[[object], Reveal]) -> None:
    """Draw question ``name`` where the caller is: prompt, then the guess and "Reveal" in one row (short on
    a projector; the guess alone on its row when its options' words would not fit half of it), and the
    answer once asked for."""
    st.markdown(_("**Predict, then reveal.** {prompt}").format(prompt=prompt))
    if guess.wide():
        value = guess.draw(_key(name, "guess"), on_change=lambda: forget(name))
        button, hint, _rest = st.columns([1, 2, 3], vertical_alignment="center")
    else:
        asked, button, hint = st.columns([3, 1, 2], vertical_alignment="bottom")
        with asked:
            value = guess.draw(_key(name, "guess"), on_change=lambda: forget(name))
    button.button(_("Reveal"), key=_key(name, "reveal"), icon=":material/visibility:", on_click=_reveal,
                  args=(name,), disabled=value is None, type="primary")
    if value is None:
        hint.caption(_("Make a guess first."))
    if value is None or not st.session_state.get(_shown(name)):
        return
    with st.spinner(_("Computing the answer…"), show_time=True):
        answer = reveal(value)
    said = " ".join(part for part in (f"**{md_escape(answer.verdict)}**", answer.yours, answer.why) if part)
    (st.success if answer.right else st.info)(said)
