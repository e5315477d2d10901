"""Attribution lint: every sentence of the pages' words (the prose, the questions, the lesson titles and
notes) that names a source ("the post", "the smoothing post", "d2l", "the notes", "the port") stands in a
passage that docs/sources.md lists with the rows it relies on, one row at least of each source it names;
each of those rows says how the page shows its item, and each quote in a row is the source's own words."""

from __future__ import annotations

import re

import pytest
from wordtools import Passage, fold, passages, rows, seeds, sentences, table

# the words that name a source, and the letter of its rows in docs/sources.md
SOURCE_NAMES = (
    ("S", r"the smoothing post"),
    ("B", r"the (?:blog )?post|Czyż"),
    ("D", r"d2l(?!'s Kotlin)|Dive into Deep Learning"),
    ("N", r"the (?:lecture )?notes\b"),
    ("K", r"the (?:Kotlin(?:/DJL)? )?port\b|d2l's Kotlin"),
)
# how a row may say the page shows its item (exact, partial, paraphrased, quoted, or why not)
STATUS = re.compile(r"exact|partial|paraphrased|quoted|in kind|not reproduced|not shown|kernelviz's")
QUOTE = re.compile(r"“([^”]+)”")
LISTING = "Where the pages' words name a source"


def named(sentence: str) -> set[str]:
    """The letters of the sources ``sentence`` names ("the smoothing post" is not "the post")."""
    found, rest = set(), sentence
    for letter, words in SOURCE_NAMES:
        pattern = re.compile(rf"\b(?:{words})", re.IGNORECASE)
        if pattern.search(rest):
            found.add(letter)
            rest = pattern.sub(" ", rest)
    return found


def listed() -> dict[str, list[str]]:
    """The passages docs/sources.md lists ("FILE · SECTION") with the ids of their rows."""
    return {cells[0]: [i.strip() for i in cells[1].split(",") if i.strip()] for cells in table(LISTING)}


def naming(shown: list[Passage]) -> dict[str, set[str]]:
    """Each passage that names a source, with the letters of the sources it names."""
    found: dict[str, set[str]] = {}
    for p in shown:
        letters = set().union(*(named(s) for s in sentences(p.text)))
        if letters:
            found[f"{p.file} · {p.section}"] = letters
    return found


def unattributed(shown: list[Passage]) -> list[str]:
    """What is wrong with the attribution of ``shown``: a passage not listed, a source it names with no
    row of its own, a row id that does not exist."""
    table_, known, problems = listed(), rows(), []
    for where, letters in naming(shown).items():
        ids = table_.get(where)
        if ids is None:
            problems.append(f"{where}: names {sorted(letters)} but is not listed")
            continue
        problems += [f"{where}: row {i} does not exist" for i in ids if i not in known]
        problems += [f"{where}: names source {x} but lists none of its rows"
                     for x in sorted(letters) if not any(i.startswith(x) for i in ids)]
    return problems


def test_every_sentence_that_names_a_source_has_its_rows():
    assert unattributed(passages()) == []


def test_the_lint_finds_a_sentence_credited_to_a_source_without_its_row():
    shown = passages()
    (p,) = [q for q in shown if (q.file, q.section) == ("1_kernel_regression.md", "panels")]
    changed = p._replace(text=p.text + " The notes draw the same four panels.")
    assert unattributed([changed]) == [
        "1_kernel_regression.md · panels: names source N but lists none of its rows"]
    new = Passage("questions.md", "a_new_question.prompt", "As d2l asks: which w is best?")
    assert unattributed([new]) == ["questions.md · a_new_question.prompt: names ['D'] but is not listed"]


@pytest.mark.parametrize(("sentence", "letters"), [
    ("The smoothing post names no k.", {"S"}),
    ("The post's caveats, and the smoothing post's kernel.", {"B", "S"}),
    ("d2l's Kotlin/DJL port adds a validation set.", {"K"}),
    ("In d2l's words, the closer the pair, the higher the weight.", {"D"}),
    ("The notes' SelfAttention; the port's log.", {"N", "K"}),
    ("The blog post notes that one relabels a tuple.", {"B"}),
    ("kernelviz's own (no source draws it).", set()),
])
def test_the_names_of_the_sources_are_told_apart(sentence, letters):
    assert named(sentence) == letters


def test_every_listed_passage_stands_and_names_a_source():
    names = naming(passages())
    assert sorted(set(listed()) - set(names)) == []


def test_every_row_a_passage_relies_on_says_how_the_page_shows_it():
    known = rows()
    relied_on = {i for ids in listed().values() for i in ids if i in known}
    vague = sorted(i for i in relied_on if not STATUS.search(known[i].status))
    assert vague == []


def test_the_quotes_in_the_rows_are_the_sources_own_words():
    text = fold(seeds().replace("’", "'"))
    missing = [f"{r.id}: “{q}”" for r in rows().values() for cell in (r.item, r.notes)
               for q in QUOTE.findall(cell) if fold(q.replace("’", "'")) not in text]
    assert missing == []
