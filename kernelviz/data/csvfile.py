"""Your own data as a :class:`~kernelviz.data.datasets.Dataset`: a CSV file through pandas, or two arrays.

pandas parses; this module finds the layout, checks the limits and says what is wrong in words a person
can act on. Anything wrong with the input raises :class:`~kernelviz.data.datasets.DataError` (a
``ValueError``).

* Source: a path, bytes, or a file-like with ``.read()`` (Streamlit's ``UploadedFile``, read from its
  start); at most ``MAX_CSV_BYTES`` bytes, ``MAX_CSV_COLUMNS`` columns and ``MAX_CSV_ROWS`` data rows.
* Text: UTF-8 (BOM optional), UTF-16 with a BOM, else Windows-1252. NUL bytes mean a binary
  file (an Excel workbook, a PDF, an image, UTF-16 without a BOM).
* Delimiter: of ``; tab | ,`` the one that splits most of the first 100 lines into the same number (≥ 2)
  of fields, else runs of whitespace. With a delimiter other than the comma, "1,5" is 1.5. Blank lines,
  text after ``#`` and rows with x and y both empty are skipped.
* Header: the first row, when it has text above a column of numbers (else "column 1", "column 2", …). A
  column is numeric when its first rows hold a number and no more text than numbers.
* x and y: ``x_column`` / ``y_column`` (a column's name as listed in ``Dataset.columns``, or its 0-based
  position), by default the first two numeric columns.

For a CSV and for arrays alike, pairs whose x or y is missing or not a finite number are dropped (and
counted in ``notes``); the rest must make a valid :class:`~kernelviz.data.datasets.Dataset`: at least 3 pairs,
x not constant, |values| ≤ 1e150, sorted by x (stably: repeated x keep their order).
"""

from __future__ import annotations

import codecs
import io
import os
import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kernelviz.data.datasets import MAX_ABS_VALUE, MIN_POINTS, DataError, Dataset
from kernelviz.runtime.i18n import _, ngettext
from kernelviz.runtime.jax_setup import float64

if TYPE_CHECKING:  # pandas is imported when a CSV is read, so that importing kernelviz stays quick
    import pandas as pd

__all__ = [
    "MAX_CSV_BYTES", "MAX_CSV_COLUMNS", "MAX_CSV_MB", "MAX_CSV_ROWS", "DataInfo", "dataset_from_arrays",
    "load_csv",
]

#: Upload limit in megabytes; ``.streamlit/config.toml`` sets ``[server] maxUploadSize`` to this number.
MAX_CSV_MB: int = 50
#: The same limit in bytes (1 MB = 1024 × 1024 bytes, as Streamlit counts ``maxUploadSize``).
MAX_CSV_BYTES: int = MAX_CSV_MB * 1024 * 1024
#: Most data rows a CSV may have (header, blank and comment lines not counted).
MAX_CSV_ROWS: int = 1_000_000
#: Most columns a CSV may have.
MAX_CSV_COLUMNS: int = 10_000

