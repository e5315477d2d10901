"""Chapter 4 · Attention: the Gaussian smoother as softmax(q·k/√d), then a trained attention layer."""

import numpy as np
import streamlit as st

import kernelviz as kv
from kernelviz import figures as kf
from kernelviz import ui

HEAT_KEYS = 256  # keys of the attention heatmaps and queries of the self-attention picture (n × n per head);
# bigger data sets show an even subsample of this many points (the pictures draw at most 200 columns)
TOKEN_NAMES = ("1", "x̃", "x̃²")  # the features of a token φ(x̃)
PAIR_CELLS = (120, 200)  # queries × keys drawn in the Gaussian-as-attention pair of heatmaps


def _keys(ds: kv.Dataset, limit: int) -> tuple[kv.Dataset, str]:
    """``ds`` itself, or an even subsample of ``limit`` points with a sentence saying so."""
    if len(ds) <= limit:
        return ds, ""
    sub = kv.subsample(ds, limit)
    return sub, (f"The heatmaps use an even subsample of {len(sub):,} of the {len(ds):,} points; "
                 "the fit uses all of them.")


@st.cache_data(max_entries=ui.HEAVY_CACHE_ENTRIES, show_spinner=False, hash_funcs=ui.DATA_HASH_FUNCS)
def gaussian_as_attention(data: ui.Data, lengthscale: float) -> dict[str, object]:
    """Gaussian Nadaraya–Watson and dot-product attention with ``gaussian_attention_params`` on the same keys.

    Returns the largest absolute differences of the weights and of the fits, and for the heatmaps the
    cells they draw (``kf.thin_heatmap``): query grid, keys and both weight matrices.
    Tokens are standardised by the keys' mean and standard deviation (any centre and scale give the same
    weights; standardising keeps the numbers moderate).
    """
    ds = data.ds
    sub, note = _keys(ds, HEAT_KEYS)
    grid = ds.grid(ui.GRID_POINTS)
    center, scale = float(np.mean(sub.x)), float(np.std(sub.x))
    g = kv.gaussian_attention_params(lengthscale, scale)
    att = kv.dot_product_attention(grid, sub.x, sub.y, g.w_q, g.w_k, g.score_scale, center=center,
                                   scale=scale)
    nw = kv.nadaraya_watson(grid, sub.x, sub.y, lengthscale, "gaussian", with_weights=True)
    both, queries, keys = kf.thin_heatmap(np.stack([nw.weights, att.weights]), grid, sub.x, *PAIR_CELLS)
    return {
        "grid": queries, "keys": keys, "nw": both[0], "att": both[1],
        "weight_diff": float(np.max(np.abs(nw.weights - att.weights))),
        "mean_diff": float(np.max(np.abs(nw.mean - att.mean))),
        "w_q": g.w_q, "w_k": g.w_k, "scale": scale, "note": note,
    }


@st.cache_data(max_entries=ui.CACHE_ENTRIES, show_spinner=False, hash_funcs=ui.DATA_HASH_FUNCS)
def train_attention(data: ui.Data, heads: int, d_qk: int, holdout: int, steps: int, learning_rate: float,
                    seed: int) -> kv.AttentionFit:
    """``kv.fit_attention`` (masked training of multi-head dot-product attention) on the training points."""
    train = data.train
    return kv.fit_attention(train.x, train.y, heads=heads, d_qk=d_qk, holdout=holdout, steps=steps,
                            learning_rate=learning_rate, seed=seed)


