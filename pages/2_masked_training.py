"""Chapter 2 · Masked training: learn the lengthscale by predicting held-out points."""

import math

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz import figures as kf
from kernelviz import ui

data = ui.current_data()
ds, train = data.ds, data.train

ui.chapter_header(
    "2 · Masked training",
    lead=(
        "Chapter 1 picked ℓ by eye. Here the model learns it: at every step hide a few random points, "
        "predict "
        "them from the others, and move ℓ downhill on the squared error with Adam. This is BERT's masked "
        "training in miniature; hiding one point at a time, deterministically, is leave-one-out "
        "cross-validation, whose exact optimum we can compute and compare with."
    ),
    source=(
        "Paweł Czyż, “From kernel regression to the transformer”, section “Masked training” (hold-out sizes, "
        "Adam on log ℓ); Dive into Deep Learning, “Nadaraya–Watson kernel regression” / “Attention pooling” "
        "(parametric pooling with a learnable w, trained leave-one-out)."
    ),
)

st.latex(
    r"\begin{gathered}L(\ell) = \frac{1}{k}\sum_{j \in H} \bigl(y_j - \hat f_{-H}(x_j;\ell)\bigr)^2,\\ "
    r"\mathrm{CV}(\ell) = \frac1n \sum_{i=1}^n \bigl(y_i - \hat f_{-i}(x_i;\ell)\bigr)^2\end{gathered}"
)
st.markdown(
    "$H$ is a fresh random set of k held-out points at every step and $\\hat f_{-H}$ the kernel regression "
    "fitted without them. Adam updates log ℓ, so ℓ stays positive. CV(ℓ) is the leave-one-out error: every "
    "point predicted from all the others."
)

lo_h, hi_h = kv.holdout_range(len(train))
c1, c2, c3, c4, c5 = st.columns([1.3, 1.6, 1.4, 1.4, 1.0])
kernel = ui.control(
    "selectbox",
    "Kernel",
    "masked.kernel",
    default="gaussian",
    options=kv.KERNELS,
    format_func=lambda k: kv.get_kernel(k).label,
    container=c1,
)
holdout = ui.control(
    "slider",
    "Hold-out size",
    "masked.holdout",
    default=min(10, hi_h),
    min_value=lo_h,
    max_value=hi_h,
    container=c2,
    help="Points hidden and predicted at each step (k). 1 is stochastic leave-one-out.",
)
steps = ui.control(
    "slider",
    "Training steps",
    "masked.steps",
    default=500,
    min_value=50,
    max_value=kv.STEPS_MAX,
    step=50,
    container=c3,
)
lr = ui.control(
    "select_slider",
    "Learning rate",
    "masked.lr",
    default=0.2,
    options=(0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0),
    container=c4,
    help="Adam's step size on log ℓ. Very large values make training diverge.",
)
seed = ui.control(
    "slider",
    "Seed",
    "masked.seed",
    default=0,
    min_value=0,
    max_value=99,
    container=c5,
    help="Which random hold-out sets are drawn.",
)

K = kv.get_kernel(kernel)
with ui.busy(f"Training ℓ: {steps} steps of Adam, {holdout} held-out point(s) per step, {K.label} kernel…"):
    result = ui.fit(data, kernel, holdout, steps, lr, seed)
lo_x, hi_x = train.domain
span = hi_x - lo_x
ells = tuple(ui.log_options(span / 500.0, span * 2.0, 20))
with ui.busy("Computing the exact leave-one-out error CV(ℓ) over a range of lengthscales…"):
    cv = ui.loo_curve(data, kernel, ells)
    best = ui.loo_optimum(data, kernel)

learned = float(result.lengthscales[0])
start = float(result.trajectory[0, 0])
if result.diverged:
    st.warning(result.message, icon=":material/warning:")
elif not span / 1e4 <= learned <= span * 1e3:
    st.warning(
        f"ℓ ran away to {learned:.3g} (the data span {span:.3g}): the learning rate {lr:g} is too high, so "
        "Adam's steps on log ℓ overshoot into a region where the loss is flat (ℓ tiny: nearest neighbour; ℓ "
        "huge: the mean) and the gradient cannot bring it back. Lower the learning rate.",
        icon=":material/warning:",
    )
elif result.method == "search":
    st.info(result.message, icon=":material/search:")
elif result.message:
    st.caption(result.message)
ui.data_summary(data, training=True)

