"""Chapter 1 · Kernel regression: Nadaraya–Watson with a hand-picked lengthscale, its band and its weights."""

import math

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz import figures as kf
from kernelviz import ui

data = ui.current_data()
ds = data.ds

ui.chapter_header(
    "1 · Kernel regression",
    lead=(
        "Predict y at a query x by averaging the observed yᵢ, giving more weight to points xᵢ close to x. "
        "The kernel K decides what *close* means and the lengthscale ℓ sets its width. The weights wᵢ(x) are "
        "exactly attention weights: the query x attends to the keys xᵢ and averages their values yᵢ."
    ),
    source=(
        "Paweł Czyż, “From kernel regression to the transformer” (data, ±2σ band, four lengthscales); "
        "Dive into "
        "Deep Learning, “Nadaraya–Watson kernel regression” (average pooling, heatmap); “Attention as a "
        "kernel "
        "smoothing problem” (k-nearest neighbours); lecture notes (kernel zoo)."
    ),
)

st.latex(
    r"\begin{gathered}\hat f(x) = \sum_{i=1}^n w_i(x)\, y_i,\qquad u_i = \frac{x - x_i}{\ell},\\ "
    r"w_i(x) = \frac{K(u_i)}{\sum_{j=1}^n K(u_j)} = \operatorname{softmax}_i \log K(u_i)\end{gathered}"
)

c1, c2, c3 = st.columns([1.2, 2.2, 1.6])
kernel = ui.control(
    "selectbox",
    "Kernel",
    "kr.kernel",
    default="gaussian",
    options=kv.KERNELS,
    format_func=lambda k: kv.get_kernel(k).label,
    container=c1,
    help="The shape of the weights as a function of the scaled distance u = (x − xᵢ)/ℓ.",
)
ell = ui.lengthscale_control(
    "Lengthscale ℓ",
    "kr.lengthscale",
    data,
    container=c2,
    help="Width of the kernel, in units of x (log scale). Small ℓ: wiggly fit; large ℓ: nearly flat.",
)
with c3:
    true_band = ui.control(
        "toggle",
        "True band f(x) ± 2n(x)",
        "kr.true_band",
        default=True,
        disabled=not data.synthetic,
        help="Only for the synthetic data sets, where the true mean f and noise level n are known.",
    )
    fit_band = ui.control("toggle", "Estimated band m(x) ± 2s(x)", "kr.fit_band", default=True)
    baselines = ui.control("toggle", "Baselines: average and k-NN", "kr.baselines", default=False)

K = kv.get_kernel(kernel)
st.latex(K.latex + (r"\quad\text{on } |u| \le 1,\ 0 \text{ outside}" if K.compact else ""))

with ui.busy(f"Kernel regression with the {K.label} kernel, ℓ = {ell:g}, on {data.n:,} points…"):
    s = ui.predict(data, ell, kernel)
grid = data.grid()
truth = data.truth()

curves = [
    kf.Curve(
        "kernel regression m(x)",
        s.mean,
        kf.COLORS["fit"],
        std=s.std if fit_band else None,
        band_name="estimated band m(x) ± 2s(x)",
    )
]
if baselines:
    k_max = max(1, min(data.n, 100))
    k = ui.control(
        "slider",
        "Neighbours k (k-NN baseline)",
        "kr.k",
        default=min(10, k_max),
        min_value=1,
        max_value=k_max,
        help="k-nearest-neighbour averaging: the k closest points, equal weights.",
    )
    curves.append(
        kf.Curve(
            "average pooling (mean of all yᵢ)",
            np.full(grid.shape, float(np.mean(ds.y))),
            kf.COLORS["average"],
            dash="dot",
        )
    )
    curves.append(kf.Curve(f"{k}-nearest-neighbour average", ui.knn(data, k), kf.COLORS["knn"], dash="dash"))

fig = kf.fit_figure(
    ds.x,
    ds.y,
    grid,
    curves,
    truth=None if truth is None else truth[0],
    noise_sd=None if (truth is None or not true_band) else truth[1],
    title=f"{K.label} kernel, ℓ = {ell:g}",
    x_title=ds.x_label,
    y_title=ds.y_label,
)
ui.show(fig, key="kr.fit", filename="kernelviz-kernel-regression")
ui.data_summary(data)

empty = ~np.isfinite(s.mean)
if empty.any():
    st.info(
        f"**Gaps in the fit:** at {empty.mean():.0%} of the x values shown, no data point lies within ℓ = "
        f"{ell:g} "
        f"of x. The {K.label} kernel is exactly zero there, so every weight is zero, there is nothing to "
        "average "
        "and the prediction is undefined: it is drawn as a gap, not as a made-up value. Increase ℓ or pick a "
        "kernel that is positive everywhere (Gaussian, Laplace, Cauchy)."
    )
