"""Chapter 1 · Kernel regression: Nadaraya–Watson with a hand-picked lengthscale, its band and its weights."""

from functools import partial

import streamlit as st

from kernelviz.app import defaults, ui, views
from kernelviz.app import figures as kf
from kernelviz.app.ui.caching import ahead, cache
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.caching import scrub as cache_scrub
from kernelviz.app.ui.questions import bank as question_bank
from kernelviz.app.ui.widgets import explain
from kernelviz.app.views import explain as views_explain
from kernelviz.app.views import page_settings as ps
from kernelviz.core import pooling
from kernelviz.core.kernels import get_kernel, kernel_scores, kernel_values
from kernelviz.models import loo, smoothing
from kernelviz.runtime.i18n import _

CH = "1_kernel_regression"
CONSISTENCY_RAN = ui.Ran(_(
    "For each n, d2l's data of n points with this noise seed; ℓ*(n) is the ℓ of least CV(ℓ), found by "
    "`kernelviz.models.loo.loo_lengthscale` (a grid of log ℓ, then Newton steps, in one compiled program); "
    "the error is the fit's (`kernelviz.runtime.serve` ran it) against f on d2l's 50 test inputs."
))


def d2l_pooling(data: ui.Data) -> None:
    """d2l's nonparametric attention pooling as d2l draws it: ℓ = 1 (w = 1) at its 50 test inputs, the fit
    beside the heatmap of sorted test inputs against sorted training inputs."""
    st.subheader(_("d2l's nonparametric attention pooling: ℓ = 1 (w = 1)"))
    ui.say(CH, "d2l_intro")
    with ui.busy(_("d2l's pooling at ℓ = 1 on its 50 test inputs…")):
        view = cache_d2l.nonparametric(data)
    left, right = st.columns(2)
    with left:
        curve = kf.Curve(_("prediction at ℓ = 1 (w = 1)"), view.mean, kf.COLORS["fit"])
        points = kf.Points(data.ds.x, data.ds.y, view.queries, truth=view.truth)
        ui.show(kf.fit_figure(points, [curve], look=data.look(legend_rows=2)),
                key="kr.d2l_fit", filename="kernelviz-d2l-nonparametric")
    with right:
        heat = view.heatmap
        ui.show(kf.heatmap_figure(heat.weights, heat.queries, heat.keys, look=kf.Look(height=420)),
                key="kr.d2l_heatmap", filename="kernelviz-d2l-heatmap")
    st.caption(ui.prose(CH, "d2l_caption", n=f"{data.n:,}", rows=heat.weights.shape[0],
                        cols=heat.weights.shape[1], note=heat.note))
    ui.show_code(smoothing.nadaraya_watson_model, kernel_scores, pooling.pool, ran=ui.SERVED)
    d2l_consistency(data, view)


def d2l_consistency(data: ui.Data, view: views.D2lPooling) -> None:
    """d2l's consistency remark where a student can try it: exercise 1 at ℓ = 1 with growing n."""
    ui.say(CH, "d2l_consistency")
    c1, c2 = st.columns(2)
    c1.metric(_("Error at ℓ = 1, n = {n:,}").format(n=data.n), f"{view.error:.3g}",
              help=_("Root mean squared difference from the true mean f on d2l's 50 test inputs."))
    sweep_on = ui.control("toggle", _("Exercise 1 for every n up to 1,000"), "kr.d2l_sweep", default=False,
                          container=c2, help=_("kernelviz's: d2l's pooling at ℓ = 1 and at the leave-one-out "
                          "optimum ℓ*(n) for every n of the sidebar up to 1,000, with this noise seed."))
    if not sweep_on:
        return
    seed = data.key[2]
    with ui.busy(_("Exercise 1 for every n up to 1,000: d2l's pooling at ℓ = 1 and at the leave-one-out "
                   "ℓ*…")):
        sweep = cache_d2l.consistency(seed)
    left, right = st.columns([3, 2])
    with left:
        errors = {_("ℓ = 1 (d2l's w = 1)"): sweep.fixed, _("ℓ = ℓ*(n), leave-one-out"): sweep.tuned}
        ui.show(kf.error_by_size_figure(sweep.sizes, errors, current=data.n,
                                        y_title=_("error against f on the test inputs")),
                key="kr.d2l_consistency", filename="kernelviz-d2l-consistency")
    with right:
        ui.say(CH, "d2l_consistency_result", seed=seed, **consistency_words(sweep))
    ui.show_code(loo.curve_model, loo.loo_loss, smoothing.nadaraya_watson_model, ran=CONSISTENCY_RAN,
                 label=_("The code of the sweep"))

