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

import ast
import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from kernelviz.app.ui.pages import CHAPTERS, Chapter

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
        where = f"scene {self.scene}" if self.scene else "the lesson"
        return f"{self.file}, {where}: {self.message}"


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
    """The keys of the charts chapter file ``path`` can draw: every ``show(…, key="…")``, the formula panels'
    ``formula_panel``/``heads_panel``/``layer_panel(…, key="…")`` and ``loss_chart(…, "…")`` in it with a
    literal key, in the order they stand in the file."""
    tree = ast.parse((REPO_ROOT / path).read_text(encoding="utf-8"))
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: n.lineno)
    keys: list[str] = []
    for node in calls:
        if getattr(node.func, "attr", None) in ("show", "formula_panel", "heads_panel", "layer_panel",
                                                 "loss_chart"):
            args = [k.value for k in node.keywords if k.arg == "key"] + node.args[1:2]
            keys += [a.value for a in args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return tuple(dict.fromkeys(keys))


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
        problems.append(f"its {name} should be text in quotes, not {value!r}")
        return ""
    if required and not value.strip():
        problems.append(f"it has no {name}")
    return value.strip()


def _charts(raw: dict, chapter: Chapter | None, problems: list[str]) -> tuple[str, ...]:
    charts = raw.get("charts", [])
    if isinstance(charts, str):
        charts = [charts]
    if not isinstance(charts, list) or not all(isinstance(c, str) for c in charts):
        problems.append(f"its charts should be a list of chart names in quotes, not {charts!r}")
        return ()
    if chapter is None:
        return tuple(charts)
    known = chapter_charts(chapter.path)
    for name in charts:
        if name not in known:
            problems.append(f"chapter {chapter.title!r} has no chart {name!r} "
                            f"(its charts: {', '.join(known)})")
    return tuple(c for c in charts if c in known)


def _scene(raw: object, number: int, questions: dict[str, str], problems: list[str]) -> Scene:
    """One ``[[scene]]`` table read into a Scene; what is wrong with it is appended to ``problems``."""
    if not isinstance(raw, dict):
        problems.append("it is not a table of fields ([[scene]] followed by name = value lines)")
        return Scene(number, None, f"Scene {number}")
    for name in sorted(set(raw) - SCENE_FIELDS):
        problems.append(f"it has a field {name!r} that scenes do not have "
                        f"({', '.join(sorted(SCENE_FIELDS))})")
    chapter = find_chapter(raw.get("chapter"))
    if chapter is None:
        names = ", ".join(f"{i} or {c.url!r}" for i, c in enumerate(CHAPTERS, 1))
        problems.append(f"chapter {raw.get('chapter')!r} is not one of kernelviz's: {names}")
    title = _text(raw, "title", problems, required=True) or f"Scene {number}"
    note = _text(raw, "note", problems)
    if len(note.split()) > NOTE_WORDS:
        problems.append(f"its note has {len(note.split())} words; at most about 60 read well in a room")
    values = raw.get("set", {})
    if not isinstance(values, dict):
        problems.append(f"its set should be a table of control = value lines, not {values!r}")
        values = {}
    question = raw.get("question")
    if question is not None and (not isinstance(question, str) or question not in questions):
        problems.append(f"question {question!r} is not one of kernelviz's: {', '.join(questions)}")
        question = None
    elif question is not None and chapter is not None and questions[question] != chapter.url:
        problems.append(f"question {question!r} belongs to chapter {questions[question]!r}, "
                        f"not {chapter.url!r}")
        question = None
    return Scene(number, chapter, title, note, _charts(raw, chapter, problems), flatten(values), question)


def _read(path: Path) -> tuple[dict | None, str | None]:
    """The TOML table of ``path``, or None and why it cannot be read."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, "there is no such file"
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"
    except tomllib.TOMLDecodeError as err:
        return None, f"it is not valid TOML: {err}"
    except OSError as err:
        return None, f"it cannot be read: {err.strerror}"


def load_lesson(path: Path, questions: dict[str, str] | None = None) -> Lesson:
    """Read a lesson file; never raises for its content. ``questions`` maps each question's name to the URL
    path of its chapter (``kernelviz/app/ui/questions/predict.py``'s ``QUESTION_CHAPTERS``)."""
    questions = questions or {}
    file = f"lessons/{path.name}"
    table, why = _read(path)
    if table is None:
        return Lesson(path.stem, file, path.stem, "", (), (Problem(file, 0, why or "unreadable"),))
    problems: list[Problem] = []
    title = table.get("title")
    if not isinstance(title, str) or not title.strip():
        problems.append(Problem(file, 0, "it has no title (a line title = \"…\" at the top)"))
        title = path.stem
    raw_scenes = table.get("scene", [])
    if not isinstance(raw_scenes, list) or not raw_scenes:
        problems.append(Problem(file, 0, "it has no scenes (each starts with a line [[scene]])"))
        raw_scenes = []
    scenes = []
    for number, raw in enumerate(raw_scenes, 1):
        found: list[str] = []
        scenes.append(_scene(raw, number, questions, found))
        problems += [Problem(file, number, message) for message in found]
    summary = table.get("summary", "")
    return Lesson(path.stem, file, title.strip(), summary if isinstance(summary, str) else "",
                  tuple(scenes), tuple(problems))


def lesson_path(name: str) -> Path:
    """Where lesson ``name`` is kept: ``LESSONS_DIR/NAME.toml``."""
    return LESSONS_DIR / f"{name}.toml"


def lesson_names() -> list[str]:
    """The names of the lessons in ``LESSONS_DIR`` (file stems of ``*.toml``), sorted."""
    return sorted(p.stem for p in LESSONS_DIR.glob("*.toml"))
