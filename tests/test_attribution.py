"""Attribution lint. This reads every passage of ``wordtools.passages()`` (the prose, every lesson field,
``6_sources.toml``, the code's catalogue, README.md, ``docs/*.md``, ``lessons/README.md``) and checks, for
every way the words name a source (``SOURCE_NAMES``: "the post", "Czyż", "the smoothing post", "d2l", "the
lecture notes", "its Kotlin port", "DJL", "the author", "no source", …):

* that each sentence naming one stands in a passage that ``docs/wording.md`` lists under "Where the pages'
  words name a source" with the rows of ``docs/sources.md`` it relies on, one row at least of each source it
  names (a passage relies also on the rows it cites by id, a row of ``docs/sources.md`` on itself; a passage
  under one source's heading or entry names that source; "no source" names them all at once and may list
  "—", since a thing no source has has no row; "the author" needs a row of some source);
* that every row's status cell is, as a whole, one value of ``STATUSES``: a reader learns how the page shows
  the item from one word, not from a phrase that happens to contain one;
* that every quotation, between curly or straight double quotes, is the sources' own words verbatim (white
  space folded, ’ and ' alike, its first letter's case and a closing comma or full stop free, "…" for what is
  left out), or names one of kernelviz's own strings (``own_strings``: a label on the page, a heading of
  the docs), or is one of the quotes ``docs/wording.md`` lists under "Quotes that are not a source's
  words" (a term, a paper's title, a program's message), each with its reason: a quote is taken as a
  source's words unless it is one of kernelviz's strings or listed there."""

from __future__ import annotations

import re

import pytest
from wordtools import Passage, catalogue, cells, fold, passages, rows, seeds, sentences, table, words

# the words that name a source, and the letter of its rows in docs/sources.md ("*": every source at once,
# "?": a source by its author); the first that matches a stretch of words takes it
SOURCE_NAMES = (
    ("S", r"the smoothing post|Attention as a kernel smoothing problem"),
    ("K", r"Dive into Deep Learning, “Attention pooling” \(Kotlin / DJL port\)"
          r"|(?:the|its) (?:Kotlin(?:/DJL)? )?port\b|d2l's Kotlin|d2l Kotlin|Kotlin/DJL|\bDJL\b"),
    ("B", r"the (?:blog )?post\b|Czyż|From kernel regression to the transformer"),
    ("D", r"d2l|Dive into Deep Learning"),
    ("N", r"the (?:lecture )?notes\b|lecture notes"),
    ("*", r"no source|none of the sources"),
    ("?", r"the author\b"),
)
STATUSES = ("exact", "partial", "re-run", "paraphrased", "quoted", "kernelviz's own", "not shown")
LISTING = "Where the pages' words name a source"
NOT_SOURCE = "Quotes that are not a source's words"
QUOTE = re.compile(r"“([^”]+)”|(?<![\w\"])\"([^\"\n]+)\"(?![\w\"])")
_NAMES = [(letter, re.compile(rf"\b(?:{words_})", re.IGNORECASE)) for letter, words_ in SOURCE_NAMES]


def named(sentence: str) -> set[str]:
    """The letters of the sources ``sentence`` names ("the smoothing post" is not "the post")."""
    found, rest = set(), sentence
    for letter, pattern in _NAMES:
        if pattern.search(rest):
            found.add(letter)
            rest = pattern.sub(" ", rest)
    return found


def listed() -> dict[str, list[str]]:
    """The passages docs/wording.md lists ("FILE · SECTION") with the ids of their rows."""
    return {cells[0]: [i.strip() for i in cells[1].split(",") if i.strip() not in ("", "—")]
            for cells in table(LISTING)}


_OWN = {"blog": "B", "smoothing": "S", "d2l": "D", "notes": "N", "kotlin": "K"}


def own_source(p: Passage) -> str | None:
    """The source a passage is about, where it stands under that source: a row of docs/sources.md, the
    section of docs/sources.md for one source, or a source's entry of 6_sources.toml."""
    if p.file == "6_sources.toml":
        return _OWN.get(p.section.split(" · ")[0])
    if p.file == "docs/sources.md" and re.fullmatch(r"[BSDNK]\d+", p.section):
        return p.section[0]
    if p.file == "docs/sources.md" and re.match(r"[1-5]\. ", p.section):
        return "BSDNK"[int(p.section[0]) - 1]
    return None


