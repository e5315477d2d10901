"""The replay of training under a chart (chapters 2, 4 and 5): its toggle and the step the chart opens at.

Both are controls like every other, in the URL and settable by a lesson scene: ``<prefix>replay`` (on or
off) and, while it is on, ``<prefix>step``, the training step the chart shows first (its frame nearest
that step; the slider under the chart and Play go through every frame in the browser).
"""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from kernelviz.app.ui.caching.scrub import TrainingPath, training_path
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.widgets.controls import control
from kernelviz.app.ui.widgets.text import prose
from kernelviz.models.heads import FitResult
from kernelviz.runtime.i18n import _

__all__ = ["MaskedReplay", "Replay", "masked_replay", "replay_controls"]


class Replay(NamedTuple):
    """Whether the replay is ``on``, and the training ``step`` its chart opens at."""

    on: bool
    step: int


def replay_controls(prefix: str, steps: int, chapter: str, what: str | None = None) -> Replay:
    """The toggle "Replay ``what`` under the chart" (``what``: "training" when not given; its help: the
    ``replay_help`` of ``chapter``'s prose) and, when it is on, the number "Open at step" (0 … ``steps``,
    the last by default: the still chart), side by side."""
    left, right, _rest = st.columns([1.6, 1.0, 1.4], vertical_alignment="bottom")
    what = _("training") if what is None else what
    on = control("toggle", _("Replay {what} under the chart").format(what=what), f"{prefix}replay",
                 default=False, help=prose(chapter, "replay_help"), container=left)
    if not on:
        return Replay(False, int(steps))
    _stay_at_the_end(prefix, int(steps))
    step = control("number", _("Open at step"), f"{prefix}step", default=int(steps), min_value=0,
                   max_value=int(steps), step=1, container=right,
                   help=_("The step the chart shows first (the kept step nearest it); the slider under the "
                          "chart and Play go through all of them."))
    return Replay(True, int(step))


def _stay_at_the_end(prefix: str, steps: int) -> None:
    """A chart opened at the last step stays at the last step when the number of training steps changes
    (any other step is kept, clamped to the new range by the control)."""
    seen, key = f"kv._replay_steps.{prefix}", f"{prefix}step"
    if st.session_state.get(seen, steps) != steps and st.session_state.get(key) == st.session_state[seen]:
        st.session_state[key] = steps
    st.session_state[seen] = steps


class MaskedReplay(NamedTuple):
    """Chapter 2's replay: the fit and ℓ at the kept steps (``path``), and the ``step`` its charts open at."""

    path: TrainingPath
    step: int


def masked_replay(data: Data, run: FitResult, steps: int, chapter: str) -> MaskedReplay | None:
    """Chapter 2's replay controls and, when the replay is on, training's path (``cache_scrub``) with a
    caption; None when it is off, or for a search (it has no steps)."""
    if run.method == "search":
        return None
    asked = replay_controls("masked.", steps, chapter)
    if not asked.on:
        return None
    path = training_path(data, run.kernel, run.holdout, steps, run.learning_rate, run.seed)
    if path is None:  # a run that stopped at its first step
        return None
    st.caption(prose(chapter, "replay_caption", frames=len(path.steps)))
    return MaskedReplay(path, asked.step)
