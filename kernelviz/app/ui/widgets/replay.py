"""The replay of training under a chart (chapters 2, 4 and 5): its toggle and the step the chart opens at.

Both are controls like every other, in the URL and settable by a lesson scene: ``<prefix>replay`` (on or
off) and, while it is on, ``<prefix>step``, the training step the chart shows first (its frame nearest
that step; the slider under the chart and Play go through every frame in the browser).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import streamlit as st

from kernelviz.app.ui.caching.scrub import TrainingPath, training_path
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.widgets.controls import field
from kernelviz.app.ui.widgets.text import prose
from kernelviz.app.views.settings import Control, Controls
from kernelviz.models.heads import FitResult
from kernelviz.models.training import STEPS_MAX
from kernelviz.runtime.i18n import _

__all__ = ["MaskedReplay", "Replay", "masked_path", "masked_replay", "replay_controls", "replay_table"]


class Replay(NamedTuple):
    """Whether the replay is ``on``, and the training ``step`` its chart opens at (at most the run's steps:
    the last, the still chart, unless a step is asked for)."""

    on: bool = False
    step: int = STEPS_MAX

    def at(self, steps: int) -> Replay:
        """This replay for a run of ``steps`` steps: its step no later than the run's last."""
        return self._replace(step=min(int(self.step), int(steps)))


def _most_steps(context: object) -> int:
    """The last step a replay opens at: the run's steps where the page passes them as the context, else
    (a lesson scene's values, read with the data) any step training may have, clamped by ``Replay.at``."""
    return int(context) if isinstance(context, int) else STEPS_MAX


@functools.cache
def replay_table(prefix: str, chapter: str, what: str | None = None) -> Controls:
    """The replay's controls on the page of ``prefix`` ("masked"): the toggle "Replay ``what`` under the
    chart" (``what``: "training" when not given; its help: the ``replay_help`` of ``chapter``'s prose),
    ``<prefix>.replay``, and the number "Open at step", ``<prefix>.step``."""
    what = _("training") if what is None else what
    return Controls(Replay(), prefix, {
        "on": Control(_("Replay {what} under the chart").format(what=what), "toggle", url="replay",
                      notched=False, help=prose(chapter, "replay_help")),
        "step": Control(_("Open at step"), "number", low=0, high=_most_steps, step=1, notched=False,
                        opens_at=_most_steps,
                        help=_("The step the chart shows first (the kept step nearest it); the slider under "
                               "the chart and Play go through all of them.")),
    })


def replay_controls(prefix: str, steps: int, chapter: str, what: str | None = None) -> Replay:
    """The replay's controls (``replay_table``) side by side: the toggle and, when it is on, the number
    "Open at step" (0 … ``steps``, the last by default: the still chart)."""
    table = replay_table(prefix.rstrip("."), chapter, what)
    left, right, _rest = st.columns([1.6, 1.0, 1.4], vertical_alignment="bottom")
    if not field(table, "on", int(steps), left):
        return Replay(False, int(steps))
    _stay_at_the_end(prefix, int(steps))
    return Replay(True, int(field(table, "step", int(steps), right)))


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


def masked_path(data: Data, run: FitResult, steps: int, asked: Replay) -> MaskedReplay | None:
    """Chapter 2's replay as ``asked`` (its step at most the run's ``steps``: ``Replay.at``): training's
    path (``cache_scrub.training_path``: the fit at the kept steps); None when it is off, for a search (it
    has no steps), or for a run that stopped at its first step."""
    if run.method == "search" or not asked.on:
        return None
    path = training_path(data, run.kernel, run.holdout, steps, run.learning_rate, run.seed)
    return None if path is None else MaskedReplay(path, asked.at(steps).step)


def masked_replay(data: Data, run: FitResult, steps: int, chapter: str) -> Replay:
    """Chapter 2's replay controls (``replay_controls``) and, when the replay is on, a caption naming its
    frames; the replay asked for (off for a search: it has no steps, and no controls are drawn)."""
    if run.method == "search":
        return Replay(False, int(steps))
    asked = replay_controls("masked.", steps, chapter)
    if (replay := masked_path(data, run, steps, asked)) is not None:
        st.caption(prose(chapter, "replay_caption", frames=len(replay.path.steps)))
    return asked
