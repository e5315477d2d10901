"""Predict, then reveal (kernelviz/app/ui/questions/): every chapter asks a question whose
answer is computed by the backend at the current data and controls, never written down in advance."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_app import ok, start

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.caching import incontext as ci
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.questions.predict import QUESTION_CHAPTERS, Guess
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt

KR, MASKED, MH, ATTN, ICL = (c.path for c in CHAPTERS)


def answer(at, name: str, guess: object) -> str:
    """Guess ``guess`` for question ``name``, press Reveal, and return what the page says."""
    key = f"q.{name}.guess"
    kinds = ("slider", "segmented_control", "radio")
    (widget,) = [w for kind in kinds for w in getattr(at, kind) if w.key == key]
    widget.set_value(guess).run()
    ok(at)
    at.button(key=f"q.{name}.reveal").click().run()
    ok(at)
    said = [e.value for e in (*at.success, *at.info) if "Predict" not in e.value]
    (text,) = [s for s in said if re.search(r"Right|Not this time|Spot on|Close|Not quite", s)]
    return re.sub(r"\\(.)", r"\1", text)  # as shown: without Markdown's escapes


NUMBER = r"(-?\d+(?:\.\d+)?)"


def number(text: str, pattern: str) -> float:
    return float(re.search(pattern, text).group(1))


def nadaraya_watson_at(x: np.ndarray, y: np.ndarray, query: float, ell: float) -> float:
    """The Gaussian Nadaraya–Watson prediction at one query, in plain NumPy."""
    w = np.exp(-0.5 * ((query - x) / ell) ** 2)
    return float(np.sum(w * y) / np.sum(w))


def test_every_chapter_asks_a_question():
    assert sorted(QUESTION_CHAPTERS.values()) == sorted(c.url for c in CHAPTERS)


@pytest.mark.parametrize("seed", [2024, 7])
def test_the_wide_window_answer_is_the_fit_at_that_point(seed):
    at = start(KR, {"data.seed": str(seed)})
    text = answer(at, "kr.wide_window", 0.5)
    ds = kv.blog_data(n=150, seed=seed)
    expected = nadaraya_watson_at(ds.x, ds.y, 1.0, 3.16)  # x = 1, the slider's ℓ nearest 3 (the post's data)
    assert number(text, r"passes at \*\*" + NUMBER) == pytest.approx(expected, abs=0.0006)
    assert number(text, "mean ȳ = " + NUMBER) == pytest.approx(float(np.mean(ds.y)), abs=0.0006)


def test_the_wide_window_answer_moves_with_the_data():
    texts = [answer(start(KR, {"data.seed": s}), "kr.wide_window", 0.5) for s in ("1", "2")]
    assert texts[0] != texts[1]


def test_the_largest_holdout_is_the_posts_runs_argmax():
    at = start(MASKED)
    data = at.session_state["kv._data"]
    sizes = cache.panel_holdouts(len(data.train))
    M = vt.MaskedSettings()
    ells = [cache.holdout_panel(data, M.kernel, k, M.steps, M.learning_rate, M.seed).lengthscale
            for k in sizes]
    best = sizes[int(np.argmax(ells))]
    text = answer(at, "masked.largest_holdout", best)
    assert text.startswith(f"**Right.** Hold-out {best} learns the largest ℓ")
    wrong = next(k for k in sizes if k != best)
    assert answer(at, "masked.largest_holdout", wrong).startswith("**Not this time.**")


def test_the_largest_mixing_weight_is_the_pages_own_fit():
    at = start(MH)
    data = at.session_state["kv._data"]
    H = defaults.MULTIHEAD
    result = cache_heads.fit_multihead(data, H.heads, vt.MaskedSettings(H.kernel, H.holdout, H.steps,
                                                                        H.learning_rate, H.seed))
    best = int(np.argmax(np.abs(result.mixing))) + 1
    text = answer(at, "mh.largest_mixing", best)
    assert text.startswith(f"**Right.** Head {best} gets the largest")
    assert f"u = {result.mixing[best - 1]:+.3g}" in text


def test_the_layer_against_the_gaussian_is_the_comparison_table():
    at = start(ATTN)
    data = at.session_state["kv._data"]
    s = ps.LAYER.defaults(data)
    comp = cache_attention.comparison(data, s)
    text = answer(at, "attn.beats_gaussian", True)
    assert f"the trained layer {comp.loo[0]:.4g}, the best Gaussian {comp.loo[1]:.4g}" in text
    assert text.startswith("**Right.**" if comp.loo[0] < comp.loo[1] else "**Not this time.**")


def test_the_window_against_roughness_is_the_sweeps():
    at = start(ICL)
    rows = ci.sweep("sine", 32, 1, 0)
    by_r = sorted((r for r in rows if r.noise == ci.SWEEP_BASE[1]), key=lambda r: r.roughness)
    truth = "narrower" if by_r[-1].window < by_r[0].window else "wider"
    text = answer(at, "icl.rough_window", truth)
    assert text.startswith("**Right.**")
    assert f"from {by_r[0].window:.3g} at roughness" in text


def test_each_head_is_labelled_with_the_lengthscale_its_training_starts_at():
    for query in ({}, {"mh.heads": "1"}, {"data.source": "d2l", "mh.heads": "3"}):
        at = start(MH, query)
        data = at.session_state["kv._data"]
        H = defaults.MULTIHEAD
        heads = int(query.get("mh.heads", H.heads))
        result = cache_heads.fit_multihead(data, heads, vt.MaskedSettings(H.kernel, H.holdout, H.steps,
                                                                          H.learning_rate, H.seed))
        key = "q.mh.largest_mixing.guess"
        (control,) = [w for w in (*at.segmented_control, *at.radio) if w.key == key]
        labels = list(control.options)  # as shown: the labels
        assert labels == [f"head {h + 1} (starts at ℓ = {s:.3g})" for h, s in enumerate(result.trajectory[0])]


def test_the_holdout_question_names_the_chapters_kernel():
    at = start(MASKED, {"masked.kernel": "epanechnikov"})
    assert any("Masked training of one Epanechnikov kernel" in m.value for m in at.markdown)


def test_a_guess_whose_options_do_not_fit_half_a_row_takes_the_row_and_past_a_row_wraps():
    short = Guess(options=("wider", "narrower"), labels=("Wider", "Narrower"))
    four = Guess(options=(1, 2, 3, 4), labels=tuple(f"head {h} (starts at ℓ = 0.0707)" for h in range(1, 5)))
    heads = range(1, 9)
    eight = Guess(options=tuple(heads), labels=tuple(f"head {h} (starts at ℓ = 0.07)" for h in heads))
    assert not short.wide() and four.wide() and eight.wide() and not Guess(lo=0.0, hi=1.0).wide()
    at = start(MH, {"mh.heads": "8"})
    assert [r.key for r in at.radio if r.key == "q.mh.largest_mixing.guess"]  # eight heads: radio buttons
    assert [r.key for r in start(MH, {"mh.heads": "2"}).segmented_control
            if r.key == "q.mh.largest_mixing.guess"]  # two: a row of buttons
