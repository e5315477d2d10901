"""The data sets: the :class:`Dataset` every page draws, the seed sets and the training subsample.

Every data set the dashboard shows is a :class:`Dataset`: finite float64 arrays ``x`` and ``y`` sorted by
``x``, plus what a page needs to explain them (labels, where the data come from, what loading did).

Synthetic sets (reproducible from ``(n, seed)``):

* ``blog`` (the blog post "From kernel regression to the transformer"): heteroskedastic noise,

      f(x) = 0.5 sin x − sin 3x + 0.2 x²,   n(x) = 0.2 + 0.05 |x|,   y = f(x) + n(x) ε,  ε ~ N(0, 1),

  on x = linspace(−3, 3, n), ε from JAX's PRNGKey(seed) as the post draws it (``kernelviz.data.post``).
* ``d2l`` (Dive into Deep Learning, "Nadaraya-Watson kernel regression"):

      f(x) = 2 sin x + x^0.8,   n(x) = 0.5,   x ~ U[0, 5] (n points, sorted).

User data (a CSV file, or two arrays) become a :class:`Dataset` in kernelviz/data/csvfile.py. Anything wrong
with an input raises :class:`DataError`, a ``ValueError`` whose message says what is wrong and how to fix it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from kernelviz.runtime import serve
from kernelviz.runtime.i18n import _
from kernelviz.runtime.jax_setup import float64

__all__ = [
    "DATASETS", "MAX_ABS_VALUE", "MAX_SYNTHETIC_POINTS", "MIN_POINTS", "DataError", "Dataset",
    "SyntheticDataset", "blog_data", "blog_mean", "blog_noise_sd", "d2l_data", "d2l_mean", "d2l_noise_sd",
    "make_dataset", "subsample",
]

# ----------------------------------------------------------------------------------------------- limits

#: Largest |x| or |y| accepted: (1e150)² = 1e300 is still finite in float64 (max ≈ 1.8e308).
MAX_ABS_VALUE: float = 1e150
#: Fewest usable points a data set may have.
MIN_POINTS: int = 3
#: Most points a synthetic data set may have.
MAX_SYNTHETIC_POINTS: int = 5000


class DataError(ValueError):
    """Input that cannot become a data set; the message says what is wrong and how to fix it."""


# ---------------------------------------------------------------------------------------------- Dataset


@dataclass(frozen=True, eq=False)
class Dataset:
    """One-dimensional regression data, ready for the smoother.

    ``x`` and ``y`` are read-only float64 arrays of equal length (at least 3), finite, sorted by ``x``,
    with every |value| ≤ 1e150 and ``x`` not constant. ``true_mean`` and ``noise_sd`` are the generating
    f(x) and n(x) of a synthetic set (so the true band is f(x) ± 2 n(x)); both are ``None`` for user data.
    ``notes`` are sentences for the reader about what loading did; ``columns`` the numeric columns of a
    CSV (``()`` otherwise); ``n_rows_read`` the data rows read before any were dropped. ``x_support`` is
    the interval where the generating process is defined; :meth:`grid` never leaves it.
    """

    name: str
    title: str
    x: np.ndarray
    y: np.ndarray
    true_mean: Callable[[np.ndarray], np.ndarray] | None
    noise_sd: Callable[[np.ndarray], np.ndarray] | None
    x_label: str
    y_label: str
    source: str
    notes: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    n_rows_read: int = 0
    x_support: tuple[float, float] = (-math.inf, math.inf)

    def __post_init__(self) -> None:
        x = np.array(self.x, dtype=np.float64, copy=True)
        y = np.array(self.y, dtype=np.float64, copy=True)
        if x.ndim != 1 or x.shape != y.shape:
            raise DataError(_("x and y must be 1-D arrays of the same length; got shapes {x_shape} and "
                              "{y_shape}.").format(x_shape=x.shape, y_shape=y.shape))
        x.flags.writeable = False
        y.flags.writeable = False
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        object.__setattr__(self, "columns", tuple(str(c) for c in self.columns))

    def __len__(self) -> int:
        return int(self.x.shape[0])

    @property
    def domain(self) -> tuple[float, float]:
        """(min x, max x) of the data."""
        return float(self.x[0]), float(self.x[-1])

    @property
    def span(self) -> float:
        """max x − min x, the width of the domain (in units of x)."""
        lo, hi = self.domain
        return hi - lo

    def grid(self, num: int = 256) -> np.ndarray:
        """``num`` evenly spaced query points over the domain padded by 5% of its width on each side.

        lo − 0.05 (hi − lo) … hi + 0.05 (hi − lo), clipped to ``x_support``.
        """
        num = _as_int(num, _("The number of grid points"))
        if num < 2:
            raise DataError(_("The grid needs at least 2 points; got {num}.").format(num=num))
        lo, hi = self.domain
        pad = 0.05 * (hi - lo)
        start = max(lo - pad, self.x_support[0])
        stop = min(hi + pad, self.x_support[1])
        return np.linspace(start, stop, num)


# ------------------------------------------------------------------------------------ synthetic data sets


def blog_mean(x: np.ndarray) -> np.ndarray:
    """f(x) = 0.5 sin x − sin 3x + 0.2 x² (the blog post's true mean)."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * np.sin(x) - np.sin(3.0 * x) + 0.2 * x * x


def blog_noise_sd(x: np.ndarray) -> np.ndarray:
    """n(x) = 0.2 + 0.05 |x| (the blog post's heteroskedastic noise standard deviation)."""
    x = np.asarray(x, dtype=np.float64)
    return 0.2 + 0.05 * np.abs(x)


def d2l_mean(x: np.ndarray) -> np.ndarray:
    """f(x) = 2 sin x + x^0.8 (d2l's true mean); NaN for x < 0, where x^0.8 is not real."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x >= 0.0, 2.0 * np.sin(x) + np.abs(x) ** 0.8, np.nan)


def d2l_noise_sd(x: np.ndarray) -> np.ndarray:
    """n(x) = 0.5 (d2l's homoskedastic noise standard deviation)."""
    x = np.asarray(x, dtype=np.float64)
    return np.full_like(x, 0.5)


@float64
def blog_data(n: int = 150, seed: int = 2024) -> Dataset:
    """The blog post's heteroskedastic set, drawn as the post draws it: x = linspace(−3, 3, n),
    y = f(x) + n(x) ε in float32.

    f(x) = 0.5 sin x − sin 3x + 0.2 x², n(x) = 0.2 + 0.05 |x|, ε = ``random.normal(subkey, (n,))`` after
    ``key, subkey = random.split(random.PRNGKey(seed))`` (``kernelviz.data.post.noise``). n = 150 and seed
    2024 give the post's own sample, value for value.
    """
    n, seed = _check_n(n), _check_seed(seed)
    x, y = _post_sample(n, seed)
    return _synthetic(
        "blog",
        x,
        y,
        (blog_mean, blog_noise_sd),
        source=_("Blog post “From kernel regression to the transformer”."),
        notes=_blog_notes(n, seed),
    )


def _blog_notes(n: int, seed: int) -> tuple[str, str]:
    """What the blog set's sidebar says about its ``n`` points and ``seed``."""
    if (n, seed) == (150, 2024):
        drawn = _("The noise ε is drawn as the post draws it, from JAX's PRNGKey({seed}): with 150 points "
                  "this is the post's own sample.")
    else:
        drawn = _("The noise ε is drawn as the post draws it, from JAX's PRNGKey({seed}); the post's own "
                  "sample is 150 points with seed 2024.")
    return (
        _("{n} points on an even grid over [−3, 3]; y = f(x) + n(x)·ε with f(x) = 0.5 sin x − sin 3x + 0.2x² "
          "and noise standard deviation n(x) = 0.2 + 0.05|x|.").format(n=n),
        drawn.format(seed=seed),
    )


POST_SAMPLE = Path(__file__).with_name("post_sample.npy")  # the post's own (x, y): 150 points, seed 2024


@functools.cache
def _kept_post_sample() -> tuple[np.ndarray, np.ndarray] | None:
    """The post's own sample as ``_computed_sample`` draws it, kept in ``POST_SAMPLE`` (None without the
    file): the data set a first visitor sees needs no compiled program (``tests/test_data.py`` checks it
    is the computed one, bit for bit)."""
    try:
        xy = np.load(POST_SAMPLE, allow_pickle=False).astype(np.float64)
    except (OSError, ValueError):
        return None
    xy.setflags(write=False)  # shared by every call; a Dataset takes its own copy
    return xy[0], xy[1]


def _post_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) as the post computes them, in float32 (returned as float64): the post's own sample from
    ``POST_SAMPLE``, any other computed (``_computed_sample``)."""
    kept = _kept_post_sample() if (n, seed) == (150, 2024) else None
    return kept if kept is not None else _computed_sample(n, seed)


def _computed_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) computed as the post computes them, in float32 (returned as float64).

    The noise (``post.noise``) and the sines are compiled for arrays padded to a bucket size by the adapter
    (``serve.sized``, ``serve.elementwise``), n traced, and the rest is NumPy: a new n compiles only
    ``jnp.linspace``'s program (XLA folds its constants, and no other form gives its last bits).
    """
    from kernelviz.data.post import noise

    x = np.asarray(jnp.linspace(-3.0, 3.0, n, dtype=jnp.float32))
    y = _post_y(x, noise(seed, n).astype(np.float32))
    return x.astype(np.float64), np.asarray(y, np.float64)


def _sines(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(sin x, sin 3x) in one program (XLA's float32 sine, as the post's ops computed it)."""
    return jnp.sin(x), jnp.sin(3 * x)


def _post_y(x: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """y = 0.5 sin x − sin 3x + 0.2 x² + (0.2 + 0.05 |x|) ε in float32, each operation rounded as the post's
    op-by-op arithmetic rounds it (NumPy's float32 operations; a compiled program would fuse a product and
    a sum into one multiply-add, a last bit apart)."""
    sin_x, sin_3x = serve.elementwise(_sines, x)  # compiled once per bucket of len(x)
    f32 = np.float32
    spread = f32(0.2) + f32(0.05) * np.abs(x)
    return f32(0.5) * sin_x - f32(1) * sin_3x + f32(0.2) * np.square(x) + spread * eps


@float64
def d2l_data(n: int = 50, seed: int = 0) -> Dataset:
    """d2l's set: x ~ U[0, 5] (n points, sorted), y = 2 sin x + x^0.8 + ε, ε ~ N(0, 0.5²).

    Both draws come from one ``numpy.random.default_rng(seed)``: first the n uniforms, then the n normals.
    """
    n, seed = _check_n(n), _check_seed(seed)
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 5.0, n))
    y = d2l_mean(x) + 0.5 * rng.standard_normal(n)
    return _synthetic(
        "d2l",
        x,
        y,
        (d2l_mean, d2l_noise_sd),
        source=_("Dive into Deep Learning, “Nadaraya-Watson kernel regression” / “Attention Pooling”."),
        notes=(
            _("{n} points drawn uniformly on [0, 5] and sorted; y = 2 sin x + x^0.8 + ε with noise "
              "standard deviation 0.5.").format(n=n),
            _("The draws come from NumPy's default_rng({seed}), so single points differ from the book's "
              "figures; the formulas are the same.").format(seed=seed),
        ),
        x_support=(0.0, math.inf),
    )


def _synthetic(name: str, x: np.ndarray, y: np.ndarray, truth: tuple[Callable, Callable], **fields: Any
               ) -> Dataset:
    """The built-in data set ``name`` (its title from ``DATASETS``): the draw (x, y), ``truth`` = (f, n)
    its true mean and noise sd, ``fields`` its source, notes and x support."""
    mean, noise = truth
    return Dataset(name=name, title=DATASETS[name].title, x=x, y=y, true_mean=mean, noise_sd=noise,
                   x_label="x", y_label="y", n_rows_read=x.shape[0], **fields)


class SyntheticDataset(NamedTuple):
    """A registry entry: a human title and the factory ``factory(n=..., seed=...) -> Dataset``."""

    title: str
    factory: Callable[..., Dataset]


DATASETS: dict[str, SyntheticDataset] = {
    "blog": SyntheticDataset(_("Heteroskedastic sine (blog post)"), blog_data),
    "d2l": SyntheticDataset(_("2 sin x + x^0.8 (Dive into Deep Learning)"), d2l_data),
}


@float64
def make_dataset(name: str, n: int | None = None, seed: int | None = None) -> Dataset:
    """The synthetic set ``name`` (a key of ``DATASETS``); ``n`` and ``seed`` default to the factory's."""
    entry = DATASETS.get(name) if isinstance(name, str) else None
    if entry is None:
        choices = ", ".join(repr(k) for k in DATASETS)
        raise DataError(_("There is no data set called {name!r}. Choose one of: {choices}.").format(
            name=name, choices=choices))
    params = inspect.signature(entry.factory).parameters
    n = params["n"].default if n is None else n
    seed = params["seed"].default if seed is None else seed
    return entry.factory(n=n, seed=seed)


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise DataError(_("{what} must be a whole number, not {value!r}.").format(what=what, value=value))
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise DataError(_("{what} must be a whole number; got {value!r}.").format(what=what, value=value))


def _check_n(n: Any) -> int:
    n = _as_int(n, _("The number of points"))
    if not MIN_POINTS <= n <= MAX_SYNTHETIC_POINTS:
        raise DataError(_("The number of points must be between {low} and {high:,}; got {n:,}.").format(
            low=MIN_POINTS, high=MAX_SYNTHETIC_POINTS, n=n))
    return n


def _check_seed(seed: Any) -> int:
    seed = _as_int(seed, _("The random seed"))
    if seed < 0:
        raise DataError(_("The random seed must be 0 or a positive whole number; got {seed}.").format(
            seed=seed))
    return seed


@float64
def subsample(ds: Dataset, max_points: int, seed: int = 0) -> Dataset:
    """An even, reproducible subset of at most ``max_points`` points (``ds`` itself when it is small enough).

    Rule (stratified by x rank): with n sorted points and m = ``max_points``, split the ranks 0…n−1 into
    the m runs [⌊k n/m⌋, ⌊(k+1) n/m⌋), k = 0…m−1, and keep one point drawn uniformly from each run with
    ``numpy.random.default_rng(seed)``. Every part of the x range keeps its share of points, the result
    is sorted, and the same (ds, max_points, seed) always gives the same subset.
    """
    max_points = _as_int(max_points, _("The number of training points"))
    if max_points < MIN_POINTS:
        raise DataError(_("The subsample needs at least {low} points; got {m}.").format(low=MIN_POINTS,
                                                                                        m=max_points))
    seed = _check_seed(seed)
    n = len(ds)
    if n <= max_points:
        return ds
    bounds = (np.arange(max_points + 1, dtype=np.int64) * n) // max_points
    lo, hi = bounds[:-1], bounds[1:]
    idx = lo + np.floor(np.random.default_rng(seed).random(max_points) * (hi - lo)).astype(np.int64)
    idx = np.minimum(idx, hi - 1)
    note = _("Training uses {m:,} of {n:,} points (an even subsample: one point drawn at random, seed "
             "{seed}, from each of {m:,} equal runs of the points sorted by x).").format(m=max_points, n=n,
                                                                                       seed=seed)
    return dataclasses.replace(ds, x=ds.x[idx], y=ds.y[idx], notes=(*ds.notes, note))

