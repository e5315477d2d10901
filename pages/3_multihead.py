"""Chapter 3 · Multi-head kernel regression: several lengthscales (heads) mixed by learned weights u_h."""

import math

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz import figures as kf
from kernelviz import ui

HEAT_ROWS, HEAT_COLS = 96, 160  # cells of each head's heatmap (queries × keys); the cache keeps only these


@st.cache_data(max_entries=ui.CACHE_ENTRIES, show_spinner=False, hash_funcs=ui.DATA_HASH_FUNCS)
def train_heads(data: ui.Data, heads: int, kernel: str, holdout: int, steps: int, learning_rate: float,
                seed: int) -> kv.FitResult:
    """``kv.fit`` with ``heads`` heads (masked training) on the training points."""
    train = data.train
    return kv.fit(train.x, train.y, heads=heads, kernel=kernel, holdout=holdout, steps=steps,
                  learning_rate=learning_rate, seed=seed)


@st.cache_data(max_entries=ui.HEAVY_CACHE_ENTRIES, show_spinner=False, hash_funcs=ui.DATA_HASH_FUNCS)
def heads_view(data: ui.Data, lengthscales: tuple[float, ...], mixing: tuple[float, ...],
               kernel: str) -> dict[str, object]:
    """The mixture and every head on the page's grid, predicting from all the data; weights for heatmaps.

    A dict (results go through pickle, so no class defined in this script): grid, mean, std,
    head_means (H, g), and for the heatmaps the cells they draw (``kf.thin_heatmap``, float32): queries,
    keys, weights (H, queries, keys), and a note when the heatmap keys are a subsample.
    """
    ds = data.ds
    grid = ds.grid(ui.GRID_POINTS)
    small = len(ds) <= ui.HEATMAP_KEYS
    full = kv.predict_heads(grid, ds.x, ds.y, lengthscales, mixing, kernel, with_weights=small)
    if small:
        keys, weights, note = ds.x, full.weights, ""
    else:
        sub = kv.subsample(ds, ui.HEATMAP_KEYS)
        keys = sub.x
        weights = kv.predict_heads(grid, sub.x, sub.y, lengthscales, mixing, kernel).weights
        note = (f"The heatmaps use an even subsample of {len(sub):,} of the {len(ds):,} points as keys; "
                "the fit above uses all of them.")
    shown, queries, keys = kf.thin_heatmap(weights, grid, keys, HEAT_ROWS, HEAT_COLS)
    return {"grid": grid, "mean": full.mean, "std": full.std, "head_means": full.head_means,
            "queries": queries, "keys": keys, "weights": shown.astype(np.float32), "note": note}


data = ui.current_data()
ds, train = data.ds, data.train

ui.chapter_header(
    "3 · Multi-head kernel regression",
    lead=(
        "One lengthscale has to compromise between the wiggly and the smooth parts of the curve. Give the "
        "model H *heads* instead: each head is a kernel smoother with its own lengthscale ℓₕ, and the "
        "prediction is a learned linear combination of the heads' predictions. All ℓₕ and the mixing weights "
        "uₕ are learned together by the masked training of chapter 2. Later (chapter 4) each head becomes an "
        "attention head and the uₕ become the output matrix $W_O$."
    ),
    source=(
        "Paweł Czyż, “From kernel regression to the transformer”, section “Multi-headed kernel regression” "
        "(the model, the starting values ℓ_post = linspace(0.1, 3, H) and uₕ = 1/H, hold-out 1 and 1,000 "
        "steps)."
    ),
)

st.latex(
    r"\begin{aligned}\hat f(x) &= \sum_{h=1}^H u_h\, \hat f_h(x)\\ &= \sum_{h=1}^H u_h\, \sum_{i=1}^n y_i\, "
    r"\frac{K(x, x_i; \ell_h)}{\sum_{j=1}^n K(x, x_j; \ell_h)}\end{aligned}"
)
st.markdown(
    "Each head f̂ₕ is the Nadaraya–Watson smoother of chapter 1 with lengthscale ℓₕ. Training holds out k "
    "random points at every step, predicts them with f̂ from the rest, and takes an Adam step on all "
    "(log ℓₕ, uₕ) at once."
)

