"""The chapters' questions (asked by ``predict.py`` beside this module): each a prompt, a guess and a
reveal whose numbers come from the backend, through the chapter's own cached calls, at the current data
and controls. The words are in ``chapters/prose/questions.md``."""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

import kernelviz as kv
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import incontext as ci
from kernelviz.app.ui.caching.cache import cached
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions.predict import Guess, Question, Reveal
from kernelviz.app.ui.widgets.text import prose
from kernelviz.app.views import incontext as vi
from kernelviz.app.views.training import MaskedSettings
from kernelviz.app.views.values import lengthscale_choice
from kernelviz.core.kernels import get_kernel
from kernelviz.models.attention import gaussian_attention_params
from kernelviz.models.heads import FitResult
from kernelviz.models.incontext import PretrainRequest
from kernelviz.runtime.i18n import _

__all__ = ["beats_gaussian", "largest_holdout", "largest_mixing", "rough_window", "wide_window"]

P = "questions"
# How a window changes, as the rough_window question's reveal says it: the key (also its answer and the name
# of its prose reason) → the word in its sentence.
WAYS = {"wider": _("wider"), "narrower": _("narrower")}


def _g(v: float) -> str:
    return f"{v:.3g}"


def _judged(guess: object, answer: object, why: str) -> Reveal:
    """The reveal of a question with one right choice: right or not, and why."""
    return Reveal(guess == answer, _("Right.") if guess == answer else _("Not this time."), why, answer)


class FitAt(NamedTuple):
    """The fit at one query: m(x), the smallest weight over the largest, and the mean of all y."""

    mean: float
    ratio: float
    y_mean: float


@cached()
def fit_at(data: Data, x: float, lengthscale: float) -> FitAt:
    """Nadaraya–Watson with the Gaussian kernel at the one query ``x``, from all the data, with weights."""
    ds = data.ds
    s = kv.nadaraya_watson(np.array([x]), ds.x, ds.y, lengthscale, "gaussian", with_weights=True)
    w = s.weights[0]
    return FitAt(float(s.mean[0]), float(w.min() / w.max()), float(np.mean(ds.y)))


def wide_window(data: Data) -> Question:
    """Chapter 1: where the fit passes at x = lo + 2/3 span with ℓ the slider's value nearest span / 2
    (x = 1, ℓ = 3.16 on the post's data), so that a scene at that ℓ shows the answer."""
    lo, hi = data.ds.domain
    x, ell = float(f"{lo + 2 * (hi - lo) / 3:.3g}"), lengthscale_choice((hi - lo) / 2, hi - lo)
    y = data.ds.y

    def reveal(guess: object) -> Reveal:
        at = fit_at(data, x, ell)
        off = abs(float(guess) - at.mean)
        share = off / (float(y.max() - y.min()) or 1.0)
        verdict = _("Spot on.") if share <= 0.05 else _("Close.") if share <= 0.15 else _("Not quite.")
        yours = prose(P, "wide_window.yours", guess=_g(float(guess)), off=_g(off), share=f"{share:.0%}")
        why = prose(P, "wide_window.why", answer=_g(at.mean), ell=_g(ell), ratio=f"{at.ratio:.2f}",
                    mean=_g(at.y_mean))
        return Reveal(share <= 0.15, verdict, why, at.mean, yours)

    return Question("kr.wide_window", prose(P, "wide_window.prompt", ell=_g(ell), x=_g(x)),
        Guess(lo=float(y.min()), hi=float(y.max())), reveal)


def largest_holdout(data: Data, s: MaskedSettings) -> Question:
    """Chapter 2: which of the post's four hold-out sizes learns the largest ℓ (the post's code re-run)."""
    sizes = cache.panel_holdouts(len(data.train))

    def reveal(guess: object) -> Reveal:
        ells = [cache.holdout_panel(data, s.kernel, k, s.steps, s.learning_rate, s.seed).lengthscale
                for k in sizes]
        best = sizes[int(np.argmax(ells))]
        grows = all(a < b for a, b in itertools.pairwise(ells))
        why = prose(P, "largest_holdout.why", answer=best,
                    all=", ".join(f"{k}: {_g(v)}" for k, v in zip(sizes, ells, strict=True)),
                    order=prose(P, "largest_holdout.grows" if grows else "largest_holdout.mixed"))
        return _judged(guess, best, why)

    prompt = prose(P, "largest_holdout.prompt", sizes=", ".join(map(str, sizes)),
                   kernel=get_kernel(s.kernel).label)
    return Question("masked.largest_holdout", prompt,
        Guess(options=sizes, labels=tuple(_("hold-out {k}").format(k=k) for k in sizes)), reveal)


