"""No number typed by hand. This reads every passage of ``wordtools.passages()`` (the prose, every lesson
field, ``6_sources.toml``, the code's catalogue, README.md, ``docs/*.md``, ``lessons/README.md``) and finds
each number in its words: decimals, integers (1,000 and 1000 alike) and number words ("two", "twice",
"half", "a third"). A number passes only as one of four kinds, because a number the backend computes and a
page states by hand goes stale when a default, a seed or a model changes:

1. a placeholder (⟨n⟩, ``{n}``): the page fills it in when it draws, so it is not typed at all;
2. a source's printed number whose row names it: a row of ``docs/sources.md`` that the passage relies on
   (its line in ``docs/wording.md``'s "Where the pages' words name a source", or, in ``docs/sources.md``,
   the row it stands in) states it in its *item* cell, what the source itself has (the notes are
   kernelviz's); a decimal must also be in the source texts, where they are beside the repository;
3. a value its lesson scene sets a control to (a lesson cannot fill in a placeholder);
4. a number listed once under "Numbers the pages' words state" in ``docs/wording.md``, with what it is;
   where the backend has it as a constant the listing names its dotted path and this test imports it and
   compares.

What is not a claim at all is in ``NOT_CLAIMS``, each with its reason; nothing else is exempt."""

from __future__ import annotations

import ast
import importlib
import math
import re
from typing import NamedTuple

import pytest
from wordtools import Passage, passages, rows, scene_values, seeds, table, words

LISTED = "Numbers the pages' words state"
NAMING = "Where the pages' words name a source"
_UNITS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
# number words and their values; "one" is left out, as much English's article and pronoun ("a wide one")
_WORDS = {w: float(i) for i, w in enumerate(_UNITS, 2)} | {w: 10.0 * i for i, w in enumerate(_TENS, 2)}
_WORDS |= {"hundred": 100, "hundreds": 100, "thousand": 1e3, "thousands": 1e3, "million": 1e6,
           "millions": 1e6, "dozen": 12, "dozens": 12, "twice": 2, "thrice": 3, "half": 0.5, "halves": 0.5,
           "a third": 1 / 3, "thirds": 1 / 3, "two thirds": 2 / 3, "a quarter": 0.25, "quarters": 0.25,
           "three quarters": 0.75, "½": 0.5, "⅓": 1 / 3, "¼": 0.25, "¾": 0.75}
_WORD = "|".join(sorted((re.escape(w) for w in _WORDS if w[0].isalpha()), key=len, reverse=True))
NUMBER = re.compile(r"(?<![\w.,⁻−-])(?:[−-](?=\d))?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[−-]?\d+)?(?!\d)"
                    rf"|[½⅓¼¾]|\b(?:{_WORD})\b", re.IGNORECASE)