m1, m2, m3, m4 = st.columns(4)
m1.metric(
    "Learned ℓ",
    f"{learned:.4g}",
    help=f"Started at ℓ = {start:.3g}. Blog-post convention: √2 ℓ = {learned * math.sqrt(2):.4g}.",
)
m2.metric("Exact leave-one-out optimum ℓ*", "none" if best is None else f"{best:.4g}")
tail = result.losses[-25:] if result.losses.size else np.array([np.nan])
m3.metric("Hold-out loss (last 25 steps)", f"{float(np.mean(tail)):.4g}")
m4.metric("Steps run", f"{result.steps_run:,} / {steps:,}")

with ui.busy("Predicting with the learned ℓ…"):
    s = ui.predict(data, learned, kernel)
curves = [
    kf.Curve(
        f"learned ℓ = {learned:.3g}",
        s.mean,
        kf.COLORS["fit"],
        std=s.std,
        band_name="estimated band m(x) ± 2s(x)",
    )
]
if best is not None:
    curves.append(
        kf.Curve(
            f"leave-one-out optimum ℓ* = {best:.3g}",
            ui.predict(data, best, kernel).mean,
            kf.COLORS["optimum"],
            dash="dash",
            width=2.0,
        )
    )
truth = data.truth()
ui.show(
    kf.fit_figure(
        ds.x,
        ds.y,
        data.grid(),
        curves,
        truth=None if truth is None else truth[0],
        title=f"Fit after {'search' if result.method == 'search' else 'training'} ({K.label} kernel)",
        x_title=ds.x_label,
        y_title=ds.y_label,
    ),
    key="masked.fit",
    filename="kernelviz-masked-fit",
)
if not np.all(np.isfinite(s.mean)):
    st.caption("Gaps: no training point within the kernel's window there, so the prediction is undefined.")

left, right = st.columns(2)
with left:
    st.markdown("**Loss at every step**")
    if result.losses.size:
        ui.show(kf.loss_figure(result.losses), key="masked.loss", filename="kernelviz-masked-loss")
        st.caption(
            "Each step predicts a different random hold-out set, so the raw loss (light) jumps around; the "
            "running mean (dark) shows the trend. Hold-out 1 is the noisiest: one point per step."
        )
    else:
        st.info("Training diverged at its first step, so there is no loss to draw. Lower the learning rate.")
with right:
    st.markdown("**Where training went on the leave-one-out curve**")
    traj = result.trajectory[:, 0]
    pick = np.unique(np.round(np.linspace(0, traj.shape[0] - 1, min(60, traj.shape[0]))).astype(int))
    path = tuple(float(v) for v in traj[pick])
    *path_cv, learned_cv = ui.loo_curve(data, kernel, (*path, learned))  # one compiled call
    ui.show(
        kf.loo_figure(
            np.asarray(ells),
            cv,
            optimum=best,
            trajectory=np.asarray(path),
            trajectory_cv=np.asarray(path_cv),
            learned=learned,
            learned_cv=learned_cv,
        ),
        key="masked.loo",
        filename="kernelviz-loo-curve",
    )
    note = (
        "The blue curve is the exact CV(ℓ); green dots are ℓ during training (darker = later), the "
        "diamond is "
        "where training ended and the star the exact optimum kv.loo_lengthscale."
    )
    if not np.all(np.isfinite(cv)):
        note += (
            f" The curve starts only where every point has another point within reach: for smaller ℓ the "
            f"{K.label} kernel leaves some point with an empty window and CV(ℓ) is infinite."
        )
    st.caption(note)


SEED_WORK_MAX = 80_000_000  # kernel evaluations allowed for one 8-seed run in the spread panel