def largest_mixing(result: FitResult) -> Question:
    """Chapter 3: which head the training gives the largest |u_h| (the page's own fit)."""
    heads = len(result.lengthscales)
    options = tuple(range(1, heads + 1))

    def reveal(guess: object) -> Reveal:
        best = int(np.argmax(np.abs(result.mixing))) + 1
        parts = [_("head {h}: ℓ = {ell}, u = {u:+.3g}").format(h=h, ell=_g(ell), u=u)
                 for h, ell, u in zip(options, result.lengthscales, result.mixing, strict=True)]
        why = prose(P, "largest_mixing.why", answer=best, all="; ".join(parts))
        return _judged(guess, best, why)

    starts = result.trajectory[0]  # where this fit's training started, scaled to the data
    return Question("mh.largest_mixing", prose(P, "largest_mixing.prompt", heads=heads),
        Guess(options=options, labels=tuple(_("head {h} (starts at ℓ = {ell})").format(h=h, ell=_g(s))
                                            for h, s in zip(options, starts, strict=True))), reveal)


def gaussian_d_qk() -> int:
    """How many query/key dimensions the Gaussian smoother takes as an attention head (chapter 4's first
    section, ``gaussian_attention_params``)."""
    return int(gaussian_attention_params(1.0).w_q.shape[-1])


def beats_gaussian(data: Data, s: object) -> Question:
    """Chapter 4: does the trained layer (settings ``s``) beat the best Gaussian on leave-one-out error?
    Whether the layer can hold the Gaussian at all (d_qk ≥ ``gaussian_d_qk()``) picks the words."""
    need = gaussian_d_qk()
    holds = "beats_gaussian.holds" if s.d_qk >= need else "beats_gaussian.cannot"

    def reveal(guess: object) -> Reveal:
        comp = cache_attention.comparison(data, s)
        layer, gaussian = float(comp.loo[0]), float(comp.loo[1])
        yes = layer < gaussian
        reason = prose(P, f"{holds}.{'yes' if yes else 'no'}", d_qk=s.d_qk, need=need)
        why = prose(P, "beats_gaussian.why", layer=f"{layer:.4g}", gaussian=f"{gaussian:.4g}", reason=reason)
        return _judged(guess, yes, why)

    ell = cache.loo_optimum(data, "gaussian")
    prompt = prose(P, "beats_gaussian.prompt", ell=_("none") if ell is None else _g(ell),
                   holds=prose(P, holds, d_qk=s.d_qk, need=need))
    return Question("attn.beats_gaussian", prompt,
        Guess(options=(True, False), labels=(_("Yes, a lower error"), _("No"))), reveal)


def rough_window(s: PretrainRequest) -> Question:
    """Chapter 5: as the family's tasks get rougher, does the learned window get wider or narrower?"""
    rough = ci.SWEEP_ROUGHNESS

    def reveal(guess: object) -> Reveal:
        rows = ci.sweep(s.family, s.n, s.heads, s.seed)
        by_r = sorted((r for r in rows if r.noise == ci.SWEEP_BASE[1]), key=lambda r: r.roughness)
        first, last = by_r[0], by_r[-1]
        answer = "narrower" if vi.direction(rows, *ci.SWEEP_BASE)[0] else "wider"  # the page's reading
        best = ", ".join(f"{_g(r.best_lengthscale)}" for r in by_r)
        best_way = "narrower" if last.best_lengthscale < first.best_lengthscale else "wider"
        why = prose(P, "rough_window.why", first=_g(first.window), last=_g(last.window),
                    r0=_g(first.roughness), r1=_g(last.roughness), direction=WAYS[answer],
                    reason=prose(P, f"rough_window.{answer}"), best=best, best_direction=WAYS[best_way])
        return _judged(guess, answer, why)

    return Question("icl.rough_window", prose(P, "rough_window.prompt", rough=" → ".join(map(_g, rough))),
        Guess(options=("wider", "narrower"), labels=(_("Wider"), _("Narrower"))), reveal)
