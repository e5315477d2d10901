"""No verdict typed by hand. This reads every passage a page, a lesson or the README shows
(``wordtools.passages()`` but ``docs/*.md``, which describe the code and dated measurements and have no
controls) and finds each verdict or comparison in its words (``VERDICTS``: narrower, near, agrees, the same,
rounding, beats, twice, finds, …). Each hit is either in a passage that code chooses from a computed result,
listed under "Verdicts chosen from a computed result" in ``docs/wording.md`` with the code that chooses it
and the test below that moves the page's real controls to both sides of the flip and reads the words; or
listed under "Verdicts that hold for every value" with the reason it holds for every value of the controls
on its page. A verdict that the backend can contradict and no code chooses is neither, and fails here."""

from __future__ import annotations

import ast
import re
import sys

import numpy as np
import pytest
from prosetools import shown, template
from test_app import ok, start
from test_questions import answer
from wordtools import ROOT, Passage, passages, table, words

from kernelviz.app import views
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.questions.bank import gaussian_d_qk
from kernelviz.app.ui.widgets.text import prose

KR, MASKED, MH, ATTN, ICL = (c.path for c in CHAPTERS)
VERDICTS = re.compile(
    r"\b(?:narrow(?:er|s|ed)|wid(?:er|ens?|ened)|sharper|flatter|flatten(?:s|ed)?|smoother than|less smooth"
    r"|near(?:ly)?|next to|close to|closer|towards?|(?:dis)?agree[sd]?|match(?:es|ed)?|reprint(?:s|ed)?"
    r"|reproduce[sd]?|same|identical|equals?|exactly|rounding|keeps|stays|remains|(?:non-|a)?symmetric"
    r"|beats?|outperforms?|worse|better|more than|less than|fewer than|twice|faster|slower|finds|found"
    r"|converge[sd]?|diverge[sd]?|shrinks|grows|falls|rises|drops|larger|smaller|higher|lower|always|never"
    r"|no longer|underfits?|overfits?|as (?:good|wide|narrow|large|small|sharp|smooth) as)\b",
    re.IGNORECASE)
CHOSEN = "Verdicts chosen from a computed result"
HOLDS = "Verdicts that hold for every value"


def scanned() -> list[Passage]:
    """The passages whose verdicts are read: all but ``docs/*.md``."""
    return [p for p in passages() if not p.file.startswith("docs/")]


def verdicts(text: str) -> set[str]:
    """The verdict words of ``text``'s words, in lower case."""
    return {" ".join(m.group().lower().split()) for m in VERDICTS.finditer(words(text))}


def _words(cell: str) -> set[str]:
    """The words of a listing's cell, comma-separated."""
    return {w.strip().lower() for w in cell.split(",") if w.strip()}


def listing() -> dict[str, set[str]]:
    """Passage ("FILE · SECTION") → the verdict words docs/wording.md lists for it, chosen or holding."""
    found: dict[str, set[str]] = {}
    for cells in (*table(CHOSEN), *table(HOLDS)):
        found.setdefault(cells[0], set()).update(_words(cells[1]))
    return found


def unlisted(shown_: list[Passage]) -> list[str]:
    """Each verdict of ``shown_`` that docs/wording.md lists neither as chosen nor as holding."""
    known = listing()
    return [f"{p.where}: {w}" for p in shown_ for w in sorted(verdicts(p.text) - known.get(p.where, set()))]


def test_every_verdict_is_chosen_or_holds_for_every_value():
    assert unlisted(scanned()) == [], (
        "a verdict typed into the words: choose it from the computed result (and list it, with its flip "
        "test), or list the reason it holds for every value of the page's controls, in docs/wording.md")


def test_the_check_finds_a_verdict_typed_by_hand():
    typed = [Passage("4_attention.md", "check_result", "The two agree: rounding, nothing more."),
             Passage("chapters/5_in_context.py", "Window", "The window is narrower than the best ℓ.")]
    at = "4_attention.md · check_result: "
    assert unlisted(typed) == [at + "agree", at + "rounding", "chapters/5_in_context.py · Window: narrower"]


def test_every_listed_verdict_stands_where_the_list_says():
    said = {p.where: verdicts(p.text) for p in scanned()}
    stale = [f"{where}: {sorted(ws - said.get(where, set()))}" for where, ws in listing().items()
             if ws - said.get(where, set())]
    assert stale == []


