"""Every word kernelviz shows or publishes, read as written, and the item-by-item table they answer to.

* ``passages()``: each piece of text a person reads, as a ``Passage`` (file, section, text):
  every section of ``chapters/prose/*.md`` (the chapters, the Sources page and the questions; the LaTeX
  ``…formula`` sections left out); every text field of each shipped lesson (title, summary, each scene's
  title and note: every string but ``NOT_TEXT``); every text field of ``chapters/prose/6_sources.toml``;
  every message of the code's catalogue ``kernelviz/locale/kernelviz.pot`` (``msgid`` and
  ``msgid_plural``); and
  ``README.md``, ``docs/*.md`` and ``lessons/README.md`` by heading, each row of the item tables of
  ``docs/sources.md`` a passage of its own (named by its id). ``docs/wording.md`` is left out: it is the
  checks' own listing, every number and word in it about another passage.
* ``words(text)``: the text with what is not words blanked: fenced code, code spans, LaTeX, HTML comments and
  tags, link targets and addresses; each placeholder (``⟨n⟩``, ``{n}``, ``{n:.2f}``, ``%(n)s``, ``%{y}``)
  becomes ``⟨⟩``, a value the page fills in when it draws.
* ``rows()``: the rows of ``docs/sources.md`` (B1, S3, D12, N4, K17, …) by id, and ``table(heading)`` a
  table of ``docs/wording.md`` under its heading, which the checks read;
* ``seeds()``: the five source texts (``../shared/seeds/``), where they are beside the repository.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from pathlib import Path
from typing import NamedTuple

import pytest
from babel.messages.pofile import read_po

from kernelviz.app.ui.widgets.text import PROSE_DIR, sections

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
SOURCES_MD = ROOT / "docs" / "sources.md"
WORDING_MD = ROOT / "docs" / "wording.md"
POT = ROOT / "kernelviz" / "locale" / "kernelviz.pot"
SOURCES_TOML = PROSE_DIR / "6_sources.toml"
# the fields of a lesson and of 6_sources.toml that are not words: names, numbers, links, controls
NOT_TEXT = {"chapter", "charts", "question", "set", "id", "kind", "page", "params", "ours"}
SEEDS = ROOT.parent / "shared" / "seeds"
ROW_ID = re.compile(r"\| ([BSDNK]\d+) \|")


class Passage(NamedTuple):
    """One piece of shown text: ``file`` (``1_kernel_regression.md``, ``ten-minutes.toml``,
    ``6_sources.toml``, ``kernelviz/app/ui/widgets/text.py``, ``docs/architecture.md``), ``section`` (a
    prose section's name; a lesson's ``title``, ``summary`` or ``scene N``; a message's first words; a
    heading) and its ``text``."""

    file: str
    section: str
    text: str

    @property
    def where(self) -> str:
        """``file · section``, as the listings of ``docs/wording.md`` name a passage."""
        return f"{self.file} · {self.section}"


def passages() -> list[Passage]:
    """Every passage a person reads (the module's docstring says which), placeholders left in place."""
    return [*_prose(), *_lessons(), *_sources_toml(), *catalogue(), *_docs()]


def _prose() -> list[Passage]:
    """Every section of the prose files but the LaTeX ones."""
    return [Passage(f"{p.stem}.md", name, text)
            for p in sorted(PROSE_DIR.glob("*.md")) for name, text in sections(p.stem).items()
            if not name.endswith("formula")]  # a formula section is LaTeX (text.py's ``_template``)


def _texts(table: dict) -> dict[str, str]:
    """The text fields of a TOML table: every string but those of ``NOT_TEXT``."""
    return {k: v for k, v in table.items() if isinstance(v, str) and k not in NOT_TEXT}


def _lessons() -> list[Passage]:
    """Each lesson's own text fields, and each scene's joined as ``scene N``."""
    found = []
    for path in sorted(LESSONS.glob("*.toml")):
        lesson = tomllib.loads(path.read_text(encoding="utf-8"))
        found += [Passage(path.name, key, text) for key, text in _texts(lesson).items()]
        found += [Passage(path.name, f"scene {i}", "\n\n".join(_texts(s).values()))
                  for i, s in enumerate(lesson.get("scene", []), 1)]
    return found


def short(text: str, n: int = 6) -> str:
    """The first ``n`` words of ``text`` (with "…" when there are more): a passage's name that a change of
    line numbers or of a later word leaves as it is."""
    parts = text.split()
    return " ".join(parts[:n]) + ("…" if len(parts) > n else "")


def _sources_toml() -> list[Passage]:
    """Each source's text fields (``blog · title``), each item's (``blog · <its first words>``, more fields
    as ``… · field``) and each unshown thing's (``blog · not shown · <first words>``, its ``why`` after)."""
    found, at = [], "6_sources.toml"
    for s in tomllib.loads(SOURCES_TOML.read_text(encoding="utf-8"))["source"]:
        found += [Passage(at, f"{s['id']} · {key}", text) for key, text in _texts(s).items()]
        for kind, prefix in (("item", ""), ("unshown", "not shown · ")):
            for entry in s.get(kind, []):
                texts = _texts(entry)
                name = f"{s['id']} · {prefix}{short(texts.pop('what', ''))}"
                found += [Passage(at, name, entry.get("what", ""))]
                found += [Passage(at, f"{name} · {key}", text) for key, text in texts.items()]
    return found


def _name(text: str, others: list[str]) -> str:
    """``text``'s first words, as many as tell it from ``others`` (six at least)."""
    n = 6
    while n < len(text.split()) and any(o != text and short(o, n) == short(text, n) for o in others):
        n += 1
    return short(text, n)


@functools.cache
def catalogue() -> tuple[Passage, ...]:
    """Every message of the kept catalogue, in the first file it comes from, named by its first words (more
    where two messages of a file begin alike); a plural's two forms one passage. Fails where the repository
    has no catalogue file: then the checks would read none of the code's words."""
    assert POT.is_file(), f"no catalogue {POT}: run pybabel extract (tests/test_catalogue.py)"
    with POT.open("rb") as f:
        messages = [m for m in read_po(f) if m.id]
    found = [(m.locations[0][0] if m.locations else "?",
              "\n\n".join(m.id) if isinstance(m.id, tuple) else m.id) for m in messages]
    by_file: dict[str, list[str]] = {}
    for file, text in found:
        by_file.setdefault(file, []).append(text)
    return tuple(Passage(file, _name(text, by_file[file]), text) for file, text in found)


_HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")


def _by_heading(path: Path) -> list[Passage]:
    """``path`` cut at its headings (outside fenced code); a row of the item tables of docs/sources.md is a
    passage of its own, named by its id."""
    name, fenced, current, parts = path.relative_to(ROOT).as_posix(), False, "(top)", {"(top)": []}
    for line in path.read_text(encoding="utf-8").splitlines():
        fenced ^= line.lstrip().startswith("```")
        heading = None if fenced else _HEADING.match(line)
        row = ROW_ID.match(line) if path == SOURCES_MD else None
        if heading:
            current = heading.group(2)
            while current in parts:
                current += " (again)"
            parts[current] = [line.lstrip("# ")]
        elif row:
            parts[row.group(1)] = [line]
        else:
            parts[current].append(line)
    return [Passage(name, section, "\n".join(lines)) for section, lines in parts.items()
            if "".join(lines).strip()]


def _docs() -> list[Passage]:
    """README.md, docs/*.md (not the checks' own listing, docs/wording.md) and lessons/README.md."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), LESSONS / "README.md"]
    return [p for path in files if path != WORDING_MD for p in _by_heading(path)]


# What is not words: code and comments, LaTeX, markup, addresses; placeholders become ⟨⟩.
_CODE = r"```.*?```|<!--.*?-->|``[^`]*``|`[^`\n]*`"
_NOT_WORDS = re.compile(_CODE + r"|\$\$.*?\$\$|(?<![\\\w])\$[^$\n]+\$|\]\([^)]*\)|<[a-zA-Z/][^<>]*>|https?://\S+"
                        r"|:material/\w+:", re.DOTALL)
_CODE_ONLY = re.compile(_CODE, re.DOTALL)
_PLACEHOLDERS = re.compile(r"⟨\w+⟩|\{\w*(?:[:!][^{}]*)?\}|%\(\w+\)[sdfr]|%\{[^}]*\}")


def words(text: str, latex: bool = False) -> str:
    """``text`` with what is not words blanked (the module's docstring says what), each placeholder ⟨⟩;
    with ``latex``, only code and comments blanked (a quotation may hold a source's formula)."""
    return _CODE_ONLY.sub(" ", text) if latex else _PLACEHOLDERS.sub("⟨⟩", _NOT_WORDS.sub(" ", text))


def scene_values(file: str, section: str) -> list[object]:
    """The control values lesson ``file``'s scene (``section`` = "scene N") sets; none elsewhere."""
    if not file.endswith(".toml") or file == "6_sources.toml" or not section.startswith("scene "):
        return []
    scene = tomllib.loads((LESSONS / file).read_text(encoding="utf-8"))["scene"][int(section.split()[1]) - 1]

    def leaves(value: object) -> list[object]:
        return [v for item in value.values() for v in leaves(item)] if isinstance(value, dict) else [value]

    return leaves(scene.get("set", {}))


_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|et al|cf|vs|Fig|Eq)\.$")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences: after . ! ? or a blank line, before a capital, a quote, a bracket or
    emphasis (decimal points, abbreviations and formulas stay whole)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z“\"(*$⟨])|\n\s*\n", text)
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


def cells(line: str) -> list[str]:
    """The cells of a Markdown table's line (``\\|`` inside a cell is not a border)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def rows() -> dict[str, Row]:
    """The item rows of ``docs/sources.md`` by id."""
    found = {}
    for line in SOURCES_MD.read_text(encoding="utf-8").splitlines():
        if ROW_ID.match(line):
            found[cells(line)[0]] = Row(*(cells(line) + [""] * 5)[:5])
    return found


def table(heading: str) -> list[list[str]]:
    """The body rows of the first table under the ``## heading`` of ``docs/wording.md``."""
    text = WORDING_MD.read_text(encoding="utf-8")
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    lines = [ln for ln in text[start: None if end < 0 else end].splitlines() if ln.startswith("|")]
    return [cells(ln) for ln in lines[2:]]


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
