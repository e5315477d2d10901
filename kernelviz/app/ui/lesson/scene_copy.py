"""Copy as scene: the view on a chapter page, written out as a ``[[scene]]`` block for a lesson file.

A teacher sets a chapter up as they want to show it, presses "Copy this view as a lesson scene" in the
sidebar, and pastes the block into ``lessons/NAME.toml`` (``lessons/README.md``): the chapter, every
control's value and every chart drawn, to be trimmed to the ones the scene shows.
"""

from __future__ import annotations

import json

import streamlit as st

from kernelviz.app.ui.lesson import stage
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.widgets import controls
from kernelviz.app.views.values import to_url
from kernelviz.runtime.i18n import _

__all__ = ["copy_button", "scene_block", "start_run"]

def start_run() -> None:
    """A full run begins: no chart drawn yet."""
    st.session_state[stage.CHARTS] = {}


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return to_url(value)
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string is a JSON string


def scene_block(url: str, values: dict[str, object], charts: list[str]) -> str:
    """The ``[[scene]]`` TOML block of chapter ``url`` at control ``values`` showing ``charts``."""
    number = next(i for i, c in enumerate(CHAPTERS, 1) if c.url == url)
    lines = [
        "[[scene]]",
        f"chapter = {number}  # {CHAPTERS[number - 1].title}",
        'title = "…"',
        "note = '''…'''  # " + _("at most about 60 words; Markdown, LaTeX between dollars: $\\ell$"),
        f"charts = [{', '.join(_toml(c) for c in charts)}]  # " + _("keep the ones to show"),
        "",
        "[scene.set]",
        *(f"{_toml(key)} = {_toml(value)}" for key, value in sorted(values.items())),
    ]
    return "\n".join(lines) + "\n"


@st.dialog(_("This view as a lesson scene"), width="large")
def _show(block: str) -> None:
    st.markdown(_("Paste it into a lesson file in `lessons/` (see `lessons/README.md`), then give it a "
                  "title and a note, and keep the charts the scene should show."))
    st.code(block, language="toml")


def copy_button(url: str) -> None:
    """In the sidebar: a button that shows this chapter's current view as a scene block. Call it after the
    page has run, so that every control and chart of the run is known."""
    if url not in {c.url for c in CHAPTERS}:
        return
    if st.sidebar.button(
            _("Copy this view as a lesson scene"), key="kv.copy_scene", icon=":material/slideshow:",
            help=_("The chapter, its controls' values and its charts, ready for a lesson file.")):
        _show(scene_block(url, controls.rendered_values(), stage.drawn_charts()))
