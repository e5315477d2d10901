"""The presenter view: ``?lesson=NAME&scene=K`` plays lesson file ``lessons/NAME.toml`` one scene at a time.

A scene is drawn on its chapter's own page (the URL path changes with the chapter), as a title, a note in
large type and the charts it names, with a scene counter, Previous / Next (← →, and PageUp / PageDown,
which presentation clickers send) and "Explore this", which opens the chapter at the same values. The
chapter's page does not run: the scene's values are read into the chapter's settings by its book
(``kernelviz.app.ui.charts``, with the messages a URL would get), and the book draws the charts and asks
the question the scene names, onto the stage (``kernelviz/app/ui/lesson/stage.py``). The page draws the
same functions from the same settings, so a scene shows exactly what the chapter shows at those values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import streamlit as st

from kernelviz.app.classroom.records import Showing
from kernelviz.app.mdtable import md_escape
from kernelviz.app.ui import charts, platform
from kernelviz.app.ui.classroom import session as classroom
from kernelviz.app.ui.lesson import stage
from kernelviz.app.ui.lesson.files import Lesson, Problem, Scene, lesson_names, lesson_path, load_lesson
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions import predict as questions
from kernelviz.app.ui.questions.predict import QUESTION_CHAPTERS
from kernelviz.app.ui.widgets import controls, explain
from kernelviz.app.views.values import to_url
from kernelviz.runtime.i18n import _

__all__ = ["Request", "play", "requested"]

_SHOWN = "kv._scene_shown"  # (lesson, scene) whose first run is done: its controls hold the scene's values
_FOUND = "kv._scene_found"  # what that first run found wrong with the scene's values
_PICKED = "kv._scene_picked"  # the query a click on the scene's charts explains, by control key

_STAGE = platform.key_class("kv-stage")  # the stage (``play``); then the chapter off it, and the twins
CSS = f"""<style>
{platform.MAIN_BLOCK} {{ padding-top: 3rem; padding-bottom: 1rem; }}
{_STAGE} p, {_STAGE} li {{ font-size: 1.35rem; line-height: 1.45; }}
{_STAGE} h2 {{ font-size: 1.9rem; padding: 0; }}
{_STAGE} {platform.KATEX} {{ font-size: 1.3em; }}
{platform.key_class("kv-twins")} {{ display: none; }}
</style>"""  # Streamlit's insides: ``kernelviz/app/ui/platform.py``


@dataclass(frozen=True)
class Request:
    """A lesson asked for in the URL: its name and the scene (1-based, as in ``&scene=K``)."""

    name: str
    scene: int


def requested() -> Request | None:
    """The lesson the URL asks for (``?lesson=NAME``, optionally ``&scene=K``), or None."""
    name = st.query_params.get("lesson")
    if not name:
        return None
    try:
        scene = int(st.query_params.get("scene", "1"))
    except ValueError:
        scene = 1
    return Request(name.strip(), scene)


@functools.lru_cache(maxsize=64)
def _load(path: Path, mtime: float) -> Lesson:
    return load_lesson(path, QUESTION_CHAPTERS)


def _read(name: str) -> Lesson:
    path = lesson_path(name)
    return _load(path, path.stat().st_mtime)


def lesson(name: str) -> Lesson | None:
    """The lesson file ``name``, read again whenever it changes on disk; None where there is no such file
    (only the names of ``lessons/*.toml`` are read: a name is never a path)."""
    return _read(name) if name in lesson_names() else None


def lessons() -> list[Lesson]:
    """Every lesson in ``lessons/``, by name."""
    return [_read(name) for name in lesson_names()]


def no_such_lesson(name: str, home: st.Page) -> None:
    """The page for a lesson name that has no file: what there is instead, each a link."""
    st.title(_("No such lesson"))
    st.error(_("There is no lesson {name} (no file lessons/{file}.toml).").format(name=repr(name), file=name),
             icon=":material/error:")
    found = lessons()
    if not found:
        st.markdown(_("There are no lesson files in `lessons/` yet."))
    for other in found:
        st.page_link(home, label=other.title, query_params={"lesson": other.name},
                     icon=":material/slideshow:")


def _go(to: int) -> None:
    st.query_params["scene"] = str(to)


def _explore(values: dict[str, str]) -> None:
    """Leave the presenter view for the chapter itself, at the scene's values (they win over the
    session's)."""
    st.query_params.from_dict(values)
    controls.arrive()


class _Boxes(NamedTuple):
    """The header's slots filled once the chapter has run: "Explore this", and the class session's bar."""

    explore: object
    klass: object


def _header(found: Lesson, k: int) -> _Boxes:
    """The lesson's name, the scene counter, Previous / Next with their keys; returns the slots of
    "Explore this" and of the class session, drawn once the chapter has run."""
    n = len(found.scenes)
    left, prev, nxt, explore, klass = st.columns([3.4, 1.5, 1.3, 1.7, 1.7], vertical_alignment="center")
    left.markdown(_("**{title}** · scene {k} of {n}").format(title=md_escape(found.title), k=k, n=n))
    prev.button(_("Previous"), key="lesson.prev", icon=":material/arrow_back:", on_click=_go, args=(k - 1,),
                disabled=k <= 1, shortcut="Left", width="stretch")
    nxt.button(_("Next"), key="lesson.next", icon=":material/arrow_forward:", on_click=_go, args=(k + 1,),
               disabled=k >= n, shortcut="Right", width="stretch", type="primary")
    with st.container(key="kv-twins"):  # hidden twins for a presentation clicker's PageUp / PageDown
        st.button(_("Previous scene"), key="lesson.pageup", on_click=_go, args=(k - 1,), disabled=k <= 1,
                  shortcut="PageUp")
        st.button(_("Next scene"), key="lesson.pagedown", on_click=_go, args=(k + 1,), disabled=k >= n,
                  shortcut="PageDown")
    return _Boxes(explore.empty(), klass.container())


def _stage(scene: Scene) -> stage.Stage:
    """The scene's title and note, a status line, a slot for its question and one per chart (two to a
    row); under a question the charts are ``stage.QUESTION_ROOM`` shorter."""
    st.header(scene.title, anchor=False)
    if scene.note:
        st.markdown(scene.note)
    status = st.container()
    slots: dict[str, object] = {}
    if scene.question:  # first: the class answers before it looks at the charts
        slots[scene.question] = st.container()
    for row in range(0, len(scene.charts), 2):
        pair = scene.charts[row : row + 2]
        boxes = st.columns(len(pair)) if len(pair) > 1 else [st.container()]
        slots.update((key, box.container()) for key, box in zip(pair, boxes, strict=True))
    room = stage.QUESTION_ROOM if scene.question else 0
    return stage.Stage(slots, status, words=st.container(), chart_height=stage.CHART_HEIGHT - room)


def _in_words(the_stage: stage.Stage) -> None:
    """Under the charts, closed: each chart's text alternative, for a teacher to read out and for a student
    with a screen reader to find in reading order."""
    if the_stage.described:
        with the_stage.words, st.expander(_("The charts in words"), icon=":material/description:"):
            st.markdown("\n".join(f"- {md_escape(text)}" for text in the_stage.described.values()))


def _found_in_first_run(scene: Scene, known: frozenset[str]) -> list[str]:
    """What the controls did not accept of the scene's values, and the values no control of the page
    (``known``) has."""
    unknown = [_("{key} is not a control of this page or of the sidebar").format(key=key)
               for key in scene.values if key not in known]
    return controls.scene_problems() + unknown


def play(request: Request, page: st.Page, pages: dict[str, st.Page], home: st.Page,
         sidebar: Callable[[bool], Data]) -> None:
    """Play scene ``request.scene`` of lesson ``request.name`` on ``page`` (switching to the scene's
    chapter first); ``sidebar(messages)`` draws the shared data sidebar and returns its data."""
    found = lesson(request.name)
    if found is None:
        no_such_lesson(request.name, home)
        return
    k = min(max(request.scene, 1), max(len(found.scenes), 1))
    scene = found.scenes[k - 1] if found.scenes else None
    if scene is not None and scene.chapter is not None and page.url_path != scene.chapter.url:
        st.switch_page(pages[scene.chapter.path],
                       query_params={"lesson": found.name, "scene": str(k), **classroom.params()})
    controls.present(True)
    st.markdown(CSS, unsafe_allow_html=True)
    with st.container(key="kv-stage"):
        boxes = _header(found, k) if scene is not None else None
        the_stage = _stage(scene) if scene is not None else None
        problems = st.container()
    if scene is None or the_stage is None or scene.chapter is None:
        _problems(problems, found, k, [])
        return
    first = st.session_state.get(_SHOWN) != (found.name, k)
    controls.start_scene(scene.values if first else None)
    if first:
        st.session_state[_PICKED] = {}  # a point clicked in another scene is not this one's
    if first and scene.question:
        questions.forget(scene.question)  # the class guesses anew each time the scene comes up
    try:
        with stage.on_stage(the_stage):
            explore = _by_name(charts.book(scene.chapter.url), scene, the_stage, sidebar)
    finally:
        controls.start_scene(None)
    if first:
        st.session_state[_FOUND] = _found_in_first_run(scene, explore.known) + list(explore.problems)
        st.session_state[_SHOWN] = (found.name, k)
    _after_run(found, k, the_stage, boxes, explore.values)
    missing = [_("{key} is not drawn on this page at these values").format(key=key)
               for key in the_stage.slots if key not in the_stage.drawn]
    _problems(problems, found, k, st.session_state.get(_FOUND, []) + missing)


class _Played(NamedTuple):
    """What a scene's run leaves for its header: the values "Explore this" opens the chapter at, the keys
    of the controls the scene may set, and what the chapter's controls did not take of its values."""

    values: dict[str, str]
    known: frozenset[str]
    problems: tuple[str, ...] = ()


def _by_name(book: charts.Book, scene: Scene, the_stage: stage.Stage,
             sidebar: Callable[[bool], Data]) -> _Played:
    """Draw the charts and the question the scene names from the chapter's book, at the settings the
    scene's values name (the page itself does not run)."""
    data = sidebar(False)  # the sidebar, without the page's messages about its data
    picked = st.session_state.setdefault(_PICKED, {})  # what a click on the stage's charts explains
    settings, problems = book.read(data, {**scene.values, **picked})
    for key in scene.charts:
        if key in book.charts:
            pick = book.picks.get(key)
            charts.put(key, book.charts[key](data, settings),
                       on_select=None if pick is None else explain.on_pick(key, pick, data, into=picked))
    if scene.question in book.questions:
        the_stage.drawn.add(scene.question)
        the_stage.asked[scene.question] = book.questions[scene.question](data, settings)
    sidebar_values = {key: to_url(v) for key, v in controls.rendered_values().items()}
    return _Played(sidebar_values | book.to_query(settings), frozenset(sidebar_values) | set(book.keys()),
                   problems)


def _after_run(found: Lesson, k: int, the_stage: stage.Stage, boxes: _Boxes, values: dict[str, str]) -> None:
    """Once the charts are drawn: their words, the class session's bar (following this scene), the scene's
    question (the class's, while a class session runs) and "Explore this" (at ``values``)."""
    _in_words(the_stage)
    scene = found.scenes[k - 1]
    asked = [classroom.as_question(q.name, q.prompt, q.guess) for q in the_stage.asked.values()]
    session = classroom.bar(boxes.klass, found.name, Showing(k, scene.title, asked[0] if asked else None))
    for name, question in the_stage.asked.items():
        with the_stage.slots[name], st.container(key=questions.box_key(name)):
            if session is not None and session.question is not None:
                classroom.stage_question(session, question.prompt, question.reveal)
            else:
                questions.draw(*question)
    boxes.explore.button(
        _("Explore this"), key="lesson.explore", icon=":material/open_in_new:", on_click=_explore,
        args=(values,), width="stretch",
        help=_("Leave the lesson: this chapter, with every control, at this scene's values."))


def _problems(box: object, found: Lesson, k: int, more: list[str]) -> None:
    """One warning listing what is wrong with scene ``k`` (and the file), naming the file and the scene."""
    lines = [str(p) for p in found.problems_of(k)] + [str(Problem(found.file, k, m)) for m in more]
    if lines:
        box.warning("\n".join(f"- {md_escape(line)}" for line in lines), icon=":material/warning:")


def leave() -> None:
    """A normal page run: controls mirror the URL again, and a scene played later starts from its values."""
    controls.present(False)
    st.session_state.pop(_SHOWN, None)
