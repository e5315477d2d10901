"""Chapter 3's cached calls (multi-head kernel regression) and the small helpers its page draws with.

Every model of the chapter is the blog post's MultiheadGaussianKernel, for every H including 1
(``kv.fit(..., multihead=True)``): the heads start at ℓ_post = linspace(0.1, 3, H) (ℓ = ℓ_post/√2, scaled
by span/6 off the post's data) with u_h = 1/H, and Adam trains log ℓ_h and u_h on the hold-out loss. The
prediction is f̂(x) = Σ_h u_h m_h(x), each m_h a Nadaraya–Watson smoother with lengthscale ℓ_h.

``panel`` is one panel of the post's figure (hold-out 1, 1,000 steps: ``defaults.MULTIHEAD``); ``fit`` and
``heads_view`` serve the page's own model of H heads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import kernelviz as kv
from kernelviz import defaults, views
from kernelviz import figures as kf
from kernelviz.ui.cache import cached
from kernelviz.ui.sidebar import Data

__all__ = [
    "Panel",
    "fit",
    "gaps",
    "head_names",
    "heads_table",
    "heads_view",
    "last_loss",
    "panel",
    "panels",
    "panels_figure",
    "panels_status",
    "post_table",
    "show_table",
    "status",
    "sum_of_mixing",
]

MH = defaults.MULTIHEAD
SQRT2 = defaults.SQRT2
TAIL = defaults.TAIL
FIT_NAME = "fit f̂(x) = Σₕ uₕ f̂ₕ(x)"


@cached()
def fit(data: Data, heads: int, kernel: str, holdout: int, steps: int, learning_rate: float,
        seed: int, arithmetic: str = "kernelviz") -> kv.FitResult:
    """``kv.fit(..., multihead=True)`` on the training points: the post's MultiheadGaussianKernel with H
    heads, f̂ = Σ_h u_h m_h, log ℓ_h and u_h trained by Adam on the hold-out squared error."""
    train = data.train
    return kv.fit(train.x, train.y, heads=heads, kernel=kernel, holdout=holdout, steps=steps,
                  learning_rate=learning_rate, seed=seed, multihead=True, arithmetic=arithmetic)


@cached(heavy=True)
def heads_view(data: Data, lengthscales: np.ndarray, mixing: np.ndarray, kernel: str) -> views.HeadsView:
    """``views.heads_view`` on all the data: f̂ = Σ_h u_h m_h with its band, every head, thinned heatmaps."""
    return views.heads_view(data.ds, tuple(map(float, lengthscales)), tuple(map(float, mixing)), kernel)


def status(data: Data, result: kv.FitResult) -> views.Status:
    """``views.training_status`` with the span of the training points."""
    lo, hi = data.train.domain
    return views.training_status(result, hi - lo)


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
    status: views.Status


@cached()
def panel(data: Data, heads: int, kernel: str, learning_rate: float, seed: int) -> Panel:
    """The post's experiment for H = ``heads``: ``fit`` with hold-out ``MULTIHEAD.holdout`` and
    ``MULTIHEAD.steps`` steps, computed as the post computes it (float32, K/(ΣK + 1e-16)), then
    f̂(x) = Σ_h u_h m_h(x) on the grid, predicting from all the data."""
    result = fit(data, heads, kernel, MH.holdout, MH.steps, learning_rate, seed, "post")
    ds = data.ds
    pred = kv.predict_heads(ds.grid(defaults.GRID_POINTS), ds.x, ds.y, result.lengthscales, result.mixing,
                            kernel, with_weights=False)
    return Panel(heads, result.trajectory[0], result.lengthscales, result.mixing, pred.mean,
                 status(data, result))


def panels(data: Data, kernel: str, learning_rate: float, seed: int) -> list[Panel]:
    """The post's four panels (H = 1, 2, 4, 8), one cached call each."""
    return [panel(data, h, kernel, learning_rate, seed) for h in MH.panels]


def panels_status(shown: Sequence[Panel]) -> views.Status:
    """One status for the four panels: the panels that diverged or ran away (and the first one's reason),
    else a search's explanation, else nothing."""
    bad = [p for p in shown if p.status.level == "warning"]
    if bad:
        which = ", ".join(str(p.heads) for p in bad)
        return views.Status("warning", f"The panel{'s' if len(bad) > 1 else ''} with H = {which} did not "
                                       f"train cleanly. H = {bad[0].heads}: {bad[0].status.message}")
    searched = [p for p in shown if p.status.level == "info"]
    return views.Status("info", searched[-1].status.message) if searched else views.Status("note", "")


