"""The words kernelviz shows, read as written, and the item-by-item table they answer to.

* ``passages()``: every section of ``chapters/prose/*.md`` (the chapters, the Sources page and the questions)
  and the title, summary and scene titles and notes of each shipped lesson, each a ``Passage``;
* ``rows()``: the rows of ``docs/sources.md`` (B1, S3, D12, N4, K17, …) by id, and ``table(heading)``
  any other table of that file under its heading;
* ``seeds()``: the five source texts (``../shared/seeds/``), where they are beside the repository.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import NamedTuple

import pytest

from kernelviz.app.ui.widgets.text import PROSE_DIR, sections

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
SOURCES_MD = ROOT / "docs" / "sources.md"
SEEDS = ROOT.parent / "shared" / "seeds"


class Passage(NamedTuple):
    """One piece of shown text: ``file`` (``1_kernel_regression.md``, ``ten-minutes.toml``), ``section``
    (a prose section's name; a lesson's ``title``, ``summary`` or ``scene N``) and its ``text``."""

    file: str
    section: str
    text: str


def passages() -> list[Passage]:
    """Every prose section and every lesson text, as written (placeholders ⟨name⟩ left in place)."""
    found = [Passage(f"{p.stem}.md", name, text)
             for p in sorted(PROSE_DIR.glob("*.md")) for name, text in sections(p.stem).items()]
    for path in sorted(LESSONS.glob("*.toml")):
        lesson = tomllib.loads(path.read_text(encoding="utf-8"))
        found += [Passage(path.name, key, lesson[key]) for key in ("title", "summary") if key in lesson]
        found += [Passage(path.name, f"scene {i}", f"{s.get('title', '')}. {s.get('note', '')}")
                  for i, s in enumerate(lesson.get("scene", []), 1)]
    return found


def scene_values(file: str, section: str) -> list[object]:
    """The control values lesson ``file``'s scene (``section`` = "scene N") sets; none for prose."""
    if not file.endswith(".toml") or not section.startswith("scene "):
        return []
    scene = tomllib.loads((LESSONS / file).read_text(encoding="utf-8"))["scene"][int(section.split()[1]) - 1]

    def leaves(value: object) -> list[object]:
        return [v for item in value.values() for v in leaves(item)] if isinstance(value, dict) else [value]

    return leaves(scene.get("set", {}))


_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|et al|cf|vs|Fig|Eq)\.$")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences: after . ! ? or a blank line, before a capital, a quote, a bracket or
    emphasis (decimal points, abbreviations and formulas stay whole)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z“(*$⟨])|\n\s*\n", text)
    out: list[str] = []
    for part in parts:
        if out and _ABBREVIATIONS.search(out[-1]):
            out[-1] += " " + part
        else:
            out.append(part)
    return [" ".join(s.split()) for s in out if s.strip()]


class Row(NamedTuple):
    """A row of ``docs/sources.md``: its id, the source's item, where the pages show it, its status and
    notes."""

    id: str
    item: str
    where: str
    status: str
    notes: str


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def rows() -> dict[str, Row]:
    """The item rows of ``docs/sources.md`` by id."""
    found = {}
    for line in SOURCES_MD.read_text(encoding="utf-8").splitlines():
        if re.match(r"\| [BSDNK]\d+ \|", line):
            cells = _cells(line)
            found[cells[0]] = Row(*cells[:5])
    return found


def table(heading: str) -> list[list[str]]:
    """The body rows of the first table under the ``## heading`` of ``docs/sources.md``."""
    text = SOURCES_MD.read_text(encoding="utf-8")
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    lines = [ln for ln in text[start: None if end < 0 else end].splitlines() if ln.startswith("|")]
    return [_cells(ln) for ln in lines[2:]]


def seeds() -> str:
    """The five source texts, their white space folded to one space; skipped where ``../shared/seeds`` is
    not beside the repository (a clone of its own), never under ``CI=true``."""
    files = sorted(SEEDS.glob("0*.txt"))
    if not files:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"the source texts are not at {SEEDS}")
        pytest.skip(f"the source texts are not at {SEEDS}")
    return " ".join(fold(p.read_text(encoding="utf-8")) for p in files)


def fold(text: str) -> str:
    """White space folded to one space."""
    return " ".join(text.split())
