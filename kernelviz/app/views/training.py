"""Views of trained models and the tables and sentences the pages build from them: frozen dataclasses of
NumPy arrays and pure functions of them. Nothing here imports streamlit, so all of it is testable without it.

* chapter 2: the title of a panel of the post's hold-out figure (``holdout_panel_title``), and
  ``ParametricView``, d2l's parametric pooling after training;
* chapter 3: ``Panel``, one panel of the post's multi-head figure, and its tables (``post_table``,
  ``heads_table``, ``sum_of_mixing``, ``panels_status``), legend names and gaps;
* chapter 4: ``Comparison`` of the trained layer with the kernels it generalises
  (``comparison_table``, ``comparison_sentence``) and the Gaussian head's maps (``maps_table``).

The cached calls of ``kernelviz.app.ui`` compute them; the figure builders of ``kernelviz.app.figures`` draw
them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import numpy as np

from kernelviz.app import defaults
from kernelviz.app.views import GaussianCheck, HeadsView, Heatmap, HoldoutPanel, Status
from kernelviz.app.views.notches import replace
from kernelviz.models.heads import FitResult
from kernelviz.models.holdout import holdout_range
from kernelviz.runtime.i18n import _, ngettext

__all__ = [
    "ATTENTION_LEARNING_RATES",

    "POST_COLUMNS",
    "PRINTED",

    "Agreement",
    "Comparison",
    "HeadsSettings",
    "Panel",
    "ParametricView",
    "Printed",
    "agreement",
    "agreements",
    "comparison_sentence",
    "comparison_table",
    "gaps",
    "head_names",
    "heads_table",
    "holdout_panel_title",
    "holdout_within",
    "last_loss",
    "maps_table",
    "panels_status",
    "post_table",
    "sum_of_mixing",
]

MH = defaults.MULTIHEAD
S = TypeVar("S")
SQRT2 = defaults.SQRT2
TAIL = defaults.TAIL


# ---------------------------------------------------------------------------------------------------------
# Chapter 2: the post's hold-out panels, and d2l's parametric pooling
# ---------------------------------------------------------------------------------------------------------


def holdout_panel_title(p: HoldoutPanel) -> str:
    """The post's title "Hold-out=k, ℓ=…" (its ℓ_post = √2 ℓ), and kernelviz's softmax where it differs."""
    post_ell, own = f"{SQRT2 * p.lengthscale:.2f}", f"{SQRT2 * p.softmax_lengthscale:.2f}"
    if own == post_ell:
        return _("Hold-out={holdout}, ℓ_post={ell}").format(holdout=p.holdout, ell=post_ell)
    return _("Hold-out={holdout}, ℓ_post={ell} (softmax: {own})").format(holdout=p.holdout, ell=post_ell,
                                                                         own=own)


@dataclass(frozen=True)
class ParametricView:
    """d2l's parametric pooling after training: the training pairs (keys, values), the queries (d2l's test
    inputs) with the truth, the fits with the learned w and with w = 1 (d2l's nonparametric pooling), both
    weight matrices as one heatmap (w = 1, learned), w at the start and after every step and every epoch,
    the loss per epoch, the weight a training point gives its own pair, w* = 1/ℓ* and how the run went."""

    x: np.ndarray
    y: np.ndarray
    queries: np.ndarray
    truth: np.ndarray | None
    learned: np.ndarray
    fixed: np.ndarray
    heatmap: Heatmap
    w_path: np.ndarray
    w_epochs: np.ndarray
    epoch_losses: np.ndarray
    self_weight: float
    w_star: float | None
    status: Status

    @property
    def w(self) -> float:
        return float(self.w_path[-1])


# ---------------------------------------------------------------------------------------------------------
# Chapter 3: the post's multi-head panels and the page's own model
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Panel:
    """One panel of the post's figure: H heads trained with hold-out 1 for 1,000 steps. ``start``,
    ``lengthscales`` (ℓ_h, this package's convention) and ``mixing`` (u_h) are (H,); ``mean`` is f̂ on the
    grid of ``defaults.GRID_POINTS`` points."""

    heads: int
    start: np.ndarray
    lengthscales: np.ndarray
    mixing: np.ndarray
    mean: np.ndarray
    status: Status

def panels_status(shown: Sequence[Panel]) -> Status:
    """One status for the four panels: the panels that diverged or ran away (and the first one's reason),
    else a search's explanation, else nothing."""
    bad = [p for p in shown if p.status.level == "warning"]
    if bad:
        which = ", ".join(str(p.heads) for p in bad)
        return Status("warning", ngettext(
            "The panel with H = {which} did not train cleanly. H = {heads}: {reason}",
            "The panels with H = {which} did not train cleanly. H = {heads}: {reason}", len(bad),
        ).format(which=which, heads=bad[0].heads, reason=bad[0].status.message))
    searched = [p for p in shown if p.status.level == "info"]
    return Status("info", searched[-1].status.message) if searched else Status("note", "")

def _sig(v: float, digits: int = 4) -> float:
    return float(f"{float(v):.{digits}g}")


def _two_decimals(v: float) -> float:
    return round(float(v), 2) if abs(v) < 1e6 else _sig(v)


POST_COLUMNS = (
    "H", _("head"), _("uₕ here"), _("post's uₕ (printed)"), _("ℓ_post here (√2 ℓₕ)"),
    _("post's ℓ_post (printed)"), _("ℓₕ here"), _("start ℓₕ"),
)
# shown as the post printed them, "%.2f"; ℓ_post here is rounded so (a run-away 1e+259 stays short). Named by
# position, so that the columns are found by the same words in every language.
PRINTED = tuple(POST_COLUMNS[i] for i in (2, 3, 5))  # uₕ here, post's uₕ (printed), post's ℓ_post (printed)


def post_table(shown: Sequence[Panel]) -> dict[str, list]:
    """One row per head of every panel: the learned u_h and ℓ_post,h = √2 ℓ_h here beside the post's
    printed ones, then ℓ_h and its start in kernelviz's convention (ℓ = ℓ_post/√2)."""
    table: dict[str, list] = {c: [] for c in POST_COLUMNS}
    for p, post_u, post_ell in zip(shown, MH.post_mixing, MH.post_lengthscales, strict=True):
        for h in range(p.heads):
            row = (p.heads, h + 1, float(p.mixing[h]), post_u[h], _two_decimals(SQRT2 * p.lengthscales[h]),
                   post_ell[h], _sig(p.lengthscales[h]), _sig(p.start[h]))
            for column, value in zip(POST_COLUMNS, row, strict=True):
                table[column].append(value)
    return table


class Printed(NamedTuple):
    """One number the post printed (``name``: "u₂", "ℓ_post,4") and the same number trained here."""

    name: str
    here: float
    printed: float


class Agreement(NamedTuple):
    """How one trained panel compares with the numbers the post printed for it, each rounded to the two
    decimals the post printed: ``agree`` of ``total`` (H values of u_h and H of ℓ_post) are the same;
    ``differ`` lists the ones that are not; ``du`` is the largest |Δu_h|; ``widest`` and ``post_widest`` are
    the widest head's ℓ_post here and in the post."""

    heads: int
    agree: int
    total: int
    differ: tuple[Printed, ...]
    du: float
    widest: float
    post_widest: float


def _sub(h: int) -> str:
    return "".join("₀₁₂₃₄₅₆₇₈₉"[int(c)] for c in str(h))


def agreement(p: Panel, post_u: Sequence[float], post_ell: Sequence[float]) -> Agreement:
    """``Agreement`` of panel ``p`` with the post's printed u_h (``post_u``) and ℓ_post,h (``post_ell``)."""
    here_ell = SQRT2 * np.asarray(p.lengthscales, float)
    pairs = [Printed(f"u{_sub(h + 1)}", float(p.mixing[h]), post_u[h]) for h in range(p.heads)]
    pairs += [Printed(f"ℓ_post,{h + 1}", float(here_ell[h]), post_ell[h]) for h in range(p.heads)]
    differ = tuple(q for q in pairs if f"{q.here:.2f}" != f"{q.printed:.2f}")
    du = float(np.max(np.abs(np.asarray(p.mixing, float) - np.asarray(post_u))))
    return Agreement(p.heads, len(pairs) - len(differ), len(pairs), differ, du,
                     float(np.max(here_ell)), float(max(post_ell)))


def agreements(shown: Sequence[Panel]) -> list[Agreement]:
    """``agreement`` of each of the post's panels (1, 2, 4 and 8 heads) with what the post printed."""
    return [agreement(p, u, ell)
            for p, u, ell in zip(shown, MH.post_mixing, MH.post_lengthscales, strict=True)]


def sum_of_mixing(shown: Sequence[Panel]) -> tuple[str, str]:
    """Σ_h u_h of each panel here and in the post's printout, as "a · b · c · d"."""
    here = " · ".join(f"{float(np.sum(p.mixing)):.2f}" for p in shown)
    post = " · ".join(f"{sum(u):.2f}" for u in MH.post_mixing)
    return here, post


def head_names(result: FitResult, with_mixing: bool = True) -> list[str]:
    """Legend names "head h: ℓ = …, u = …" (or without u)."""
    name = _("head {h}: ℓ = {ell:.3g}, u = {u:+.2f}") if with_mixing else _("head {h}: ℓ = {ell:.3g}")
    return [name.format(h=h + 1, ell=ell, u=u)
            for h, (ell, u) in enumerate(zip(result.lengthscales, result.mixing, strict=True))]


def heads_table(result: FitResult) -> dict[str, list]:
    """One row per head: the learned ℓ_h (this package's and the post's convention, √2 ℓ_h), the start
    ℓ_h and the learned u_h."""
    ells = result.lengthscales
    return {
        _("head"): [_("head {h}").format(h=h + 1) for h in range(ells.size)],
        _("ℓₕ (this app)"): [_sig(v) for v in ells],
        _("ℓₕ in the blog post (√2 ℓₕ)"): [_sig(SQRT2 * v) for v in ells],
        _("start ℓₕ"): [_sig(v) for v in result.trajectory[0]],
        _("mixing weight uₕ"): [_sig(v) for v in result.mixing],
    }

def last_loss(result: FitResult) -> float:
    """The mean hold-out loss of the last ``TAIL`` steps (NaN when no step ran)."""
    return float(np.mean(result.losses[-TAIL:])) if result.losses.size else math.nan


def gaps(view: HeadsView, result: FitResult) -> tuple[float, str] | None:
    """Where the mixture is undefined: the fraction of the grid and, per head with u_h ≠ 0 whose window is
    empty somewhere, "head h (ℓ = …) at …%"; None when f̂ is defined everywhere."""
    if np.all(np.isfinite(view.mean)):
        return None
    hole = _("head {h} (ℓ = {ell:.3g}) at {share:.0%}")
    holes = [hole.format(h=h + 1, ell=result.lengthscales[h], share=frac)
             for h, frac in enumerate(np.mean(~np.isfinite(view.head_means), axis=1))
             if frac > 0 and result.mixing[h] != 0]
    return float(np.mean(~np.isfinite(view.mean))), "; ".join(holes)


# ---------------------------------------------------------------------------------------------------------
# Chapter 4: the attention layer beside the kernels it generalises
# ---------------------------------------------------------------------------------------------------------


class MaskedSettings(NamedTuple):
    """Chapter 2's controls of the post's model, and chapter 3's of its heads (a tuple, so that caches hash
    it by value): the kernel's name, the hold-out size, Adam's steps and learning rate, and the seed of the
    hold-out sets. The defaults are the post's masked training of one GaussianKernel (ℓ_post = 1 at the
    start, Adam 0.2, 100 steps), but for the hold-out size: the page's model starts at 10 (kernelviz's
    choice; the post's ``train()`` defaults to 1, and its figure shows 1, 10, n/2 and 0.8 n)."""

    kernel: str = "gaussian"
    holdout: int = 10
    steps: int = 100
    learning_rate: float = 0.2
    seed: int = 2024  # the post's PRNGKey(2024): with it the four hold-out panels re-run the post's code


class HeadsSettings(NamedTuple):
    """Chapter 3's own model: the number of heads H and how they are trained, from the post's
    MultiheadGaussianKernel (``defaults.MULTIHEAD``: 4 heads, hold-out 1, 1,000 steps, Adam 0.2)."""

    heads: int = MH.heads
    kernel: str = MH.kernel
    holdout: int = MH.holdout
    steps: int = MH.steps
    learning_rate: float = MH.learning_rate
    seed: int = MH.seed

    @property
    def training(self) -> MaskedSettings:
        """How the heads are trained, as chapter 2 trains its one."""
        return MaskedSettings(self.kernel, self.holdout, self.steps, self.learning_rate, self.seed)


def holdout_within(s: S, n: int) -> S:
    """Settings ``s`` (a record with a ``holdout`` field) with the hold-out size clamped to what ``n``
    training points allow (``holdout_range``), as a page's hold-out slider clamps it when n changes."""
    lo, hi = holdout_range(n)
    return replace(s, holdout=min(max(s.holdout, lo), hi))


class ParametricSettings(NamedTuple):
    """How d2l's parametric pooling trains w (a tuple, so that caches hash it by value): ``steps`` of SGD at
    ``learning_rate``, from ``w0`` (None: w ~ U(0, 1) drawn from ``seed``), each query's own pair among its
    keys when ``include_self``, in batches of ``batch_size`` queries (None: the full batch)."""

    steps: int
    learning_rate: float
    w0: float | None = None
    seed: int = 0
    include_self: bool = False
    batch_size: int | None = None


def maps_table(check: GaussianCheck) -> dict[str, list]:
    """The Gaussian head's W_q, W_k (their ỹ row is 0: they read the position part) and W_v, one row per
    token component."""
    table: dict[str, list] = {_("token component"): ["1", "x̃", "x̃²", "ỹ"]}
    for name, m in (("W_q", check.w_q), ("W_k", check.w_k), ("W_v", check.w_v)):
        for j in range(m.shape[1]):
            column = np.zeros(4)
            column[: m.shape[0]] = m[:, j]
            table[_("{name} column {j}").format(name=name, j=j + 1)] = [float(f"{v:.4g}") for v in column]
    return table

@dataclass(frozen=True)
class Comparison:
    """The trained layer beside the kernels it generalises: ``names`` of the models, their leave-one-out
    errors on the training points (``loo``), errors against the true mean on the grid (``truth``, NaN for
    user data) and mean band widths 4s̄ (``band``); ``ell`` the Gaussian's leave-one-out optimum ℓ*."""

    names: tuple[str, ...]
    loo: np.ndarray
    truth: np.ndarray
    band: np.ndarray
    ell: float

def comparison_table(c: Comparison) -> dict[str, list]:
    """The comparison as table columns (the truth column only when the true mean is known)."""
    table = {_("model"): list(c.names), _("leave-one-out error"): [float(f"{v:.4g}") for v in c.loo]}
    if np.all(np.isfinite(c.truth)):
        table[_("error against the true mean")] = [float(f"{v:.4g}") for v in c.truth]
    table[_("band width 4s̄")] = [float(f"{v:.4g}") for v in c.band]
    return table


ATTENTION_LEARNING_RATES = (0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 3.0, 10.0)


def comparison_sentence(c: Comparison) -> str:
    """One line: the trained layer's leave-one-out error against the best Gaussian's (and the truth's)."""
    def versus(a: float, b: float) -> str:
        pct = 100.0 * (a / b - 1.0)
        return (_("{pct:.1f} % below") if pct < 0 else _("{pct:.1f} % above")).format(pct=abs(pct))

    loo = versus(c.loo[0], c.loo[1])
    if not np.all(np.isfinite(c.truth)):
        return _("Here the trained layer's leave-one-out error is **{loo}** the best Gaussian's.").format(
            loo=loo)
    return _("Here the trained layer's leave-one-out error is **{loo}** the best Gaussian's, and its error "
             "against the true mean **{truth}** the Gaussian's.").format(
                 loo=loo, truth=versus(c.truth[0], c.truth[1]))
