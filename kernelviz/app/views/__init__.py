"""What the pages draw: frozen dataclasses of NumPy arrays, computed from the backend.

A page asks for a view with the values of its controls (through a cached call in ``kernelviz.app.ui``) and
hands its fields to the figure builders of ``kernelviz.app.figures``. Views hold only the cells a heatmap
draws (``shapes.thin_heatmap``, in float32), so a cached view stays small. Nothing here imports streamlit.

Where a data set is too big to show every key, ``heatmap_keys`` picks an even subsample and says so, once
for every view; ``training_status`` is the one rule for a training run that diverged or ran away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from kernelviz.app import defaults
from kernelviz.data.datasets import Dataset, d2l_data, subsample
from kernelviz.models.attention import (
    AttentionFit,
    attention_kernel,
    attention_predict,
    attention_values,
    gaussian_layer,
    tokens,
)
from kernelviz.models.heads import FitResult
from kernelviz.models.loo import loo_lengthscale
from kernelviz.models.smoothing import nadaraya_watson, predict_heads
from kernelviz.runtime.i18n import _, ngettext
from kernelviz.runtime.shapes import thin_heatmap

__all__ = [
    "D2L_TEST_INPUTS", "AttentionView", "Consistency", "D2lPooling", "GaussianCheck", "HeadsView", "Heatmap",
    "HoldoutPanel", "MaskedView", "SeedSpread", "Status", "attention_view", "cell_budget", "d2l_consistency",
    "d2l_pooling", "gaussian_check", "heads_view", "heatmap_keys", "read_off", "training_status",
    "weights_heatmap",
]

HEAT_ROWS, HEAT_COLS = 96, 160  # cells of a heatmap per head (queries × keys) kept in a view
PAIR_CELLS = (120, 200)  # cells of each side of a two-panel heatmap
FIGURE_CELLS = 12_000  # heatmap cells one figure sends per rerun, all panels together (float32: ~64 kB)
MIN_ROWS = 32  # query rows a heatmap keeps however many panels share the budget
SELF_SIDE = int((FIGURE_CELLS // 2) ** 0.5)  # points × points of a self-attention map (shown beside cross)
ATTENTION_KEYS = 256  # keys of chapter 4's heatmaps (and queries of its self-attention picture)
D2L_TEST_INPUTS = np.arange(0.0, 5.0, 0.1)  # d2l's x_test = arange(0, 5, 0.1), the port's xVal
D2L_HEAT_KEYS = FIGURE_CELLS // D2L_TEST_INPUTS.size  # keys of d2l's heatmap: every test input a row
RUNAWAY = (1e-4, 1e3)  # a learned ℓ outside span × this range ran away (nearest neighbour / the mean)


@dataclass(frozen=True)
class Heatmap:
    """Weights (…, rows, cols) of ``queries`` (rows) against ``keys`` (cols), as drawn; ``note`` says when
    the keys are a subsample."""

    queries: np.ndarray
    keys: np.ndarray
    weights: np.ndarray
    note: str = ""

    def panel(self, h: int) -> Heatmap:
        """The heatmap of panel (head) ``h`` alone: weights[h], the same queries and keys."""
        return Heatmap(self.queries, self.keys, self.weights[h], self.note)


def heatmap_keys(ds: Dataset, limit: int = defaults.HEATMAP_KEYS) -> tuple[Dataset, str]:
    """``ds`` itself, or an even subsample of ``limit`` points with the sentence that says so."""
    if len(ds) <= limit:
        return ds, ""
    sub = subsample(ds, limit)
    return sub, _("The heatmaps use an even subsample of {shown:,} of the {n:,} points as keys; the fit uses "
                  "all of them.").format(shown=len(sub), n=len(ds))


def cell_budget(panels: int, rows: int, cols: int, budget: int = FIGURE_CELLS, *,
                keep_cols: bool = False) -> tuple[int, int]:
    """(rows, cols) of each of ``panels`` heatmaps, at most the ones asked, holding ``budget`` cells in all.

    Query rows (an even grid, smooth from one row to the next) give way first, down to ``MIN_ROWS``; then
    key columns, unless ``keep_cols`` (keys shared with another heatmap). A panel a few hundred pixels wide
    cannot show more cells than that anyway.
    """
    per = max(1, budget // max(1, panels))
    if rows * cols <= per:
        return rows, cols
    r = min(rows, max(MIN_ROWS, per // cols))
    return r, cols if keep_cols else max(1, min(cols, per // r))


class Cells(NamedTuple):
    """The cells a heatmap asks for (``cell_budget`` gives them): ``rows`` × ``cols`` in each of ``panels``
    heatmaps of one figure (None: one per leading entry of the weights, e.g. per head), the key columns
    kept whole when ``keep_cols``."""

    rows: int
    cols: int
    panels: int | None = None
    keep_cols: bool = False


HEAD_CELLS = Cells(HEAT_ROWS, HEAT_COLS)  # a heatmap per head


def _heatmap(weights: np.ndarray, queries: np.ndarray, keys: np.ndarray, note: str,
             cells: Cells = HEAD_CELLS) -> Heatmap:
    """The weights thinned to ``cell_budget`` of ``cells``, in float32."""
    w = np.asarray(weights)
    count = int(np.prod(w.shape[:-2])) if cells.panels is None else cells.panels
    budget = cell_budget(count, cells.rows, cells.cols, keep_cols=cells.keep_cols)
    shown, q, k = thin_heatmap(w, queries, keys, *budget)
    return Heatmap(q, k, shown.astype(np.float32), note)


def weights_heatmap(ds: Dataset, lengthscale: float, kernel: str,
                    rows: int = defaults.HEATMAP_ROWS) -> Heatmap:
    """Nadaraya–Watson weights w_i(x) of ``rows`` grid queries against the data (chapters 1 and 2)."""
    keys, note = heatmap_keys(ds)
    q = ds.grid(rows)
    w = nadaraya_watson(q, keys.x, keys.y, lengthscale, kernel, with_weights=True).weights
    return _heatmap(w, q, keys.x, note, Cells(rows, defaults.HEATMAP_KEYS))


@dataclass(frozen=True)
class D2lPooling:
    """d2l's nonparametric attention pooling at ``lengthscale`` (d2l's w = 1/ℓ = 1): the prediction ``mean``
    at the ``queries`` (d2l's 50 test inputs on its data), the true mean there (None without one), its root
    mean squared ``error`` against it, and the weights of every query against the sorted training inputs."""

    queries: np.ndarray
    mean: np.ndarray
    truth: np.ndarray | None
    error: float | None
    heatmap: Heatmap
    lengthscale: float


def _truth_error(mean: np.ndarray, truth: np.ndarray | None) -> float | None:
    """(1/m Σ_j (m(x_j) − f(x_j))²)^{1/2}, or None without a true mean."""
    return None if truth is None else float(np.sqrt(np.mean(np.square(mean - truth))))


def d2l_pooling(ds: Dataset, lengthscale: float = 1.0) -> D2lPooling:
    """d2l's Gaussian pooling f(x) = Σ_i softmax_i(−((x − x_i)/ℓ)²/2) y_i drawn as d2l draws it: queries its
    test inputs arange(0, 5, 0.1) (other data: as many points across their range), keys all the training
    inputs; the heatmap keeps every query and an even subsample of ``D2L_HEAT_KEYS`` keys above that."""
    q = D2L_TEST_INPUTS if ds.name == "d2l" else ds.grid(D2L_TEST_INPUTS.size)
    mean = nadaraya_watson(q, ds.x, ds.y, lengthscale, with_weights=False).mean
    keys, note = heatmap_keys(ds, D2L_HEAT_KEYS)
    w = nadaraya_watson(q, keys.x, keys.y, lengthscale, with_weights=True).weights
    truth = None if ds.true_mean is None else np.asarray(ds.true_mean(q))
    return D2lPooling(q, mean, truth, _truth_error(mean, truth),
                      _heatmap(w, q, keys.x, note, Cells(q.size, D2L_HEAT_KEYS)), float(lengthscale))


@dataclass(frozen=True)
class Consistency:
    """d2l's exercise 1 run for every size: the error against the true mean on the test inputs of d2l's
    pooling at ℓ = 1 (``fixed``) and at each sample's leave-one-out optimum ℓ* (``tuned``, ``optima``)."""

    sizes: np.ndarray
    fixed: np.ndarray
    tuned: np.ndarray
    optima: np.ndarray

    @property
    def biased(self) -> bool:
        """At the largest n the fixed ℓ's error is over twice the tuned one's: a bias more data leave."""
        return bool(self.fixed[-1] > 2.0 * self.tuned[-1])

    @property
    def converges(self) -> bool:
        """The tuned error falls from the smallest n to the largest, and ends below the fixed ℓ's."""
        return bool(self.tuned[-1] < self.tuned[0] and self.tuned[-1] < self.fixed[-1])


def d2l_consistency(sizes: tuple[int, ...], seed: int, lengthscale: float = 1.0) -> Consistency:
    """For each n of ``sizes``, d2l's data set of n points (noise ``seed``): the error of ``d2l_pooling`` at
    ``lengthscale`` and at the exact leave-one-out optimum ℓ*(n) (``loo_lengthscale``). At a fixed ℓ the
    error stops falling at the bias of the smoothed curve; with ℓ shrinking as n grows it keeps falling."""
    fixed, tuned, optima = [], [], []
    for n in sizes:
        ds = d2l_data(int(n), int(seed))
        ell = loo_lengthscale(ds.x, ds.y)
        truth = ds.true_mean(D2L_TEST_INPUTS)
        for out, v in ((fixed, lengthscale), (tuned, ell)):
            out.append(_truth_error(nadaraya_watson(D2L_TEST_INPUTS, ds.x, ds.y, v, with_weights=False).mean,
                                    truth))
        optima.append(ell)
    return Consistency(np.asarray(sizes), np.array(fixed), np.array(tuned), np.array(optima))


@dataclass(frozen=True)
class HeadsView:
    """A multi-head model on the page's grid: the mixture ``mean`` and ``std`` (g,), each head's
    ``head_means`` (H, g), and every head's weights as a ``heatmap`` (H, rows, cols)."""

    grid: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    head_means: np.ndarray
    heatmap: Heatmap


def heads_view(ds: Dataset, lengthscales: tuple[float, ...], mixing: tuple[float, ...],
               kernel: str) -> HeadsView:
    """Chapter 3: f̂ = Σ_h u_h m_h and every head on the grid, predicting from all the data."""
    grid = ds.grid(defaults.GRID_POINTS)
    keys, note = heatmap_keys(ds)
    full = predict_heads(grid, ds.x, ds.y, lengthscales, mixing, kernel, with_weights=keys is ds)
    weights = full.weights if keys is ds else predict_heads(grid, keys.x, keys.y, lengthscales, mixing,
                                                            kernel).weights
    return HeadsView(grid, full.mean, full.std, full.head_means, _heatmap(weights, grid, keys.x, note))


@dataclass(frozen=True)
class GaussianCheck:
    """Gaussian Nadaraya–Watson and the attention layer that is it, on the same keys: both weight matrices
    as one heatmap (2, rows, cols), the largest differences of the weights and of the fits, the layer's
    maps W_q, W_k (3 × 2) and W_v (4 × 1), and its token frame x̃ = (x − ``center``)/``scale``."""

    heatmap: Heatmap
    weight_diff: float
    mean_diff: float
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    center: float
    scale: float


def gaussian_check(ds: Dataset, lengthscale: float) -> GaussianCheck:
    """Chapter 4's check: one attention head with ``gaussian_attention_params`` and W_v = e_y (the layer
    ``gaussian_layer`` builds) gives the Gaussian smoother's weights and fit, through the layer's own code."""
    keys, note = heatmap_keys(ds, ATTENTION_KEYS)
    grid = ds.grid(defaults.GRID_POINTS)
    layer = gaussian_layer([lengthscale], [1.0], keys.x, keys.y)
    att = attention_predict(layer, grid, keys.x, keys.y)
    nw = nadaraya_watson(grid, keys.x, keys.y, lengthscale, "gaussian", with_weights=True)
    return GaussianCheck(
        heatmap=_heatmap(np.stack([nw.weights, att.weights[0]]), grid, keys.x, note, Cells(*PAIR_CELLS)),
        weight_diff=float(np.max(np.abs(nw.weights - att.weights[0]))),
        mean_diff=float(np.max(np.abs(nw.mean - att.mean))),
        w_q=layer.w_q[0], w_k=layer.w_k[0], w_v=layer.w_v[0], center=layer.center, scale=layer.scale,
    )


@dataclass(frozen=True)
class AttentionView:
    """A trained attention layer on the page's grid: the output ``mean`` and ``std`` and each head's part
    head_h(x) U_h of it (``head_outputs``, (H, g)); the heads' weights of grid queries (``cross``) and of the
    points themselves (``self_``); the learned kernels log K_h(x, x′) on ``kgrid`` (``attention_kernel``)
    and their asymmetry max |log K_h(x, x′) − log K_h(x′, x)| (``asymmetry``, (H,)); the weight
    (W_v^h U_h)_y each head gives its average of y (``y_weights``, chapter 3's u_h for Gaussian heads);
    where each head looks from the points, mean |Σ_i w_hi x_i − x| (``offsets``) and mean weighted spread
    (``widths``), in units of the data's span; and self-attention as a map of the sequence ``seq_x``: the
    input tokens (n, 4), every head's values t_i W_v^h and outputs x′_hi (H, n, d_v), in token units."""

    grid: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    head_outputs: np.ndarray
    cross: Heatmap
    self_: Heatmap
    kgrid: np.ndarray
    log_kernel: np.ndarray
    asymmetry: np.ndarray
    y_weights: np.ndarray
    offsets: np.ndarray
    widths: np.ndarray
    seq_x: np.ndarray
    seq_tokens: np.ndarray
    seq_values: np.ndarray
    seq_outputs: np.ndarray


def attention_view(ds: Dataset, fit: AttentionFit) -> AttentionView:
    """Chapter 4: everything the page draws from one trained layer (heatmaps thinned, in float32)."""
    grid = ds.grid(defaults.GRID_POINTS)
    keys, note = heatmap_keys(ds, ATTENTION_KEYS)
    full = attention_predict(fit, grid, ds.x, ds.y, with_weights=keys is ds)
    cross = full.weights if keys is ds else attention_predict(fit, grid, keys.x, keys.y).weights
    own = attention_predict(fit, keys.x, keys.x, keys.y)  # self-attention: queries are the points
    span = keys.span
    lo, hi = ds.domain
    kgrid = np.linspace(lo, hi, defaults.KERNEL_GRID_POINTS)
    log_k = attention_kernel(fit, kgrid)
    return AttentionView(
        grid, full.mean, full.std, full.head_outputs,
        cross=_heatmap(cross, grid, keys.x, note, Cells(PAIR_CELLS[0], SELF_SIDE, keep_cols=True)),
        self_=_heatmap(own.weights, keys.x, keys.x, note, Cells(SELF_SIDE, SELF_SIDE, panels=1)),
        kgrid=kgrid, log_kernel=log_k.astype(np.float32), y_weights=fit.readout[:, 3],
        asymmetry=np.max(np.abs(log_k - log_k.transpose(0, 2, 1)), axis=(1, 2)),
        offsets=np.mean(np.abs(own.centres - keys.x), axis=1) / span,
        widths=np.mean(own.widths, axis=1) / span,
        seq_x=np.asarray(keys.x), seq_tokens=tokens((keys.x - fit.center) / fit.scale, keys.y / fit.y_scale),
        seq_values=attention_values(fit, keys.x, keys.y), seq_outputs=own.head_vectors,
    )


@dataclass(frozen=True)
class Status:
    """How a training run went, for the page: ``level`` "warning", "info" or "note" ("" message: nothing
    to say)."""

    level: str
    message: str


def training_status(fit: FitResult | AttentionFit, span: float) -> Status:
    """The one rule for every chapter: a diverged run, then lengthscales that ran away (outside
    span × ``RUNAWAY``: a head that copies its nearest point or the mean), then a search's explanation."""
    if fit.diverged:
        return Status("warning", fit.message)
    ells = getattr(fit, "lengthscales", np.zeros(0))
    lo, hi = span * RUNAWAY[0], span * RUNAWAY[1]
    away = [h + 1 for h, ell in enumerate(ells) if not lo <= ell <= hi]
    if away:
        heads = ", ".join(map(str, away))
        which = "ℓ" if len(ells) == 1 else ngettext(
            "the lengthscales of head {heads}", "the lengthscales of heads {heads}", len(away),
        ).format(heads=heads)
        return Status("warning", _(
            "Training ran away: {which} left the range {lo:.3g} … {hi:.3g} (the data span {span:.3g} times "
            "{low:g} … {high:g}). The learning rate {rate:g} makes Adam's steps on log ℓ overshoot into a "
            "region where the loss is flat (ℓ tiny: the nearest point; ℓ huge: the mean), and the gradient "
            "cannot bring it back. Lower the learning rate."
        ).format(which=which, lo=lo, hi=hi, span=span, low=RUNAWAY[0], high=RUNAWAY[1],
                 rate=fit.learning_rate))
    if getattr(fit, "method", "") == "search":
        return Status("info", fit.message)
    return Status("note", fit.message)


# ---------------------------------------------------------------------------------------------------------
# Chapter 2: one masked-training run, the post's panels, the seed spread
# ---------------------------------------------------------------------------------------------------------


def read_off(grid: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """A curve's values at ``at``, read off it as its chart draws it: linear in log ℓ between the points of
    ``grid`` (increasing, > 0). NaN where that cannot be read: outside the grid, or beside a point whose
    value is not finite (a gap)."""
    at = np.asarray(at, dtype=np.float64)
    inside = (at >= grid[0]) & (at <= grid[-1])
    read = np.interp(np.log(np.where(inside, at, grid[0])), np.log(grid), values)
    return np.where(inside & np.isfinite(read), read, np.nan)


@dataclass(frozen=True)
class MaskedView:
    """One masked-training run as chapter 2 draws it: the ``fit`` and its ``status``; m(x), s(x) on the grid
    with the learned ℓ and m(x) with the exact optimum ``best`` (None: none); the mean loss of the last
    ``defaults.TAIL`` steps; CV(ℓ) on ``ells`` with training's ``path`` of ℓ and its CV, and the learned
    ℓ's CV (both read off the curve where it can be, ``read_off``)."""

    fit: FitResult
    status: Status
    mean: np.ndarray
    std: np.ndarray
    best: float | None
    best_mean: np.ndarray | None
    tail_loss: float
    ells: np.ndarray
    cv: np.ndarray
    path: np.ndarray
    path_cv: np.ndarray
    learned_cv: float

    @property
    def learned(self) -> float:
        return float(self.fit.lengthscales[0])

    @property
    def start(self) -> float:
        return float(self.fit.trajectory[0, 0])


@dataclass(frozen=True)
class HoldoutPanel:
    """One panel of the post's masked-training figure: the hold-out size, the ℓ learned as the post computes
    (float32, K/(ΣK + 1e-16)), the ℓ kernelviz's softmax learns from the same hold-out sets, m(x) on the
    grid with the first, and how the run went."""

    holdout: int
    lengthscale: float
    softmax_lengthscale: float
    mean: np.ndarray
    status: Status


@dataclass(frozen=True)
class SeedSpread:
    """The learned ℓ of each seed by hold-out size (``groups``), the steps each run took, and the hold-out
    sizes that were reduced to keep the panel quick (``capped``)."""

    groups: dict[str, np.ndarray]
    steps: int
    capped: tuple[int, ...]