def chooses(path: str) -> bool:
    """The code a listing names exists: ``file.py:function`` is a function of that file (a page, read without
    running it), a dotted path an attribute of an importable module."""
    from test_prose_numbers import _resolve

    if ":" in path:
        file, name = path.split(":")
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(tree))
    return _resolve(path) is not None


@pytest.mark.parametrize("cells", table(CHOSEN), ids=lambda c: c[0])
def test_a_chosen_verdict_names_its_code_and_its_flip(cells):
    """The code exists, and so does each flip test (backquoted; one that rigs a result says so after it)."""
    code, flip = cells[2], cells[3]
    assert re.findall(r"`([^`]+)`", code) and all(chooses(c) for c in re.findall(r"`([^`]+)`", code)), code
    tests = re.findall(r"`(\w+)`", flip)
    assert tests and all(callable(getattr(sys.modules[__name__], t, None)) for t in tests), f"no test {flip}"


def markdown(at) -> list[str]:
    """The Markdown a page shows."""
    return [m.value for m in at.markdown]


def said(at, chapter: str, section: str) -> bool:
    """The section, its placeholders filled with anything, is on the page."""
    try:
        shown(markdown(at), chapter, section)
    except AssertionError:
        return False
    return True


def folded(text: str) -> str:
    """``text`` with its white space folded, as a page may wrap it."""
    return " ".join(text.split())


# Chapter 3: which of the post's runs the panels reprint ------------------------------------------------


def heads_described(at, section: str) -> list[str]:
    """The numbers of heads whose panel the page describes with ``section`` of chapter 3's post match."""
    text = next(t for t in markdown(at) if "Which runs are reprinted" in t)
    words_ = template("3_multihead", section).split("⟨heads⟩: ", 1)[1].split("⟨")[0]
    return re.findall(r"H = (\d+): " + re.escape(words_), text)


def test_the_post_match_names_each_run_from_its_numbers():
    at = start(MH)
    assert heads_described(at, "post_match.all") == ["1", "2"]
    assert heads_described(at, "post_match.one") == ["4"]
    assert heads_described(at, "post_match.drift") == ["8"]
    assert not said(at, "3_multihead", "post_match.other")


def test_another_seed_is_not_the_posts_run_and_the_words_say_so():
    at = start(MH, {"mh.seed": "7"})
    assert said(at, "3_multihead", "post_match.other")
    assert "1" not in heads_described(at, "post_match.all")  # one head, another walk: its digits differ


# Chapter 4: can the layer hold the Gaussian, and did it beat it ---------------------------------------


@pytest.mark.parametrize(("d_qk", "holds"), [(gaussian_d_qk(), True), (1, False)])
def test_the_question_says_whether_the_layer_can_hold_the_gaussian(d_qk, holds):
    at = start(ATTN, {"attn.dqk": str(d_qk)})
    prompts = [e.value for e in at.markdown if "leave-one-out optimum" in e.value]
    section = "beats_gaussian.holds" if holds else "beats_gaussian.cannot"
    assert any(prose("questions", section, d_qk=d_qk, need=gaussian_d_qk()) in p for p in prompts)


# the defaults: the layer beats the Gaussian; random maps after 50 steps do not; at d_qk = 1 it cannot hold
# the Gaussian and does not beat it from the default start, but 8 heads from random maps in 2,000 steps do
BEATS = [({}, "holds", True), ({"attn.start": "random", "attn.steps": "50"}, "holds", False),
         ({"attn.dqk": "1"}, "cannot", False),
         ({"attn.dqk": "1", "attn.start": "random", "attn.heads": "8", "attn.steps": "2000"}, "cannot", True)]


@pytest.mark.parametrize(("query", "holds", "layer_wins"), BEATS)
def test_the_reveal_follows_the_comparison(query, holds, layer_wins):
    text = folded(answer(start(ATTN, query), "attn.beats_gaussian", True))
    reason = prose("questions", f"beats_gaussian.{holds}.{'yes' if layer_wins else 'no'}", d_qk=1,
                   need=gaussian_d_qk())
    assert text.startswith("**Right.**" if layer_wins else "**Not this time.**")
    assert folded(reason) in text


# Chapter 5: the window against roughness --------------------------------------------------------------

# the sweep's window from roughness 1.5 to 10: narrower at the defaults, wider with 4 points a prompt
WAYS = [({}, "narrower"), ({"icl.n": "4"}, "wider")]


