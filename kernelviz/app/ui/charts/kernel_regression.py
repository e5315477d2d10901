"""Chapter 1's charts by name: Nadaraya–Watson at the chosen kernel and ℓ, its band, its weights, the post's
four lengthscales and d2l's pooling, each a function of the data and the chapter's ``Settings``."""

from __future__ import annotations

from typing import NamedTuple

from kernelviz.app import figures as kf
from kernelviz.app import views
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.caching import scrub as cache_scrub
from kernelviz.app.ui.charts import Book, Chart, Panel
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.questions import bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.ui.widgets.text import busy
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views.page_settings import KernelRegressionSettings
from kernelviz.app.views.settings import Control, Controls
from kernelviz.core.kernels import get_kernel
from kernelviz.runtime.i18n import _

__all__ = ["BOOK", "D2L", "D2lSettings", "Settings", "fit_title", "formula_at", "point"]


class D2lSettings(NamedTuple):
    """d2l's section (shown on d2l's data): whether exercise 1 runs for every n up to 1,000."""

    sweep: bool = False


D2L = Controls(D2lSettings(), "kr", {
    "sweep": Control(_("Exercise 1 for every n up to 1,000"), "toggle", url="d2l_sweep", notched=False,
                     help=_("kernelviz's: d2l's pooling at ℓ = 1 and at the leave-one-out optimum ℓ*(n) for "
                            "every n of the sidebar up to 1,000, with this noise seed.")),
})


class Settings(NamedTuple):
    """Chapter 1's settings: the fit's, the query it explains, d2l's section."""

    fit: KernelRegressionSettings
    pick: explain.Selection
    d2l: D2lSettings


TABLES = Settings(ps.KERNEL_REGRESSION, explain.selection_table("kr"), D2L)


def fit_title(kernel: str, v: float) -> str:
    """The fit chart's title at ℓ = ``v`` (the Gaussian's also in the post's convention, √2 ℓ)."""
    label = get_kernel(kernel).label
    if kernel == "gaussian":
        return _("{kernel} kernel, ℓ = {ell:.3g} (the post's ℓ = √2 ℓ = {post:.3g})").format(
            kernel=label, ell=v, post=v * 2**0.5)
    return _("{kernel} kernel, ℓ = {ell:.3g}").format(kernel=label, ell=v)


def point(data: Data, s: Settings) -> views_explain.PointWeights | None:
    """The fit at the explained query x*, with its weights; None when none is explained."""
    f = s.fit
    return explain.point_weights(data, s.pick.x, f.lengthscale, f.kernel) if s.pick.on else None


def curves(data: Data, f: KernelRegressionSettings) -> list[kf.Curve]:
    """The fit m(x) (with its band when asked for) and, when asked for, the average and k-NN baselines."""
    label = get_kernel(f.kernel).label
    with busy(_("Kernel regression with the {kernel} kernel, ℓ = {ell:g}, on {n:,} points…").format(
            kernel=label, ell=f.lengthscale, n=data.n)):
        s = cache.predict(data, f.lengthscale, f.kernel)
    out = [kf.Curve(_("kernel regression m(x)"), s.mean, kf.COLORS["fit"], std=s.std if f.fit_band else None,
                    band_name=_("estimated band m(x) ± 2s(x)"))]
    if f.baselines:
        out.append(kf.Curve(_("average pooling (mean of all yᵢ)"), cache.average(data), kf.COLORS["average"],
                            dash="dot"))
        out.append(kf.Curve(_("{k}-nearest-neighbour average").format(k=f.k), cache.knn(data, f.k),
                            kf.COLORS["knn"], dash="dash"))
    return out


def fit(data: Data, s: Settings) -> Chart:
    """The fit at ℓ with the scrub under it (every ℓ of the slider) and, at x*, each point's weight."""
    f = s.fit
    lines = curves(data, f)
    look = data.look(fit_title(f.kernel, f.lengthscale))
    fig = kf.fit_figure(data.points(band=f.true_band), lines, look=look)
    with busy(_("Smoothing at every ℓ of the slider, for the scrub under the chart…")):
        path = cache_scrub.lengthscale_path(data, f.kernel).frames_around(f.lengthscale)
    fig = kf.add_scrub(fig, lines[0], path, active=path.nearest(f.lengthscale),
                       titles=[fit_title(f.kernel, v) for v in path.lengthscales])
    at = point(data, s)
    if at is not None:
        kf.mark_point(fig, at.x, at.mean, data.ds.x, data.ds.y, at.weights)
    return Chart(fig, "kernelviz-kernel-regression")