@st.cache_data(max_entries=ui.HEAVY_CACHE_ENTRIES, show_spinner=False, hash_funcs=ui.DATA_HASH_FUNCS)
def attention_views(data: ui.Data, heads: int, d_qk: int, holdout: int, steps: int, learning_rate: float,
                    seed: int) -> dict:
    """Everything the page draws from the layer ``train_attention`` trains with the same arguments.

    fit on the grid from all the data (mean, band, heads), attention weights of grid queries (cross) and of
    the data points themselves (self) against the heatmap keys, and the learned scores s_h(x, x′) on a grid;
    the weight matrices in float32 (what the heatmaps draw), so each cached view stays small. The layer
    comes from the cache of ``train_attention``, so it is trained once.
    """
    fit = train_attention(data, heads, d_qk, holdout, steps, learning_rate, seed)
    ds = data.ds
    grid = ds.grid(ui.GRID_POINTS)
    keys, note = _keys(ds, HEAT_KEYS)
    full = kv.attention_predict(fit, grid, ds.x, ds.y, with_weights=keys is ds)
    cross = full.weights if keys is ds else kv.attention_predict(fit, grid, keys.x, keys.y).weights
    own = kv.attention_predict(fit, keys.x, keys.x, keys.y).weights
    lo, hi = ds.domain
    kgrid = np.linspace(lo, hi, kv.KERNEL_GRID_POINTS)
    return {
        "grid": grid, "mean": full.mean, "std": full.std, "head_means": full.head_means,
        "keys": np.asarray(keys.x), "cross": cross.astype(np.float32), "note": note,
        "self": own.astype(np.float32),
        "kgrid": kgrid, "scores": kv.attention_kernel(fit, kgrid, "scores"),
    }


data = ui.current_data()
ds, train = data.ds, data.train

ui.chapter_header(
    "4 · Attention",
    lead=(
        "Every head of chapter 3 weighs the keys xᵢ by a kernel of the query x. Attention keeps the weighted "
        "average and learns the kernel itself: K(x, x′) = exp(q(x)·k(x′)/√d), the exponential of a dot "
        "product between a learned *query* vector of x and a learned *key* vector of x′. First we check that "
        "the Gaussian kernel is one such dot product; then we train an attention layer on the same data."
    ),
    source=(
        "Paweł Czyż, “From kernel regression to the transformer”, section “Attention” (K = exp s, the "
        "dot-product score, heads mixed by weights Uₕ); “Attention as a kernel smoothing problem” (the "
        "non-symmetric kernel, self- vs cross-attention, heads concatenated through an output matrix); "
        "lecture notes (queries, keys and values as linear maps of the inputs; MultiHead = Concat(heads) "
        "times the output matrix)."
    ),
)

# formulas are split into short lines so that none is cut off in a narrow window
st.latex(
    r"\begin{aligned}\hat f(x) &= \sum_{i=1}^n y_i\, \frac{K(x, x_i;\theta)}{\sum_j K(x, x_j;\theta)}\\ "
    r"&= \sum_{i=1}^n y_i\,\operatorname{softmax}_i\, s_\theta(x, x_i),\\ "
    r"K &= \exp s_\theta,\qquad s_\theta(x, x') = \frac{\langle q(x), k(x')\rangle}{\sqrt{d_{qk}}}"
    r"\end{aligned}"
)

# ------------------------------------------------------------------------------------------- from kernel

