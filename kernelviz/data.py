"""The seed data sets, CSV loading and validation.

Every data set the dashboard shows is a :class:`Dataset`: finite float64 arrays ``x`` and ``y`` sorted by
``x``, plus what a page needs to explain them (labels, where the data come from, what loading did).

Synthetic sets (reproducible from ``(n, seed)`` with ``numpy.random.default_rng(seed)``):

* ``blog`` (seed 000, "From kernel regression to the transformer"): heteroskedastic noise,

      f(x) = 0.5 sin x − sin 3x + 0.2 x²,   n(x) = 0.2 + 0.05 |x|,   y = f(x) + n(x) ε,  ε ~ N(0, 1),

  on x = linspace(−3, 3, n) as in the post.
* ``d2l`` (seeds 002/004, Dive into Deep Learning, "Nadaraya-Watson kernel regression"):

      f(x) = 2 sin x + x^0.8,   n(x) = 0.5,   x ~ U[0, 5] (n points, sorted).

User data come from :func:`load_csv` (a path, bytes, or a file-like such as Streamlit's ``UploadedFile``)
or :func:`dataset_from_arrays`. Anything wrong with the input raises :class:`DataError`, a ``ValueError``
whose message says what is wrong and how to fix it; no other exception escapes and no input can make the
loader hang: the byte limit is checked before the whole input is read and the row limit while parsing.

Validation, shared by every path in: rows whose x or y is empty, not a number, NaN or infinite are dropped
(and counted in ``notes``); at least 3 rows must remain; x must not be constant; every |value| must be at
most 1e150, so squares and sums of squares stay finite in float64. Duplicated x values are allowed.
"""

from __future__ import annotations

import csv
import dataclasses
import inspect
import math
import operator
import os
import stat
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "DATASETS",
    "MAX_ABS_VALUE",
    "MAX_CSV_BYTES",
    "MAX_CSV_COLUMNS",
    "MAX_CSV_LINE_CHARS",
    "MAX_CSV_MB",
    "MAX_CSV_ROWS",
    "MAX_SYNTHETIC_POINTS",
    "MIN_POINTS",
    "DataError",
    "Dataset",
    "SyntheticDataset",
    "blog_data",
    "blog_mean",
    "blog_noise_sd",
    "d2l_data",
    "d2l_mean",
    "d2l_noise_sd",
    "dataset_from_arrays",
    "load_csv",
    "make_dataset",
    "subsample",
]

# ----------------------------------------------------------------------------------------------- limits

#: Upload limit in megabytes. ``.streamlit/config.toml`` sets ``[server] maxUploadSize`` to this number,
#: so the browser refuses a bigger file before it is sent and :func:`load_csv` refuses it otherwise.
MAX_CSV_MB: int = 50
#: The same limit in bytes (1 MB = 1024 × 1024 bytes, as Streamlit counts ``maxUploadSize``).
MAX_CSV_BYTES: int = MAX_CSV_MB * 1024 * 1024
#: Most data rows a CSV may have (header, blank and comment lines not counted).
MAX_CSV_ROWS: int = 1_000_000
#: Most columns a CSV may have.
MAX_CSV_COLUMNS: int = 10_000
#: Longest line a CSV may have, in characters; bounds the memory one parsed row can take.
MAX_CSV_LINE_CHARS: int = 1_000_000
#: Largest |x| or |y| accepted: (1e150)² = 1e300 is still finite in float64 (max ≈ 1.8e308).
MAX_ABS_VALUE: float = 1e150
#: Fewest usable points a data set may have.
MIN_POINTS: int = 3
#: Most points a synthetic data set may have.
MAX_SYNTHETIC_POINTS: int = 5000

_COLUMN_NAME_CHARS = 60  # column names are cut to this many characters
_TYPE_SAMPLE_ROWS = 1000  # data rows looked at to decide which columns are numeric
_TYPE_SAMPLE_CELLS = 200_000  # ... but never more cells than this
_SNIFF_LINES = 100  # lines looked at to find the delimiter
_SNIFF_CHARS = 65_536  # ... but never more characters than this
_READ_CHUNK = 1 << 20
_MISSING = frozenset({"", "na", "n/a", "nan", "-nan", "+nan", "null", "none", "nil", "-", "?", "#n/a", "."})
_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "pipes (|)", None: "whitespace"}


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
            raise DataError(
                f"x and y must be 1-D arrays of the same length; got shapes {x.shape} and {y.shape}."
            )
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

    def grid(self, num: int = 256) -> np.ndarray:
        """``num`` evenly spaced query points over the domain padded by 5% of its width on each side.

        lo − 0.05 (hi − lo) … hi + 0.05 (hi − lo), clipped to ``x_support``.
        """
        num = _as_int(num, "The number of grid points")
        if num < 2:
            raise DataError(f"The grid needs at least 2 points; got {num}.")
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