def formula_at(data: Data, at: views_explain.PointWeights | None, lengthscale: float,
               kernel: str) -> Panel | None:
    """Nadaraya–Watson's sum at x* written out with its numbers (``explain.formula_text``) at
    ``lengthscale``; None when no query is explained (``at`` is None)."""
    if at is None:
        return None
    label = get_kernel(kernel).label
    return Panel(lambda: explain.formula_text(data, at, lengthscale, label))


def formula(data: Data, s: Settings) -> Panel | None:
    """The sum at x* written out with its numbers; None when no query is explained."""
    return formula_at(data, point(data, s), s.fit.lengthscale, s.fit.kernel)


def heatmap(data: Data, s: Settings) -> Chart:
    """The weights wᵢ(x) of sorted queries against sorted keys, x*'s row outlined."""
    f = s.fit
    with busy(_("Computing the attention weights wᵢ(x) for the heatmap…")):
        heat = cache.heatmap_weights(data, f.lengthscale, f.kernel)
    title = _("Attention weights wᵢ(x), ℓ = {ell:g}").format(ell=f.lengthscale)
    fig = kf.heatmap_figure(heat.weights, heat.queries, heat.keys, look=kf.Look(title=title))
    at = point(data, s)
    if at is not None:
        kf.mark_row(fig, views_explain.nearest_row(heat.queries, at.x), heat.queries)
    return Chart(fig, "kernelviz-attention-weights")


def kernel_shape(data: Data, s: Settings) -> Chart:
    """Every kernel's shape, the chosen one drawn bold."""
    u, shapes = cache.kernel_shapes()
    return Chart(kf.kernel_shape_figure(u, shapes, get_kernel(s.fit.kernel).label), "kernelviz-kernel-shapes")


def multiples(data: Data, s: Settings) -> Chart:
    """The fit at the blog post's four lengthscales, scaled to the data."""
    with busy(_("Kernel regression at the post's four lengthscales…")):
        panels = cache.lengthscale_panels(data, s.fit.kernel)
    figure = kf.small_multiples_figure(data.points(), panels, look=data.look())
    return Chart(figure, "kernelviz-four-lengthscales")


def _d2l(data: Data) -> views.D2lPooling:
    with busy(_("d2l's pooling at ℓ = 1 on its 50 test inputs…")):
        return cache_d2l.nonparametric(data)


def d2l_fit(data: Data, s: Settings) -> Chart | None:
    """d2l's nonparametric pooling at ℓ = 1 on its 50 test inputs (on d2l's data only)."""
    if data.ds.name != "d2l":
        return None
    view = _d2l(data)
    curve = kf.Curve(_("prediction at ℓ = 1 (w = 1)"), view.mean, kf.COLORS["fit"])
    points = kf.Points(data.ds.x, data.ds.y, view.queries, truth=view.truth)
    return Chart(kf.fit_figure(points, [curve], look=data.look(legend_rows=2)), "kernelviz-d2l-nonparametric")


def d2l_heatmap(data: Data, s: Settings) -> Chart | None:
    """d2l's heatmap: sorted test inputs against sorted training inputs (on d2l's data only)."""
    if data.ds.name != "d2l":
        return None
    heat = _d2l(data).heatmap
    return Chart(kf.heatmap_figure(heat.weights, heat.queries, heat.keys, look=kf.Look(height=420)),
                 "kernelviz-d2l-heatmap")


def d2l_consistency(data: Data, s: Settings) -> Chart | None:
    """Exercise 1: the error at ℓ = 1 and at ℓ*(n) for every n up to 1,000 (on d2l's data, when asked)."""
    if data.ds.name != "d2l" or not s.d2l.sweep:
        return None
    sweep = consistency(data)
    errors = {_("ℓ = 1 (d2l's w = 1)"): sweep.fixed, _("ℓ = ℓ*(n), leave-one-out"): sweep.tuned}
    return Chart(kf.error_by_size_figure(sweep.sizes, errors, current=data.n,
                                         y_title=_("error against f on the test inputs")),
                 "kernelviz-d2l-consistency")


def consistency(data: Data) -> views.Consistency:
    """d2l's exercise 1 at the data's noise seed (``cache_d2l.consistency``)."""
    with busy(_("Exercise 1 for every n up to 1,000: d2l's pooling at ℓ = 1 and at the leave-one-out "
                "ℓ*…")):
        return cache_d2l.consistency(data.key[2])


BOOK = Book(TABLES, {
    "kr.fit": fit, "kr.formula": formula, "kr.heatmap": heatmap, "kr.kernel_shape": kernel_shape,
    "kr.multiples": multiples, "kr.d2l_fit": d2l_fit, "kr.d2l_heatmap": d2l_heatmap,
    "kr.d2l_consistency": d2l_consistency,
}, {"kr.wide_window": lambda data, s: bank.wide_window(data)}, picks={"kr.fit": "kr."})
