"""Widgets whose values are mirrored in the URL, so every view of the app is a link that can be shared.

A control's widget key is also its URL query parameter ("kr.lengthscale", "data.n", …). Values read from
the URL are validated by a ``Spec``: numbers are clamped and snapped, options snapped to the nearest one,
anything unreadable is ignored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from kernelviz.app.ui.server import rerun_page
from kernelviz.app.views.notches import replace
from kernelviz.app.views.settings import Controls
from kernelviz.app.views.values import Spec, read, to_url

__all__ = [
    "LESSON_PARAMS", "arrive", "draw", "enter_page", "field", "present", "rendered_values",
    "scene_problems", "start_scene", "sync_url",
]

# session_state keys that are not widgets
_VALUES = "kv._values"  # the value of every control drawn in this run, by key
_RENDERED = "kv._rendered"  # controls drawn in the current run (the URL mirrors exactly these)
_SPECS = "kv._specs"  # label and accepted values each control was last drawn with
_PAGE = "kv._page"  # the page of the previous run
_ENTERED = "kv._entered"  # True in the first run on a page after another page (or a new session)
_SCENE = "kv._scene"  # a lesson scene's control values, in the scene's first run (else None)
_SCENE_PROBLEMS = "kv._scene_problems"  # what the controls of that run did not accept
_PRESENTING = "kv._presenting"  # a lesson is playing: the URL names it, not the controls
LESSON_PARAMS = frozenset({"lesson", "scene", "class", "key"})  # a lesson playing (and its class session)


def _query_value(key: str) -> str | None:
    try:
        values = st.query_params.get_all(key)
    except Exception:
        return None
    return values[-1] if values else None


def enter_page(name: str) -> None:
    """Start of a run on page ``name`` (app.py calls it before any control is drawn).

    In the first run after arriving from another page, a valid URL value wins over the value the session
    holds, so a link that sets controls (the Sources page's, with ``query_params``) shows the view it names,
    shared sidebar included. Within a page the session's values win and the URL only mirrors them.
    """
    state = st.session_state
    state[_ENTERED] = state.get(_PAGE) != name
    state[_PAGE] = name


def arrive() -> None:
    """Make the next run an arrival on its page, so that the URL's values win over the session's (a
    lesson's "Explore this" opens its chapter at the scene's values)."""
    st.session_state.pop(_PAGE, None)


def _set_start_value(key: str, label: str, spec: Spec, fallback: Any) -> None:
    """Put a valid value for control ``key`` in the session before its widget is drawn.

    A new widget starts from the URL, else from ``fallback``; a widget comes back with the value it had
    when its page was last shown (Streamlit keeps it: ``persist_state="session"``). A widget already in the
    session keeps its value while that value stays valid, unless the page was just entered with that
    control in the URL (``enter_page``).
    """
    state = st.session_state
    specs: dict = state.setdefault(_SPECS, {})
    if state.get(_SCENE) is not None:
        _scene_start_value(key, spec, fallback)
        return
    url = spec.coerce(_query_value(key)) if key not in state or state.get(_ENTERED, False) else None
    if key not in state:
        state[key] = fallback if url is None else url
        return
    current = state[key]
    fixed = url if url is not None else spec.coerce(current)
    if fixed is None:
        fixed = fallback
    # Written back only when needed: a widget whose label, range or options changed gets a new identity and
    # would otherwise start again from its minimum. Writing an unchanged value would make the browser reset
    # the widget to it, losing a key press made while this run was going on.
    if specs.get(key) != (label, spec) or fixed != current or type(fixed) is not type(current):
        state[key] = fixed


def _scene_start_value(key: str, spec: Spec, fallback: Any) -> None:
    """In the first run of a lesson's scene, control ``key`` starts from the scene's value, or from its
    default where the scene sets none, whatever the session held; a value it does not accept is noted
    (``scene_problems``) and the nearest one, or the default, is used."""
    state = st.session_state
    value, problem = read(spec, key, state[_SCENE].get(key))
    if problem:
        state.setdefault(_SCENE_PROBLEMS, []).append(problem)
    state[key] = fallback if value is None else value


def start_scene(values: dict[str, object] | None) -> None:
    """Make the controls of this run start from a lesson scene's ``values`` (their defaults elsewhere), or,
    with None, from the session again. The presenter calls it before its scene's first run and after it."""
    state = st.session_state
    state[_SCENE] = values
    if values is not None:
        state[_SCENE_PROBLEMS] = []


def scene_problems() -> list[str]:
    """The scene values the controls drawn in this run did not accept, each with why."""
    return list(st.session_state.get(_SCENE_PROBLEMS, []))


def rendered_values() -> dict[str, object]:
    """The value of every control drawn in this run so far, by key (its URL parameter)."""
    state = st.session_state
    return {key: state[_VALUES][key] for key in sorted(state.get(_RENDERED, ())) if key in state[_VALUES]}


def present(on: bool) -> None:
    """Presenter mode (a lesson is playing): controls keep the URL as the lesson's (``lesson``, ``scene``)."""
    st.session_state[_PRESENTING] = on


def _draw(box: Any, spec: Spec, label: str, format_func: Callable[[Any], str] | None, **common: Any) -> Any:
    """Draw the Streamlit widget of ``spec.kind`` in ``box`` and return its value."""
    fmt = format_func or str
    if spec.kind == "slider":
        return box.slider(label, min_value=spec.min_value, max_value=spec.max_value, step=spec.step, **common)
    if spec.kind == "number":  # as many decimals as the step has (Streamlit shows two by default)
        digits = max(0, -math.floor(math.log10(spec.step))) if spec.step else 0
        return box.number_input(label, min_value=spec.min_value, max_value=spec.max_value, step=spec.step,
                                 format="%d" if spec.integer else f"%.{digits}f", **common)
    if spec.kind == "select_slider":
        return box.select_slider(label, options=spec.options, format_func=fmt, **common)
    if spec.kind == "selectbox":
        return box.selectbox(label, options=spec.options, format_func=fmt, **common)
    if spec.kind == "radio":
        return box.radio(label, options=spec.options, format_func=fmt, horizontal=True, **common)
    if spec.kind == "segmented":
        return box.segmented_control(label, options=spec.options, format_func=fmt, required=True, **common)
    return box.toggle(label, **common)


def _widget(key: str, label: str, spec: Spec, default: Any, *, names: Callable[[Any], str] | None = None,
            **common: Any) -> Any:
    """The widget keyed ``key`` of values ``spec``, started as ``_set_start_value`` says, its value
    mirrored in the URL; ``common`` goes to the Streamlit widget (``help``, ``on_change``, ``disabled``) or
    says where it goes (``container``)."""
    fallback = spec.coerce(default)
    if fallback is None:
        raise ValueError(f"the default {default!r} of control {key!r} is not one of its values")
    _set_start_value(key, label, spec, fallback)
    box = common.pop("container", None)
    box = st if box is None else box
    value = _draw(box, spec, label, names, key=key, persist_state="session", **common)
    state = st.session_state
    state.setdefault(_VALUES, {})[key] = value
    state[_SPECS][key] = (label, spec)
    state.setdefault(_RENDERED, set()).add(key)
    text = to_url(value)
    if not state.get(_PRESENTING) and _query_value(key) != text:
        st.query_params[key] = text
    return value


def field(table: Controls, name: str, context: Any, container: Any = None,
          on_change: Callable[[], None] | None = None) -> Any:
    """The widget of field ``name`` of a view's settings (``table``), for ``context`` (the page's data):
    its label, help, range, key and start all from the table (``kernelviz.app.views.settings``);
    ``on_change`` is called when the reader changes it (a whole-page control reruns the page)."""
    c = table.fields[name]
    return _widget(table.key(name), c.label, table.spec(name, context), table.first(name, context),
                   names=c.format if c.names is not None else None, help=c.help, container=container,
                   on_change=on_change or (rerun_page if c.whole_page else None),
                   disabled=c.disabled(context) if callable(c.disabled) else c.disabled)


def draw(table: Controls, context: Any, rows: Sequence[Sequence[tuple[str, float]]], base: Any = None) -> Any:
    """A view's controls, laid out in ``rows`` of (field, relative column width; "" leaves the column
    empty), and the settings record they set: the fields not drawn here from ``base`` (a control drawn
    elsewhere on the page), else from the table's start; every value one its control accepts."""
    values: dict[str, Any] = {}
    for row in rows:
        for (name, _width), box in zip(row, st.columns([width for _name, width in row]), strict=True):
            if name:
                values[name] = field(table, name, context, box)
    return table.snapped(replace(table.start if base is None else base, **values), context)


def ours(name: str) -> bool:
    """Whether URL parameter ``name`` is kernelviz's: a control's key (``prefix.name``, lower case) or a
    lesson's; any other parameter (a campaign tag, a link shortener's) is someone else's and left alone."""
    head, dot, _tail = name.partition(".")
    return name in LESSON_PARAMS or bool(dot and head.isalnum() and head.islower())


def sync_url() -> None:
    """End of a run: drop kernelviz's URL parameters that are not a control drawn in this run (a stale
    control of another page, a control that is not drawn at these settings), and, while a lesson plays,
    every control's (the lesson's parameters name the view). Parameters that are not kernelviz's stay.

    app.py calls it after the page has run, so the URL names exactly the current view.
    """
    rendered = st.session_state.get(_RENDERED, set())
    if st.session_state.get(_PRESENTING):
        rendered = LESSON_PARAMS
    for name in list(st.query_params.keys()):
        if ours(name) and name not in rendered:
            del st.query_params[name]
    st.session_state[_RENDERED] = set()
    st.session_state[_ENTERED] = False  # a fragment's rerun (app.py does not run) is not an arrival
