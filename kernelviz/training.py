"""Masked (hold-out) training of kernel lengthscales and of multi-head kernel regression.

The model (the blog post's multi-head kernel regression) predicts

    f̂(x) = Σ_h u_h m_h(x),     m_h(x) = Σ_i softmax_i(log K((x − x_i)/ℓ_h)) y_i,

with H heads (1 … ``HEADS_MAX``), lengthscales ℓ_h > 0 and mixing weights u_h, unconstrained as in the post
(they need not be positive nor sum to 1). One training step holds out ``holdout`` random points, predicts
them from the remaining points and takes an Adam step (optax) on (log ℓ_h, u_h) for the loss

    L = (1/k) Σ_{j held out} (y_j − f̂_{−held}(x_j))².

Hold-out 1 with many steps is a stochastic version of leave-one-out cross-validation; ``fit_parametric`` is
d2l's deterministic full-batch leave-one-out training of a single w = 1/ℓ.

Lengthscale convention: the Gaussian kernel is K(u) = exp(−u²/2), u = (x − x′)/ℓ. The blog post writes
exp(−((x − x′)/ℓ_post)²), so ℓ_post = √2 ℓ. Initial values follow the post, converted: one head starts at
ℓ_post = 1 (ℓ = 1/√2 ≈ 0.707), H ≥ 2 heads at ℓ_post = linspace(0.1, 3, H) (ℓ = linspace(0.1, 3, H)/√2),
u_h = 1/H. The post's data span 6 units (x ∈ [−3, 3]); for other data the initial lengthscales are scaled by
span/6, so the start is the same fraction of the data whatever its units (exactly the post's on its data).

How it stays live (``shared/DESIGN.md``, "Speed"):

* one ``jax.jit`` call per fit; the steps run inside ``lax.while_loop`` with a *dynamic* step count that
  writes into fixed-size buffers of ``STEPS_MAX`` losses and ``STEPS_MAX + 1`` trajectory rows. A
  ``lax.scan`` would need a static length (one program per step count) or would always run ``STEPS_MAX``
  steps; the while loop runs exactly ``steps`` steps, and stops at the first non-finite step (divergence)
  without a wasted iteration. The gradient is taken inside the loop body, so nothing differentiates
  through the loop;
* static shapes: the data are padded to ``bucket(n)`` with a mask and 2 … 8 heads to ``HEADS_MAX`` with
  a head mask (one head runs in a program of its own: ``head_slots``); the kernel is a traced index
  (``lax.switch`` in ``log_kernel``); learning rate, seed, hold-out size, step count and the number of
  seeds are traced. A step holds out a random subset of ``holdout`` points (``_holdout_split``: a
  counter-based hash of (seed, step), sorted) and loops over its rows in chunks, ⌊k/64⌋ of
  ``HOLDOUT_BLOCK`` = 64 rows then ⌈(k mod 64)/4⌉ of ``HOLDOUT_ROWS`` = 4 (or one more of 64 rows when
  that would be more than ``HOLDOUT_SMALL_MAX`` small ones), in ``lax.fori_loop``s with dynamic trip
  counts, summing each chunk's loss and gradient (row weights 1/k) before one Adam update; every chunk
  masks out the whole held-out set as keys. Small chunks keep hold-out 1 cheap, big ones cost less per
  row. So the compiled programs are one per (data bucket, head slots), whatever the hold-out size:
  ``fit`` and ``fit_seeds`` share it (the seeds run one after another inside), and the search below has
  one per (data bucket, head slots, kernel without a gradient);
* only the held-out rows of the kernel matrix are formed (``holdout_bucket(k)`` × n per head: 4 for
  hold-out 1, 76 for 75; never n × n);
* held-out and padded keys are masked with a large finite negative (``MASKED``), far below any log-kernel
  value a real key can take (out-of-support keys of compact kernels sit at ``OUTSIDE``). A held-out point
  whose window holds no remaining key therefore gets uniform weight over the remaining keys (their mean,
  a constant in ℓ: no gradient, never NaN) and never weight on a masked key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import Array

from kernelviz.kernels import get_kernel, kernel_index, log_kernel
from kernelviz.smoothing import bucket, in_query_blocks, loo_bounds, softmax_rows

__all__ = [
    "HEADS_MAX",
    "SEEDS_MAX",
    "STEPS_MAX",
    "TRAIN_MAX_POINTS",
    "FitResult",
    "HeadsPrediction",
    "fit",
    "fit_parametric",
    "fit_seeds",
    "holdout_bucket",
    "holdout_buckets",
    "holdout_chunks",
    "holdout_range",
    "initial_lengthscales",
    "predict_heads",
]

HEADS_MAX = 8  # 2 … 8 heads are padded to this many with a mask: the head count never recompiles
STEPS_MAX = 2000  # size of the loss and trajectory buffers; steps may be 1 … STEPS_MAX
# Above this many points training uses a random subsample of this size: the smallest padded size, so
# training on any data set runs the programs the warm-up compiled, and a slider move stays live.
TRAIN_MAX_POINTS = 256
SEEDS_MAX = 8  # fit_seeds trains up to this many seeds in one compiled call
HOLDOUT_BLOCK = 64  # a training step runs ⌊holdout/64⌋ chunks of 64 held-out rows,
HOLDOUT_ROWS = 4  # then ⌈(holdout mod 64)/4⌉ chunks of 4,
HOLDOUT_SMALL_MAX = 10  # or, when that is more than 10 chunks, one more chunk of 64 (cheaper then)
SEARCH_CHUNK_ROWS = 1  # held-out rows per chunk of the search (it scores every grid lengthscale at once)
SEARCH_GRID = 64  # lengthscales tried by the search used for kernels without a useful gradient
SEARCH_ROWS = 2000  # the search scores each lengthscale on about this many held-out predictions
OUTSIDE = -1e4  # log-kernel of an out-of-support key of a compact kernel inside training
LOG_ELL_F32 = 80.0  # log ℓ (of standardised x) is clipped here inside the float32 block
U_MAX_F32 = 1e18  # scaled distances are clipped here inside the float32 block
LOG_ELL_LIMIT = 700.0  # |log ℓ| beyond this over/underflows exp: the run counts as diverged
SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FitResult:
    """A trained (multi-head) kernel smoother and the record of its training.

    ``lengthscales`` ℓ_h and ``mixing`` u_h have shape (heads,) in the Gaussian convention K = exp(−u²/2)
    (multiply by √2 for the blog post's ℓ). ``losses[t]`` is the hold-out loss at step t (before that
    step's update), ``trajectory[t]`` the lengthscales after t updates (row 0 the start), for drawing the
    path on the leave-one-out curve. A diverged run stops at its last finite parameters: ``losses`` and
    ``trajectory`` are then *truncated* to the ``steps_run`` completed steps (``steps_run`` and
    ``steps_run + 1`` rows), so they never hold NaN. The search (below) scores ``search_sets(steps,
    holdout)`` hold-out sets, so ``steps_run`` and the lengths are that number. ``method`` is "adam",
    "search" (kernels with a zero gradient in ℓ) or "leave-one-out" (``fit_parametric``); ``message`` is a
    sentence for the page, "" when there is nothing to say.
    """

    lengthscales: np.ndarray
    mixing: np.ndarray
    losses: np.ndarray
    trajectory: np.ndarray
    method: str
    diverged: bool
    message: str
    steps_run: int
    kernel: str
    holdout: int
    learning_rate: float
    seed: int

    @property
    def heads(self) -> int:
        return int(self.lengthscales.shape[0])


@dataclass(frozen=True)
class HeadsPrediction:
    """A multi-head prediction: ``mean`` Σ_h u_h m_h (q,), its band ``std`` (q,), the heads' own
    ``head_means`` and ``head_stds`` (H, q) and their weights (H, q, n) or None."""

    mean: np.ndarray
    std: np.ndarray
    head_means: np.ndarray
    head_stds: np.ndarray
    weights: np.ndarray | None


# ---------------------------------------------------------------------------------------------------------
# Validation and set-up (plain Python / NumPy: nothing here compiles)
# ---------------------------------------------------------------------------------------------------------


def holdout_range(n: int) -> tuple[int, int]:
    """The hold-out sizes allowed for n points: 1 … n − 2 (at least two points must remain to predict from).

    For more than ``TRAIN_MAX_POINTS`` points training uses a subsample, so n is that size then.
    """
    m = min(int(n), TRAIN_MAX_POINTS)
    return 1, max(1, m - 2)


def holdout_chunks(holdout: int) -> tuple[int, int]:
    """Chunks one training step runs for a hold-out of k points: (chunks of ``HOLDOUT_BLOCK`` = 64 rows,
    chunks of ``HOLDOUT_ROWS`` = 4 rows) = (⌊k/64⌋, ⌈(k mod 64)/4⌉), or (⌊k/64⌋ + 1, 0) when the second
    count exceeds ``HOLDOUT_SMALL_MAX``."""
    k = int(holdout)
    small = -(-(k % HOLDOUT_BLOCK) // HOLDOUT_ROWS)
    if small > HOLDOUT_SMALL_MAX:
        return k // HOLDOUT_BLOCK + 1, 0
    return k // HOLDOUT_BLOCK, small


def holdout_bucket(holdout: int) -> int:
    """Kernel rows one training step computes for a hold-out of this size (the rows past it in the last
    chunk are masked)."""
    big, small = holdout_chunks(holdout)
    return big * HOLDOUT_BLOCK + small * HOLDOUT_ROWS


def holdout_buckets(n: int) -> tuple[int, ...]:
    """Compiled training programs a hold-out slider over ``holdout_range(n)`` needs, named by their chunk
    size: always one, (``HOLDOUT_ROWS``,), since the chunk counts are traced loop bounds."""
    holdout_range(n)
    return (HOLDOUT_ROWS,)


def _vector(name: str, a: object) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite numbers; found NaN or infinity")
    return arr


def _check_data(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = _vector("x", x), _vector("y", y)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same length, got {xs.shape[0]} and {ys.shape[0]}")
    if xs.shape[0] < 3:
        raise ValueError("training needs at least three points (one to hold out, two to predict from)")
    if float(np.ptp(xs)) <= 0:
        raise ValueError("training needs at least two distinct x values")
    return xs, ys


def _check_int(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, not {v}")
    return v


def _check_rate(learning_rate: object) -> float:
    lr = float(learning_rate)  # type: ignore[arg-type]
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"the learning rate must be a finite positive number, not {learning_rate!r}")
    return lr


def initial_lengthscales(heads: int, x: object | None = None) -> np.ndarray:
    """The blog post's starting lengthscales, in this package's Gaussian convention (ℓ = ℓ_post/√2).

    One head: ℓ_post = 1. H ≥ 2 heads: ℓ_post = linspace(0.1, 3, H). With data ``x`` the values are scaled
    by span(x)/6, the post's data span, so on the post's data they are exactly the post's.
    """
    h = _check_int("heads", heads, 1, HEADS_MAX)
    post = np.array([1.0]) if h == 1 else np.linspace(0.1, 3.0, h)
    scale = 1.0 if x is None else float(np.ptp(_vector("x", x))) / 6.0
    return post / SQRT2 * (scale if scale > 0 else 1.0)


@dataclass(frozen=True)
class _Prepared:
    x: np.ndarray  # padded training inputs (N,)
    xt: np.ndarray  # the same, standardised: (x − center)/span, so ℓ̃ = ℓ/span inside the compiled loop
    y: np.ndarray  # padded, divided by ``scale``
    mask: np.ndarray  # (N,) real points
    n: int
    scale: float
    span: float
    note: str  # subsampling sentence or ""


def _prepare(xs: np.ndarray, ys: np.ndarray, seed: int) -> _Prepared:
    note = ""
    n_all = xs.shape[0]
    if n_all > TRAIN_MAX_POINTS:
        pick = np.sort(np.random.default_rng(seed).choice(n_all, TRAIN_MAX_POINTS, replace=False))
        xs, ys = xs[pick], ys[pick]
        note = f"Trained on a random subsample of {TRAIN_MAX_POINTS} of the {n_all} points."
    n = xs.shape[0]
    size = bucket(n)
    top = float(np.max(np.abs(ys)))
    scale = top if top > 0 else 1.0
    xp = np.zeros(size)
    yp = np.zeros(size)
    xp[:n] = xs
    yp[:n] = ys / scale
    # padded keys sit at a real x so no distance is ever huge for a padded slot; they are masked anyway
    xp[n:] = xs[0]
    center = 0.5 * (float(np.max(xs)) + float(np.min(xs)))
    span = float(np.ptp(xs))
    return _Prepared(xp, (xp - center) / span, yp, np.arange(size) < n, n, scale, span, note)


def head_slots(heads: int) -> int:
    """Head slots a compiled training program carries for ``heads`` heads: 1 for one head, else
    ``HEADS_MAX`` (masked). One head is the common case (chapter 2, the seed spread) and costs an eighth
    of the kernel work of eight slots, for one more program per data size."""
    return 1 if heads == 1 else HEADS_MAX


def _heads_padded(values: np.ndarray, slots: int = HEADS_MAX) -> np.ndarray:
    out = np.ones(slots)
    out[: values.shape[0]] = values
    return out


# ---------------------------------------------------------------------------------------------------------
# The traced pieces
# ---------------------------------------------------------------------------------------------------------


def masked_softmax(logits: Array, available: Array) -> Array:
    """softmax over the available keys: unavailable keys get logit ``MASKED`` and so exactly zero weight.

    ``MASKED`` is half the most negative number of the logits' dtype: finite (no NaN gradient), and below
    every value a real key can take (log-kernels are ≥ −1e36 after clipping, ``OUTSIDE`` outside the
    support), so exp(MASKED − max) is exactly 0. The caller guarantees at least one available key per row,
    so every row sums to 1 and nothing is NaN.
    """
    masked = jnp.finfo(logits.dtype).min / 2
    z = jnp.where(available, logits, masked)
    top = jax.lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
    e = jnp.exp(z - top)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _scaled(log_ell: Array, d: Array) -> Array:
    """u = d/ℓ_h in float32 for every head: (H, k, n), clipped to ±``U_MAX_F32``."""
    inv = jnp.exp(-jnp.clip(log_ell, -LOG_ELL_F32, LOG_ELL_F32)).astype(jnp.float32)
    return jnp.clip(d[None, :, :] * inv[:, None, None], -U_MAX_F32, U_MAX_F32)


@jax.custom_vjp
def _nw_rows(log_ell: Array, d: Array, y: Array, available: Array, kernel: Array) -> Array:
    """m_h(x_j) = Σ_i w_hji y_i, w_hj = softmax over the available keys of log K(d_ji/ℓ_h): (H, k).

    A custom VJP keeps the backward pass to one fused sweep: with g = ∂L/∂m,

        ∂L/∂log ℓ_h = Σ_{j,i} g_hj w_hji (y_i − m_hj) · ∂ log K(u)/∂u · (−u_hji),

    the last factor a forward-mode derivative of the log-kernel (0 outside a compact support, where u is
    clipped, and on masked keys, whose weight is 0).
    """
    return _nw_rows_value(log_ell, d, y, available, kernel)


def _nw_rows_value(log_ell, d, y, available, kernel):
    w = masked_softmax(log_kernel(_scaled(log_ell, d), kernel, OUTSIDE), available)
    return w @ y


def _nw_rows_fwd(log_ell, d, y, available, kernel):
    """The value, and for the backward pass the weights and the slope ∂ log K/∂u · (−u), taken in the same
    sweep (one forward-mode evaluation of the log-kernel) so the backward pass recomputes nothing."""
    u = _scaled(log_ell, d)
    log_k, slope = jax.jvp(lambda v: log_kernel(v, kernel, OUTSIDE), (u,), (-u,))
    w = masked_softmax(log_k, available)
    m = w @ y
    return m, (log_ell, y, w, m, slope)


def _nw_rows_bwd(res, g):
    log_ell, y, w, m, slope = res
    coef = g.astype(jnp.float32)[:, :, None] * w * (y[None, None, :] - m[:, :, None])
    grad = jnp.sum(coef * slope, axis=(1, 2)).astype(log_ell.dtype)
    inside = jnp.abs(log_ell) < LOG_ELL_F32
    return jnp.where(inside, grad, 0.0), None, None, None, None


_nw_rows.defvjp(_nw_rows_fwd, _nw_rows_bwd)


def _head_predictions(
    log_ell: Array, xq: Array, x: Array, y: Array, available: Array, kernel: Array
) -> Array:
    """m_h(x_j) for every head h and query row j: (H, k).

    The (H, k, n) block, the only large one, runs in float32 (exp is several times faster than in float64
    on CPU); parameters, optimiser state and losses stay float64. Inputs are standardised, scaled
    distances are clipped to ±1e18 (u² stays finite in float32) and log ℓ to ±``LOG_ELL_F32``: beyond
    that every weight is already 0/1 or uniform, and the gradient there is 0, never NaN.
    """
    d = xq.astype(jnp.float32)[:, None] - x.astype(jnp.float32)[None, :]
    if isinstance(kernel, str):  # a static kernel (the search): nothing is differentiated
        return _nw_rows_value(log_ell, d, y.astype(jnp.float32), available, kernel).astype(jnp.float64)
    return _nw_rows(log_ell, d, y.astype(jnp.float32), available, kernel).astype(jnp.float64)


def _mixture_loss(params, xq, yq, row_weight, x, y, available, head_mask, kernel):
    log_ell, u = params
    m = _head_predictions(log_ell, xq, x, y, available, kernel)
    pred = (u * head_mask) @ m
    return jnp.sum(row_weight * jnp.square(pred - yq))


_GOLDEN = 0x9E3779B9  # odd, so i ↦ b + i·_GOLDEN is a bijection of the 32-bit integers
_STEP_SALT = 0x632BE5AB


def _mix32(v: Array) -> Array:
    """A bijective hash of 32-bit unsigned integers (the xorshift-multiply finaliser "lowbias32")."""
    v = v ^ (v >> 16)
    v = v * jnp.uint32(0x7FEB352D)
    v = v ^ (v >> 15)
    v = v * jnp.uint32(0x846CA68B)
    return v ^ (v >> 16)


def _seed_word(seed: int) -> np.uint32:
    """A seed as the 32-bit word the compiled programs take (seeds equal mod 2³² draw the same sets)."""
    return np.uint32(int(seed) % 2**32)


def _holdout_split(seed: Array, step: Array, mask: Array, holdout: Array) -> tuple[Array, Array]:
    """Step ``step``'s random hold-out set: an order of the slots with the held-out points first, and the
    keys left available.

    Slot i gets the 32-bit number r_i = mix(b + i·φ) with b = mix(seed ⊕ mix(step + salt)), ``_mix32`` a
    bijection and φ odd, so the r_i of one step are distinct: sorting the real points by r_i (padded slots
    after them) is a uniformly random order, and its first ``holdout`` entries a uniformly random subset
    of ``holdout`` real points. A counter-based hash, not ``jax.random``: the same sets for the same
    (seed, step) in every program, and far less to compile than threefry and ``top_k``. Returns (order
    (N,) int32, available (N,) = real and not held out).
    """
    size = mask.shape[0]
    base = _mix32(seed.astype(jnp.uint32) ^ _mix32(step.astype(jnp.uint32) + jnp.uint32(_STEP_SALT)))
    r = _mix32(base + jnp.arange(size, dtype=jnp.uint32) * jnp.uint32(_GOLDEN))
    keys = r.astype(jnp.float64) + jnp.where(mask, 0.0, 2.0**32)  # padded slots sort last
    ranked, order = jax.lax.sort_key_val(keys, jnp.arange(size, dtype=jnp.int32))
    held = keys <= ranked[holdout - 1]
    return order, mask & ~held


def _chunked_sum(fn, order: Array, holdout: Array, zero, rows: int = HOLDOUT_ROWS, big: int = HOLDOUT_BLOCK):
    """Σ_c fn(idx_c, w_c) over chunks of held-out rows: idx_c = consecutive entries of ``order``,
    w_c = 1/holdout on held-out rows and 0 on the padded rest.

    First ⌊holdout/big⌋ chunks of ``big`` rows, then ⌈(holdout mod big)/rows⌉ chunks of ``rows`` rows,
    or one more big chunk instead when that would be more than ``HOLDOUT_SMALL_MAX`` small ones
    (``big=0``: only small chunks). ``fori_loop``s with dynamic trip counts, so one program serves every
    hold-out size at a cost that grows with it (never n rows of the kernel matrix for a small hold-out),
    and large hold-outs run mostly in big chunks, which cost less per row. The held-out set (masked out
    as keys inside ``fn``) is the same for every chunk of a step.
    """
    inv = 1.0 / holdout
    padded = jnp.concatenate([order, jnp.zeros(max(rows, big), order.dtype)])

    def chunks(first, count, size, acc):
        offsets = jnp.arange(size)

        def body(c, acc):
            start = first + c * size
            idx = jax.lax.dynamic_slice(padded, (start,), (size,))
            return jax.tree.map(jnp.add, acc, fn(idx, jnp.where(start + offsets < holdout, inv, 0.0)))

        return jax.lax.fori_loop(0, count, body, acc)

    if not big:
        return chunks(0, (holdout + rows - 1) // rows, rows, zero)
    small = (holdout % big + rows - 1) // rows
    extra = small > HOLDOUT_SMALL_MAX  # one more (masked) big chunk is cheaper than this many small ones
    n_big = holdout // big + extra.astype(holdout.dtype)
    acc = chunks(0, n_big, big, zero)
    return chunks(n_big * big, jnp.where(extra, 0, small), rows, acc)


def _each_seed(run, seeds: Array, n_seeds: Array):
    """``run(seed)`` for the first ``n_seeds`` of ``seeds``, one after another inside the program; the
    results are stacked on a leading (len(seeds),) axis (rows past ``n_seeds`` stay 0).

    One program serves ``fit`` (one seed, no extra work) and ``fit_seeds`` (up to ``SEEDS_MAX``).
    """
    shapes = jax.eval_shape(run, seeds[0])
    bufs0 = jax.tree.map(lambda s: jnp.zeros((seeds.shape[0], *s.shape), s.dtype), shapes)

    def body(k, bufs):
        return jax.tree.map(lambda b, o: b.at[k].set(o), bufs, run(seeds[k]))

    return jax.lax.fori_loop(0, n_seeds, body, bufs0)


def _finite_params(log_ell: Array, u: Array) -> Array:
    return jnp.all(jnp.abs(log_ell) < LOG_ELL_LIMIT) & jnp.all(jnp.isfinite(u))


def _adam_loop(x, y, mask, head_mask, log_ell0, u0, kernel, holdout, steps, learning_rate, seed):
    """Masked training: ``steps`` Adam steps in one while loop, stopping early at a non-finite step.

    Step i's loss and gradient are summed over the chunks of its hold-out set (``_chunked_sum``), then one
    Adam update is taken.
    """
    opt = optax.adam(learning_rate)
    params0 = (log_ell0, u0)
    state0 = opt.init(params0)
    losses0 = jnp.zeros(STEPS_MAX)
    traj0 = jnp.zeros((STEPS_MAX + 1, log_ell0.shape[0])).at[0].set(jnp.exp(log_ell0))
    grad_fn = jax.value_and_grad(_mixture_loss)
    zero = (jnp.zeros(()), jax.tree.map(jnp.zeros_like, params0))

    def cond(c):
        i, ok = c[0], c[1]
        return (i < steps) & ok

    def body(c):
        i, _, params, state, losses, traj = c
        order, available = _holdout_split(seed, i, mask, holdout)

        def rows_loss(idx, row_weight):
            return grad_fn(params, x[idx], y[idx], row_weight, x, y, available, head_mask, kernel)

        loss, grads = _chunked_sum(rows_loss, order, holdout, zero)
        grads = (grads[0] * head_mask, grads[1] * head_mask)
        updates, new_state = opt.update(grads, state, params)
        new = optax.apply_updates(params, updates)
        good = (
            jnp.isfinite(loss)
            & jnp.all(jnp.isfinite(grads[0]))
            & jnp.all(jnp.isfinite(grads[1]))
            & _finite_params(*new)
        )
        params = jax.tree.map(lambda a, b: jnp.where(good, a, b), new, params)
        state = jax.tree.map(lambda a, b: jnp.where(good, a, b), new_state, state)
        losses = losses.at[i].set(jnp.where(good, loss, 0.0))
        traj = traj.at[i + 1].set(jnp.where(good, jnp.exp(params[0]), 0.0))
        return i + good.astype(i.dtype), good, params, state, losses, traj

    init = (jnp.asarray(0, jnp.int32), jnp.asarray(True), params0, state0, losses0, traj0)
    steps_run, ok, (log_ell, u), _, losses, traj = jax.lax.while_loop(cond, body, init)
    return jnp.exp(log_ell), u, losses, traj, steps_run, ~ok


def _search_loop(x, y, mask, head_mask, log_ell0, u0, holdout, steps, grid, seed, kernel):
    """Search over a common scale of the lengthscales on the same random hold-out sets, loss averaged.

    Grid point g uses ℓ_h = grid_g · ℓ_h(0)/ℓ_1(0). Step t draws the hold-out set Adam's step t would draw
    (same seed, same split), adds each grid point's loss to a running sum, and records the running best.
    ``steps`` here is ``search_sets(steps, holdout)``; ``kernel`` is a (static) kernel name.
    """
    ladder = log_ell0 - log_ell0[0]
    log_grid = jnp.log(grid)[:, None] + ladder[None, :]  # (G, H)

    def cond(c):
        return c[0] < steps

    def body(c):
        i, total, losses, traj = c
        order, available = _holdout_split(seed, i, mask, holdout)

        def rows_loss(idx, row_weight):
            xq, yq = x[idx], y[idx]

            def one(le):
                return _mixture_loss((le, u0), xq, yq, row_weight, x, y, available, head_mask, kernel)

            return jax.vmap(one)(log_grid)  # every grid point at once: a (G, H, 1, n) block

        per = _chunked_sum(rows_loss, order, holdout, jnp.zeros(grid.shape[0]), SEARCH_CHUNK_ROWS, 0)
        total = total + per
        best = jnp.argmin(total)
        losses = losses.at[i].set(per[best])
        traj = traj.at[i + 1].set(jnp.exp(log_grid[best]))
        return i + 1, total, losses, traj

    init = (
        jnp.asarray(0, jnp.int32),
        jnp.zeros(grid.shape[0]),
        jnp.zeros(STEPS_MAX),
        jnp.zeros((STEPS_MAX + 1, log_ell0.shape[0])).at[0].set(jnp.exp(log_ell0)),
    )
    steps_run, total, losses, traj = jax.lax.while_loop(cond, body, init)
    best = jnp.argmin(total)
    return jnp.exp(log_grid[best]), u0, losses, traj, steps_run, jnp.asarray(False)


@jax.jit
def _adam_run(x, y, mask, head_mask, log_ell0, u0, kernel, holdout, steps, learning_rate, seeds, n_seeds):
    """``_adam_loop`` for each of the first ``n_seeds`` seeds: one program per (data size, head slots)."""
    def run(seed):
        return _adam_loop(x, y, mask, head_mask, log_ell0, u0, kernel, holdout, steps, learning_rate, seed)

    return _each_seed(run, seeds, n_seeds)


@partial(jax.jit, static_argnames=("kernel",))
def _search_run(x, y, mask, head_mask, log_ell0, u0, holdout, steps, grid, seeds, n_seeds, kernel):
    """``_search_loop`` for each of the first ``n_seeds`` seeds: one program per (data size, kernel)."""
    def run(seed):
        return _search_loop(x, y, mask, head_mask, log_ell0, u0, holdout, steps, grid, seed, kernel)

    return _each_seed(run, seeds, n_seeds)


# ---------------------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------------------


def _search_grid(prep: _Prepared) -> np.ndarray:
    """``SEARCH_GRID`` log-spaced lengthscales over ``loo_bounds``, in standardised units."""
    lo, hi = loo_bounds(prep.x[: prep.n])
    return np.geomspace(lo, hi, SEARCH_GRID) / prep.span


def _result(out, i: int | None, heads: int, prep: _Prepared, method: str, kernel: str, holdout: int,
            learning_rate: float, seed: int, steps: int, extra: str) -> FitResult:
    ell, u, losses, traj, steps_run, diverged = (
        np.asarray(a) if i is None else np.asarray(a)[i] for a in out
    )
    run = int(steps_run)
    bad = bool(diverged)
    sentences = [s for s in (extra, prep.note) if s]
    if bad:
        sentences.insert(0, (
            f"Training diverged at step {run + 1} of {steps} (the learning rate {learning_rate:g} is too "
            f"high for this loss); the fit stops at the last finite parameters, after {run} steps."
        ))
    return FitResult(
        lengthscales=np.array(ell[:heads]) * prep.span,
        mixing=np.array(u[:heads]),
        losses=np.array(losses[:run]) * prep.scale**2,
        trajectory=np.array(traj[: run + 1, :heads]) * prep.span,
        method=method,
        diverged=bad,
        message=" ".join(sentences),
        steps_run=run,
        kernel=kernel,
        holdout=holdout,
        learning_rate=learning_rate,
        seed=seed,
    )


def search_sets(steps: int, holdout: int) -> int:
    """Hold-out sets the search scores: the first min(steps, ⌈SEARCH_ROWS/holdout⌉) of the run's sets.

    Every set costs ``SEARCH_GRID`` predictions per held-out point, so the search stops at about
    ``SEARCH_ROWS`` held-out predictions per lengthscale (1,000 sets of 1 point, 200 of 10, 27 of 75).
    """
    return max(1, min(int(steps), -(-SEARCH_ROWS // int(holdout))))


def _search_message(kernel: str, heads: int, sets: int) -> str:
    label = get_kernel(kernel).label
    text = (
        f"The {label} kernel's loss is flat in ℓ almost everywhere (its gradient is zero), so ℓ was chosen "
        f"by a search over {SEARCH_GRID} lengthscales, each scored on the same {sets} random hold-out sets "
        "(loss averaged)."
    )
    if heads > 1:
        text += " With several heads the search scales the starting lengthscales together; u_h stay 1/H."
    return text


def _setup(x, y, heads, kernel, holdout, steps, learning_rate, seed):
    k = get_kernel(kernel)
    xs, ys = _check_data(x, y)
    h = _check_int("heads", heads, 1, HEADS_MAX)
    st = _check_int("steps", steps, 1, STEPS_MAX)
    lo, hi = holdout_range(xs.shape[0])
    ho = _check_int("holdout", holdout, lo, hi)
    lr = _check_rate(learning_rate)
    prep = _prepare(xs, ys, 0 if seed is None else int(seed))
    ell0 = initial_lengthscales(h, prep.x[: prep.n])
    slots = head_slots(h)
    head_mask = (np.arange(slots) < h).astype(np.float64)
    log_ell0 = np.log(_heads_padded(ell0, slots) / prep.span)  # standardised units
    u0 = np.where(head_mask > 0, 1.0 / h, 0.0)
    return k, xs, h, st, ho, lr, prep, ell0, head_mask, log_ell0, u0


def _train(x, y, seeds: list[int], heads, kernel, holdout, steps, learning_rate) -> list[FitResult]:
    """The compiled training run behind ``fit`` and ``fit_seeds``: one FitResult per seed."""
    k, _, h, st, ho, lr, prep, _, head_mask, log_ell0, u0 = _setup(
        x, y, heads, kernel, holdout, steps, learning_rate, seeds[0]
    )
    words = np.array([_seed_word(s) for s in seeds] + [_seed_word(seeds[0])] * (SEEDS_MAX - len(seeds)))
    common = (prep.xt, prep.y, prep.mask, head_mask, log_ell0, u0)
    if k.differentiable:
        out = _adam_run(*common, kernel_index(kernel), ho, st, lr, words, len(seeds))
        method, extra, shown = "adam", "", st
    else:
        sets = search_sets(st, ho)
        out = _search_run(*common, ho, sets, _search_grid(prep), words, len(seeds), kernel=k.name)
        method, extra, shown = "search", _search_message(k.name, h, sets), sets
    out = tuple(np.asarray(a) for a in out)
    return [_result(out, i, h, prep, method, k.name, ho, lr, s, shown, extra) for i, s in enumerate(seeds)]


def fit(
    x: object,
    y: object,
    heads: int = 1,
    kernel: str = "gaussian",
    holdout: int = 1,
    steps: int = 1000,
    learning_rate: float = 0.2,
    seed: int = 0,
) -> FitResult:
    """Masked training of H-head kernel regression f̂(x) = Σ_h u_h m_h(x) (see the module docstring).

    Each of ``steps`` steps holds out ``holdout`` random points (1 … n − 2) and predicts them from the rest;
    Adam (``learning_rate``) moves log ℓ_h and u_h down the hold-out squared error. Kernels whose gradient
    in ℓ is zero almost everywhere (``get_kernel(kernel).differentiable is False``: the boxcar) are fitted by
    a search over ℓ on the same hold-out sets instead (``method="search"``). One compiled call.
    """
    return _train(x, y, [int(seed)], heads, kernel, holdout, steps, learning_rate)[0]


def fit_seeds(
    x: object,
    y: object,
    seeds: Sequence[int],
    heads: int = 1,
    kernel: str = "gaussian",
    holdout: int = 1,
    steps: int = 1000,
    learning_rate: float = 0.2,
) -> list[FitResult]:
    """``fit`` for several seeds (1 … ``SEEDS_MAX``) in one compiled call; one FitResult per seed.

    The seeds run one after another inside the program ``fit`` uses (``fit(seed=s)`` gives the same
    result), so their number never recompiles and the time grows with it. With more than
    ``TRAIN_MAX_POINTS`` points every seed trains on the subsample drawn for the first seed.
    """
    seed_list = [int(s) for s in seeds]
    if not 1 <= len(seed_list) <= SEEDS_MAX:
        raise ValueError(f"give between 1 and {SEEDS_MAX} seeds, not {len(seed_list)}")
    return _train(x, y, seed_list, heads, kernel, holdout, steps, learning_rate)


# ---------------------------------------------------------------------------------------------------------
# d2l's parametric attention pooling: one learnable w = 1/ℓ, trained leave-one-out, full batch
# ---------------------------------------------------------------------------------------------------------


def _loo_loss(w, x, y, mask, n, kernel):
    """(1/n) Σ_i (y_i − Σ_{j≠i} softmax_j(log K((x_i − x_j) w)) y_j)²: every row predicted from the others."""
    available = mask[None, :] & mask[:, None] & ~jnp.eye(x.shape[0], dtype=bool)
    u = (x[:, None] - x[None, :]) * w
    wts = masked_softmax(log_kernel(u, kernel, OUTSIDE), available)
    err = jnp.where(mask, jnp.square(wts @ y - y), 0.0)
    return jnp.sum(err) / n


def _inverse_w(w):
    return 1.0 / jnp.maximum(jnp.abs(w), 1e-300)


@jax.jit
def _parametric_loop(x, y, mask, n, w0, kernel, steps, learning_rate):
    opt = optax.adam(learning_rate)
    state0 = opt.init(w0)
    grad_fn = jax.value_and_grad(_loo_loss)

    def cond(c):
        return (c[0] < steps) & c[1]

    def body(c):
        i, _, w, state, losses, traj = c
        loss, g = grad_fn(w, x, y, mask, n, kernel)
        updates, new_state = opt.update(g, state, w)
        new = optax.apply_updates(w, updates)
        good = jnp.isfinite(loss) & jnp.isfinite(g) & jnp.isfinite(new) & (jnp.abs(new) < 1e300)
        w = jnp.where(good, new, w)
        state = jax.tree.map(lambda a, b: jnp.where(good, a, b), new_state, state)
        losses = losses.at[i].set(jnp.where(good, loss, 0.0))
        traj = traj.at[i + 1].set(jnp.where(good, _inverse_w(w), 0.0))
        return i + good.astype(i.dtype), good, w, state, losses, traj

    init = (
        jnp.asarray(0, jnp.int32),
        jnp.asarray(True),
        w0,
        state0,
        jnp.zeros(STEPS_MAX),
        jnp.zeros(STEPS_MAX + 1).at[0].set(_inverse_w(w0)),
    )
    steps_run, ok, w, _, losses, traj = jax.lax.while_loop(cond, body, init)
    return w, losses, traj, steps_run, ~ok


def fit_parametric(
    x: object,
    y: object,
    kernel: str = "gaussian",
    steps: int = 200,
    learning_rate: float = 0.1,
    w0: float = 1.0,
) -> FitResult:
    """d2l's parametric attention pooling f(x) = Σ_i softmax_i(log K((x − x_i) w)) y_i with one learnable w.

    w plays 1/ℓ (ℓ = 1/|w|), starts at ``w0`` and is trained by Adam on the deterministic, full-batch
    leave-one-out loss (1/n) Σ_i (y_i − f_{−i}(x_i))² (d2l: each training input is predicted from the
    key-value pairs of all the other examples), ``steps`` steps in one compiled call. ``method`` is
    "leave-one-out"; ``holdout`` is 1 and ``seed`` 0 (nothing is random). Data above
    ``TRAIN_MAX_POINTS`` points use a random subsample.
    """
    k = get_kernel(kernel)
    xs, ys = _check_data(x, y)
    st = _check_int("steps", steps, 1, STEPS_MAX)
    lr = _check_rate(learning_rate)
    w_start = float(w0)
    if not (math.isfinite(w_start) and w_start != 0):
        raise ValueError(f"w0 must be a finite non-zero number, not {w0!r}")
    prep = _prepare(xs, ys, 0)
    w, losses, traj, steps_run, diverged = (
        np.asarray(a)
        for a in _parametric_loop(
            prep.x, prep.y, prep.mask, float(prep.n), w_start, kernel_index(kernel), st, lr
        )
    )
    run = int(steps_run)
    sentences = []
    if bool(diverged):
        sentences.append(
            f"Training diverged at step {run + 1} of {st} (the learning rate {lr:g} is too high for this "
            f"loss); the fit stops at the last finite w, after {run} steps."
        )
    if not k.differentiable:
        sentences.append(
            f"The {k.label} kernel's loss is flat in w almost everywhere (its gradient is zero), so w stays "
            "where it starts; the hold-out fit searches ℓ instead."
        )
    if prep.note:
        sentences.append(prep.note)
    return FitResult(
        lengthscales=np.array([1.0 / max(abs(float(w)), 1e-300)]),  # ℓ = 1/|w| in NumPy: no eager programs
        mixing=np.array([1.0]),
        losses=np.array(losses[:run]) * prep.scale**2,
        trajectory=np.array(traj[: run + 1]).reshape(-1, 1),
        method="leave-one-out",
        diverged=bool(diverged),
        message=" ".join(sentences),
        steps_run=run,
        kernel=k.name,
        holdout=1,
        learning_rate=lr,
        seed=0,
    )


# ---------------------------------------------------------------------------------------------------------
# Prediction with a fitted multi-head model
# ---------------------------------------------------------------------------------------------------------


HEADS_QUERY_BLOCK = 64  # queries per block of a multi-head prediction (temporaries H × 64 × n)


def mixture_moments(w: Array, values: Array, mixing: Array, pool: Array) -> tuple[Array, ...]:
    """Moments of a mixture of heads with weights ``w`` (H, q, n) over ``values`` (n,):

        m_h = Σ_i w_hi y_i,   v_h = Σ_i w_hi (y_i − m_h)²,   m = Σ_h u_h m_h,   v = Σ_i w̄_i (y_i − m)²

    with w̄ = Σ_h pool_h w_h the pooled weights. Returns (m (q,), v (q,), m_h (H, q), v_h (H, q)).
    """
    head_means = w @ values
    head_var = jnp.sum(w * jnp.square(values[None, None, :] - head_means[..., None]), axis=-1)
    mean = mixing @ head_means
    pooled = jnp.einsum("h,hqn->qn", pool, w)
    var = jnp.sum(pooled * jnp.square(values[None, :] - mean[:, None]), axis=-1)
    return mean, var, head_means, head_var


@partial(jax.jit, static_argnames=("with_weights",))
def _heads_dense(queries, keys, values, key_mask, lengthscales, mixing, head_mask, kernel, with_weights=True):
    """Per-head NW weights (H, q, n) (when ``with_weights``), head means/stds (H, q), the mixture mean and
    band (q,); computed in blocks of ``HEADS_QUERY_BLOCK`` queries."""
    active = head_mask * (mixing != 0)
    absu = jnp.abs(mixing) * head_mask
    total = jnp.sum(absu)
    pool = absu / jnp.where(total > 0, total, 1.0)

    def block(qb):
        u = (qb[None, :, None] - keys[None, None, :]) / lengthscales[:, None, None]
        logits = jnp.where(key_mask[None, None, :], log_kernel(u, kernel), -jnp.inf)
        w = softmax_rows(logits)  # empty windows: a zero row
        empty = jnp.sum(w, axis=-1) <= 0  # (H, q)
        mean, var, head_means, head_var = mixture_moments(w, values, mixing * head_mask, pool)
        out = (mean, var, empty, head_means, head_var)
        return (*out, w) if with_weights else out

    axes = (0, 0, 1, 1, 1, 1) if with_weights else (0, 0, 1, 1, 1)
    mean, var, empty, head_means, head_var, *w = in_query_blocks(block, queries, HEADS_QUERY_BLOCK, axes)
    missing = jnp.any(empty & (active[:, None] > 0), axis=0)
    nan = jnp.nan
    return (
        jnp.where(missing | (total <= 0), nan, mean),
        jnp.where(missing | (total <= 0), nan, jnp.sqrt(jnp.maximum(var, 0.0))),
        jnp.where(empty, nan, head_means),
        jnp.where(empty, nan, jnp.sqrt(jnp.maximum(head_var, 0.0))),
        (w or [None])[0],
    )


def predict_heads(
    queries: object,
    x: object,
    y: object,
    lengthscales: object,
    mixing: object,
    kernel: str = "gaussian",
    with_weights: bool = True,
) -> HeadsPrediction:
    """Multi-head kernel regression at ``queries``: mean(x) = Σ_h u_h m_h(x) with a local band.

    Each head is a Nadaraya–Watson smoother m_h with weights w_h(x) (rows sum to 1). Because u_h may be
    negative, the band uses the pooled weights w̄_i(x) = Σ_h |u_h| w_hi(x) / Σ_h |u_h| (non-negative, summing
    to 1; equal to Σ_h u_h w_h when every u_h ≥ 0 and Σ u_h = 1):

        s²(x) = Σ_i w̄_i(x) (y_i − mean(x))²,

    always finite and ≥ 0. Where a head with u_h ≠ 0 has an empty window (compact kernels) the mixture's
    mean and std are NaN, like the head's own; its weight row is zero. ``weights`` is (H, q, n), or None
    with ``with_weights=False`` (then no (H, q, n) array is returned; queries run in blocks either way).
    """
    k = get_kernel(kernel)
    q = _vector("queries", queries)
    xs, ys = _vector("x", x), _vector("y", y)
    if xs.shape != ys.shape or xs.shape[0] == 0:
        raise ValueError("x and y must be non-empty and of the same length")
    ell = _vector("lengthscales", lengthscales)
    u = _vector("mixing", mixing)
    h = ell.shape[0]
    if not 1 <= h <= HEADS_MAX or u.shape != ell.shape:
        raise ValueError(f"give 1 … {HEADS_MAX} lengthscales and as many mixing weights")
    if not np.all(ell > 0):
        raise ValueError("lengthscales must be positive")
    nq, n = q.shape[0], xs.shape[0]
    qp, kp = bucket(nq), bucket(n)
    top = float(np.max(np.abs(ys)))
    scale = top if top > 0 else 1.0
    qpad = np.zeros(qp)
    qpad[:nq] = q
    xp = np.full(kp, xs[0])
    xp[:n] = xs
    yp = np.zeros(kp)
    yp[:n] = ys / scale
    head_mask = (np.arange(HEADS_MAX) < h).astype(np.float64)
    mix = np.zeros(HEADS_MAX)
    mix[:h] = u
    mean, std, hm, hs, w = _heads_dense(
        qpad, xp, yp, np.arange(kp) < n, _heads_padded(ell), mix, head_mask, kernel_index(k.name),
        with_weights=bool(with_weights),
    )
    return HeadsPrediction(
        mean=np.asarray(mean)[:nq] * scale,
        std=np.asarray(std)[:nq] * scale,
        head_means=np.asarray(hm)[:h, :nq] * scale,
        head_stds=np.asarray(hs)[:h, :nq] * scale,
        weights=None if w is None else np.array(np.asarray(w)[:h, :nq, :n]),
    )
