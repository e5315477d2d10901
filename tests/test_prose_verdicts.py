"""No fixed direction: a sentence that states a verdict ("reprinted", "narrower", "beats", "converges") is
chosen from the computed result. Each test moves the controls, or the computed result itself where no
control reaches the other side, to where the verdict flips, and checks that the words flip with it."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from prosetools import shown, template
from test_app import ok, start
from test_questions import answer

from kernelviz.app import views
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.caching import incontext as ci
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.questions.bank import gaussian_d_qk
from kernelviz.app.ui.widgets.text import prose

KR, MASKED, MH, ATTN, ICL = (c.path for c in CHAPTERS)


def markdown(at) -> list[str]:
    return [m.value for m in at.markdown]


def said(at, chapter: str, section: str) -> bool:
    """The section, its placeholders filled with anything, is on the page."""
    try:
        shown(markdown(at), chapter, section)
    except AssertionError:
        return False
    return True


# Chapter 3: which of the post's runs the panels reprint ------------------------------------------------


def heads_described(at, section: str) -> list[str]:
    """The numbers of heads whose panel the page describes with ``section`` of chapter 3's post match."""
    text = next(t for t in markdown(at) if "Which runs are reprinted" in t)
    words = template("3_multihead", section).split("⟨heads⟩: ", 1)[1].split("⟨")[0]
    return re.findall(r"H = (\d+): " + re.escape(words), text)


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


@pytest.mark.parametrize("layer_wins", [True, False])
def test_the_reveal_follows_the_comparison(monkeypatch, layer_wins):
    real = cache_attention.comparison

    def rigged(data, s):
        c = real(data, s)
        lo, hi = sorted(c.loo[:2])
        first = [lo, hi] if layer_wins else [hi, lo]
        return dataclasses.replace(c, loo=np.array([*first, *c.loo[2:]]))

    monkeypatch.setattr(cache_attention, "comparison", rigged)
    text = answer(start(ATTN), "attn.beats_gaussian", True)
    reason = prose("questions", f"beats_gaussian.holds.{'yes' if layer_wins else 'no'}")
    assert text.startswith("**Right.**" if layer_wins else "**Not this time.**")
    assert " ".join(reason.split()) in " ".join(text.split())


# Chapter 5: the window against roughness --------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_the_window_reveal_explains_the_direction_found(monkeypatch, reverse):
    real = ci.sweep

    def rigged(*args):
        rows = real(*args)
        if not reverse:
            return rows
        windows = [r.window for r in rows]
        return [r._replace(window=w) for r, w in zip(rows, windows[::-1], strict=True)]

    monkeypatch.setattr(ci, "sweep", rigged)
    rows = rigged("sine", 32, 1, 0)
    by_r = sorted((r for r in rows if r.noise == ci.SWEEP_BASE[1]), key=lambda r: r.roughness)
    way = "narrower" if by_r[-1].window < by_r[0].window else "wider"
    text = " ".join(answer(start(ICL), "icl.rough_window", way).split())
    assert text.startswith("**Right.**")
    assert " ".join(prose("questions", f"rough_window.{way}").split()) in text
    other = "wider" if way == "narrower" else "narrower"
    assert " ".join(prose("questions", f"rough_window.{other}").split()) not in text


# Chapter 2: does the learned ℓ grow with the hold-out size --------------------------------------------


@pytest.mark.parametrize("order", ["grows", "mixed"])
def test_the_holdout_reveal_says_whether_the_order_holds(monkeypatch, order):
    real = cache.holdout_panel

    def rigged(data, kernel, k, *rest):
        panel = real(data, kernel, k, *rest)
        sizes = cache.panel_holdouts(len(data.train))
        rank = sizes.index(k) if order == "grows" else (sizes.index(k) + 2) % len(sizes)
        return dataclasses.replace(panel, lengthscale=0.1 * (rank + 1))

    monkeypatch.setattr(cache, "holdout_panel", rigged)
    text = " ".join(answer(start(MASKED), "masked.largest_holdout", 1).split())
    assert " ".join(prose("questions", f"largest_holdout.{order}").split()) in text


# Chapter 1: d2l's exercise 1 -----------------------------------------------------------------------------


def _sweep(fixed: list[float], tuned: list[float], optima: list[float]) -> views.Consistency:
    return views.Consistency(np.array([10, 1000]), np.array(fixed), np.array(tuned), np.array(optima))


@pytest.mark.parametrize(("sweep", "biased", "converges"), [
    (_sweep([0.99, 0.62], [0.9, 0.07], [0.7, 0.13]), True, True),   # ℓ = 1 keeps its bias; ℓ*(n) converges
    (_sweep([0.99, 0.08], [0.9, 0.07], [0.7, 0.13]), False, True),  # ℓ = 1 about as good at the end
    (_sweep([0.99, 0.62], [0.05, 0.07], [0.7, 0.9]), True, False),  # the tuned error rises
])
def test_the_exercise_words_follow_the_sweep(monkeypatch, sweep, biased, converges):
    assert (sweep.biased, sweep.converges) == (biased, converges)
    monkeypatch.setattr(cache_d2l, "consistency", lambda seed: sweep)
    at = start(KR, {"data.source": "d2l", "kr.d2l_sweep": "true"})
    ok(at)
    got = shown(markdown(at), "1_kernel_regression", "d2l_consistency_result")
    bias = "consistency.bias" if biased else "consistency.no_bias"
    assert got["fixed_why"] == prose("1_kernel_regression", bias)
    assert got["tuned_why"] == prose("1_kernel_regression",
                                     "consistency.converges" if converges else "consistency.not_yet")
    assert got["shrinks"] == ("shrinks" if sweep.optima[-1] < sweep.optima[0] else "does not shrink")
    assert got["goes"] == ("falls" if sweep.tuned[-1] < sweep.tuned[0] else "rises")