if baselines:
    st.markdown(
        "**Baselines.** Average pooling ignores x: every query gets the mean of all yᵢ (d2l's “dumbest” "
        "estimator). k-nearest-neighbour averaging gives weight 1/k to the k closest points: a boxcar kernel "
        "whose width adapts to x."
    )
    st.latex(
        r"\begin{gathered}\hat f_{\text{avg}}(x) = \frac1n\sum_{i=1}^n y_i,\\ "
        r"\hat f_{k\text{-NN}}(x) = \frac1k\sum_{i \in N_k(x)} y_i\end{gathered}"
    )

st.subheader("The band and the weights")
st.markdown(
    "The estimated band uses the same weights for a local variance: s²(x) = Σᵢ wᵢ(x)(yᵢ − m(x))². "
    + (
        "The true band f(x) ± 2n(x) comes from the formula that generated the data."
        if data.synthetic
        else "Your data have no known true curve, so only the estimated band is drawn."
    )
)
st.latex(r"\begin{gathered}s^2(x) = \sum_{i=1}^n w_i(x)\,\bigl(y_i - m(x)\bigr)^2,\\ m(x) = \hat f(x)"
         r"\end{gathered}")

left, right = st.columns([3, 2])
with left:
    with ui.busy("Computing the attention weights wᵢ(x) for the heatmap…"):
        heat = ui.heatmap_weights(data, ell, kernel)
    ui.show(
        kf.heatmap_figure(
            heat.weights, heat.queries, heat.keys, title=f"Attention weights wᵢ(x), ℓ = {ell:g}"
        ),
        key="kr.heatmap",
        filename="kernelviz-attention-weights",
    )
    st.caption(
        "Each row is one query x (top to bottom: increasing x), each column one key xᵢ (sorted). Bright "
        "cells: "
        "the keys that query listens to. A wide ℓ spreads the weight over many keys; a small ℓ makes a thin "
        "diagonal. " + ("Dark rows are queries with an empty window. " if empty.any() else "") + heat.note
    )
with right:
    u = np.linspace(-3.0, 3.0, 601)
    shapes = {kv.get_kernel(name).label: np.asarray(kv.kernel_value(u, name)) for name in kv.KERNELS}
    ui.show(
        kf.kernel_shape_figure(u, shapes, K.label), key="kr.kernel_shape", filename="kernelviz-kernel-shapes"
    )
    st.caption(
        f"K(u) of the {K.label} kernel (bold) and the others (grey). The weight of key xᵢ is K((x − xᵢ)/ℓ), "
        "then normalised to sum to 1 over the keys."
    )

st.subheader("Four lengthscales side by side")
lo, hi = ds.domain
scale = (hi - lo) / 6.0
post = (3.0, 0.5, 0.25, 0.05)
panels = []
for p in post:
    ell_p = p / math.sqrt(2.0) * scale
    panels.append((f"post ℓ = {p:g} → ℓ = {ell_p:.3g}", ui.predict(data, ell_p, kernel).mean))
ui.show(
    kf.small_multiples_figure(
        ds.x,
        ds.y,
        grid,
        panels,
        truth=None if truth is None else truth[0],
        x_title=ds.x_label,
        y_title=ds.y_label,
    ),
    key="kr.multiples",
    filename="kernelviz-four-lengthscales",
)
st.markdown(
    "The blog post's four panels with the chosen kernel: ℓ = 3 underfits (almost the mean), ℓ = 0.05 "
    "follows the noise, ℓ ≈ 0.25 looks about right. The post writes K = exp(−((x − x′)/ℓ)²), so its ℓ is √2 "
    "times ours; the titles give both. "
    + (
        ""
        if ds.name == "blog"
        else f"These data span {hi - lo:.3g} units of x instead of the post's 6, so the lengthscales are "
        "scaled by "
        f"{scale:.3g} to look the same."
    )
)

st.subheader("Conventions")
st.markdown(
    "Gaussian kernel K(u) = exp(−u²/2) with u = (x − x′)/ℓ, so ℓ is the kernel's standard deviation (as in "
    "Gaussian-process libraries and statsmodels). The blog post's ℓ is √2 × ours; d2l's learnable w is 1/ℓ "
    "(it writes exp(−((x − xᵢ)w)²/2)). Compact kernels (boxcar, Epanechnikov, triangular, tricube) are zero "
    "for |u| > 1. Weights are computed as a softmax of log K, which neither underflows at tiny ℓ nor "
    "overflows at huge ℓ. The lecture notes call max(0, 1 − |u|) Epanechnikov: it is the triangular kernel."
)

ui.try_this(
    [
        "Slide ℓ from its smallest to its largest value. Where does the fit stop following the noise, and "
        "where does it flatten into average pooling? Watch the heatmap's diagonal widen at the same time.",
        "Pick the Epanechnikov or boxcar kernel and a small ℓ: where do gaps appear, and why does the "
        "Gaussian "
        "never leave one?",
        "Increase the number of points n in the sidebar (d2l's first exercise): does the best-looking ℓ get "
        "smaller? Is the estimated band m ± 2s close to the true band where the noise is large?",
    ]
)