@st.fragment
def seed_spread() -> None:
    """The spread of learned ℓ over seeds for the blog post's hold-out sizes (reruns on its own)."""
    st.subheader("Why hold-out 1 is noisy")
    n_seeds = ui.control(
        "slider",
        "Seeds per hold-out size",
        "masked.nseeds",
        default=8,
        min_value=2,
        max_value=kv.SEEDS_MAX,
        container=st.columns([1, 2])[0],
    )
    seed_steps = min(steps, 300)
    # the post's comparison: one point, ten points and half the data held out at every step
    wanted = sorted({lo_h, min(10, hi_h), max(lo_h, min(hi_h, len(train) // 2))})
    sizes, capped = [], []
    for k in wanted:
        # keep this optional panel live: shrink a hold-out size whose 8-seed run would be too much work
        size = k
        while size > 1 and ui.training_work(len(train), size, seed_steps, kv.SEEDS_MAX) > SEED_WORK_MAX:
            size //= 2
        if size != k:
            capped.append(k)
        if size not in sizes:
            sizes.append(size)
    groups = {}
    with ui.busy(
        f"Training {n_seeds} seeds × {seed_steps} steps for each hold-out size {', '.join(map(str, sizes))}…"
    ):
        for k in sizes:
            runs = ui.fit_seeds(data, kernel, k, seed_steps, lr, tuple(range(n_seeds)))
            groups[f"hold-out {k}"] = np.array([r.lengthscales[0] for r in runs])
    ui.show(kf.seeds_figure(groups, optimum=best), key="masked.seeds", filename="kernelviz-seed-spread")
    st.caption(
        "One dot per seed (same data, different random hold-out sets), for the hold-out sizes the blog post "
        "compares: one point, ten points and half the data. With one held-out point per step each gradient "
        "comes from a single prediction, so the learned ℓ depends a lot on which points happened to be "
        "drawn; larger hold-out sets average over more points and agree more, but predict from fewer. "
        f"Each run here takes {seed_steps} steps with the kernel and learning rate chosen above."
        + (
            f" Hold-out sizes {', '.join(map(str, capped))} were reduced to keep this panel quick on "
            f"{len(train):,} training points."
            if capped
            else ""
        )
    )


seed_spread()

st.subheader("Attention weights before and after training")
with ui.busy("Computing attention weights at the initial and the learned ℓ…"):
    before = ui.heatmap_weights(data, start, kernel)
    after = ui.heatmap_weights(data, learned, kernel)
ui.show(
    kf.heatmap_pair_figure(
        before.weights,
        after.weights,
        before.queries,
        before.keys,
        (f"before: ℓ = {start:.3g}", f"after: ℓ = {learned:.3g}"),
    ),
    key="masked.heatmaps",
    filename="kernelviz-heatmap-before-after",
)
if learned < start:
    change = (
        "Training shrank ℓ, so each query concentrates its weight on fewer, closer keys: the bright region "
        "becomes a sharper diagonal, as d2l observes."
    )
else:
    change = "Here training widened ℓ, so each query spreads its weight over more keys."
st.caption(f"Same colour scale on both sides. {change} {after.note}")

st.subheader("d2l's parametric view: w = 1/ℓ")
st.latex(
    r"\begin{gathered}f(x) = \sum_{i=1}^n \operatorname{softmax}_i\!\Bigl(-\tfrac12\bigl((x - x_i)\,w\bigr)^2"
    r"\Bigr)\, y_i,\\ w = 1/\ell\end{gathered}"
)
with ui.busy(f"Training d2l's w by full-batch leave-one-out ({steps} Adam steps from w = 1)…"):
    par = ui.fit_parametric(data, kernel, steps, 0.1)
ell_par = float(par.lengthscales[0])
p1, p2, p3 = st.columns(3)
p1.metric("Learned w", f"{1.0 / ell_par:.4g}")
p2.metric("ℓ = 1/w", f"{ell_par:.4g}")
p3.metric("Leave-one-out loss", f"{float(par.losses[-1]):.4g}" if par.losses.size else "—")
if par.message:
    (st.warning if par.diverged else st.info)(par.message)
st.markdown(
    "d2l trains the same model with every point predicted from all the others at every step (no randomness), "
    f"starting from w = 1 (ℓ = 1), with Adam at learning rate 0.1 for the same {steps} steps. Its ℓ = 1/w = "
    f"{ell_par:.3g} heads for the exact leave-one-out optimum ℓ* = "
    + ("(none)" if best is None else f"{best:.3g}")
    + " (more steps get closer). A large w (small ℓ) is why its trained heatmap looks sharper than the "
    "untrained one."
)

ui.try_this(
    [
        "Set the hold-out size to 1, then to half the points, and press through a few seeds: which learned ℓ "
        "moves more from seed to seed? Compare both with the star (the exact optimum).",
        "Raise the learning rate until training diverges. What does the loss curve do just before, and why "
        "does Adam on log ℓ survive much larger rates than you might expect?",
        "Choose the boxcar kernel: its loss is flat almost everywhere, so gradients are useless and ℓ is "
        "found by "
        "search. What value of w does d2l's parametric pooling learn (its exercise 2), and why is the "
        "trained "
        "heatmap sharper?",
    ]
)