def blog_data(n: int = 150, seed: int = 2024) -> Dataset:
    """The blog post's heteroskedastic set: x = linspace(−3, 3, n), y = f(x) + n(x) ε.

    f(x) = 0.5 sin x − sin 3x + 0.2 x², n(x) = 0.2 + 0.05 |x|, ε ~ N(0, 1) drawn by
    ``numpy.random.default_rng(seed).standard_normal(n)``.
    """
    n, seed = _check_n(n), _check_seed(seed)
    x = np.linspace(-3.0, 3.0, n)
    eps = np.random.default_rng(seed).standard_normal(n)
    y = blog_mean(x) + blog_noise_sd(x) * eps
    return Dataset(
        name="blog",
        title=DATASETS["blog"].title,
        x=x,
        y=y,
        true_mean=blog_mean,
        noise_sd=blog_noise_sd,
        x_label="x",
        y_label="y",
        source="Blog post “From kernel regression to the transformer” (seed 000).",
        notes=(
            f"{n} points on an even grid over [−3, 3]; y = f(x) + n(x)·ε with "
            "f(x) = 0.5 sin x − sin 3x + 0.2x² and noise standard deviation n(x) = 0.2 + 0.05|x|.",
            f"The noise ε comes from NumPy's default_rng({seed}), so single points differ from the post's "
            "figure (which used JAX's PRNGKey(2024)); the formulas are the same.",
        ),
        n_rows_read=n,
    )


def d2l_data(n: int = 50, seed: int = 0) -> Dataset:
    """d2l's set: x ~ U[0, 5] (n points, sorted), y = 2 sin x + x^0.8 + ε, ε ~ N(0, 0.5²).

    Both draws come from one ``numpy.random.default_rng(seed)``: first the n uniforms, then the n normals.
    """
    n, seed = _check_n(n), _check_seed(seed)
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 5.0, n))
    y = d2l_mean(x) + 0.5 * rng.standard_normal(n)
    return Dataset(
        name="d2l",
        title=DATASETS["d2l"].title,
        x=x,
        y=y,
        true_mean=d2l_mean,
        noise_sd=d2l_noise_sd,
        x_label="x",
        y_label="y",
        source="Dive into Deep Learning, “Nadaraya-Watson kernel regression” / “Attention pooling” "
        "(seeds 002, 004).",
        notes=(
            f"{n} points drawn uniformly on [0, 5] and sorted; y = 2 sin x + x^0.8 + ε with noise "
            "standard deviation 0.5.",
            f"The draws come from NumPy's default_rng({seed}), so single points differ from the book's "
            "figures; the formulas are the same.",
        ),
        n_rows_read=n,
        x_support=(0.0, math.inf),
    )


class SyntheticDataset(NamedTuple):
    """A registry entry: a human title and the factory ``factory(n=..., seed=...) -> Dataset``."""

    title: str
    factory: Callable[..., Dataset]


DATASETS: dict[str, SyntheticDataset] = {
    "blog": SyntheticDataset("Heteroskedastic sine (blog post)", blog_data),
    "d2l": SyntheticDataset("2 sin x + x^0.8 (Dive into Deep Learning)", d2l_data),
}


def make_dataset(name: str, n: int | None = None, seed: int | None = None) -> Dataset:
    """The synthetic set ``name`` (a key of ``DATASETS``); ``n`` and ``seed`` default to the factory's."""
    entry = DATASETS.get(name) if isinstance(name, str) else None
    if entry is None:
        choices = ", ".join(repr(k) for k in DATASETS)
        raise DataError(f"There is no data set called {name!r}. Choose one of: {choices}.")
    params = inspect.signature(entry.factory).parameters
    n = params["n"].default if n is None else n
    seed = params["seed"].default if seed is None else seed
    return entry.factory(n=n, seed=seed)


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise DataError(f"{what} must be a whole number, not {value!r}.")
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise DataError(f"{what} must be a whole number; got {value!r}.")


def _check_n(n: Any) -> int:
    n = _as_int(n, "The number of points")
    if not MIN_POINTS <= n <= MAX_SYNTHETIC_POINTS:
        raise DataError(
            f"The number of points must be between {MIN_POINTS} and {MAX_SYNTHETIC_POINTS:,}; got {n:,}."
        )
    return n


