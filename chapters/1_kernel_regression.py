"""Chapter 1 · Kernel regression: Nadaraya–Watson with a hand-picked lengthscale, its band and its weights."""

from functools import partial

import streamlit as st

from kernelviz.app import defaults, ui, views
from kernelviz.app.ui import charts
from kernelviz.app.ui.caching import ahead, cache
from kernelviz.app.ui.caching import d2l as cache_d2l
from kernelviz.app.ui.caching import scrub as cache_scrub
from kernelviz.app.ui.charts import kernel_regression as kr
from kernelviz.app.ui.widgets import explain
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


def d2l_pooling(data: ui.Data, s: kr.Settings) -> kr.Settings:
    """d2l's nonparametric attention pooling as d2l draws it: ℓ = 1 (w = 1) at its 50 test inputs, the fit
    beside the heatmap of sorted test inputs against sorted training inputs; then exercise 1."""
    st.subheader(_("d2l's nonparametric attention pooling: ℓ = 1 (w = 1)"))
    ui.say(CH, "d2l_intro")
    left, right = st.columns(2)
    with left:
        charts.put("kr.d2l_fit", kr.d2l_fit(data, s))
    with right:
        charts.put("kr.d2l_heatmap", kr.d2l_heatmap(data, s))
    heat = cache_d2l.nonparametric(data).heatmap
    st.caption(ui.prose(CH, "d2l_caption", n=f"{data.n:,}", rows=heat.weights.shape[0],
                        cols=heat.weights.shape[1], note=heat.note))
    ui.show_code(smoothing.nadaraya_watson_model, kernel_scores, pooling.pool, ran=ui.SERVED)
    return d2l_consistency(data, s)


def d2l_consistency(data: ui.Data, s: kr.Settings) -> kr.Settings:
    """d2l's consistency remark where a student can try it: exercise 1 at ℓ = 1 with growing n."""
    ui.say(CH, "d2l_consistency")
    c1, c2 = st.columns(2)
    error = cache_d2l.nonparametric(data).error
    c1.metric(_("Error at ℓ = 1, n = {n:,}").format(n=data.n), f"{error:.3g}",
              help=_("Root mean squared difference from the true mean f on d2l's 50 test inputs."))
    s = s._replace(d2l=kr.D2lSettings(ui.field(kr.D2L, "sweep", data, c2)))
    if not s.d2l.sweep:
        return s
    left, right = st.columns([3, 2])
    with left:
        charts.put("kr.d2l_consistency", kr.d2l_consistency(data, s))
    with right:
        ui.say(CH, "d2l_consistency_result", seed=data.key[2], **consistency_words(kr.consistency(data)))
    ui.show_code(loo.curve_model, loo.loo_loss, smoothing.nadaraya_watson_model, ran=CONSISTENCY_RAN,
                 label=_("The code of the sweep"))
    return s


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
span = ds.span

ui.chapter_header(_("1 · Kernel regression"), lead=ui.prose(CH, "lead"), source=ui.prose(CH, "source"))

c1, c2, c3 = st.columns([1.2, 2.2, 1.6])
kernel = ui.field(KR, "kernel", data, c1)
ell = ui.field(KR, "lengthscale", data, c2)
with c3:
    true_band, fit_band, baselines = (ui.field(KR, f, data) for f in ("true_band", "fit_band", "baselines"))
k = ui.field(KR, "k", data) if baselines else KR.first("k", data)
K = get_kernel(kernel)
fit = KR.snapped(KR.start._replace(kernel=kernel, lengthscale=ell, true_band=true_band, fit_band=fit_band,
                                   baselines=baselines, k=k), data)
s = kr.Settings(fit, explain.Selection(), kr.D2L.start)

chart = st.container()
st.caption(ui.prose(CH, "scrub"))
s = s._replace(pick=explain.selection_controls("kr.", data))
point = kr.point(data, s)
with chart:
    charts.put("kr.fit", kr.fit(data, s), on_select=explain.on_pick("kr.fit", "kr.", data))
charts.put("kr.formula", kr.formula(data, s))
st.caption(
    ui.prose(CH, "start" if ds.name == "blog" else "start_scaled", span=f"{span:.3g}",
             ell=f"{cache.default_lengthscale(data):.3g}",
             post=f"{defaults.KERNEL_REGRESSION.post_lengthscale / defaults.SQRT2:.3f}")
)
left, right = st.columns([3, 2])
left.latex(ui.prose(CH, "formula"))
right.latex(K.latex + (r"\quad\text{on } |u| \le 1,\ 0 \text{ outside}" if K.compact else ""))
ui.show_code(smoothing.nadaraya_watson_model, kernel_scores, pooling.pool, smoothing.path_model,
             ran=ui.streamed_if(data.n))
ui.data_summary(data)
ui.ask(kr.BOOK.questions["kr.wide_window"](data, s))

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
    charts.put("kr.heatmap", kr.heatmap(data, s))
    heat = cache.heatmap_weights(data, ell, kernel)
    row = "" if point is None else _("The outlined row is the query nearest x* = {x:.4g}.").format(x=point.x)
    extra = " ".join(t for t in (ui.prose(CH, "heatmap_empty") if empty > 0 else "", heat.note, row) if t)
    st.caption(ui.prose(CH, "heatmap_caption", extra=extra))
    ui.show_code(smoothing.nadaraya_watson_model, kernel_scores, pooling.pool, ran=ui.SERVED)
with right:
    charts.put("kr.kernel_shape", kr.kernel_shape(data, s))
    st.caption(ui.prose(CH, "shape_caption", kernel=K.label))
    ui.show_code(kernel_values, ran=ui.CALLED, label=_("The code of the kernel shapes"))

if ds.name == "d2l":
    s = d2l_pooling(data, s)

st.subheader(_("The blog post's four lengthscales"))
ui.say(CH, "panels")
charts.put("kr.multiples", kr.multiples(data, s))
if ds.name != "blog":
    st.caption(
        ui.prose(CH, "panels_scaled", span=f"{span:.3g}", scale=f"{span / defaults.POST_SPAN:.3g}")
    )
ui.show_code(smoothing.nadaraya_watson_model, ran=ui.SERVED)

st.subheader(_("Conventions"))
ui.say(CH, "conventions")
ui.try_this([ui.prose(CH, f"try.{i}") for i in (1, 2, 3)])
ahead.prepare_next_data("kr", data, partial(cache_scrub.prepare, lengthscale=ell, kernel=kernel),
                        context=(ell, kernel))  # a teacher stepping the number of points finds the next ready