def _without_places(p: Passage) -> str:
    """``p``'s text; for a row of docs/sources.md, without its "where on the pages" cell, which names places
    on the pages ("chapter 2's d2l section"), not what a source says."""
    if p.file == "docs/sources.md" and re.fullmatch(r"[BSDNK]\d+", p.section):
        parts = cells(p.text)
        return " | ".join(parts[:2] + parts[3:])
    return p.text


def naming(shown: list[Passage]) -> dict[str, set[str]]:
    """Each passage that names a source, with the letters of the sources it names; a passage under one
    source (``own_source``) names that source, and under the smoothing post "the post" is that post."""
    found: dict[str, set[str]] = {}
    for p in shown:
        text = words(_without_places(p))
        if own_source(p) == "S":
            text = re.sub(r"\bthe post\b", "the smoothing post", text, flags=re.IGNORECASE)
        letters = set().union(*(named(s) for s in sentences(text))) | set(own_source(p) or "")
        if letters:
            found[p.where] = letters
    return found


def _relied_on(p: Passage, table_: dict[str, list[str]]) -> list[str] | None:
    """The rows ``p`` relies on: those listed for it, and those it cites by id (a row of docs/sources.md
    relies on itself)."""
    cited = re.findall(r"\b[BSDNK]\d+\b", p.text)
    if p.file == "docs/sources.md" and re.fullmatch(r"[BSDNK]\d+", p.section):
        return [p.section, *cited]
    listed_ = table_.get(p.where)
    return None if listed_ is None else [*listed_, *cited]


def unattributed(shown: list[Passage]) -> list[str]:
    """What is wrong with the attribution of ``shown``: a passage not listed, a source it names with no
    row of its own, a row id that does not exist."""
    table_, known, problems = listed(), rows(), []
    by_where = {p.where: p for p in shown}
    for where, letters in naming(shown).items():
        ids = _relied_on(by_where[where], table_)
        if ids is None:
            problems.append(f"{where}: names {sorted(letters)} but is not listed")
            continue
        problems += [f"{where}: row {i} does not exist" for i in ids if i not in known]
        problems += [f"{where}: names source {x} but lists none of its rows"
                     for x in sorted(letters - {"*", "?"}) if not any(i.startswith(x) for i in ids)]
        problems += [f"{where}: names a source ({x}) but lists no row" for x in sorted(letters & {"?"})
                     if not ids]
    return problems


def test_every_sentence_that_names_a_source_has_its_rows():
    assert unattributed(passages()) == []


def test_the_lint_finds_a_sentence_credited_to_a_source_without_its_row():
    shown = passages()
    (p,) = [q for q in shown if (q.file, q.section) == ("1_kernel_regression.md", "panels")]
    changed = p._replace(text=p.text + " The lecture notes draw the same four panels.")
    new = [Passage("questions.md", "a_new_question.prompt", "As Dive into Deep Learning asks: which w?"),
           Passage("chapters/2_masked_training.py", "DJL logs…", "DJL logs the loss per epoch.")]
    assert unattributed([changed, *new]) == [
        "1_kernel_regression.md · panels: names source N but lists none of its rows",
        "questions.md · a_new_question.prompt: names ['D'] but is not listed",
        "chapters/2_masked_training.py · DJL logs…: names ['K'] but is not listed"]


@pytest.mark.parametrize(("sentence", "letters"), [
    ("The smoothing post names no k.", {"S"}),
    ("The post's caveats, and the smoothing post's kernel.", {"B", "S"}),
    ("d2l's Kotlin/DJL port adds a validation set.", {"K"}),
    ("its Kotlin port adds “(and sufficiently small kernel bandwidth)”.", {"K"}),
    ("As DJL logs it; Czyż's figure.", {"K", "B"}),
    ("In d2l's words, the closer the pair, the higher the weight.", {"D"}),
    ("The notes' SelfAttention; the port's log; the lecture notes' kernels.", {"N", "K"}),
    ("The blog post notes that one relabels a tuple.", {"B"}),
    ("kernelviz's own (no source draws it); none of the sources trains it.", {"*"}),
    ("The author's story.", {"?"}),
])
def test_the_names_of_the_sources_are_told_apart(sentence, letters):
    assert named(sentence) == letters