def panels_figure(data: Data, shown: Sequence[Panel]) -> go.Figure:
    """The post's figure: one panel per H with the data, the true mean (synthetic data) and the fit f̂.

    The points drawn are the training points (at most ``kv.TRAIN_MAX_POINTS``), so the figure stays light.
    """
    pts, truth = data.train, data.truth()
    fig = kf.small_multiples_figure(
        pts.x, pts.y, data.grid(), [(f"Heads = {p.heads}", p.mean) for p in shown],
        truth=None if truth is None else truth[0], x_title=data.ds.x_label, y_title=data.ds.y_label,
    )
    return fig.update_traces(selector={"name": "fit m(x)"}, name=FIT_NAME,
                             hovertemplate=FIT_NAME + "<br>x = %{x:.3g}<br>y = %{y:.3g}<extra></extra>")


def _sig(v: float, digits: int = 4) -> float:
    return float(f"{float(v):.{digits}g}")


def _two_decimals(v: float) -> float:
    return round(float(v), 2) if abs(v) < 1e6 else _sig(v)


POST_COLUMNS = (
    "H", "head", "uₕ here", "post's uₕ (printed)", "ℓ_post here (√2 ℓₕ)", "post's ℓ_post (printed)",
    "ℓₕ here", "start ℓₕ",
)
# shown as the post printed them, "%.2f"; ℓ_post here is rounded so (a run-away 1e+259 stays short)
PRINTED = ("uₕ here", "post's uₕ (printed)", "post's ℓ_post (printed)")


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


def sum_of_mixing(shown: Sequence[Panel]) -> tuple[str, str]:
    """Σ_h u_h of each panel here and in the post's printout, as "a · b · c · d"."""
    here = " · ".join(f"{float(np.sum(p.mixing)):.2f}" for p in shown)
    post = " · ".join(f"{sum(u):.2f}" for u in MH.post_mixing)
    return here, post


def head_names(result: kv.FitResult, with_mixing: bool = True) -> list[str]:
    """Legend names "head h: ℓ = …, u = …" (or without u)."""
    return [f"head {h + 1}: ℓ = {ell:.3g}" + (f", u = {u:+.2f}" if with_mixing else "")
            for h, (ell, u) in enumerate(zip(result.lengthscales, result.mixing, strict=True))]


def heads_table(result: kv.FitResult) -> dict[str, list]:
    """One row per head: the learned ℓ_h (this package's and the post's convention, √2 ℓ_h), the start
    ℓ_h and the learned u_h."""
    ells = result.lengthscales
    return {
        "head": [f"head {h + 1}" for h in range(ells.size)],
        "ℓₕ (this app)": [_sig(v) for v in ells],
        "ℓₕ in the blog post (√2 ℓₕ)": [_sig(SQRT2 * v) for v in ells],
        "start ℓₕ": [_sig(v) for v in result.trajectory[0]],
        "mixing weight uₕ": [_sig(v) for v in result.mixing],
    }


def show_table(table: dict[str, list], height: int | str = "auto") -> None:
    """``st.dataframe`` without the index, every numeric column with 4 significant digits (so that a
    lengthscale that ran away, 1e+259, shows as such instead of as hundreds of digits), the post's
    printed numbers with the two decimals it printed."""
    numbers = {c: st.column_config.NumberColumn(format="%.2f" if c in PRINTED else "%.4g")
               for c, v in table.items() if v and not isinstance(v[0], str)}
    st.dataframe(table, hide_index=True, height=height, column_config=numbers)


def last_loss(result: kv.FitResult) -> float:
    """The mean hold-out loss of the last ``TAIL`` steps (NaN when no step ran)."""
    return float(np.mean(result.losses[-TAIL:])) if result.losses.size else math.nan


def gaps(view: views.HeadsView, result: kv.FitResult) -> tuple[float, str] | None:
    """Where the mixture is undefined: the fraction of the grid and, per head with u_h ≠ 0 whose window is
    empty somewhere, "head h (ℓ = …) at …%"; None when f̂ is defined everywhere."""
    if np.all(np.isfinite(view.mean)):
        return None
    holes = [f"head {h + 1} (ℓ = {result.lengthscales[h]:.3g}) at {frac:.0%}"
             for h, frac in enumerate(np.mean(~np.isfinite(view.head_means), axis=1))
             if frac > 0 and result.mixing[h] != 0]
    return float(np.mean(~np.isfinite(view.mean))), "; ".join(holes)