st.header("From kernel to dot product")
st.markdown(
    "Take the log of the Gaussian kernel and multiply out the square. One term pairs x with x′ (a dot "
    "product), one depends on the key alone (a *key bias*), and one depends on the query alone:"
)
st.latex(
    r"\begin{aligned}\log K(x, x') &= -\frac{(x - x')^2}{2\ell^2}\\ &= "
    r"\underbrace{\frac{x\,x'}{\ell^2}}_{\text{query}\,\cdot\,\text{key}}"
    r"\;\underbrace{-\,\frac{x'^2}{2\ell^2}}_{\text{key bias}}"
    r"\;\underbrace{-\,\frac{x^2}{2\ell^2}}_{\text{same for every key}}\end{aligned}"
)
st.markdown(
    "The softmax over the keys i does not change when the same number is added to every score of a query, "
    "so the last term cancels. Give every point the token φ(x) = (1, x, x²) and the rest is a dot product of "
    "a query vector and a key vector with d = 2:"
)
st.latex(
    r"\begin{aligned}q(x) &= \sqrt2\,\Bigl(\frac{x}{\ell^2},\ 1\Bigr),\\ "
    r"k(x') &= \Bigl(x',\ -\frac{x'^2}{2\ell^2}\Bigr),\\ "
    r"\frac{q(x)\cdot k(x')}{\sqrt2} &= \frac{x x'}{\ell^2} - \frac{x'^2}{2\ell^2},\\ "
    r"\operatorname{softmax}_i\frac{q(x)\cdot k(x_i)}{\sqrt 2} "
    r"&= \frac{K(x, x_i)}{\sum_j K(x, x_j)}\end{aligned}"
)
st.caption(
    "The code standardises x (x̃ = (x − mean)/sd, ℓ̃ = ℓ/sd) before forming the tokens, which changes no "
    "weight and keeps the numbers moderate: `kv.gaussian_attention_params(ℓ, sd)` gives $W_q$ and $W_k$ "
    "with $q = \\varphi(\\tilde x)\\,W_q$, $k = \\varphi(\\tilde x')\\,W_k$."
)

ell = ui.lengthscale_control(
    "Lengthscale ℓ", "attn.lengthscale", data,
    help="The Gaussian kernel to rewrite as attention. Any ℓ works: the two columns below always agree.",
)
with ui.busy(f"Computing the Gaussian smoother and its attention form at ℓ = {ell:g}…"):
    check = gaussian_as_attention(data, ell)
v1, v2, v3 = st.columns(3)
v1.metric("max |Δ weight|", f"{check['weight_diff']:.1e}",
          help="Largest |Gaussian weight − attention weight| over all query/key pairs.")
v2.metric("max |Δ fit|", f"{check['mean_diff']:.1e}",
          help="Largest |Gaussian fit − attention fit| over the query grid.")
v3.metric("query/key width d", "2")
st.markdown(
    f"At ℓ = {ell:g} the two sets of weights agree to {check['weight_diff']:.0e}: floating-point rounding, "
    "nothing more. The Gaussian kernel smoother *is* dot-product attention with a key bias."
)
ui.show(
    kf.heatmap_pair_figure(check["nw"], check["att"], check["grid"], check["keys"],
                           (f"Gaussian kernel<br>ℓ = {ell:g}", "attention<br>softmax(q·k/√2)"),
                           max_rows=PAIR_CELLS[0], max_cols=PAIR_CELLS[1]),
    key="attn.equivalence", filename="kernelviz-gaussian-as-attention",
)
st.caption("Same colour scale on both sides; rows are queries x, columns keys xᵢ. " + check["note"])

# ------------------------------------------------------------------------------------------- trained layer

st.header("A trained attention layer")
st.markdown(
    "Now let training choose the query and key maps. Each head h has its own $W_q^h$ and $W_k^h$ "
    "($3 \\times d_{qk}$ matrices, acting on the token φ(x̃) = (1, x̃, x̃²)); the values are the yᵢ "
    "themselves. The layer is trained by the masked training of chapters 2 and 3: hide k random points, "
    "predict them from the rest, Adam on all $W_q^h$, $W_k^h$ and the output weights $U_h$."
)
st.latex(
    r"\begin{gathered}s_h(x, x') = \frac{\varphi(x)\,W_q^h\,\bigl(\varphi(x')\,W_k^h\bigr)^{\!\top}}"
    r"{\sqrt{d_{qk}}},\\ "
    r"o_h(x) = \sum_{i=1}^n \operatorname{softmax}_i\, s_h(x, x_i)\; y_i,\\ "
    r"\hat f(x) = \sum_{h=1}^H U_h\, o_h(x)\end{gathered}"
)
st.caption(
    "Why the token (1, x, x²) and not x alone: with a scalar x the score s = w·x·x′ is linear in x′, so "
    "every query would put its weight on one end of the data. The constant and the square let a head express "
    "a bump around the query, the Gaussian among them."
)

