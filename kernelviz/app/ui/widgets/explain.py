"""Click to explain: a query x* chosen by a click on the fit chart or typed in, and the formula at x* with
its numbers (chapters 1 and 2: Nadaraya–Watson; chapter 3: the heads, mixed; chapter 4: the layer's scores,
softmax and values).

The selection is two controls like every other, in the URL and settable by a lesson scene:
``<prefix>explain`` (on or off) and ``<prefix>x`` (x*). A click on a point of the fit chart sets both
(``on_pick``, the chart's ``on_select`` callback); a click on the chart's background, or the toggle,
clears it. The formula's words and numbers (``formula_text``, ``heads_text``, ``layer_text``) are a
chapter's panel (``kernelviz.app.ui.charts.Panel``), drawn where its book puts it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, MutableMapping
from typing import Any, NamedTuple

import numpy as np
import streamlit as st

from kernelviz.app.ui.caching.cache import cached
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.widgets.controls import field
from kernelviz.app.ui.widgets.text import show_table
from kernelviz.app.views import explain
from kernelviz.app.views.settings import Control, Controls
from kernelviz.app.views.values import Spec
from kernelviz.runtime.i18n import _

__all__ = ["Selection", "formula_text", "heads_point", "heads_text", "layer_text", "on_pick", "point_weights",
           "selection_controls", "selection_table"]

X_STEPS = 400  # x* moves in steps of a round number near the data's x-range / X_STEPS


class Selection(NamedTuple):
    """The query the page explains: ``on`` when one is selected, ``x`` its value x*."""

    on: bool = False
    x: float = 0.0


def _x_spec(data: Data) -> Spec:
    """What x* accepts: the data's range widened to whole steps, a step that is a power of ten (a clicked x
    is clamped and snapped by it, as a typed one is)."""
    lo, hi = data.ds.domain
    step = 10.0 ** math.floor(math.log10(max(hi - lo, 1e-12) / X_STEPS))
    return Spec("number", (), math.floor(lo / step) * step, math.ceil(hi / step) * step, step)


@cached()
def point_weights(data: Data, x_star: float, lengthscale: float, kernel: str) -> explain.PointWeights:
    """``views.explain.point_weights`` on the whole data set."""
    return explain.point_weights(data.ds.x, data.ds.y, x_star, lengthscale, kernel)


@cached()
def heads_point(data: Data, x_star: float, lengthscales: tuple[float, ...], mixing: tuple[float, ...],
                kernel: str) -> explain.HeadsPoint:
    """``views.explain.heads_point`` on the whole data set."""
    return explain.heads_point(data.ds.x, data.ds.y, x_star, lengthscales, mixing, kernel)


def _x_low(data: Data) -> float:
    return _x_spec(data).min_value


def _x_high(data: Data) -> float:
    return _x_spec(data).max_value


def _x_step(data: Data) -> float:
    return _x_spec(data).step


def _x_middle(data: Data) -> float:
    spec = _x_spec(data)
    return spec.coerce((spec.min_value + spec.max_value) / 2)


@functools.cache
def selection_table(prefix: str) -> Controls:
    """The explained query's controls on the page of ``prefix`` ("kr"): ``<prefix>.explain`` (on or off)
    and ``<prefix>.x`` (x*, from the data's range, in steps of a power of ten; it opens in the middle)."""
    return Controls(Selection(), prefix, {
        "on": Control(_("Explain the fit at x*"), "toggle", url="explain", notched=False, help=_(
            "Or click a point of the fit (the line or a data point). The chart then shows each data point's "
            "weight wᵢ(x*), the heatmap its row, and the formula below its numbers. kernelviz's own view: no "
            "source writes out a single prediction.")),
        "x": Control("x*", "number", low=_x_low, high=_x_high, step=_x_step, opens_at=_x_middle,
                     notched=False,
                     help=_("The query x* to explain, in units of x. Changing it turns the explanation on.")),
    })


def selection_controls(prefix: str, data: Data, container: object = None) -> Selection:
    """The toggle "Explain the fit at x*" and the number x* (``selection_table``), side by side in
    ``container``."""
    table = selection_table(prefix.rstrip("."))
    left, right, _rest = (container or st).columns([1.3, 1.0, 1.7], vertical_alignment="bottom")
    on = field(table, "on", data, left)
    x = field(table, "x", data, right, on_change=functools.partial(_turn_on, table.key("on")))
    return Selection(bool(on), float(x))


def _turn_on(key: str) -> None:
    st.session_state[key] = True


def _picked(chart_key: str, prefix: str, spec: Spec, into: MutableMapping[str, Any] | None) -> None:
    into = st.session_state if into is None else into
    event = st.session_state.get(chart_key) or {}
    points = (event.get("selection") or {}).get("points") or []
    xs = [p["x"] for p in points if isinstance(p.get("x"), int | float) and math.isfinite(p["x"])]
    if xs:
        into[f"{prefix}explain"] = True
        into[f"{prefix}x"] = spec.coerce(float(xs[0]))
    else:
        into[f"{prefix}explain"] = False


def on_pick(chart_key: str, prefix: str, data: Data,
            into: MutableMapping[str, Any] | None = None) -> Callable[[], None]:
    """The fit chart's ``on_select`` callback: a clicked point selects its x (snapped to x*'s step); an
    empty selection (a click on the background) clears the selection. The selection's values go to the
    session's controls, or to ``into`` (a lesson scene's own, by control key)."""
    return functools.partial(_picked, chart_key, prefix, _x_spec(data), into)


def _sum_latex(pw: explain.PointWeights, y: np.ndarray) -> str:
    """m(x*) = Σᵢ wᵢ(x*) yᵢ split as the table splits it: the largest terms, the others, the total."""
    top = float(np.sum(pw.weights[pw.top] * y[pw.top]))
    others = pw.weights.shape[0] - pw.top.shape[0]

    def term(v: float) -> str:  # a negative term in brackets, so that "+ (−0.3)" reads as a sum
        return f"({v:.4g})" if v < 0 else f"{v:.4g}"

    largest = _("{n} largest").format(n=pw.top.shape[0])  # the words under the braces, in \text{…}
    parts = [rf"\underbrace{{{term(top)}}}_{{\text{{{largest}}}}}"]
    if others:
        the_other = _("the other {n:,}").format(n=others)
        parts.append(rf"\underbrace{{{term(pw.rest_sum)}}}_{{\text{{{the_other}}}}}")
    return rf"m({pw.x:.4g}) = \sum_i w_i(x^*)\, y_i = " + " + ".join(parts) + rf" = {pw.mean:.4g}"


def formula_text(data: Data, pw: explain.PointWeights, lengthscale: float, kernel_label: str) -> None:
    """The body of ``formula_panel``, written where it is called."""
    st.markdown(_("**Why the fit is where it is at x\\* = {x:.4g}** ({kernel} kernel, ℓ = {lengthscale:.3g})")
                .format(x=pw.x, kernel=kernel_label, lengthscale=lengthscale))
    if pw.empty:
        st.info(_("No data point lies in the {kernel} kernel's window at x* = {x:.4g}: every weight is 0, so "
                  "m(x*) is undefined there (the gap in the fit). Choose a larger ℓ or another x*.")
                .format(kernel=kernel_label, x=pw.x))
        return
    y = np.asarray(data.ds.y, dtype=np.float64)
    st.latex(_sum_latex(pw, y))
    show_table(explain.weights_table(pw, data.ds.x, y))
    st.latex(rf"s(x^*) = \Big(\sum_i w_i(x^*)\,(y_i - m(x^*))^2\Big)^{{1/2}} = {pw.std:.4g}")
    st.caption(_("The band at x*: m(x*) ± 2 s(x*) = {lo:.4g} to {hi:.4g}. On the chart, each data point's "
                 "marker area is proportional to its weight wᵢ(x*).")
               .format(lo=pw.mean - 2 * pw.std, hi=pw.mean + 2 * pw.std))


def heads_text(hp: explain.HeadsPoint, names: list[str]) -> None:
    """The body of ``heads_panel``, written where it is called."""
    st.markdown(_("**Why the fit is where it is at x\\* = {x:.4g}**: the heads' predictions, mixed")
                .format(x=hp.x))
    heads = hp.head_means.shape[0]
    terms = _("(the terms: the table's last column)")  # words beside the formula, in \text{…}
    st.latex(rf"\hat f({hp.x:.4g}) = \sum_{{h=1}}^{{{heads}}} u_h\, m_h(x^*) = {hp.mean:.4g}"
             rf"\qquad\text{{{terms}}}")
    show_table(explain.heads_table(hp, names))
    st.caption(_("Each head is a kernel smoother with its own ℓₕ: mₕ(x*) = Σᵢ wₕᵢ(x*) yᵢ (the dots on "
                 "the chart, in the heads' colours), averaging about 1 / Σᵢ wₕᵢ(x*)² points; the ring is "
                 "the mixture. Its band: f̂(x*) ± 2 s(x*) = {lo:.4g} to {hi:.4g}.")
               .format(lo=hp.mean - 2 * hp.std, hi=hp.mean + 2 * hp.std))


def layer_text(lp: explain.LayerPoint, names: list[str], x: np.ndarray) -> None:
    """The body of ``layer_panel``, written where it is called: f̂(x*) = Σₕ headₕ(x*)·Uₕ per head, then for
    each head (a tab) its keys of largest weight with their scores sₕᵢ = qₕ(x*)·kₕ(xᵢ)/√d_qk before the
    softmax, the weights after it and the values."""
    st.markdown(_("**Why the layer's output is where it is at x\\* = {x:.4g}**: scores, softmax, "
                  "values, heads").format(x=lp.x))
    st.latex(rf"\hat f({lp.x:.4g}) = \sum_{{h}} \mathrm{{head}}_h(x^*)\,U_h = {lp.mean:.4g}")
    st.latex(r"\mathrm{head}_h(x^*)\,U_h = \sum_i \operatorname{softmax}_i(s_{hi})\; v_{hi},\qquad "
             r"s_{hi} = \frac{q_h(x^*)\cdot k_h(x_i)}{\sqrt{d_{qk}}}")
    show_table(explain.layer_heads_table(lp, names))
    for tab, h in zip(st.tabs(names), range(len(names)), strict=True):
        with tab:
            show_table(explain.head_keys_table(lp, h, x))
    st.caption(_("The softmax turns scores into weights, wₕᵢ = exp(sₕᵢ) / Σⱼ exp(sₕⱼ): only differences "
                 "between a head's scores matter, and a score 2.3 below the largest gets a tenth of its "
                 "weight. The value vₕᵢ = tᵢ Wᵥʰ Uₕ is what point i passes on through head h. On the "
                 "chart, the dots are the heads' parts at x* and the ring their sum; the band there: "
                 "{lo:.4g} to {hi:.4g}.").format(lo=lp.mean - 2 * lp.std, hi=lp.mean + 2 * lp.std))