_BOMS = [(codecs.BOM_UTF8, "UTF-8-sig"), (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")]
_QUOTED = re.compile(r'"[^"]*"')
_SEPARATORS = {";": _("semicolons"), "\t": _("tabs"), "|": _("pipes (|)"), ",": _("commas"),
               None: _("whitespace")}  # each delimiter (None: runs of whitespace) and its name in the notes


@float64
def load_csv(source: Any, x_column: str | int | None = None, y_column: str | int | None = None) -> Dataset:
    """Two numeric columns of a CSV file as a :class:`Dataset` (the rules are in the module docstring)."""
    data, notes = _decode(_read_bytes(source))
    sep, width = _sniff(data)
    options = dict(sep=sep or r"\s+", header=None, comment="#", skipinitialspace=True)
    sample = _read(data, options, names=range(width), dtype=str, index_col=False, on_bad_lines="skip",
                   nrows=max(5, min(1000, 200_000 // width)))
    commas = sep != ","  # with another delimiter, "1,5" means 1.5
    header, names, numeric = _layout(sample, commas, _SEPARATORS[sep])
    xi, yi = (_column(c, role, names, numeric) for c, role in ((x_column, "x"), (y_column, "y")))
    xi = next(c for c in numeric if c != yi) if xi is None else xi
    yi = next(c for c in numeric if c != xi) if yi is None else yi
    if xi == yi:
        raise DataError(_("x and y are both column {name!r}; choose two different columns.").format(
            name=names[xi]))
    frame = _read(data, {**options, "header": header}, names=range(len(names)), usecols=[xi, yi],
                  low_memory=False, nrows=MAX_CSV_ROWS + 1)
    if len(frame) > MAX_CSV_ROWS:
        raise DataError(_("The file has more than {limit:,} data rows (the limit). Take a sample of the rows "
                          "(for example every 10th row) and upload that.").format(limit=MAX_CSV_ROWS))
    frame = frame.dropna(how="all")  # x and y both empty: not a data row
    rows = frame.index.to_numpy() + 1
    notes.append(_read_note(len(frame), len(names), _SEPARATORS[sep], header is not None))
    notes.append(_("x is column {x!r}, y is column {y!r}.").format(x=names[xi], y=names[yi]))
    name = os.fsdecode(source) if isinstance(source, str | os.PathLike) else getattr(source, "name", None)
    title = _clean(os.path.basename(name) if isinstance(name, str) else "") or _("Uploaded data")
    x, y = (_numbers(frame[c], commas).to_numpy() for c in (xi, yi))
    labels = tuple(_("Column {name!r}").format(name=names[c]) for c in (xi, yi))
    return _checked(x, y, lambda i: _("data row {n}").format(n=rows[i]), labels,
                    name="csv", title=title, x_label=names[xi], y_label=names[yi], notes=notes,
                    source=_("Your file: {title}").format(title=title),
                    columns=tuple(names[c] for c in numeric))


def _read_note(rows: int, columns: int, how: str, header: bool) -> str:
    """The note on what was read: ``rows`` data rows in ``columns`` columns separated by ``how``."""
    if header:
        text = ngettext("Read {n:,} data row (the limit is {limit:,}) in {columns} columns separated by "
                        "{how}, with a header row.",
                        "Read {n:,} data rows (the limit is {limit:,}) in {columns} columns separated by "
                        "{how}, with a header row.", rows)
    else:
        text = ngettext("Read {n:,} data row (the limit is {limit:,}) in {columns} columns separated by "
                        "{how}, without a header row.",
                        "Read {n:,} data rows (the limit is {limit:,}) in {columns} columns separated by "
                        "{how}, without a header row.", rows)
    return text.format(n=rows, limit=MAX_CSV_ROWS, columns=columns, how=how)


class DataInfo(NamedTuple):
    """What a data set is, besides its points: a short ``name`` and a ``title``, the labels of its x and y
    axes, where it comes from (``source``), sentences for the reader (``notes``) and, for a synthetic set,
    its generating mean f(x) and noise level n(x) (``true_mean``, ``noise_sd``: functions of an array of x;
    None when unknown)."""

    name: str = "custom"
    title: str = _("Custom data")
    x_label: str = "x"
    y_label: str = "y"
    source: str = _("Arrays supplied by the caller.")
    notes: Sequence[str] = ()
    true_mean: Callable[[np.ndarray], np.ndarray] | None = None
    noise_sd: Callable[[np.ndarray], np.ndarray] | None = None


CUSTOM = DataInfo()  # arrays of unknown origin


@float64
def dataset_from_arrays(x: Any, y: Any, info: DataInfo = CUSTOM) -> Dataset:
    """A validated :class:`Dataset` from two equal-length 1-D sequences of numbers, sorted by x, described
    by ``info`` (its title, labels, source, notes and truth)."""
    try:
        if np.iscomplexobj(x) or np.iscomplexobj(y):  # NumPy would drop the imaginary parts
            raise TypeError(_("complex numbers"))  # shown in the DataError below
        xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise DataError(_("x and y must be sequences of real numbers ({error}).").format(error=exc)) from None
    if xa.ndim != 1 or xa.shape != ya.shape:
        raise DataError(_("x and y must be flat sequences of the same length; got shapes {x_shape} and "
                          "{y_shape}.").format(x_shape=xa.shape, y_shape=ya.shape))
    return _checked(xa, ya, lambda i: _("index {i}").format(i=i), ("x", "y"), name=str(info.name),
                    title=str(info.title), x_label=str(info.x_label), y_label=str(info.y_label),
                    source=str(info.source), notes=[*info.notes], true_mean=info.true_mean,
                    noise_sd=info.noise_sd)


def _checked(x: np.ndarray, y: np.ndarray, where: Callable[[int], str], labels: tuple[str, str], *,
             notes: list[str], **fields: Any) -> Dataset:
    """The Dataset of the finite pairs, sorted by x, after the checks; ``where(i)`` names input row i."""
    keep = np.isfinite(x) & np.isfinite(y)
    if n_drop := int(keep.size - np.count_nonzero(keep)):
        notes.append(_dropped_note(n_drop, keep.size, where(int(np.argmin(keep)))))
    for values, label in ((x, labels[0]), (y, labels[1])):
        if (big := np.flatnonzero(keep & (np.abs(values) > MAX_ABS_VALUE))).size:
            raise DataError(_("{label} has the value {value:.6g} at {where}. Values must lie between −1e150 "
                              "and 1e150 so that their squares stay finite; rescale the column (for example "
                              "divide it by a power of ten) and try again.")
                            .format(label=label, value=values[big[0]], where=where(int(big[0]))))
    if (idx := np.flatnonzero(keep)).size < MIN_POINTS:
        raise DataError(_too_few_rows(idx.size, keep.size))
    order = idx[np.argsort(x[idx], kind="stable")]
    if x[order[0]] == x[order[-1]]:
        raise DataError(_("Every x value is {value:.6g}. Kernel regression needs x values that differ; "
                          "choose another x column.").format(value=x[order[0]]))
    fields = {"true_mean": None, "noise_sd": None, **fields}
    return Dataset(x=x[order], y=y[order], notes=tuple(notes), n_rows_read=keep.size, **fields)


def _dropped_note(dropped: int, total: int, first: str) -> str:
    """The note on the ``dropped`` of ``total`` rows without a finite x and y, the ``first`` of them."""
    return ngettext("Dropped {dropped:,} of {n:,} row whose x or y was empty, not a number, NaN or infinite "
                    "(the first at {where}).",
                    "Dropped {dropped:,} of {n:,} rows whose x or y was empty, not a number, NaN or infinite "
                    "(the first at {where}).", total).format(dropped=dropped, n=total, where=first)


def _too_few_rows(usable: int, total: int) -> str:
    """Why ``usable`` of ``total`` rows are too few."""
    return ngettext("Only {n:,} usable row (with a finite number for both x and y) out of {total:,}; kernel "
                    "regression needs at least {low}. Check that the right columns are chosen and that they "
                    "hold numbers.",
                    "Only {n:,} usable rows (with a finite number for both x and y) out of {total:,}; kernel "
                    "regression needs at least {low}. Check that the right columns are chosen and that they "
                    "hold numbers.", usable).format(n=usable, total=total, low=MIN_POINTS)


def _read_bytes(source: Any) -> bytes:
    """At most ``MAX_CSV_BYTES`` + 1 bytes of a path, bytes or file-like (text is encoded as UTF-8)."""
    if isinstance(source, bytes | bytearray | memoryview):
        raw = bytes(source)
    elif isinstance(source, str | os.PathLike):
        try:
            with open(source, "rb") as fh:
                raw = fh.read(MAX_CSV_BYTES + 1)
        except (OSError, ValueError) as exc:  # ValueError: a NUL character in the path
            raise DataError(_("The file {path!r} cannot be read ({error}).").format(path=os.fsdecode(source),
                                                                                    error=exc)) from None
    elif hasattr(source, "read"):
        try:
            if getattr(source, "seekable", lambda: False)():
                source.seek(0)
            raw = source.read(MAX_CSV_BYTES + 1)
            raw = raw.encode() if isinstance(raw, str) else bytes(raw)
        except Exception as exc:  # a file-like object may raise anything from .read()
            raise DataError(_("The file could not be read: {error}.").format(error=exc)) from None
    else:
        raise DataError(_("load_csv needs a file path, bytes or an open file; got a {kind}.").format(
            kind=type(source).__name__))
    if len(raw) > MAX_CSV_BYTES:
        raise DataError(_("The file is larger than {limit:,} bytes ({mb} MB), the limit. Keep only the "
                          "columns you need, or every 10th row, and upload that.")
                        .format(limit=MAX_CSV_BYTES, mb=MAX_CSV_MB))
    return raw


def _decode(raw: bytes) -> tuple[bytes, list[str]]:
    """The content as UTF-8 without BOM, and a note naming the encoding when it was not UTF-8; binary and
    empty files are refused."""
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), None)
    try:
        text = raw.decode(encoding.lower() if encoding else "utf-8")
    except UnicodeDecodeError:
        if encoding:
            raise DataError(_("The file starts like {encoding} text but cannot be decoded as such; save it "
                              "again as UTF-8.").format(encoding=encoding)) from None
        text, encoding = raw.decode("cp1252", errors="replace"), _("Windows-1252 (Western European)")
    if not text.strip():
        raise DataError(_("The file is empty. Choose a CSV file with a column of x values and one of y "
                          "values."))
    if "\x00" in text:
        raise DataError(_("The file holds NUL bytes: it is binary (an Excel workbook, a PDF, …), not CSV "
                          "text. Export or save the data as CSV in UTF-8 and try again."))
    if encoding in (None, "UTF-8-sig"):
        return raw.removeprefix(codecs.BOM_UTF8), []
    return text.encode(), [_("The file is not UTF-8; read it as {encoding}.").format(encoding=encoding)]


def _sniff(data: bytes) -> tuple[str | None, int]:
    """(delimiter, None for whitespace; most fields in a row of the first 100)."""
    text = io.TextIOWrapper(io.BytesIO(data), errors="replace", newline=None)  # \n, \r\n, \r end a line
    raw = list(islice((line for line in text if line.strip() and not line.startswith("#")), 100))
    content = [c for line in raw if (c := _QUOTED.sub("", line).split("#", 1)[0]).strip()]
    if not content:
        raise DataError(_("The file has no data rows, only blank or comment (#) lines."))

    def fields(sep: str | None, line: str) -> int:
        return len(line.split()) if sep is None else line.count(sep) + 1

    def agreement(sep: str | None) -> float:  # share of lines with the most common number (≥ 2) of fields
        width, count = Counter(fields(sep, line) for line in content).most_common(1)[0]
        return count / len(content) if width >= 2 else 0.0

    sep = max(_SEPARATORS, key=agreement)
    if agreement(sep) == 0.0:
        raise DataError(_("The file has only one column, but kernel regression needs an x column and a y "
                          "column. Put x and y side by side, separated by commas."))
    if (width := max(fields(sep, line) for line in raw)) > MAX_CSV_COLUMNS:
        raise DataError(_("The file has {width:,} columns; the limit is {limit:,}. Keep fewer.").format(
            width=width, limit=MAX_CSV_COLUMNS))
    return sep, width


def _read(data: bytes, options: dict[str, Any], **more: Any) -> pd.DataFrame:
    """``pandas.read_csv`` of the UTF-8 content; its errors become DataError."""
    import pandas as pd

    try:
        with warnings.catch_warnings():  # a row wider than ``names`` is cut short, which is what we want
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            return pd.read_csv(io.BytesIO(data), encoding="utf-8", **options, **more)
    except (ValueError, OverflowError, IndexError) as exc:  # pandas' ParserError is a ValueError
        error = " ".join(str(exc).split())
        raise DataError(_('The file is not valid CSV ({error}). Check its quotes (an unmatched " swallows '
                          "the rest of the file) and delimiters.").format(error=error)) from None


def _numbers(cells: pd.Series, commas: bool) -> pd.Series:
    """The cells as float64, NaN where missing or not a number; with ``commas``, "1,5" is 1.5."""
    import pandas as pd

    if cells.dtype.kind not in "iuf":
        cells = cells.astype(str)
        cells = cells.str.replace(",", ".", regex=False) if commas else cells
    return pd.to_numeric(cells, errors="coerce").astype(np.float64)


def _layout(sample: pd.DataFrame, commas: bool, how: str) -> tuple[int | None, list[str], list[int]]:
    """(pandas' row of the header or None, column names, numeric columns) from the first rows as text."""
    sample = sample.dropna(how="all")  # rows of empty cells
    if sample.empty:
        raise DataError(_("The file has no data rows, only blank or comment (#) lines."))
    sample = sample.iloc[:, : 1 + np.flatnonzero(sample.notna().any().to_numpy()).max()]  # no empty tail
    numbers = sample.apply(_numbers, commas=commas).notna().to_numpy()
    text = sample.notna().to_numpy() & ~numbers

    def numeric_columns(start: int) -> list[int]:
        n, t = numbers[start:].sum(axis=0), text[start:].sum(axis=0)
        return [c for c in range(n.size) if 0 < n[c] >= t[c]]

    has_header = bool(text[0, numeric_columns(1)].any() if len(sample) > 1 else text[0].any())
    names: list[str] = []
    for c, cell in enumerate(sample.iloc[0].fillna("") if has_header else [""] * sample.shape[1]):
        name = _clean(str(cell)) or f"column {c + 1}"
        names.append(next(f"{name} ({k})" for k in range(2, c + 3) if f"{name} ({k})" not in names)
                     if name in names else name)  # a repeated name gets " (2)", " (3)", …
    if has_header and len(sample) == 1:
        raise DataError(_("The file has only a header row ({names}) and no data below it.").format(
            names=", ".join(names[:5])))
    numeric = numeric_columns(1 if has_header else 0)
    if len(numeric) < 2:
        raise DataError(_too_few_numeric(names, numeric, how))
    return (int(sample.index[0]) if has_header else None), names, numeric


def _too_few_numeric(names: list[str], numeric: list[int], how: str) -> str:
    """Why fewer than two of the columns ``names`` (separated by ``how``) hold numbers (``numeric``)."""
    if numeric:
        found = ngettext("Found only one column ({name!r}) of numbers among {n:,} column separated by "
                         "{how}.",
                         "Found only one column ({name!r}) of numbers among {n:,} columns separated by "
                         "{how}.", len(names))
    else:
        found = ngettext("Found no column of numbers among {n:,} column separated by {how}.",
                         "Found no column of numbers among {n:,} columns separated by {how}.", len(names))
    found = found.format(name=names[numeric[0]] if numeric else "", n=len(names), how=how)
    needs = _("Kernel regression needs two numeric columns, x and y; check that the file holds numbers in "
              "columns separated by commas, semicolons, tabs or pipes.")
    return f"{found} {needs}"


def _column(choice: Any, role: str, names: list[str], numeric: list[int]) -> int | None:
    """The 0-based position of the numeric column chosen by name or position (None: no choice)."""
    if choice is None:
        return None
    found = names.index(choice) if choice in names else None
    if isinstance(choice, int | np.integer) and not isinstance(choice, bool):
        found = int(choice)
    if found not in numeric:
        raise DataError(_("The file has no numeric column {choice!r} for {role} (a column name or a 0-based "
                          "position). Numeric columns (position: name): {columns}.").format(
            choice=choice, role=role, columns="; ".join(f"{i}: {names[i]!r}" for i in numeric)))
    return found


def _clean(name: str) -> str:
    """One line of printable characters, at most 60 of them."""
    name = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
    return name[:59] + "…" if len(name) > 60 else name