lo_h, hi_h = kv.holdout_range(len(train))
# two rows of three, so that every label fits on one line and the sliders line up
c0, c1, c5 = st.columns([1.0, 1.3, 0.7])
c2, c3, c4 = st.columns(3)
heads = ui.control("slider", "Number of heads H", "attn.heads", default=4, min_value=1,
                   max_value=kv.HEADS_MAX, container=c0,
                   help="H attention heads, each with its own query and key maps.")
d_qk = ui.control("slider", "Query/key size $d_{qk}$", "attn.dqk", default=4, min_value=1,
                  max_value=kv.D_QK_MAX, container=c1,
                  help="Length of the query and key vectors q(x), k(x′). The Gaussian needs 2.")
holdout = ui.control("slider", "Hold-out size", "attn.holdout", default=min(10, hi_h), min_value=lo_h,
                     max_value=hi_h, container=c2, help="Points hidden and predicted at each training step.")
steps = ui.control("slider", "Training steps", "attn.steps", default=1000, min_value=50,
                   max_value=kv.STEPS_MAX, step=50, container=c3)
lr = ui.control("select_slider", "Learning rate", "attn.lr", default=0.05,
                options=(0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 3.0, 10.0), container=c4,
                help="Adam's step size on $W_q$, $W_k$ and $U$. Large values make training diverge.")
seed = ui.control("slider", "Seed", "attn.seed", default=0, min_value=0, max_value=99, container=c5,
                  help="Random start of $W_q$, $W_k$ and the random hold-out sets.")

with ui.busy(f"Training {heads} attention head{'s' if heads > 1 else ''} (d_qk = {d_qk}): {steps} steps, "
             f"{holdout} held-out point(s) per step…"):
    fit = train_attention(data, heads, d_qk, holdout, steps, lr, seed)
with ui.busy("Evaluating the trained layer: fit, attention weights, learned kernels…"):
    view = attention_views(data, heads, d_qk, holdout, steps, lr, seed)

if fit.diverged:
    st.warning(fit.message, icon=":material/warning:")
elif fit.message:
    st.caption(fit.message)
ui.data_summary(data, training=True)

m1, m2, m3 = st.columns(3)
tail = fit.losses[-25:] if fit.losses.size else np.array([np.nan])
m1.metric("Hold-out loss", f"{float(np.mean(tail)):.4g}",
          help="Mean squared error on the held-out points, averaged over the last 25 training steps.")
m2.metric("Parameters", f"{heads * (2 * 3 * d_qk + 1):,}",
          help="$H \\times (2 \\times 3 \\times d_{qk} + 1)$: per head $W_q$ and $W_k$ ($3 \\times d_{qk}$ "
          "each) and $U_h$.")
m3.metric(f"Steps run (of {steps:,})", f"{fit.steps_run:,}")

truth = data.truth()
names = [f"head {h + 1}: U = {u:+.2f}" for h, u in enumerate(fit.mixing)]
ui.show(
    kf.heads_fit_figure(
        ds.x, ds.y, view["grid"], view["head_means"], view["mean"], view["std"], names,
        mixture_name="attention f̂(x) = Σₕ Uₕ oₕ(x)", band_name="band f̂(x) ± 2s(x)",
        truth=None if truth is None else truth[0],
        title=f"Dot-product attention: {heads} head{'s' if heads > 1 else ''}, d<sub>qk</sub> = {d_qk}",
        x_title=ds.x_label, y_title=ds.y_label,
    ),
    key="attn.fit", filename="kernelviz-attention-fit",
)
st.caption(
    "Dotted: each head's output oₕ(x), a kernel smoother with a learned kernel. Solid: the layer's output "
    "Σₕ Uₕ oₕ(x) with its ±2s(x) band (the heads' weights pooled by |Uₕ|, as in chapter 3)."
)
if fit.losses.size:
    ui.show(kf.loss_figure(fit.losses), key="attn.loss", filename="kernelviz-attention-loss")
    st.caption("Hold-out squared error at every step (light) and its running mean (dark).")