_N = r"\d+(?:\.\d+)*"
_SERIES = rf"{_N}(?:\s*(?:,|and|or|to|–|-)\s*{_N})*"
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_VAR = r"(?<![\w])[^\W\d_](?:_\w+)?[\u0303\u0302′ᵢⱼₕ₀-₉²³]*(?!\w)"  # a one-letter variable: x, x̃ᵢ, d_v, x²
_NAMES = "Python|JAX|jax|jaxlib|Streamlit|WCAG|NumPy|Plotly|Debian|Ubuntu|Chromium|Postgres|PostgreSQL|Babel"
# What is not a claim, and why: each pattern is blanked before the numbers are read. Keep it short.
NOT_CLAIMS = (
    (rf"\b[Cc]hapters?\s+{_SERIES}|(?:^|(?<=\| ))\d(?= · )"
     rf"|\b(?:[Ss]cenes?|[Ee]xercises?|[Hh]ead|epoch|Try this\*?)\s+{_SERIES}",
     "names a part by its number (chapter 2, 1 · Kernel regression, scene 3, d2l's exercise 1, head 2, epoch "
     "1, Try this 2), not a quantity"),
    (r"(?m)^\s*\d+\.(?=\s)|\(\d\)(?=\s)", "an ordered list's marker, 1. or (1)"),
    (r"(?<![\w.])(?:19|20)\d\d-\d\d-\d\d\b|\b(?:" + _MONTHS + r")\s+\d{4}\b|\b(?:NeurIPS|ICML|ICLR|arXiv)\s+"
     r"[\d.]+", "a date, or a citation's venue, year and arXiv number"),
    (rf"\b(?:{_NAMES})\s+(?:from\s+)?{_SERIES}", "a version of a program kernelviz runs on"),
    (r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", "a commit's hash"),
    (r"“[^”]*”|(?<![\w\"])\"[^\"\n]+\"(?![\w\"])",
     "a quotation: its number is the quoted text's, checked verbatim by tests/test_attribution.py (a "
     "source's words) or there listed as a label, whose own string is checked here"),
    (r"(?<=[/^±√×·])\d[\d.]*|(?<![\w.])\d[\d.]*(?=\s?[/^⁻²³⁴×])"
     r"|(?<![\w.])\d+(?:\.\d+)?(?=[α-ωℓa-wyz](?![A-Za-z]))|[½⅓¼¾](?=[(\w])|(?<=\d:)1\b"
     rf"|[(\[](?=[^()\[\]]*{_VAR})(?:\s*(?:[−-]?\d[\d.]*|{_VAR})\s*[,×·+−/]?)+[)\]]",
     "a formula's constant, glued to its operator or variable (u²/2, 2n(x), x^0.8, 1/ℓ, 10⁻¹⁶, ±2σ), in a "
     "tuple of variables, (1, x, x²), or a ratio's 1 (4.5:1): it defines a model, it is no result"),
)
# Not a pattern: a number glued to letters is part of a name (B13, float32, d2l, x0, bench_sliders.py), and
# NUMBER never reads it. Figures in a section of docs/benchmarks.md that names its `python -m benchmarks…`
# command and a date are dated measurements that the command repeats (``_measured``), and so is a figure of
# another file in a paragraph that links docs/benchmarks.md and that such a section states (a headline).
_BLANK = [(re.compile(p), why) for p, why in NOT_CLAIMS]
_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


class Number(NamedTuple):
    """A number as written (``text``) and its ``value``."""

    text: str
    value: float


def value(text: str) -> float:
    """The value of a number as written: digits (1,000; −0.36; 1e-16) or a number word."""
    word = text.lower()
    return float(_WORDS[word]) if word in _WORDS else float(text.replace(",", "").replace("−", "-"))


def claims(text: str) -> list[Number]:
    """The numbers ``text`` states in its words, once what is not a claim (``NOT_CLAIMS``) is blanked."""
    text = words(text)
    for pattern, _why in _BLANK:
        text = pattern.sub(lambda m: " " * len(m.group()), text)
    return [Number(m.group(), value(m.group())) for m in NUMBER.finditer(text)]


def _measured(p: Passage) -> bool:
    """A section of docs/benchmarks.md that names its ``python -m benchmarks…`` command and a date."""
    return p.file == "docs/benchmarks.md" and "python -m benchmarks" in p.text and bool(_DATE.search(p.text))


def _linked_figures(p: Passage, measured: set[float]) -> set[str]:
    """The figures of ``p``'s paragraphs that link docs/benchmarks.md and that a measured section states."""
    linked = [s for s in re.split(r"\n\s*\n", p.text) if "benchmarks.md" in s]
    return {n.text for s in linked for n in claims(s) if n.value in measured}


def _rows_of(p: Passage, naming: dict[str, list[str]]) -> list[str]:
    """The rows ``p`` relies on: its line of the attribution table, the rows it cites by id (B29, D3), and,
    for a row of docs/sources.md, that row."""
    own = [p.section] if p.file == "docs/sources.md" and re.fullmatch(r"[BSDNK]\d+", p.section) else []
    return [*own, *naming.get(p.where, []), *re.findall(r"\b[BSDNK]\d+\b", p.text)]


def _set_by_scene(number: Number, values: list[object]) -> bool:
    """``number`` is one of the scene's control values, written with as many decimals as it shows."""
    decimals = len(number.text.split(".")[1]) if "." in number.text else 0
    return any(isinstance(v, float | int) and not isinstance(v, bool)
               and math.isclose(round(v, decimals), number.value) for v in values)


def listed() -> set[tuple[str, str]]:
    """(number as written, file or passage) of the table "Numbers the pages' words state"."""
    return {(cells[0].lower(), cells[1]) for cells in table(LISTED)}


def _source_texts() -> str | None:
    """The source texts, or None where they are not beside the repository."""
    try:
        return seeds()
    except pytest.skip.Exception:
        return None


class _Context(NamedTuple):
    """What the four kinds are read against: the attribution table, the rows, the listing, the measured
    figures of docs/benchmarks.md and the source texts (None where they are not beside the repository)."""

    naming: dict[str, list[str]]
    rows: dict
    listed: set[tuple[str, str]]
    measured: set[float]
    texts: str | None


def _context() -> _Context:
    """Everything ``unexplained`` reads, read once."""
    naming = {cells[0]: [i.strip() for i in cells[1].split(",")] for cells in table(NAMING)}
    measured = {n.value for p in passages() if _measured(p) for n in claims(re.sub("[“”]", " ", p.text))}
    return _Context(naming, rows(), listed(), measured, _source_texts())


def _printed(n: Number, ids: list[str], c: _Context) -> bool:
    """``n`` is a number that the item cell of one of the rows ``ids`` states (a decimal also in the
    source texts)."""
    stated = [value(m.group()) for i in ids if i in c.rows for m in NUMBER.finditer(words(c.rows[i].item))]
    if not any(math.isclose(n.value, v) for v in stated):
        return False
    printed = rf"(?<![\d.]){re.escape(n.text)}(?!\d)"
    return "." not in n.text or c.texts is None or bool(re.search(printed, c.texts))


def unexplained(shown: list[Passage]) -> list[str]:
    """Each number of ``shown`` that is none of the four kinds, with where it stands."""
    c, bad = _context(), []
    for p in (p for p in shown if not _measured(p)):
        ids, values = _rows_of(p, c.naming), scene_values(p.file, p.section)
        linked = _linked_figures(p, c.measured)
        for n in claims(p.text):
            if not (_printed(n, ids, c) or {(n.text.lower(), p.file), (n.text.lower(), p.where)} & c.listed
                    or _set_by_scene(n, values) or n.text in linked):
                bad.append(f"{p.where}: {n.text}")
    return bad


def test_every_number_in_the_words_is_printed_set_or_listed():
    assert unexplained(passages()) == [], (
        "a number typed into the words: fill it in from the backend (a ⟨placeholder⟩), or give it its source "
        "row, or its line under \"Numbers the pages' words state\" in docs/wording.md")


def test_the_check_finds_a_number_typed_by_hand():
    typed = [Passage("3_multihead.md", "post_match.drift", "the widest head ends near 178.25"),
             Passage("5_in_context.md", "pretraining", "Every step draws thirty-two prompts, thrice 16."),
             Passage("chapters/2_masked_training.py", "Steps run", "Trained for 250 steps.")]
    at = "5_in_context.md · pretraining: "
    assert unexplained(typed) == ["3_multihead.md · post_match.drift: 178.25", at + "thirty", at + "two",
                                  at + "thrice", at + "16", "chapters/2_masked_training.py · Steps run: 250"]


def test_what_is_not_a_claim_stays_out_and_nothing_else():
    text = ("1. In chapter 2 (1) (chapters 1 to 4, scene 3), B13 with float32, u²/2 and 2n(x), “Hold-out=1”, "
            "Python 3.11 on 2026-11-27 (NeurIPS 2024), commit 93cbe32: 150 points, ⟨n⟩ steps, half of it.")
    assert [n.text for n in claims(text)] == ["150", "half"]


def test_a_lesson_may_round_the_value_its_scene_sets():
    assert _set_by_scene(Number("0.018", 0.018), [0.0178]) and _set_by_scene(Number("10", 10), [10, True])
    assert not _set_by_scene(Number("0.019", 0.019), [0.0178]) and not _set_by_scene(Number("1", 1), [True])


def test_a_source_row_passes_only_the_numbers_its_item_states(monkeypatch):
    import test_prose_numbers as me
    from wordtools import Row

    item = "printed: 1 head u 1.09, ℓ_post 0.16"
    monkeypatch.setattr(me, "rows", lambda: {"B17": Row("B17", item, "chapter 3", "exact", "1.0912 here")})
    row = Passage("docs/sources.md", "B17", f"| B17 | {item} | chapter 3 | exact | 1.0912 here |")
    cited = Passage("README.md", "Set up", "The post's one head learns u = 1.09 (B17) and u = 2.18.")
    assert unexplained([row, cited]) == ["docs/sources.md · B17: 1.0912", "README.md · Set up: 2.18"]


def test_every_listed_number_stands_where_the_list_says():
    said = {(n.text.lower(), w) for p in passages() for n in claims(p.text) for w in (p.file, p.where)}
    assert sorted(listed() - said) == []


def _resolve(path: str) -> object:
    """The object a dotted path names: its longest importable prefix, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            found = getattr(found, name)
        return found
    raise AssertionError(f"{path}: not importable")


def constant(expression: str) -> object:
    """The value of a listing's constant: a dotted path, a call of one (``len(…)``, ``max(…)``, a function
    with constant arguments), or a sum, difference, product or ratio of them."""
    def walk(node: ast.AST) -> object:
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            fn = {"len": len, "max": max, "min": min}.get(name) or _resolve(name)
            return fn(*(walk(a) for a in node.args))
        if isinstance(node, ast.BinOp):
            ops = {ast.Div: lambda a, b: a / b, ast.Mult: lambda a, b: a * b, ast.Add: lambda a, b: a + b,
                   ast.Sub: lambda a, b: a - b}
            return ops[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Constant):
            return node.value
        return _resolve(ast.unparse(node))

    return walk(ast.parse(expression, mode="eval").body)


def states(number: str, got: object) -> bool:
    """The constant ``got``, rounded to the decimals ``number`` shows, is ``number``; a tuple holds it."""
    values = list(got) if isinstance(got, tuple | list | range | frozenset | set) else [got]
    decimals = len(number.split(".")[1]) if re.fullmatch(r"[\d,]+\.\d+", number) else None
    return any(math.isclose(float(v) if decimals is None else round(float(v), decimals), value(number),
                            rel_tol=1e-9) for v in values)


@pytest.mark.parametrize("cells", [c for c in table(LISTED) if len(c) > 3 and c[3]], ids=lambda c: c[0])
def test_a_listed_constant_is_the_backends(cells):
    """The listed number is the constant the listing names, as the backend holds it now."""
    number, path = cells[0], cells[3].strip("`")
    assert states(number, constant(path)), f"{path} is {constant(path)!r}, the words say {number}"


def test_the_constant_check_finds_a_number_the_backend_changed():
    assert states("25", constant("kernelviz.app.defaults.TAIL")) and states("2.3", constant("math.log(10)"))
    assert states("5,000", constant("kernelviz.app.defaults.POINT_CHOICES"))
    assert not states("26", constant("kernelviz.app.defaults.TAIL")) and not states("2.4", 2.302585)