def consistency_words(sweep: views.Consistency) -> dict[str, str]:
    """The numbers of d2l's exercise 1 and the verdicts they support (``sweep.biased``, ``converges``)."""
    fixed, tuned, optima = sweep.fixed, sweep.tuned, sweep.optima
    return {
        "first": f"{sweep.sizes[0]:,}", "last": f"{sweep.sizes[-1]:,}",
        "fixed0": f"{fixed[0]:.2f}", "fixed1": f"{fixed[-1]:.2f}",
        "tuned0": f"{tuned[0]:.2f}", "tuned1": f"{tuned[-1]:.3f}",
        "ell0": f"{optima[0]:.3g}", "ell1": f"{optima[-1]:.3g}",
        "shrinks": _("shrinks") if optima[-1] < optima[0] else _("does not shrink"),
        "goes": _("falls") if tuned[-1] < tuned[0] else _("rises"),
        "fixed_why": ui.prose(CH, "consistency.bias" if sweep.biased else "consistency.no_bias"),
        "tuned_why": ui.prose(CH, "consistency.converges" if sweep.converges else "consistency.not_yet"),
    }


KR = ps.KERNEL_REGRESSION  # the fit's settings
data = ui.current_data()
ds = data.ds
lo, hi = ds.domain

ui.chapter_header(_("1 · Kernel regression"), lead=ui.prose(CH, "lead"), source=ui.prose(CH, "source"))

c1, c2, c3 = st.columns([1.2, 2.2, 1.6])
kernel = ui.field(KR, "kernel", data, c1)
ell = ui.field(KR, "lengthscale", data, c2)
with c3:
    true_band, fit_band, baselines = (ui.field(KR, f, data) for f in ("true_band", "fit_band", "baselines"))
K = get_kernel(kernel)

with ui.busy(_("Kernel regression with the {kernel} kernel, ℓ = {ell:g}, on {n:,} points…").format(
        kernel=K.label, ell=ell, n=data.n)):
    s = cache.predict(data, ell, kernel)
curves = [
    kf.Curve(
        _("kernel regression m(x)"),
        s.mean,
        kf.COLORS["fit"],
        std=s.std if fit_band else None,
        band_name=_("estimated band m(x) ± 2s(x)"),
    )
]
if baselines:
    k = ui.field(KR, "k", data)
    curves.append(
        kf.Curve(_("average pooling (mean of all yᵢ)"), cache.average(data), kf.COLORS["average"], dash="dot")
    )
    curves.append(
        kf.Curve(_("{k}-nearest-neighbour average").format(k=k), cache.knn(data, k), kf.COLORS["knn"],
                 dash="dash")
    )

def fit_title(v: float) -> str:
    if kernel == "gaussian":
        return _("{kernel} kernel, ℓ = {ell:.3g} (the post's ℓ = √2 ℓ = {post:.3g})").format(
            kernel=K.label, ell=v, post=v * 2**0.5)
    return _("{kernel} kernel, ℓ = {ell:.3g}").format(kernel=K.label, ell=v)


fig = kf.fit_figure(data.points(band=true_band), curves, look=data.look(fit_title(ell)))
with ui.busy(_("Smoothing at every ℓ of the slider, for the scrub under the chart…")):
    path = cache_scrub.lengthscale_path(data, kernel).frames_around(ell)
fig = kf.add_scrub(fig, curves[0], path, active=path.nearest(ell),
                   titles=[fit_title(v) for v in path.lengthscales])
chart = st.container()
st.caption(ui.prose(CH, "scrub"))
picked = explain.selection_controls("kr.", data)
point = explain.point_weights(data, picked.x, ell, kernel) if picked.on else None
if point is not None:
    kf.mark_point(fig, point.x, point.mean, ds.x, ds.y, point.weights)