lo_h, hi_h = kv.holdout_range(len(train))
c0, c1, c2, c3, c4, c5 = st.columns([1.3, 1.3, 1.5, 1.4, 1.4, 1.0])
heads = ui.control(
    "slider", "Number of heads", "mh.heads", default=4, min_value=1, max_value=kv.HEADS_MAX, container=c0,
    help="H: how many kernel smoothers, each with its own lengthscale, are mixed.",
)
kernel = ui.control(
    "selectbox", "Kernel", "mh.kernel", default="gaussian", options=kv.KERNELS,
    format_func=lambda k: kv.get_kernel(k).label, container=c1, help="The same kernel shape for every head.",
)
holdout = ui.control(
    "slider", "Hold-out size", "mh.holdout", default=lo_h, min_value=lo_h, max_value=hi_h, container=c2,
    help="Points hidden and predicted at each step. The blog post uses 1 for this experiment.",
)
steps = ui.control(
    "slider", "Training steps", "mh.steps", default=1000, min_value=50, max_value=kv.STEPS_MAX, step=50,
    container=c3,
)
lr = ui.control(
    "select_slider", "Learning rate", "mh.lr", default=0.2,
    options=(0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0), container=c4,
    help="Adam's step size on log ℓₕ and uₕ. Very large values make training diverge.",
)
seed = ui.control("slider", "Seed", "mh.seed", default=0, min_value=0, max_value=99, container=c5,
                  help="Which random hold-out sets are drawn.")

K = kv.get_kernel(kernel)
with ui.busy(f"Training {heads} head{'s' if heads > 1 else ''}: {steps} steps of masked training, "
             f"{holdout} held-out point(s) per step, {K.label} kernel…"):
    result = train_heads(data, heads, kernel, holdout, steps, lr, seed)
ells = tuple(float(v) for v in result.lengthscales)
us = tuple(float(v) for v in result.mixing)
with ui.busy("Predicting with every head and with the mixture…"):
    view = heads_view(data, ells, us, kernel)

lo_x, hi_x = train.domain
span = hi_x - lo_x
runaway = [h + 1 for h, ell in enumerate(ells) if not span * 1e-6 <= ell <= span * 1e6]
if result.diverged:
    st.warning(result.message, icon=":material/warning:")
elif runaway:
    st.warning(
        f"Training ran away: head{'s' if len(runaway) > 1 else ''} {', '.join(map(str, runaway))} ended with "
        f"a lengthscale more than a million times smaller or larger than the data's x-range ({span:.3g}). "
        f"The learning rate {lr:g} makes Adam's steps in log ℓ too big; such a head copies the nearest point "
        f"or "
        "the overall mean. Lower the learning rate.",
        icon=":material/warning:",
    )
elif result.method == "search":
    st.info(result.message, icon=":material/search:")
elif result.message:
    st.caption(result.message)
ui.data_summary(data, training=True)

m1, m2, m3, m4 = st.columns(4)
m1.metric("Heads H", f"{heads}")
tail = result.losses[-25:] if result.losses.size else np.array([np.nan])
m2.metric("Hold-out loss (last 25 steps)", f"{float(np.mean(tail)):.4g}")
m3.metric("Σₕ uₕ", f"{sum(us):.3g}", help="Not constrained to 1: the uₕ are any linear combination.")
m4.metric(f"Steps run (of {steps:,})", f"{result.steps_run:,}")

truth = data.truth()
names = [f"head {h + 1}: ℓ = {ell:.3g}, u = {u:+.2f}"
         for h, (ell, u) in enumerate(zip(ells, us, strict=True))]
how = "search" if result.method == "search" else "training"
ui.show(
    kf.heads_fit_figure(
        ds.x, ds.y, view["grid"], view["head_means"], view["mean"], view["std"], names,
        truth=None if truth is None else truth[0],
        title=f"{heads} head{'s' if heads > 1 else ''} after {how} ({K.label} kernel)",
        x_title=ds.x_label, y_title=ds.y_label,
    ),
    key="mh.fit", filename="kernelviz-multihead-fit",
)
st.caption(
    "Dotted: each head's own fit f̂ₕ(x), in its head colour. Solid: the mixture f̂(x) = Σₕ uₕ f̂ₕ(x), the "
    "model's prediction, with its ±2s(x) band. Click a legend entry to hide or show a curve."
)
if not np.all(np.isfinite(view["mean"])):
    holes = [
        f"head {h + 1} (ℓ = {ells[h]:.3g}) at {frac:.0%}"
        for h, frac in enumerate(np.mean(~np.isfinite(view["head_means"]), axis=1))
        if frac > 0 and us[h] != 0
    ]
    gap = float(np.mean(~np.isfinite(view["mean"])))
    st.info(
        f"**Gaps in the fit:** the mixture is undefined at {gap:.0%} of the x values shown. Where a head "
        f"with uₕ ≠ 0 has no data point inside its {K.label} window, that head's prediction, and so the "
        "mixture's, is undefined and drawn as a gap. Empty windows: " + "; ".join(holes)
        + " of the x values. One narrow head of a compact kernel can hide almost the whole mixture; the "
        "dotted curves still show each head's own fit. Pick a kernel that is positive everywhere (Gaussian, "
        "Laplace, Cauchy) for a mixture without gaps."
    )