@pytest.mark.parametrize(("query", "way"), WAYS)
def test_the_window_reveal_explains_the_direction_found(query, way):
    text = folded(answer(start(ICL, query), "icl.rough_window", way))
    assert text.startswith("**Right.**")
    assert folded(prose("questions", f"rough_window.{way}")) in text
    other = "wider" if way == "narrower" else "narrower"
    assert folded(prose("questions", f"rough_window.{other}")) not in text


# the sweep's two ends: narrower and wider at the defaults; wider with roughness at 4 points a prompt; with
# 64 points and 4 heads every window of the noise sweep is infinite (a head's score not concave), not wider:
# the only "no" for the noise that the search found (families, n 4 and 64, heads 1 and 4, seeds 0-9)
SWEEPS = [({}, "yes", "yes"), ({"icl.n": "4"}, "no", "yes"),
          ({"icl.n": "64", "icl.heads": "4", "icl.seed": "1"}, "yes", "no")]


@pytest.mark.parametrize(("query", "narrows", "widens"), SWEEPS)
def test_the_sweep_says_whether_the_window_narrows_and_widens(query, narrows, widens):
    at = start(ICL, {"icl.sweep": "true", **query})
    got = shown(markdown(at), "5_in_context", "sweep_result")
    assert (got["narrows"], got["widens"]) == (narrows, widens)


# Chapter 2: does the learned ℓ grow with the hold-out size --------------------------------------------

HOLDOUT_ORDERS = [({}, "grows"), ({"masked.seed": "0"}, "mixed")]


@pytest.mark.parametrize(("query", "order"), HOLDOUT_ORDERS)
def test_the_holdout_reveal_says_whether_the_order_holds(query, order):
    text = folded(answer(start(MASKED, query), "masked.largest_holdout", 1))
    assert folded(prose("questions", f"largest_holdout.{order}")) in text


# Chapter 1: d2l's exercise 1 -----------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "shrinks"), [("0", "shrinks"), ("11", "does not shrink")])
def test_the_exercise_says_whether_the_optimum_shrinks(seed, shrinks):
    at = start(KR, {"data.source": "d2l", "data.seed": seed, "kr.d2l_sweep": "true"})
    got = shown(markdown(at), "1_kernel_regression", "d2l_consistency_result")
    assert got["shrinks"] == shrinks
    assert got["fixed_why"] == prose("1_kernel_regression", "consistency.bias")
    assert got["tuned_why"] == prose("1_kernel_regression", "consistency.converges")
    assert got["goes"] == "falls"


def _sweep(fixed: list[float], tuned: list[float], optima: list[float]) -> views.Consistency:
    """A sweep of exercise 1 at n = 10 and 1,000, made up for the sides no seed reaches."""
    return views.Consistency(np.array([10, 1000]), np.array(fixed), np.array(tuned), np.array(optima))


@pytest.mark.parametrize(("sweep", "biased", "converges"), [
    (_sweep([0.99, 0.08], [0.9, 0.07], [0.7, 0.13]), False, True),  # ℓ = 1 about as good at the end
    (_sweep([0.99, 0.62], [0.05, 0.07], [0.7, 0.9]), True, False),  # the tuned error rises
])
def test_the_exercise_words_follow_the_sweep(monkeypatch, sweep, biased, converges):
    """Rigged: no noise seed the sidebar offers reaches these sides. d2l's data at ℓ = 1 keep their bias
    at n = 1,000 and the tuned error falls for every seed searched (0 … 999 of 0 … 99,999), and the
    exercise's only control on chapter 1 is that seed, so the sweep itself is replaced here."""
    assert (sweep.biased, sweep.converges) == (biased, converges)
    monkeypatch.setattr(cache_d2l, "consistency", lambda seed: sweep)
    at = start(KR, {"data.source": "d2l", "kr.d2l_sweep": "true"})
    ok(at)
    got = shown(markdown(at), "1_kernel_regression", "d2l_consistency_result")
    bias = "consistency.bias" if biased else "consistency.no_bias"
    assert got["fixed_why"] == prose("1_kernel_regression", bias)
    assert got["tuned_why"] == prose("1_kernel_regression",
                                     "consistency.converges" if converges else "consistency.not_yet")
    assert got["goes"] == ("falls" if sweep.tuned[-1] < sweep.tuned[0] else "rises")
