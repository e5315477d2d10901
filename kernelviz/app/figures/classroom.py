"""The class's answers to a question, beside the backend's answer: a histogram for a number, a bar per
choice for a choice; a student's own answer is marked on theirs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.styling import COLORS, Look, style
from kernelviz.runtime.i18n import _, ngettext

if TYPE_CHECKING:
    from kernelviz.app.classroom.records import Question

__all__ = ["BINS", "class_answers_figure"]

BINS = 20  # a number's range is cut into this many bins


def _choices(values: Sequence, options: Sequence, labels: Sequence[str], answer: object,
             mine: object) -> list[go.Bar]:
    counts = [sum(v == o for v in values) for o in options]
    colors = [COLORS["fit"] if o == answer else COLORS["data"] for o in options]
    outline = [3 if mine is not None and o == mine else 0 for o in options]
    return [go.Bar(x=list(labels), y=counts, name=_("answers"), marker={"color": colors,
                   "line": {"width": outline, "color": COLORS["truth"]}},
                   hovertemplate=_("%{x}: %{y} answers") + "<extra></extra>")]


def _numbers(values: Sequence[float], lo: float, hi: float) -> list[go.Bar]:
    edges = np.linspace(lo, hi, BINS + 1)
    counts = np.histogram(np.clip(np.asarray(values, dtype=float), lo, hi), bins=edges)[0]
    mids = (edges[:-1] + edges[1:]) / 2
    return [go.Bar(x=mids, y=counts, width=float(edges[1] - edges[0]) * 0.9, name=_("answers"),
                   marker={"color": COLORS["data"]},
                   hovertemplate=_("%{x:.3g}: %{y} answers") + "<extra></extra>")]


def _mark(fig: go.Figure, x: float, name: str, color: str, dash: str) -> None:
    """A vertical line at ``x`` drawn as a trace (so that the legend and the text alternative name it)."""
    top = max([max(t.y, default=0) for t in fig.data] + [1])
    fig.add_trace(go.Scatter(x=[x, x], y=[0, top * 1.05], mode="lines", name=name,
                             line={"color": color, "width": 3, "dash": dash}, hoverinfo="skip"))


def class_answers_figure(values: Sequence, question: Question, answer: object, *, mine: object = None,
                         height: int = 300) -> go.Figure:
    """The class's ``values`` for ``question``: a bar per option (the right one, ``answer``, in the fit's
    colour; ``mine`` outlined), or a histogram of ``BINS`` bins from the question's ``lo`` to its ``hi`` with
    the computed ``answer`` and ``mine`` as vertical lines."""
    n, q = len(values), question
    title = ngettext("The class's answers ({n} answer)", "The class's answers ({n} answers)", n).format(n=n)
    counts = {"rangemode": "tozero", "tick0": 0, "dtick": max(1, math.ceil(n / 5))}  # whole answers
    if q.options:
        fig = go.Figure(_choices(values, q.options, q.labels or [str(o) for o in q.options], answer, mine))
        look = Look(title=title, x_title="", y_title=_("answers"), height=height, showlegend=False)
        return style(fig, look, y_axes=counts)
    fig = go.Figure(_numbers(values, q.lo, q.hi))
    computed = _("computed answer {value:.3g}").format(value=float(answer))
    _mark(fig, float(answer), computed, COLORS["fit"], "solid")
    if mine is not None:
        yours = _("your answer {value:.3g}").format(value=float(mine))
        _mark(fig, float(mine), yours, COLORS["truth"], "dash")
    return style(fig, Look(title=title, x_title=_("answer"), y_title=_("answers"), height=height),
                 y_axes=counts)