st.markdown(
    "**The band.** Because uₕ can be negative, the mixture has no single set of non-negative weights. The "
    "band pools the heads' weights by |uₕ| and takes the local variance around the mixture:"
)
st.latex(
    r"\begin{gathered}s^2(x) = \sum_{i=1}^n \bar w_i(x)\,\bigl(y_i - \hat f(x)\bigr)^2,\\ "
    r"\bar w_i(x) = \frac{\sum_h |u_h|\, w_{h,i}(x)}{\sum_h |u_h|}\end{gathered}"
)
st.caption(
    "A wide head with a large |uₕ| widens the band everywhere: its weights reach far-away points, whose yᵢ "
    "differ a lot from f̂(x). Hiding a head in the legend does not change the band: it belongs to the "
    "mixture."
)

st.subheader("What the heads learned")
left, right = st.columns([3, 2])
with left:
    st.dataframe(
        {
            "head": [f"head {h + 1}" for h in range(heads)],
            "ℓₕ (this app)": [round(v, 4) for v in ells],
            "ℓₕ in the blog post (√2 ℓₕ)": [round(v * math.sqrt(2.0), 4) for v in ells],
            "start ℓₕ": [round(float(v), 4) for v in result.trajectory[0]],
            "mixing weight uₕ": [round(v, 4) for v in us],
        },
        hide_index=True,
    )
    st.markdown(
        f"As the blog post points out, the **uₕ are not constrained**: they can be negative and need not sum "
        f"to 1 (here Σₕ uₕ = {sum(us):.3g}). The model is an arbitrary linear combination of the heads' "
        f"predictions, not a weighted average; a negative uₕ subtracts a smooth head to sharpen the others. "
        f"Heads that end up with almost the same ℓ are redundant: only their total u matters."
    )
with right:
    ui.show(kf.mixing_figure(us, ells), key="mh.mixing", filename="kernelviz-mixing-weights")

st.subheader("Each head's attention weights")
ui.show(
    kf.head_heatmaps_figure(view["weights"], view["queries"], view["keys"],
                            [f"head {h + 1}: ℓ = {ell:.3g}" for h, ell in enumerate(ells)],
                            max_rows=HEAT_ROWS, max_cols=HEAT_COLS),
    key="mh.heatmaps", filename="kernelviz-head-heatmaps",
)
st.caption(
    "One panel per head: rows are queries x (top to bottom: increasing x), columns the keys xᵢ, both sorted, "
    "as in chapter 1. A head with a small ℓ attends to a thin diagonal of near neighbours; a head with a "
    "large ℓ spreads its weight over everything. Each panel has its own colour scale (bright = that head's "
    "largest "
    "weight); hover for the exact values. " + view["note"]
)

st.subheader("Loss at every step")
if result.losses.size:
    ui.show(kf.loss_figure(result.losses), key="mh.loss", filename="kernelviz-multihead-loss")
    st.caption(
        "The squared error on each step's held-out points (light) and its running mean (dark). With hold-out "
        "1 every step sees one point, so the raw loss jumps by orders of magnitude."
        + (" The boxcar search does not follow a loss curve step by step; these are the losses of the "
           "chosen ℓ on each step's hold-out set." if result.method == "search" else "")
    )
else:
    st.info("Training diverged at its first step, so there is no loss to draw. Lower the learning rate.")

st.subheader("Conventions")
st.markdown(
    "Gaussian kernel K(u) = exp(−u²/2) with u = (x − x′)/ℓ. The blog post writes exp(−((x − x′)/ℓ)²), so "
    "**its ℓ is √2 × ours**: the table gives both. Training starts where the post does (ℓ_post = 1 for one "
    "head, linspace(0.1, 3, H) for H ≥ 2, uₕ = 1/H), scaled to the data's x-range. The boxcar kernel's loss "
    "is flat in ℓ almost everywhere, so for it the lengthscales are found by a search instead of by "
    "gradients (the message above says so)."
)

ui.try_this([
    "Go from 1 to 2, 4 and 8 heads (the blog post's four panels). Which heads get a large |uₕ|, and do the "
    "extra heads improve the fit or start chasing the noise?",
    "Look for a negative uₕ in the table. Hide the other heads in the legend: what does subtracting a wide, "
    "smooth head do to the mixture?",
    "Raise the hold-out size from 1 to half the data with 4 heads. Do the learned lengthscales spread out or "
    "collapse onto each other? Try two seeds for each.",
])