def _check_seed(seed: Any) -> int:
    seed = _as_int(seed, "The random seed")
    if seed < 0:
        raise DataError(f"The random seed must be 0 or a positive whole number; got {seed}.")
    return seed


# ----------------------------------------------------------------------------------- shared validation


def _validate(
    x: np.ndarray,
    y: np.ndarray,
    *,
    where: Callable[[int], str],
    x_name: str,
    y_name: str,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Drop non-finite rows, check count, magnitude and spread, sort by x; returns (x, y, notes).

    ``where(i)`` describes row ``i`` of the input for a message ("line 7", "index 6").
    """
    notes: list[str] = []
    n_in = x.shape[0]
    keep = np.isfinite(x) & np.isfinite(y)
    n_drop = int(n_in - np.count_nonzero(keep))
    if n_drop:
        first = int(np.flatnonzero(~keep)[0])
        notes.append(
            f"Dropped {n_drop:,} of {_plural(n_in, 'row')} whose x or y was empty, not a number, NaN or "
            f"infinite (the first at {where(first)})."
        )
    idx = np.flatnonzero(keep)
    x, y = x[idx], y[idx]
    for values, label in ((x, x_name), (y, y_name)):
        big = np.flatnonzero(np.abs(values) > MAX_ABS_VALUE)
        if big.size:
            i = int(big[0])
            raise DataError(
                f"{label} has the value {values[i]:.6g} at {where(int(idx[i]))}. Values must lie between "
                f"−1e150 and 1e150 so that their squares stay finite; rescale the column (for example "
                f"divide it by a power of ten) and try again."
            )
    if x.shape[0] < MIN_POINTS:
        usable = x.shape[0]
        raise DataError(
            f"Only {_plural(usable, 'usable row')} (with a finite number for both x and y) "
            f"out of {n_in:,}; kernel regression needs at least {MIN_POINTS}. Check that the right columns "
            "are chosen and that they hold numbers."
        )
    if x.min() == x.max():
        raise DataError(
            f"Every x value is {x[0]:.6g}. Kernel regression needs x values that differ; choose another "
            "x column."
        )
    order = np.argsort(x, kind="stable")
    return x[order], y[order], notes


def dataset_from_arrays(
    x: Any,
    y: Any,
    name: str = "custom",
    title: str = "Custom data",
    *,
    x_label: str = "x",
    y_label: str = "y",
    source: str = "Arrays supplied by the caller.",
    notes: Sequence[str] = (),
    true_mean: Callable[[np.ndarray], np.ndarray] | None = None,
    noise_sd: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Dataset:
    """A validated :class:`Dataset` from two equal-length 1-D sequences of numbers.

    Non-finite pairs are dropped (and noted); fewer than 3 left, a constant x, |value| > 1e150, or arrays
    that are not 1-D numbers of the same length raise :class:`DataError`. The result is sorted by x.
    """
    xa = _as_vector(x, "x")
    ya = _as_vector(y, "y")
    if xa.shape != ya.shape:
        raise DataError(
            f"x and y must have the same length; got {xa.shape[0]:,} x values and {ya.shape[0]:,} y."
        )
    xs, ys, more = _validate(xa, ya, where=lambda i: f"index {i}", x_name="x", y_name="y")
    return Dataset(
        name=str(name),
        title=str(title),
        x=xs,
        y=ys,
        true_mean=true_mean,
        noise_sd=noise_sd,
        x_label=str(x_label),
        y_label=str(y_label),
        source=str(source),
        notes=(*notes, *more),
        n_rows_read=int(xa.shape[0]),
    )


def _as_vector(values: Any, label: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
        if np.iscomplexobj(arr):
            raise DataError(f"{label} holds complex numbers; pass real numbers.")
        arr = np.asarray(arr, dtype=np.float64)
    except DataError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise DataError(f"{label} must be a sequence of numbers ({exc}).") from None
    if arr.ndim != 1:
        raise DataError(f"{label} must be one-dimensional (a flat list of numbers); got shape {arr.shape}.")
    return arr


def subsample(ds: Dataset, max_points: int, seed: int = 0) -> Dataset:
    """An even, reproducible subset of at most ``max_points`` points (``ds`` itself when it is small enough).

    Rule (stratified by x rank): with n sorted points and m = ``max_points``, split the ranks 0…n−1 into
    the m runs [⌊k n/m⌋, ⌊(k+1) n/m⌋), k = 0…m−1, and keep one point drawn uniformly from each run with
    ``numpy.random.default_rng(seed)``. Every part of the x range keeps its share of points, the result
    is sorted, and the same (ds, max_points, seed) always gives the same subset.
    """
    max_points = _as_int(max_points, "The number of training points")
    if max_points < MIN_POINTS:
        raise DataError(f"The subsample needs at least {MIN_POINTS} points; got {max_points}.")
    seed = _check_seed(seed)
    n = len(ds)
    if n <= max_points:
        return ds
    bounds = (np.arange(max_points + 1, dtype=np.int64) * n) // max_points
    lo, hi = bounds[:-1], bounds[1:]
    idx = lo + np.floor(np.random.default_rng(seed).random(max_points) * (hi - lo)).astype(np.int64)
    idx = np.minimum(idx, hi - 1)
    note = (
        f"Training uses {max_points:,} of {n:,} points (an even subsample: one point drawn at random, "
        f"seed {seed}, from each of {max_points:,} equal runs of the points sorted by x)."
    )
    return dataclasses.replace(ds, x=ds.x[idx], y=ds.y[idx], notes=(*ds.notes, note))


# ------------------------------------------------------------------------------------------- CSV loading


def load_csv(source: Any, x_column: str | int | None = None, y_column: str | int | None = None) -> Dataset:
    """Read two numeric columns of a CSV file into a :class:`Dataset`.

    ``source``: a path (``str`` or ``os.PathLike``), ``bytes``, or a binary or text file-like object with
    ``.read()`` (Streamlit's ``UploadedFile``; a seekable object is read from its start). At most
    ``MAX_CSV_BYTES`` bytes are read, at most ``MAX_CSV_ROWS`` data rows are parsed.

    Encoding: UTF-8 (with or without BOM), UTF-16/32 with BOM, UTF-16 without BOM, else Windows-1252 /
    Latin-1. Delimiter: the one of comma, semicolon, tab, pipe or runs of whitespace that splits the first
    lines most consistently into numbers (or the one an Excel "sep=;" first line names). With a delimiter
    other than the comma, decimal commas (1,5) are read as 1.5. Blank lines and lines starting with ``#``
    are skipped.

    Header: the first row is a header when it has text in a column that holds numbers below it; otherwise
    the columns are called "column 1", "column 2", …. A column is numeric when, among its first 1,000
    data cells, at least one is a finite number and at least half of the non-missing cells are numbers
    ("", NA, N/A, NaN, null, none, -, ? count as missing).

    ``x_column`` / ``y_column``: a column name or a 0-based position in the file; by default the first two
    numeric columns. Rows whose x or y is not a finite number are dropped and counted in ``notes``.
    """
    title = _source_title(source)
    raw = _read_bytes(source)
    text, encoding_note = _decode(raw)
    del raw
    return _parse_csv(text, encoding_note, title, x_column, y_column)


def _source_title(source: Any) -> str:
    if isinstance(source, str | os.PathLike):
        try:
            name = Path(source).name
        except (TypeError, ValueError):
            name = ""
    else:
        name = getattr(source, "name", None)
        name = os.path.basename(name) if isinstance(name, str) else ""
    name = _clean_name(name, "")
    return name or "Uploaded data"


def _size_text(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 100 * 1024 else f"{size:,} bytes"


def _too_big(size: int) -> DataError:
    return DataError(
        f"The file is {_size_text(size)}; the limit is {_size_text(MAX_CSV_BYTES)}. Keep only the two "
        "columns you need, or take a sample of the rows (for example every 10th row), and upload that."
    )


def _read_bytes(source: Any) -> bytes | str:
    """The raw content of ``source``, never more than ``MAX_CSV_BYTES`` (else DataError) read."""
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        if len(data) > MAX_CSV_BYTES:
            raise _too_big(len(data))
        return data
    if isinstance(source, str) and ("\n" in source or "\r" in source):
        raise DataError(
            "load_csv got a string with line breaks, which is not a file name. Pass a path to a file, or "
            "pass the CSV content as bytes (for example text.encode())."
        )
    if isinstance(source, str | os.PathLike):
        return _read_path(source)
    if hasattr(source, "read"):
        return _read_filelike(source)
    raise DataError(f"load_csv needs a file path, bytes or an open file; got a {type(source).__name__}.")


def _read_path(path: Any) -> bytes:
    shown = os.fspath(path) if isinstance(path, str | os.PathLike) else str(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise DataError(f"{shown!r} is not a regular file (it may be a folder); pass a CSV file.")
        if info.st_size > MAX_CSV_BYTES:
            raise _too_big(info.st_size)
        with open(path, "rb") as fh:
            data = fh.read(MAX_CSV_BYTES + 1)
    except DataError:
        raise
    except FileNotFoundError:
        raise DataError(f"There is no file at {shown!r}; check the path.") from None
    except PermissionError:
        raise DataError(f"The file {shown!r} cannot be read (permission denied).") from None
    except (OSError, ValueError, TypeError) as exc:
        raise DataError(f"The file {shown!r} cannot be opened: {exc}.") from None
    if len(data) > MAX_CSV_BYTES:
        raise _too_big(len(data))
    return data


def _read_filelike(fileobj: Any) -> bytes | str:
    size = getattr(fileobj, "size", None)
    if isinstance(size, int) and not isinstance(size, bool) and size > MAX_CSV_BYTES:
        raise _too_big(size)
    try:
        if callable(getattr(fileobj, "seekable", None)) and fileobj.seekable():
            fileobj.seek(0)
        chunks: list[Any] = []
        total = 0
        while total <= MAX_CSV_BYTES:
            chunk = fileobj.read(min(_READ_CHUNK, MAX_CSV_BYTES + 1 - total))
            if not chunk:
                break
            if isinstance(chunk, str):
                chunk_bytes = len(chunk.encode("utf-8", "surrogatepass"))
            elif isinstance(chunk, bytes | bytearray | memoryview):
                chunk = bytes(chunk)
                chunk_bytes = len(chunk)
            else:
                raise DataError(f"Reading the file gave a {type(chunk).__name__}, not text or bytes.")
            chunks.append(chunk)
            total += chunk_bytes
    except DataError:
        raise
    except Exception as exc:  # a file-like object may raise anything from .read()
        raise DataError(f"The file could not be read: {exc}.") from None
    if total > MAX_CSV_BYTES:
        raise _too_big(total)
    if not chunks:
        return b""
    kinds = {type(c) for c in chunks}
    if len(kinds) > 1:
        raise DataError("Reading the file gave a mix of text and bytes; pass a file opened in one mode.")
    return "".join(chunks) if str in kinds else b"".join(chunks)


_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
_SIGNATURES = (
    (b"PK\x03\x04", "a ZIP archive or an Excel workbook (.xlsx)"),
    (b"\xd0\xcf\x11\xe0", "an old Excel workbook (.xls)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"SQLite format 3", "an SQLite database"),
    (b"\x93NUMPY", "a NumPy .npy file"),
)
_ALLOWED_CONTROLS = frozenset("\t\n\r\x0b\x0c")


def _decode(data: bytes | str) -> tuple[str, str | None]:
    """Text of the file and a note on the encoding when it was not plain UTF-8."""
    note = None
    if isinstance(data, str):
        text = data.removeprefix("\ufeff")
    else:
        for magic, what in _SIGNATURES:
            if data.startswith(magic):
                raise DataError(
                    f"This looks like {what}, not a CSV text file. Open it in its program and export or "
                    "save it as CSV (comma-separated values)."
                )
        encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
        if encoding is None and b"\x00" in data[:4096]:
            encoding = _guess_utf16(data[:4096])
        try:
            if encoding is not None:
                text = data.decode(encoding)
                if encoding != "utf-8-sig":
                    note = f"Read the file as {encoding.upper()} text."
            else:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    try:
                        text = data.decode("cp1252")
                        note = "The file is not UTF-8; read it as Windows-1252 (Western European) text."
                    except UnicodeDecodeError:
                        text = data.decode("latin-1")
                        note = "The file is not UTF-8; read it as Latin-1 text."
        except UnicodeDecodeError:
            raise DataError(
                f"The file starts like {encoding.upper()} text but cannot be decoded as such; save it again "
                "as UTF-8 CSV."
            ) from None
    if not text.strip():
        raise DataError("The file is empty. Choose a CSV file with a column of x values and one of y values.")
    if "\x00" in text:
        raise DataError(
            "The file contains NUL bytes, so it is binary rather than CSV text. Export the data as CSV "
            "(comma-separated values) and try again."
        )
    head = text[:_SNIFF_CHARS]
    controls = sum(1 for ch in head if ch < " " and ch not in _ALLOWED_CONTROLS)
    if controls > max(2, len(head) // 100):
        raise DataError(
            "The file does not look like text (it is full of control characters). Export the data as CSV "
            "(comma-separated values) and try again."
        )
    return text, note


def _guess_utf16(head: bytes) -> str | None:
    """'utf-16-le' / 'utf-16-be' when the NULs sit on odd / even bytes as in ASCII-range UTF-16."""
    half = max(1, len(head) // 2)
    even = head[0::2].count(0)
    odd = head[1::2].count(0)
    if odd >= 0.4 * half and even <= 0.05 * half:
        return "utf-16-le"
    if even >= 0.4 * half and odd <= 0.05 * half:
        return "utf-16-be"
    return None


def _clean_name(name: str, fallback: str) -> str:
    """A plain one-line string without control characters, at most 60 characters."""
    cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
    if len(cleaned) > _COLUMN_NAME_CHARS:
        cleaned = cleaned[: _COLUMN_NAME_CHARS - 1] + "…"
    return cleaned or fallback


# Cells are classified as numbers, missing or text.
_NUMBER, _MISSING_CELL, _TEXT = 0, 1, 2


def _make_float(decimal_comma: bool) -> Callable[[str], float]:
    """float() of a cell; NaN for anything missing or unreadable; decimal commas when allowed."""

    def to_float(cell: str) -> float:
        try:
            return float(cell)
        except ValueError:
            pass
        if decimal_comma and "," in cell and "." not in cell:
            try:
                return float(cell.replace(",", ".", 1))
            except ValueError:
                pass
        return math.nan

    return to_float


def _classify(cell: str, decimal_comma: bool) -> int:
    s = cell.strip()
    if s.lower() in _MISSING:
        return _MISSING_CELL
    try:
        float(s)
        return _NUMBER
    except ValueError:
        pass
    if decimal_comma and s.count(",") == 1 and "." not in s:
        try:
            float(s.replace(",", "."))
            return _NUMBER
        except ValueError:
            pass
    return _TEXT


def _iter_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` (split on "\\n"; a trailing "\\r" stays and csv drops it), at most
    ``MAX_CSV_LINE_CHARS`` long each. Lazy: the text is split in blocks of about 1 MB, so a huge file
    never exists as one list of lines."""
    start, end_of_text = 0, len(text)
    while start < end_of_text:
        stop = text.find("\n", min(start + _READ_CHUNK, end_of_text))
        if stop < 0:
            stop = end_of_text
        block = text[start:stop].split("\n")
        longest = max(map(len, block))
        if longest > MAX_CSV_LINE_CHARS:
            raise DataError(
                f"A line of the file is {longest:,} characters long; the limit is {MAX_CSV_LINE_CHARS:,}. "
                "Keep only the columns you need, or check that the file has line breaks."
            )
        yield from block
        start = stop + 1


def _content_lines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield line


def _split(lines: Iterable[str], delimiter: str | None) -> Iterator[list[str]]:
    """Rows of fields; ``delimiter=None`` splits on runs of whitespace."""
    if delimiter is None:
        return (line.split() for line in lines)
    return csv.reader(lines, delimiter=delimiter, quotechar='"', skipinitialspace=True, strict=False)


def _sniff(lines: Iterable[str]) -> str | None:
    """The delimiter that splits the first lines most consistently into the most numeric fields."""
    sample: list[str] = []
    chars = 0
    for line in _content_lines(lines):
        sample.append(line[:_SNIFF_CHARS])
        chars += len(sample[-1])
        if len(sample) >= _SNIFF_LINES or chars >= _SNIFF_CHARS:
            break
    best: tuple[float, int] | None = None
    choice: str | None = ","
    for rank, delimiter in enumerate((",", ";", "\t", "|", None)):
        try:
            rows = list(_split(sample, delimiter))
        except csv.Error:
            continue
        counts = Counter(len(r) for r in rows)
        width, agree = counts.most_common(1)[0] if counts else (0, 0)
        if width < 2:
            continue
        body = [r for r in rows[1:] if len(r) == width] or [r for r in rows if len(r) == width]
        cells = [c for r in body for c in r]
        kinds = [_classify(c, decimal_comma=delimiter != ",") for c in cells]
        numeric = sum(k != _TEXT for k in kinds) / max(1, len(kinds))
        score = (agree / len(rows) + numeric, -rank)
        if best is None or score > best:
            best, choice = score, delimiter
    return choice


def _column_choice(choice: str | int | None, names: list[str], numeric: list[int], role: str) -> int | None:
    """0-based column position of a user choice (by name or position), or None for the default."""
    if choice is None:
        return None
    listing = "; ".join(f"{i}: {names[i]!r}" for i in numeric) or "none"
    if isinstance(choice, str):
        wanted = choice.strip()
        matches = [i for i, nm in enumerate(names) if nm == wanted]
        if not matches:
            matches = [i for i, nm in enumerate(names) if nm.casefold() == wanted.casefold()]
        if not matches:
            raise DataError(
                f"There is no column called {choice!r} for {role}. "
                f"Numeric columns (position: name): {listing}."
            )
        return matches[0]
    try:
        pos = _as_int(choice, f"The {role} column")
    except DataError:
        raise DataError(
            f"The {role} column must be a column name or a 0-based position; got {choice!r}. "
            f"Numeric columns (position: name): {listing}."
        ) from None
    if not 0 <= pos < len(names):
        raise DataError(
            f"There is no column at position {pos} for {role}; the file has {len(names)} columns "
            f"(positions 0 to {len(names) - 1}). Numeric columns (position: name): {listing}."
        )
    return pos


def _parse_csv(
    text: str, encoding_note: str | None, title: str, x_column: str | int | None, y_column: str | int | None
) -> Dataset:
    if "\r" in text:  # Windows and classic Mac line ends
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    first_line = text[: text.find("\n")] if "\n" in text else text
    declared = first_line.strip(" ").lower()
    if declared.startswith("sep=") and declared[4:] in (",", ";", "\t", "|"):
        # Excel's "sep=;" line names the delimiter; made a comment, it keeps the line numbers right.
        delimiter: str | None = declared[4:]
        text = "#" + text
    else:
        delimiter = _sniff(_iter_lines(text))
    decimal_comma = delimiter != ","
    how = _DELIMITER_NAMES[delimiter]

    def rows_with_lines() -> Iterator[tuple[int, list[str]]]:
        """(line number, fields) of each non-blank, non-comment row."""
        reader = _split(_iter_lines(text), delimiter)
        line_no = 0
        for row in reader:
            line_no = reader.line_num if delimiter is not None else line_no + 1
            if not row:
                continue
            head = row[0].lstrip()
            if head.startswith("#") or (not head and all(not c.strip() for c in row)):
                continue
            yield line_no, row

    try:
        # --- first pass over a sample: header, column names, numeric columns
        sample: list[list[str]] = []
        width = 0
        for _, row in rows_with_lines():
            if len(row) > MAX_CSV_COLUMNS:
                raise DataError(
                    f"The file has {len(row):,} columns; the limit is {MAX_CSV_COLUMNS:,}. Keep only the "
                    "columns you need."
                )
            sample.append(row)
            width = max(width, len(row))
            if len(sample) > min(_TYPE_SAMPLE_ROWS, max(5, _TYPE_SAMPLE_CELLS // width)):
                break
        if not sample:
            raise DataError("The file has no data rows, only blank or comment (#) lines.")
        if width < 2:
            raise DataError(
                "The file has only one column, but kernel regression needs an x column and a y column. "
                "Put x and y side by side, separated by commas."
            )

        def kinds_of(rows: list[list[str]]) -> list[list[int]]:
            return [
                [_classify(r[c], decimal_comma) if c < len(r) else _MISSING_CELL for r in rows]
                for c in range(width)
            ]

        def numeric_columns(kinds: list[list[int]]) -> list[int]:
            out = []
            for c, col in enumerate(kinds):
                numbers = col.count(_NUMBER)
                if numbers and numbers >= col.count(_TEXT):
                    out.append(c)
            return out

        first = sample[0]
        body_numeric = numeric_columns(kinds_of(sample[1:])) if len(sample) > 1 else []
        first_kinds = [_classify(c, decimal_comma) for c in first]
        if len(sample) > 1:
            has_header = any(c < len(first) and first_kinds[c] == _TEXT for c in body_numeric)
        else:
            has_header = _TEXT in first_kinds
        if has_header:
            names_raw = [first[c] if c < len(first) else "" for c in range(width)]
            numeric = body_numeric
        else:
            names_raw = [""] * width
            numeric = numeric_columns(kinds_of(sample))
        names = _unique([_clean_name(nm, f"column {c + 1}") for c, nm in enumerate(names_raw)])

        n_sample_data = len(sample) - (1 if has_header else 0)
        if n_sample_data == 0:
            shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
            raise DataError(
                f"The file has only a header row ({shown}) and no data below it. Add rows of numbers."
            )
        if len(numeric) < 2:
            found = "no column" if not numeric else f"only one column ({names[numeric[0]]!r})"
            raise DataError(
                f"Found {found} of numbers among {width} column{'s' if width != 1 else ''} separated by "
                f"{how}. Kernel regression needs two numeric columns, x and y; check that the file holds "
                "numbers and that its columns are separated by commas, semicolons, tabs or pipes."
                + (
                    ' An unmatched double quote (") can also swallow the rest of the file.'
                    if '"' in text
                    else ""
                )
            )

        xi = _column_choice(x_column, names, numeric, "x")
        yi = _column_choice(y_column, names, numeric, "y")
        for pos, role in ((xi, "x"), (yi, "y")):
            if pos is not None and pos not in numeric:
                listing = "; ".join(f"{i}: {names[i]!r}" for i in numeric)
                raise DataError(
                    f"Column {names[pos]!r} (position {pos}) chosen for {role} does not hold numbers. "
                    f"Numeric columns (position: name): {listing}."
                )
        if xi is None:
            xi = next(c for c in numeric if c != yi)
        if yi is None:
            yi = next(c for c in numeric if c != xi)
        if xi == yi:
            raise DataError(f"x and y are both column {names[xi]!r}; choose two different columns.")

        # --- second pass over everything: the two chosen columns, with the row limit
        to_float = _make_float(decimal_comma)
        xs = array("d")
        ys = array("d")
        line_of = array("q")
        short_rows = 0
        used_decimal_comma = False
        rows = rows_with_lines()
        if has_header:
            next(rows)
        need = max(xi, yi)
        for line_no, row in rows:
            if len(xs) >= MAX_CSV_ROWS:
                raise DataError(
                    f"The file has more than {MAX_CSV_ROWS:,} data rows (the limit). Take a sample of the "
                    "rows (for example every 10th row) and upload that."
                )
            if len(row) <= need:
                short_rows += 1
                xcell = row[xi] if xi < len(row) else ""
                ycell = row[yi] if yi < len(row) else ""
            else:
                xcell, ycell = row[xi], row[yi]
            xv, yv = to_float(xcell), to_float(ycell)
            if decimal_comma and not used_decimal_comma:
                used_decimal_comma = ("," in xcell and not math.isnan(xv)) or (
                    "," in ycell and not math.isnan(yv)
                )
            xs.append(xv)
            ys.append(yv)
            line_of.append(line_no)
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise DataError(
                f"A field of the file is longer than {csv.field_size_limit():,} characters, often because of "
                'an unmatched double quote ("). Check the quotes, or keep only the columns you need.'
            ) from None
        raise DataError(f"The file is not valid CSV: {exc}. Check its quotes and delimiters.") from None

    notes: list[str] = []
    if encoding_note:
        notes.append(encoding_note)
    notes.append(
        f"Read {len(xs):,} data rows in {width} columns separated by {how}"
        + (", with a header row." if has_header else ", without a header row.")
    )
    if used_decimal_comma:
        notes.append("Read decimal commas as decimal points (1,5 means 1.5).")
    if short_rows:
        notes.append(
            f"{_plural(short_rows, 'row')} had fewer fields than the x and y columns need; "
            "their missing cells count as empty."
        )
    notes.append(f"x is column {names[xi]!r}, y is column {names[yi]!r}.")

    xa = np.frombuffer(xs, dtype=np.float64).copy()
    ya = np.frombuffer(ys, dtype=np.float64).copy()
    del xs, ys
    x_sorted, y_sorted, more = _validate(
        xa,
        ya,
        where=lambda i: f"line {line_of[i]}",
        x_name=f"Column {names[xi]!r}",
        y_name=f"Column {names[yi]!r}",
    )
    return Dataset(
        name="csv",
        title=title,
        x=x_sorted,
        y=y_sorted,
        true_mean=None,
        noise_sd=None,
        x_label=names[xi],
        y_label=names[yi],
        source=f"Your file: {title}",
        notes=(*notes, *more),
        columns=tuple(names[c] for c in numeric),
        n_rows_read=int(xa.shape[0]),
    )


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _unique(names: list[str]) -> list[str]:
    """Names made distinct by appending " (2)", " (3)", … to repeats."""
    seen: Counter[str] = Counter()
    taken = set(names)
    out = []
    for nm in names:
        seen[nm] += 1
        if seen[nm] == 1:
            out.append(nm)
            continue
        k = seen[nm]
        candidate = f"{nm[: _COLUMN_NAME_CHARS - 6]} ({k})"
        while candidate in taken:
            k += 1
            candidate = f"{nm[: _COLUMN_NAME_CHARS - 6]} ({k})"
        taken.add(candidate)
        out.append(candidate)
    return out