with chart:
    ui.show(fig, key="kr.fit", filename="kernelviz-kernel-regression",
            on_select=explain.on_pick("kr.fit", "kr.", data))
if point is not None:
    explain.formula_panel(data, point, ell, K.label, key="kr.formula")
st.caption(
    ui.prose(CH, "start" if ds.name == "blog" else "start_scaled", span=f"{hi - lo:.3g}",
             ell=f"{cache.default_lengthscale(data):.3g}",
             post=f"{defaults.KERNEL_REGRESSION.post_lengthscale / defaults.SQRT2:.3f}")
)
left, right = st.columns([3, 2])
left.latex(ui.prose(CH, "formula"))
right.latex(K.latex + (r"\quad\text{on } |u| \le 1,\ 0 \text{ outside}" if K.compact else ""))
ui.show_code(smoothing.nadaraya_watson_model, kernel_scores, pooling.pool, smoothing.path_model,
             ran=ui.streamed_if(data.n))
ui.data_summary(data)
question_bank.wide_window(data)

empty = cache.empty_share(data, ell, kernel)
if empty > 0:
    st.info(ui.prose(CH, "gaps", share=f"{empty:.0%}", ell=f"{ell:g}", kernel=K.label))
if baselines:
    ui.say(CH, "baselines")
    st.latex(ui.prose(CH, "baselines_formula"))
    ui.show_code(smoothing.knn_model, smoothing.knn_scores, ran=ui.SERVED,
                 label=_("The code of the k-NN baseline"))

st.subheader(_("The band and the weights"))
ui.say(CH, "band_true" if data.synthetic else "band_user")
st.latex(ui.prose(CH, "band_formula"))

left, right = st.columns([3, 2])
with left:
    with ui.busy(_("Computing the attention weights wᵢ(x) for the heatmap…")):
        heat = cache.heatmap_weights(data, ell, kernel)
    heat_title = _("Attention weights wᵢ(x), ℓ = {ell:g}").format(ell=ell)
    heat_fig = kf.heatmap_figure(heat.weights, heat.queries, heat.keys, look=kf.Look(title=heat_title))
    if point is not None:
        kf.mark_row(heat_fig, views_explain.nearest_row(heat.queries, point.x), heat.queries)
    ui.show(heat_fig, key="kr.heatmap", filename="kernelviz-attention-weights")
    row = "" if point is None else _("The outlined row is the query nearest x* = {x:.4g}.").format(x=point.x)
    extra = " ".join(t for t in (ui.prose(CH, "heatmap_empty") if empty > 0 else "", heat.note, row) if t)
    st.caption(ui.prose(CH, "heatmap_caption", extra=extra))
    ui.show_code(smoothing.nadaraya_watson_model, kernel_scores, pooling.pool, ran=ui.SERVED)
with right:
    u, shapes = cache.kernel_shapes()
    ui.show(
        kf.kernel_shape_figure(u, shapes, K.label), key="kr.kernel_shape", filename="kernelviz-kernel-shapes"
    )
    st.caption(ui.prose(CH, "shape_caption", kernel=K.label))
    ui.show_code(kernel_values, ran=ui.CALLED, label=_("The code of the kernel shapes"))

if ds.name == "d2l":
    d2l_pooling(data)

st.subheader(_("The blog post's four lengthscales"))
ui.say(CH, "panels")
with ui.busy(_("Kernel regression at the post's four lengthscales…")):
    panels = cache.lengthscale_panels(data, kernel)
ui.show(
    kf.small_multiples_figure(data.points(), panels, look=data.look()),
    key="kr.multiples",
    filename="kernelviz-four-lengthscales",
)
if ds.name != "blog":
    st.caption(
        ui.prose(CH, "panels_scaled", span=f"{hi - lo:.3g}", scale=f"{(hi - lo) / defaults.POST_SPAN:.3g}")
    )
ui.show_code(smoothing.nadaraya_watson_model, ran=ui.SERVED)

st.subheader(_("Conventions"))
ui.say(CH, "conventions")
ui.try_this([ui.prose(CH, f"try.{i}") for i in (1, 2, 3)])
ahead.prepare_next_data("kr", data, partial(cache_scrub.prepare, lengthscale=ell, kernel=kernel),
                        context=(ell, kernel))  # a teacher stepping the number of points finds the next ready
