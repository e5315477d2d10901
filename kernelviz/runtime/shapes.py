"""Static shapes and argument checks shared by the backend (plain NumPy: nothing here compiles).

Data are padded to a few fixed sizes with a mask, so moving a slider (number of points, hold-out size,
heads) never changes the shape of a compiled program: ``bucket`` gives the padded size, ``pad`` the
padded array. ``thin_heatmap`` picks the cells of a weight matrix a heatmap shows (views keep only
those, figures draw them). The checks turn bad arguments into a ``ValueError`` that says what is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = [
    "MIN_BUCKET",
    "Columns",
    "Param",
    "bucket",
    "bucketed",
    "check_int",
    "check_lengthscale",
    "check_positive",
    "columns",
    "corner",
    "even_indices",
    "pad",
    "paired",
    "param",
    "thin_heatmap",
    "unslot",
    "value_scale",
    "vector",
]

MIN_BUCKET = 256  # the smallest padded size: every data set of up to 256 points shares one set of programs
BUCKET_GROWTH = 4  # padded sizes 256, 1024, 4096, …


def bucket(n: int, minimum: int = MIN_BUCKET, growth: int = BUCKET_GROWTH) -> int:
    """The padded size for n items: the smallest ``minimum`` · growthᵏ (k = 0, 1, …) that holds n.

    Each padded size costs one compiled program per function, so there are few of them: the teaching sizes
    (10 … 256 points, both built-in data sets) share the first; padding a small problem costs microseconds,
    and a larger one at most ``growth`` times the work on the real size.
    """
    size = max(minimum, 1)
    while size < n:
        size *= growth
    return size


def pad(a: np.ndarray, size: int, fill: float = 0.0) -> np.ndarray:
    """``a`` (n,) followed by ``fill`` up to ``size`` entries, as float64."""
    out = np.full(size, fill, dtype=np.float64)
    out[: a.shape[0]] = a
    return out


@dataclass(frozen=True)
class Param:
    """One parameter as a compiled program holds it: ``start`` at its padded shape (slots for heads and
    widths), and the shape of its ``real`` part (the leading corner); ``trains`` whether that part trains
    (padded slots never do); ``dtype`` the type the program holds it in (the blog post's float32). Not a
    pytree: the adapters (``serve``, ``train``) unwrap it (``unslot``)."""

    start: np.ndarray
    real: tuple[int, ...]
    trains: bool = True
    dtype: type = np.float64


def param(real: object, slots: int | tuple[int, ...], fill: float = 0.0, trains: bool = True,
          dtype: type = np.float64) -> Param:
    """A parameter given at its real shape, padded to ``slots`` with ``fill`` (heads, widths)."""
    a = np.asarray(real, dtype=np.float64)
    shape = (slots,) if isinstance(slots, int) else tuple(slots)
    out = np.full(shape, fill, dtype=np.float64)
    out[tuple(slice(s) for s in a.shape)] = a
    return Param(out.astype(dtype), a.shape, trains, dtype)


def bucketed(real: object, fill: float = 0.0) -> Param:
    """A vector parameter (n,) padded with ``fill`` to ``bucket(n)`` slots (a grid of values, say)."""
    a = np.asarray(real, dtype=np.float64).reshape(-1)
    return param(a, bucket(a.shape[0]), fill)


def corner(a: np.ndarray, real: tuple[int, ...], lead: int = 0) -> np.ndarray:
    """``a`` cut to its ``real`` leading corner, after ``lead`` leading axes kept whole (a copy)."""
    return np.array(a[(slice(None),) * lead + tuple(slice(s) for s in real)])


class Columns(NamedTuple):
    """Columns of n values each, padded with zeros to ``bucket(n)``: ``arrays`` (size,) each in float64,
    and ``mask`` (size,), true on the n real entries."""

    arrays: tuple[np.ndarray, ...]
    mask: np.ndarray


def columns(*arrays: np.ndarray) -> Columns:
    """The columns (n,) each padded with zeros to ``bucket(n)``, with the mask of the n real entries."""
    n = arrays[0].shape[0]
    size = bucket(n)
    return Columns(tuple(pad(a, size) for a in arrays), np.arange(size) < n)


def unslot(tree: object) -> object:
    """``tree`` with every ``Param`` replaced by its padded array."""
    import jax  # a pytree map; nothing compiles

    return jax.tree.map(lambda p: p.start if isinstance(p, Param) else p, tree,
                        is_leaf=lambda p: isinstance(p, Param))


def value_scale(values: np.ndarray) -> float:
    """max |v| (1 when every v is 0): values are pooled divided by it, so (v − m)² cannot overflow."""
    top = float(np.max(np.abs(values))) if values.size else 0.0
    return top if top > 0 else 1.0


def vector(name: str, a: object) -> np.ndarray:
    """``a`` as a flat float64 array, or a ValueError when it holds NaN or infinity."""
    arr = np.asarray(a, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite numbers; found NaN or infinity")
    return arr


def paired(x: object, y: object, minimum: int, need: str) -> tuple[np.ndarray, np.ndarray]:
    """x and y as finite float vectors (``vector``) of one length holding at least ``minimum`` points, or
    a ValueError that ends in ``need`` ("leave-one-out needs at least two points")."""
    xs, ys = vector("x", x), vector("y", y)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same length, got {xs.shape[0]} and {ys.shape[0]}")
    if xs.shape[0] < minimum:
        raise ValueError(need)
    return xs, ys


def check_positive(name: str, value: object) -> float:
    """``value`` as a float, or a ValueError for anything that is not a finite positive number."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite positive number, not {value!r}")
    return v


def check_lengthscale(lengthscale: object) -> float:
    """ℓ as a float, or a ValueError for anything that is not a finite positive number."""
    return check_positive("the lengthscale", lengthscale)


def check_int(name: str, value: object, lo: int, hi: int) -> int:
    """``value`` as an int in lo … hi, or a ValueError (bools and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, not {v}")
    return v


def even_indices(n: int, keep: int) -> np.ndarray:
    """At most ``keep`` evenly spread indices of range(n), always including the first and the last."""
    if n <= keep:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, keep)).astype(int))


def thin_heatmap(
    weights: object, queries: object, keys: object, max_rows: int, max_cols: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows and columns a heatmap builder draws: (weights[..., rows, cols], queries[rows], keys[cols]).

    ``weights`` is (…, q, n); at most ``max_rows`` queries and ``max_cols`` keys are kept, evenly spread
    (``even_indices``), exactly the cells the builders show with the same limits, so a view can keep
    only these and the figure is unchanged.
    """
    w = np.asarray(weights)
    q = np.asarray(queries, dtype=np.float64).reshape(-1)
    k = np.asarray(keys, dtype=np.float64).reshape(-1)
    if w.shape[-2:] != (q.shape[0], k.shape[0]):
        raise ValueError(f"weights have shape {w.shape}, expected (…, {q.shape[0]}, {k.shape[0]})")
    ri, ci = even_indices(q.shape[0], max_rows), even_indices(k.shape[0], max_cols)
    return w[..., ri, :][..., ci], q[ri], k[ci]
