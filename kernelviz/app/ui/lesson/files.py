"""Lesson files: ``lessons/NAME.toml``, a title and an ordered list of scenes a teacher plays in the room.

A lesson is data, never code: TOML read with ``tomllib``. Each scene names a chapter, the control values it
sets (by their URL parameter names), its title, a short note (Markdown and LaTeX), the charts it shows (by
their keys on the chapter's page) and optionally a question (``kernelviz/app/ui/questions/predict.py``).
The format is documented for teachers in ``lessons/README.md``.

Nothing here raises for a bad file: every problem becomes a ``Problem`` naming the file, the scene and what
is wrong, and the scenes that can still play do. What can only be known by drawing the page (a control the
page does not have, a value out of its range, a chart the page does not draw at those values) is found
when the scene is played (``kernelviz/app/ui/lesson/presenter.py``).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from kernelviz.app.ui import charts
from kernelviz.app.ui.pages import CHAPTERS, PAGE_URLS, Chapter
from kernelviz.runtime.i18n import _, localized

__all__ = ["LESSONS_DIR", "NOTE_WORDS", "Lesson", "Problem", "Scene", "chapter_charts", "lesson_names",
           "lesson_path", "load_lesson"]

LESSONS_DIR = Path(__file__).resolve().parents[4] / "lessons"
NOTE_WORDS = 70  # a note longer than this does not read at the back of a room (about 60 words is the aim)
SCENE_FIELDS = {"chapter", "title", "note", "charts", "set", "question"}
REPO_ROOT = Path(__file__).resolve().parents[4]


@dataclass(frozen=True)
class Problem:
    """What is wrong in a lesson file: the file, the scene (1-based; 0 for the lesson as a whole) and what."""

    file: str
    scene: int
    message: str

    def __str__(self) -> str:
        if self.scene:
            return _("{file}, scene {scene}: {message}").format(file=self.file, scene=self.scene,
                                                                 message=self.message)
        return _("{file}, the lesson: {message}").format(file=self.file, message=self.message)


@dataclass(frozen=True)
class Scene:
    """One view of a lesson: a chapter at some control values, with its title, note, charts and question.

    ``chapter`` is None when the file names no chapter kernelviz has; such a scene only shows its problem.
    """

    number: int
    chapter: Chapter | None
    title: str
    note: str = ""
    charts: tuple[str, ...] = ()
    values: dict[str, object] = field(default_factory=dict)
    question: str | None = None


@dataclass(frozen=True)
class Lesson:
    """A lesson file read: its name (the file's stem, as in ``?lesson=NAME``), title, scenes and problems."""

    name: str
    file: str
    title: str
    summary: str
    scenes: tuple[Scene, ...]
    problems: tuple[Problem, ...]

    def problems_of(self, number: int) -> list[Problem]:
        """The problems found in scene ``number`` (1-based) and in the lesson as a whole."""
        return [p for p in self.problems if p.scene in (0, number)]


@functools.cache
def chapter_charts(path: str) -> tuple[str, ...]:
    """The keys of the charts chapter file ``path`` can draw: its book's (``charts.book``)."""
    return tuple(charts.book(PAGE_URLS[path]).charts)

def find_chapter(value: object) -> Chapter | None:
    """The chapter a scene names: its number (1–5) or its URL path ("kernel-regression")."""
    for number, chapter in enumerate(CHAPTERS, 1):
        if value in (number, str(number), chapter.url):
            return chapter
    return None


def flatten(table: dict, prefix: str = "") -> dict[str, object]:
    """A scene's ``set`` table with dotted names: ``{"kr": {"lengthscale": 1}}`` → ``{"kr.lengthscale": 1}``
    (TOML reads ``kr.lengthscale = 1`` as the nested table; ``"kr.lengthscale" = 1`` is already flat)."""
    flat: dict[str, object] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        flat.update(flatten(value, f"{name}.") if isinstance(value, dict) else {name: value})
    return flat


def _text(raw: dict, name: str, problems: list[str], required: bool = False) -> str:
    value = raw.get(name, "")
    if not isinstance(value, str):
        problems.append(_("its {field} should be text in quotes, not {value}").format(field=name,
                                                                                     value=repr(value)))
        return ""
    if required and not value.strip():
        problems.append(_("it has no {field}").format(field=name))
    return value.strip()


def _charts(raw: dict, chapter: Chapter | None, problems: list[str]) -> tuple[str, ...]:
    charts = raw.get("charts", [])
    if isinstance(charts, str):
        charts = [charts]
    if not isinstance(charts, list) or not all(isinstance(c, str) for c in charts):
        problems.append(_("its charts should be a list of chart names in quotes, not {value}")
                        .format(value=repr(charts)))
        return ()
    if chapter is None:
        return tuple(charts)
    known = chapter_charts(chapter.path)
    for name in charts:
        if name not in known:
            problems.append(_("chapter {chapter} has no chart {chart} (its charts: {charts})")
                            .format(chapter=repr(chapter.title), chart=repr(name), charts=", ".join(known)))
    return tuple(c for c in charts if c in known)


def _scene(raw: object, number: int, questions: dict[str, str], problems: list[str]) -> Scene:
    """One ``[[scene]]`` table read into a Scene; what is wrong with it is appended to ``problems``."""
    if not isinstance(raw, dict):
        problems.append(_("it is not a table of fields ({header} followed by name = value lines)")
                        .format(header="[[scene]]"))
        return Scene(number, None, _("Scene {number}").format(number=number))
    for name in sorted(set(raw) - SCENE_FIELDS):
        problems.append(_("it has a field {field} that scenes do not have ({fields})")
                        .format(field=repr(name), fields=", ".join(sorted(SCENE_FIELDS))))
    chapter = find_chapter(raw.get("chapter"))
    if chapter is None:
        names = ", ".join(_("{number} or {url}").format(number=i, url=repr(c.url))
                          for i, c in enumerate(CHAPTERS, 1))
        problems.append(_("chapter {chapter} is not one of kernelviz's: {chapters}")
                        .format(chapter=repr(raw.get("chapter")), chapters=names))
    title = _text(raw, "title", problems, required=True)
    note = _text(raw, "note", problems)
    if len(note.split()) > NOTE_WORDS:  # counted in the file's own words
        problems.append(_("its note has {words} words; at most about 60 read well in a room")
                        .format(words=len(note.split())))
    values = raw.get("set", {})
    if not isinstance(values, dict):
        problems.append(_("its set should be a table of control = value lines, not {value}")
                        .format(value=repr(values)))
        values = {}
    question = _question(raw.get("question"), chapter, questions, problems)
    title = localized(title) if title else _("Scene {number}").format(number=number)
    return Scene(number, chapter, title, localized(note), _charts(raw, chapter, problems), flatten(values),
                 question)


def _question(question: object, chapter: Chapter | None, questions: dict[str, str],
              problems: list[str]) -> str | None:
    """The question a scene names, if kernelviz has it and its chapter asks it; else None, with why."""
    if question is not None and (not isinstance(question, str) or question not in questions):
        problems.append(_("question {question} is not one of kernelviz's: {questions}")
                        .format(question=repr(question), questions=", ".join(questions)))
        return None
    if question is not None and chapter is not None and questions[question] != chapter.url:
        problems.append(_("question {question} belongs to chapter {chapter}, not {url}")
                        .format(question=repr(question), chapter=repr(questions[question]),
                                url=repr(chapter.url)))
        return None
    return question


def _read(path: Path) -> tuple[dict | None, str | None]:
    """The TOML table of ``path``, or None and why it cannot be read."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, _("there is no such file")
    except UnicodeDecodeError:
        return None, _("it is not UTF-8 text")
    except tomllib.TOMLDecodeError as err:
        return None, _("it is not valid TOML: {error}").format(error=err)
    except OSError as err:
        return None, _("it cannot be read: {error}").format(error=err.strerror)


def load_lesson(path: Path, questions: dict[str, str] | None = None) -> Lesson:
    """Read a lesson file; never raises for its content. ``questions`` maps each question's name to the URL
    path of its chapter (``kernelviz/app/ui/questions/predict.py``'s ``QUESTION_CHAPTERS``)."""
    questions = questions or {}
    file = f"lessons/{path.name}"
    table, why = _read(path)
    if table is None:
        return Lesson(path.stem, file, path.stem, "", (), (Problem(file, 0, why or _("unreadable")),))
    problems: list[Problem] = []
    title = table.get("title")
    if isinstance(title, str) and title.strip():
        title = localized(title.strip())
    else:
        problems.append(Problem(file, 0, _("it has no title (a line {line} at the top)")
                                .format(line='title = "…"')))
        title = path.stem  # the file's name, as in ?lesson=NAME
    raw_scenes = table.get("scene", [])
    if not isinstance(raw_scenes, list) or not raw_scenes:
        problems.append(Problem(file, 0, _("it has no scenes (each starts with a line {header})")
                                .format(header="[[scene]]")))
        raw_scenes = []
    scenes = []
    for number, raw in enumerate(raw_scenes, 1):
        found: list[str] = []
        scenes.append(_scene(raw, number, questions, found))
        problems += [Problem(file, number, message) for message in found]
    summary = table.get("summary", "")
    return Lesson(path.stem, file, title, localized(summary) if isinstance(summary, str) else "",
                  tuple(scenes), tuple(problems))


def lesson_path(name: str) -> Path:
    """Where lesson ``name`` is kept: ``LESSONS_DIR/NAME.toml``."""
    return LESSONS_DIR / f"{name}.toml"


def lesson_names() -> list[str]:
    """The names of the lessons in ``LESSONS_DIR`` (file stems of ``*.toml``), sorted."""
    return sorted(p.stem for p in LESSONS_DIR.glob("*.toml"))
