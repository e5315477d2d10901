"""Animation frames drawn in the browser: a slider under the plot and Play / Pause buttons step through
frames sent with the figure, without a round trip to the server (chapter 1's scrub through ℓ, the replays
of training)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from kernelviz.app.figures.numbers import _single
from kernelviz.app.figures.styling import controls_at, with_layout
from kernelviz.runtime.i18n import _, ngettext

__all__ = ["SCRUB_FRAME_MS", "Frame", "Moves", "after_steps", "animated", "replay_frames", "showing",
           "trace_index"]

SCRUB_FRAME_MS = 120  # how long each frame stays on screen when the animation plays
BUTTONS_PX = 125  # the slider starts this far right of the plot's left edge, after Play and Pause
ROOM_PX = 110  # px a figure grows by for its slider and buttons


class Frame(NamedTuple):
    """One animation frame: its ``name``, the slider's ``label``, the new ``data`` of the traces at the
    figure's indices ``traces`` (plain dicts), and the figure's ``title`` then (None: unchanged)."""

    name: str
    label: str
    data: list[dict]
    traces: list[int]
    title: str | None = None


def after_steps(k: int) -> str:
    """"At the start", "After 1 step", "After 1,500 steps": a replay frame's title starts so."""
    return _("At the start") if k == 0 else ngettext("After {k:,} step", "After {k:,} steps", k).format(k=k)


def trace_index(fig: go.Figure, name: str) -> int:
    """The index of the trace called ``name``."""
    return next(i for i, trace in enumerate(fig.data) if trace.name == name)


def animated(fig: go.Figure, frames: Sequence[Frame], *, active: int, prefix: str,
             from_start: bool = False) -> go.Figure:
    """A new figure with ``frames``, a slider under the plot (starting at frame ``active``, its marks the
    frames' labels after ``prefix``) and Play / Pause buttons; Play goes on from the frame shown, or from
    the first with ``from_start``. Built as plain data (``with_layout``), without Plotly's validation."""
    steps = [{"label": f.label, "method": "animate",
              "args": [[f.name], {"mode": "immediate", "frame": {"duration": 0, "redraw": True},
                                  "transition": {"duration": 0}}]} for f in frames]
    play = {"frame": {"duration": SCRUB_FRAME_MS, "redraw": True}, "fromcurrent": not from_start,
            "transition": {"duration": 0}}
    pause = {"mode": "immediate", "frame": {"duration": 0, "redraw": False}, "transition": {"duration": 0}}
    plain = [{"name": f.name, "data": f.data, "traces": f.traces,
              "layout": {} if f.title is None else {"title": {"text": f.title}}} for f in frames]
    y, below = controls_at(fig)
    return with_layout(fig, {
        "sliders": [{"active": active, "steps": steps, "x": 0.0, "len": 1.0, "y": y, "yanchor": "top",
                     "currentvalue": {"prefix": prefix, "font": {"size": 13}},
                     "pad": {"t": 10, "l": BUTTONS_PX}}],
        "updatemenus": [{"type": "buttons", "direction": "left", "x": 0.0, "y": y, "yanchor": "top",
                         "xanchor": "left", "pad": {"t": 40}, "showactive": False,
                         "buttons": [{"label": _("Play"), "method": "animate", "args": [None, play]},
                                     {"label": _("Pause"), "method": "animate", "args": [[None], pause]}]}],
        "height": (fig.layout.height or 420) + ROOM_PX,
        "margin": {"b": (fig.layout.margin.b or 50) + ROOM_PX},
        **below,
    }, frames=plain)


def showing(fig: go.Figure, frame: Frame) -> go.Figure:
    """``fig`` drawn as ``frame`` draws it (its traces' data and its title), for a chart that opens at a
    frame other than the still one. Returns ``fig``."""
    for k, data in zip(frame.traces, frame.data, strict=True):
        fig.data[k].update({name: value for name, value in data.items() if name != "type"})
    if frame.title is not None:
        fig.update_layout(title={"text": frame.title})
    return fig


class Moves(NamedTuple):
    """What moves in a replay of T steps: ``lines`` maps a line trace (its name, or its index) to its y at
    each step, (T, len(x)), on the still line's own x; ``heatmaps`` maps a heatmap trace's index to its z at
    each step, (T, rows, cols), on the heatmap's own x and y or on ``heatmap_xy``; the traces named in
    ``hidden`` (a band) are empty but at the last frame; ``markers`` maps a one-point trace's name to its
    (x, y) at each step, two (T,) arrays."""

    lines: Mapping[str | int, object] | None = None
    heatmaps: Mapping[int, object] | None = None
    heatmap_xy: tuple[object, object] | None = None
    hidden: Sequence[str] = ()
    markers: Mapping[str, tuple[object, object]] | None = None


def replay_frames(fig: go.Figure, steps: Sequence[int], titles: Sequence[str], moves: Moves) -> list[Frame]:
    """Frames of a training replay, one per step in ``steps`` (titled ``titles``), each moving the traces
    ``moves`` names to that step; the last frame is the still chart itself (every trace as the figure has
    it)."""
    movers: dict[int, Callable[[int], dict]] = {}  # trace index → its data at frame i
    for key, ys in (moves.lines or {}).items():
        y = np.asarray(ys, dtype=np.float64)
        movers[key if isinstance(key, int) else trace_index(fig, key)] = lambda i, y=y: {
            "type": "scatter", "y": _single(y[i])}
    at = moves.heatmap_xy
    xy = {} if at is None else {"x": _single(np.asarray(at[0], np.float64)),
                                "y": _single(np.asarray(at[1], np.float64))}
    for k, zs in (moves.heatmaps or {}).items():
        movers[k] = lambda i, zs=zs: {"type": "heatmap", "z": _single(np.asarray(zs[i], np.float64))} | xy
    for name in moves.hidden:
        movers[trace_index(fig, name)] = lambda i: {"type": "scatter", "x": [], "y": []}
    for name, (px, py) in (moves.markers or {}).items():
        movers[trace_index(fig, name)] = lambda i, px=px, py=py: {
            "type": "scatter", "x": [float(px[i])], "y": [float(py[i])]}
    last = len(steps) - 1
    return [Frame(f"{i}", f"{int(step):,}", [_still(fig.data[k]) if i == last else move(i)
                                             for k, move in movers.items()], list(movers), titles[i])
            for i, step in enumerate(steps)]


def _still(trace: object) -> dict:
    """A trace's drawn data as a frame sends it (x, y, and z for a heatmap), float32 where nothing visible
    changes (``_single``), as ``compact`` sends the still chart."""
    names = ("x", "y", "z") if trace.type == "heatmap" else ("x", "y")
    return {"type": trace.type} | {name: _compact(trace[name]) for name in names}


def _compact(values: object) -> object:
    """Numbers as a float array made small by ``_single``; anything else (text, empty) as it is."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return values
    return _single(array) if array.size else values