else:
    st.info("Training diverged at its first step, so there is no loss to draw. Lower the learning rate.")

# ------------------------------------------------------------------------------------------- the kernel

st.subheader("The learned kernel is not symmetric")
head = ui.control("radio", "Head shown", "attn.head", default=1, options=tuple(range(1, heads + 1)),
                  format_func=lambda h: f"head {h}",
                  help="Which head the kernel and the self/cross pictures show.")
h = head - 1
s = view["scores"][h]
A = fit.w_q[h] @ fit.w_k[h].T / np.sqrt(fit.d_qk)
asym = float(np.max(np.abs(s - s.T)))
st.markdown(
    f"K(x, x′) = exp s(x, x′) spans many orders of magnitude, so the colour shows log K = s. The left panel "
    f"is the kernel, the right its transpose (query and key swapped). A symmetric kernel like the Gaussian "
    f"would give two identical pictures mirrored in the dashed diagonal; here they differ because queries "
    f"and keys go through different maps $W_q \\ne W_k$. Largest |s(x, x′) − s(x′, x)| on the grid: "
    f"**{asym:.3g}**."
)
ui.show(
    kf.score_transpose_figure(s, view["kgrid"], titles=(f"head {head}<br>log K(x, x′)",
                                                        f"head {head}, transpose<br>log K(x′, x)")),
    key="attn.kernel", filename="kernelviz-learned-kernel",
)
st.markdown(
    f"The score of head {head} is a quadratic form in the tokens, s(x, x′) = φ(x̃) A φ(x̃′)ᵀ with "
    "$A = W_q W_k^\\top/\\sqrt{d_{qk}}$, a 3 × 3 matrix: rows for the query's features (1, x̃, x̃²), columns "
    "for the key's. The kernel is symmetric exactly when A is. Beside it, the A of the Gaussian kernel with "
    f"the ℓ = {ell:g} chosen above, on the same standardised x̃: 1/ℓ̃² pairs x̃ with x̃′ (the dot product), "
    "−1/2ℓ̃² pairs the query's 1 with the key's x̃′² (the key bias), everything else is 0."
)
gauss = kv.gaussian_attention_params(ell, fit.scale)
A_gauss = gauss.w_q @ gauss.w_k.T * gauss.score_scale
left, right = st.columns(2)
for col, mat, caption in ((left, A, f"trained head {head}"), (right, A_gauss, f"Gaussian, ℓ = {ell:g}")):
    with col:
        st.markdown(f"**A of the {caption}**")
        st.dataframe(
            {"query ↓ / key →": list(TOKEN_NAMES),
             **{f"key {name}": np.round(mat[:, j], 4) for j, name in enumerate(TOKEN_NAMES)}},
            hide_index=True,
        )

st.subheader("Each head's attention weights")
ui.show(
    kf.head_heatmaps_figure(view["cross"], view["grid"], view["keys"],
                            [f"head {k + 1}: U = {u:+.2f}" for k, u in enumerate(fit.mixing)]),
    key="attn.heatmaps", filename="kernelviz-attention-heads",
)
st.caption(
    "One panel per head, queries x down the side and keys xᵢ along the bottom (both sorted), each panel on "
    "its own colour scale. Unlike the Gaussian's diagonal band, a learned head may look to one side of the "
    "query, or at a fixed region of the data. " + view["note"]
)

# ------------------------------------------------------------------------------------------- W_O

