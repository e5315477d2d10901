"""No computed number typed by hand: every number with a decimal point in the pages' words (the prose, the
questions, the lesson titles and notes) is a source's printed number with its row in docs/sources.md, a
value the lesson scene around it sets, or a number docs/sources.md lists once under "Numbers the pages'
words state". Whatever the backend computes is a ⟨placeholder⟩ the page fills in when it draws."""

from __future__ import annotations

import re

import pytest
from wordtools import passages, rows, scene_values, seeds, table

NUMBER = re.compile(r"(?<![\w.,⟨])\d+\.\d+(?![\w])")  # 0.25, 11.60, 2402.11639; not 1,000 nor v1.2
LISTED = "Numbers the pages' words state"


def _numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def _in_rows() -> set[str]:
    """Every decimal number some row of docs/sources.md states."""
    return {n for r in rows().values() for n in _numbers(" ".join(r))}


def _listed() -> set[tuple[str, str]]:
    """(number, file) of the table "Numbers the pages' words state"."""
    return {(cells[0], cells[1]) for cells in table(LISTED)}


def _set_by_scene(number: str, values: list[object]) -> bool:
    """``number`` is one of the scene's control values, written with as many decimals as it shows."""
    decimals = len(number.split(".")[1])
    return any(isinstance(v, float | int) and not isinstance(v, bool) and f"{v:.{decimals}f}" == number
               for v in values)


def unexplained() -> list[str]:
    """Each number of the pages' words that is none of the three kinds, with where it stands."""
    in_rows, listed = _in_rows(), _listed()
    bad = []
    for p in passages():
        values = scene_values(p.file, p.section)
        for n in _numbers(p.text):
            if n not in in_rows and (n, p.file) not in listed and not _set_by_scene(n, values):
                bad.append(f"{p.file} · {p.section}: {n}")
    return bad


def test_every_number_in_the_words_is_printed_set_or_listed():
    assert unexplained() == [], (
        "a number typed into the pages' words: fill it in from the backend (a ⟨placeholder⟩), or give it "
        "its source row or its line under \"Numbers the pages' words state\" in docs/sources.md")


def test_the_check_finds_a_number_typed_by_hand(monkeypatch):
    import wordtools

    typed = wordtools.Passage("3_multihead.md", "post_match.drift", "the widest head ends near 178.25")
    shown = passages()
    monkeypatch.setattr("test_prose_numbers.passages", lambda: [*shown, typed])
    assert unexplained() == ["3_multihead.md · post_match.drift: 178.25"]


def test_a_lesson_may_round_the_value_its_scene_sets():
    assert _set_by_scene("0.018", [0.0178]) and _set_by_scene("3.16", [3.16, True])
    assert not _set_by_scene("0.019", [0.0178]) and not _set_by_scene("1.0", [True])


def test_every_listed_number_stands_where_the_list_says():
    said = {(n, p.file) for p in passages() for n in _numbers(p.text)}
    assert sorted(_listed() - said) == []


@pytest.mark.parametrize("number", sorted({n for p in passages() for n in _numbers(p.text)} & _in_rows()))
def test_a_number_credited_to_a_source_is_in_the_sources(number):
    assert re.search(rf"(?<![\d.]){re.escape(number)}(?!\d)", seeds()), f"{number} is in no source text"