def test_every_listed_passage_stands():
    """A passage may be listed without naming a source, for the rows its numbers rely on, but it stands."""
    assert sorted(set(listed()) - {p.where for p in passages()}) == []


def test_every_row_has_one_status_of_the_fixed_set():
    """The status cell read as a whole: "exact (quoted)" or "exact at the default seed" is not one."""
    vague = sorted(f"{r.id}: {r.status}" for r in rows().values() if r.status.strip("* ") not in STATUSES)
    assert vague == []


def test_the_status_check_reads_the_whole_cell(monkeypatch):
    import test_attribution as me
    from wordtools import Row

    fake = {"B1": Row("B1", "data", "", "exact", ""), "B2": Row("B2", "band", "", "exact in kind", ""),
            "B3": Row("B3", "mean", "", "kernelviz's own", "")}
    monkeypatch.setattr(me, "rows", lambda: fake)
    with pytest.raises(AssertionError, match="B2: exact in kind"):
        test_every_row_has_one_status_of_the_fixed_set()


def _normal(text: str) -> str:
    """``text`` folded, its curly quotes straight, so that a quote and the sources compare alike."""
    return fold(text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"'))


def quotes(text: str) -> list[str]:
    """The quotations in ``text`` outside code (a quotation may hold a source's formula)."""
    return [a or b for a, b in QUOTE.findall(words(text, latex=True))]


def own_strings() -> set[str]:
    """kernelviz's own strings, which a quotation may name: each message of the catalogue (a label on the
    page, "Where this comes from") and each heading, bold paragraph lead and table column of README.md and
    docs/ (a cross-reference, "The second drawing, in full")."""
    docs = [p for p in passages() if p.file == "README.md" or p.file.startswith(("docs/", "lessons/"))]
    leads = [m.strip(" .:") for p in docs for m in re.findall(r"\*\*([^*]+)\*\*", p.text)]
    columns = [c for p in docs for line in re.findall(r"^(\|.*\|)\n\| ?-", p.text, re.MULTILINE)
               for c in cells(line)]
    strings = (*(p.section for p in docs), *leads, *columns, *(p.text for p in catalogue()))
    return {_normal(t).lower() for t in strings}


def _verbatim(quote: str, sources: str) -> bool:
    """Each part of ``quote`` ("…" between them) is in ``sources``, its first letter's case and a closing
    comma or full stop free."""
    parts = [p.strip(" ,.") for p in _normal(quote).split("…") if p.strip(" ,.")]
    return bool(parts) and all(p in sources or p[0].swapcase() + p[1:] in sources for p in parts)


def not_verbatim(shown: list[Passage]) -> list[str]:
    """Each quotation of ``shown`` that is neither the sources' words nor listed as not a source's."""
    sources = _normal(seeds())
    listed_ = {_normal(cells[0].strip("“”\"")) for cells in table(NOT_SOURCE)}
    own = own_strings()
    return [f"{p.where}: “{q}”" for p in shown for q in quotes(p.text)
            if _normal(q) not in listed_ and _normal(q).lower() not in own and not _verbatim(q, sources)]


def test_every_quote_is_the_sources_own_words_or_listed():
    assert not_verbatim(passages()) == []


def test_the_quote_check_finds_words_put_in_a_sources_mouth():
    typed = [Passage("1_kernel_regression.md", "panels", "ℓ = 3 “results in underfitted predictions”."),
             Passage("README.md", "Set up", 'The post calls it "a good choice" and "is a reasonable '
                     'choice".')]
    assert not_verbatim(typed) == ["1_kernel_regression.md · panels: “results in underfitted predictions”",
                                   "README.md · Set up: “a good choice”"]


def test_every_listed_quote_still_stands():
    said = {_normal(q) for p in passages() for q in quotes(p.text)}
    assert sorted(c[0] for c in table(NOT_SOURCE) if _normal(c[0].strip("“”\"")) not in said) == []