st.subheader("Concatenating the heads: $W_O$")
st.markdown(
    "Multi-head attention runs the H heads side by side, puts their outputs next to each other and mixes "
    "them with one output matrix $W_O$. Each head's block of rows of $W_O$ is the blog post's $U_h$, so the "
    "output is $\\sum_h \\text{head}_h U_h$. Here every head outputs one number oₕ(x) ($d_v = 1$, the value "
    "is y itself), so $\\text{Concat}(\\text{head}_1, \\dots, \\text{head}_H)$ is a row of H numbers, "
    "$W_O$ is an H × 1 column and $U_h$ is its h-th entry: exactly the uₕ of chapter 3, now mixing learned "
    "kernels instead of Gaussians of different widths."
)
st.latex(
    r"\begin{aligned}&\operatorname{MultiHead}(Q, K, V)\\ "
    r"&\qquad= \operatorname{Concat}(\text{head}_1, \dots, \text{head}_H)\, W_O\\ "
    r"&\qquad= \sum_{h=1}^H \text{head}_h\, U_h,\qquad "
    r"W_O = \begin{pmatrix} U_1 \\ \vdots \\ U_H \end{pmatrix}\end{aligned}"
)
st.latex(
    r"\begin{gathered}\text{head}_h = \operatorname{softmax}\!\Bigl(\frac{Q_h K_h^\top}{\sqrt{d_{qk}}}\Bigr)"
    r" V_h,\\ Q_h = \Phi W_q^h,\quad K_h = \Phi W_k^h,\quad V_h = y\end{gathered}"
)
wo_left, wo_right = st.columns([2, 3])
with wo_left:
    ui.show(kf.mixing_figure(fit.mixing, y_title="W<sub>O</sub> entry Uₕ"), key="attn.wo",
            filename="kernelviz-w-o")
with wo_right:
    st.markdown(
        "With vectors instead of numbers ($d_v > 1$, an output of dimension $d_{out}$), $\\text{head}_h$ is "
        "$n \\times d_v$ and $U_h$ is the $d_v \\times d_{out}$ block of rows $(h-1)d_v + 1, \\dots, h d_v$ "
        "of $W_O$, so $\\text{Concat}(\\dots)\\, W_O = \\sum_h \\text{head}_h U_h$. As in chapter 3, nothing "
        "keeps the $U_h$ positive or summing to 1. $\\Phi$ is the $n \\times 3$ matrix of tokens φ(x̃ᵢ)."
    )

# ------------------------------------------------------------------------------------------- self / cross

st.subheader("Self- vs cross-attention")
st.markdown(
    "The queries can come from the same sequence as the keys and values, or from another one. In "
    "**self-attention** every data point asks all the data points (itself included) for their values: "
    "queries, keys and values all come from x₁ … xₙ, and the weights form an n × n matrix. In "
    "**cross-attention** the queries come from elsewhere (in translation, the words of the sentence being "
    "written attend to the source sentence); here the queries are new points x on a grid, the keys and "
    "values are still the data, and the weights form an m × n matrix. The kernel is the same, only the "
    "queries change: predicting f̂ on a grid, as every chapter does, is cross-attention."
)
ui.show(
    kf.self_cross_figure(view["self"][h], view["keys"], view["cross"][h], view["grid"]),
    key="attn.selfcross", filename="kernelviz-self-cross",
)
st.caption(
    f"Head {head}, one colour scale (the brightest half percent of cells saturate; hover for exact values). "
    f"Left: rows are the data points as queries, columns the same points as keys. "
    "Right: rows are grid points as queries, columns the data points. " + view["note"]
)

ui.try_this([
    "Set $d_{qk}$ to 1 and then to 2 with one head. Which one can make a local bump like the Gaussian, and "
    "what does the $d_{qk} = 1$ kernel look like in the heatmap?",
    "Train with two different seeds. Do the heads find the same kernels? Compare the log K heatmaps and the "
    "table $A = W_q W_k^\\top/\\sqrt{d_{qk}}$: is any head close to the Gaussian's shape?",
    "Move ℓ in the first section from its smallest to its largest value: the difference stays at rounding "
    "level. Then compare the trained layer's fit with chapter 3's: where does a learned kernel help?",
])
