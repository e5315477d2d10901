"""Each chapter's charts by name: a lesson scene, a class's screen or an export draws the charts it names
from the chapter's settings, without running the chapter's page.

A chapter's module here declares a ``Book``: its settings as one record of records (``tables``, one
``Controls`` table per record: the fit's, the explained query's, …), each of its charts as a function of
the data and that record (``charts``: chart key → function returning a ``Chart``, a ``Panel``, or None
where the chart is not drawn at those settings) and its questions the same way (``questions``). The page
reads the same record from its widgets and draws the same functions, beside its words, so a scene shows
exactly what the page shows at the scene's values. ``book(url)`` finds a chapter's book by its URL path
(``MODULES``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import plotly.graph_objects as go
import streamlit as st

from kernelviz.app.ui.lesson import stage
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions.predict import Question
from kernelviz.app.ui.widgets import controls
from kernelviz.app.ui.widgets.text import NO_LOSS, show
from kernelviz.app.views.settings import Control, Controls, Parsed
from kernelviz.runtime.i18n import _

__all__ = ["Book", "Chart", "Drawn", "Panel", "Picture", "book", "picture_control", "picture_field",
           "picture_table", "put", "put_loss"]


@dataclass(frozen=True)
class Chart:
    """A Plotly chart as a chapter draws it: the ``figure``, the name of its PNG download (``filename``),
    and what an untitled chart is called in its text alternative (``name``; its key's name when None)."""

    figure: go.Figure
    filename: str
    name: str | None = None


@dataclass(frozen=True)
class Panel:
    """Words and numbers drawn in place of a chart (the formula at x* with its table): ``draw()`` writes
    them where it is called."""

    draw: Callable[[], None]


Drawn = Chart | Panel
Builder = Callable[[Data, Any], Drawn | None]


@dataclass(frozen=True)
class Book:
    """A chapter's settings and what it draws from them. ``tables`` is a NamedTuple of ``Controls``, one
    per part of the settings; the settings themselves are the same NamedTuple type holding each table's
    record. ``charts`` and ``questions`` take the data and those settings; ``picks`` names the charts a
    click explains a point of, each with the prefix of its selection's controls (``"kr.fit": "kr."``)."""

    tables: NamedTuple
    charts: Mapping[str, Builder]
    questions: Mapping[str, Callable[[Data, Any], Question]]
    picks: Mapping[str, str] = field(default_factory=dict)

    def read(self, data: Data, values: Mapping[str, Any]) -> Parsed:
        """The settings ``values`` (a lesson scene's, a URL's) name, each table's record read by its
        controls (clamped and snapped), with what could not be taken as given."""
        parsed = [table.from_query(values, data) for table in self.tables]
        settings = type(self.tables)(*(p.record for p in parsed))
        return Parsed(settings, tuple(problem for p in parsed for problem in p.problems))

    def keys(self) -> Iterator[str]:
        """Every control key (URL parameter) of the chapter's settings."""
        for table in self.tables:
            yield from (table.key(name) for name in table.fields)

    def to_query(self, settings: NamedTuple) -> dict[str, str]:
        """The URL parameters that name ``settings``."""
        out: dict[str, str] = {}
        for table, record in zip(self.tables, settings, strict=True):
            out.update(table.to_query(record))
        return out


class Picture(NamedTuple):
    """Which of a section's pictures is drawn (``picture_table``)."""

    picture: str


def picture_field(pictures: Mapping[str, str]) -> Control:
    """A section's "Picture": one of ``pictures`` (value → label, its Material icon first). A page builds
    and sends only the picture chosen, so the controls above it redraw one chart instead of all of them."""
    return Control(_("Picture"), "segmented", options=tuple(pictures), names=pictures, notched=False)


def picture_table(prefix: str, pictures: Mapping[str, str]) -> Controls:
    """A section's "Picture" alone, ``<prefix>.picture`` (``picture_field``), the first by default."""
    return Controls(Picture(next(iter(pictures))), prefix, {"picture": picture_field(pictures)})


# The chapters' books by URL path: each module here declares ``BOOK``.
MODULES = {"kernel-regression": "kernel_regression", "masked-training": "masked", "multi-head": "heads",
           "dot-product-attention": "attention", "in-context": "incontext"}


def book(url: str) -> Book:
    """The book of the chapter at URL path ``url`` (a KeyError for a page that is not a chapter)."""
    return importlib.import_module(f"{__name__}.{MODULES[url]}").BOOK


def put(key: str, drawn: Drawn | None, on_select: Callable[[], None] | None = None) -> None:
    """Draw chart (or panel) ``key`` where it goes (``stage.place``): a ``Chart`` by ``show`` (``on_select``:
    its click callback), a ``Panel`` in a container of its own; nothing for None (not drawn at these
    settings)."""
    if isinstance(drawn, Chart):
        show(drawn.figure, key, drawn.filename, on_select=on_select, name=drawn.name)
    elif isinstance(drawn, Panel) and (box := stage.place(key)) is not None:
        with box.container():
            drawn.draw()


def put_loss(key: str, drawn: Drawn | None, caption: str) -> None:
    """A training's loss chart ``key`` with its ``caption`` under it, or, for a run with no loss to draw (it
    diverged at its first step), why there is none."""
    if drawn is None:
        st.info(NO_LOSS)
        return
    put(key, drawn)
    st.caption(caption)


def picture_control(table: Controls, data: Data) -> Picture:
    """The "Picture" of ``table`` (``picture_table``) as the page draws it."""
    return Picture(controls.field(table, "picture", data))
