"""CSV files into a :class:`~kernelviz.data.Dataset`: pandas parses, this module checks and explains.

The limits are checked before anything is parsed (bytes, line length, columns) or while parsing (rows),
and every problem with the input becomes a :class:`~kernelviz.data.DataError` saying how to fix it.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

import numpy as np

from kernelviz.csvtext import (
    MAX_CSV_BYTES,
    MAX_CSV_LINE_CHARS,
    MAX_CSV_MB,
    NAME_CHARS,
    clean_name,
    read_text,
    source_name,
)
from kernelviz.data import DataError, Dataset, _as_int, _plural, _validate

if TYPE_CHECKING:  # pandas is imported where a CSV is read: the first page of a new server need not wait
    import pandas as pd  # for it (0.25 s)

__all__ = ["MAX_CSV_BYTES", "MAX_CSV_COLUMNS", "MAX_CSV_LINE_CHARS", "MAX_CSV_MB", "MAX_CSV_ROWS", "load_csv"]

#: Most data rows a CSV may have (header, blank and comment lines not counted).
MAX_CSV_ROWS: int = 1_000_000
#: Most columns a CSV may have.
MAX_CSV_COLUMNS: int = 10_000

_SNIFF_LINES = 100  # lines looked at for the delimiter
_SAMPLE_ROWS, _SAMPLE_CELLS = 1000, 200_000  # rows looked at for the header and the numeric columns
_MISSING = ["-", "?", ".", "none", "None", "nil"]  # missing cells besides pandas' "", NA, N/A, NaN, null…
_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "pipes (|)", ",": "commas", None: "whitespace"}
_PANDAS = {"engine": "c", "encoding": "utf-8", "comment": "#", "skipinitialspace": True}  # for read_csv
_QUOTED, _DECIMAL_COMMA = re.compile(r'"[^"]*"'), re.compile(r"\d,\d")
_FOUND_FIELDS = re.compile(r"Too many columns specified: expected \d+ and found (\d+)")


def load_csv(source: Any, x_column: str | int | None = None, y_column: str | int | None = None) -> Dataset:
    """Read two numeric columns of a CSV file into a :class:`Dataset`.

    ``source``: a path (``str`` or ``os.PathLike``), ``bytes``, or a binary or text file-like object with
    ``.read()`` (Streamlit's ``UploadedFile``; a seekable object is read from its start). Refused: more than
    ``MAX_CSV_BYTES`` bytes (at most one byte more is read), a line over ``MAX_CSV_LINE_CHARS``, more than
    ``MAX_CSV_COLUMNS`` columns or ``MAX_CSV_ROWS`` data rows, binary files such as Excel workbooks.

    Encoding: UTF-8 (with or without BOM), UTF-16/32 with BOM, UTF-16 without BOM, else Windows-1252 /
    Latin-1. Delimiter: the one of semicolon, tab, pipe, comma or runs of whitespace that splits most of
    the first lines into the same number (at least 2) of fields, or the one an Excel "sep=;" first line
    names. With a delimiter other than the comma, decimal commas (1,5) are read as 1.5. Blank lines and
    text after ``#`` are skipped, and so are rows whose x and y cells are both empty.

    Header: the first row is a header when it has text above a numeric column; otherwise the columns are
    called "column 1", "column 2", …. A column is numeric when its first rows hold at least one number and
    no more text than numbers (empty cells and NA, N/A, NaN, null, none, -, ? count as missing).

    ``x_column`` / ``y_column``: a column name or a 0-based position in the file; by default the first two
    numeric columns. Rows whose x or y is not a finite number are dropped and counted in ``notes``.
    """
    data, encoding_note = read_text(source)
    return _parse(data, encoding_note, clean_name(source_name(source), "Uploaded data"), x_column, y_column)


def _parse(data: bytes, encoding_note: str | None, title: str, x_column: Any, y_column: Any) -> Dataset:
    sep, skip, width, decimal_comma = _sniff(data)
    decimal = "," if decimal_comma else "."
    options = {"sep": sep or r"\s+", "skiprows": skip, "names": range(width), "decimal": decimal}
    commas = sep != ","  # with another delimiter, a cell "1,5" means 1.5
    header, names, numeric = _layout(_read_sample(data, options), commas, _SEPARATORS[sep])
    xi, yi = _choose(names, numeric, x_column, y_column)
    frame = _read(data, options, header=header, usecols=[xi, yi], nrows=MAX_CSV_ROWS + 1, low_memory=False)
    if len(frame) > MAX_CSV_ROWS:
        raise DataError(
            f"The file has more than {MAX_CSV_ROWS:,} data rows (the limit). Take a sample of the rows (for "
            "example every 10th row) and upload that."
        )
    rows = np.flatnonzero(frame.notna().any(axis=1).to_numpy())  # x and y both empty: not a data row
    first_row = 0 if header is None else header + 1  # pandas' row number of frame's first row
    notes = [encoding_note] if encoding_note else []
    notes.append(
        f"Read {_plural(rows.size, 'data row')} (the limit is {MAX_CSV_ROWS:,}) in {len(names)} columns "
        f"separated by {_SEPARATORS[sep]}, {'without' if header is None else 'with'} a header row."
    )
    if decimal_comma:
        notes.append("Read decimal commas as decimal points (1,5 means 1.5).")
    notes.append(f"x is column {names[xi]!r}, y is column {names[yi]!r}.")
    x, y, dropped = _validate(
        _numbers(frame[xi], commas).to_numpy()[rows],
        _numbers(frame[yi], commas).to_numpy()[rows],
        where=lambda i: f"line {_line_number(data, skip, first_row + int(rows[i]))}",
        x_name=f"Column {names[xi]!r}",
        y_name=f"Column {names[yi]!r}",
    )
    return Dataset(
        name="csv", title=title, x=x, y=y, true_mean=None, noise_sd=None, x_label=names[xi],
        y_label=names[yi], source=f"Your file: {title}", notes=(*notes, *dropped),
        columns=tuple(names[c] for c in numeric), n_rows_read=int(rows.size),
    )


# --------------------------------------------------------------------------------------------- parsing


def _lines(data: bytes) -> io.TextIOWrapper:
    """The lines of the content, with their line ends (\\n, \\r\\n or \\r)."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace", newline="")


def _sniff(data: bytes) -> tuple[str | None, int, int, bool]:
    """How the file is laid out, from its first lines.

    Returns the delimiter (None for runs of whitespace), the lines before the data (1 after Excel's
    "sep=;" line, else 0), an upper bound of the number of fields in a row (delimiters inside quotes
    counted too; :func:`_read_sample` narrows it) and whether numbers have decimal commas.
    """
    lines = _lines(data)
    first = next(lines, "")
    declared = first.rstrip("\r\n").strip(" ").lower()
    skip = int(declared.startswith("sep=") and declared[4:] in _SEPARATORS)
    rows = chain([] if skip else [first], lines)
    raw = list(islice((line for line in rows if line.strip() and not line.startswith("#")), _SNIFF_LINES))
    content = [c for line in raw if (c := _QUOTED.sub("", line).split("#", 1)[0]).strip()]
    if not content:
        raise DataError("The file has no data rows, only blank or comment (#) lines.")

    def widths(sep: str | None, lines: list[str]) -> Counter[int]:
        return Counter(len(line.split()) if sep is None else line.count(sep) + 1 for line in lines)

    def agreement(sep: str | None) -> float:  # share of lines with the most common number (≥ 2) of fields
        width, count = widths(sep, content).most_common(1)[0]
        return count / len(content) if width >= 2 else 0.0

    sep = declared[4:] if skip else max(_SEPARATORS, key=agreement)
    if agreement(sep) == 0.0:
        raise DataError(
            "The file has only one column, but kernel regression needs an x column and a y column. "
            "Put x and y side by side, separated by commas."
        )
    width = max(widths(sep, raw))
    if width > MAX_CSV_COLUMNS:
        raise DataError(f"The file has {width:,} columns; the limit is {MAX_CSV_COLUMNS:,}. Keep fewer.")
    return sep, skip, width, sep != "," and any(_DECIMAL_COMMA.search(c) for c in content)


class _TooFewFieldsError(DataError):
    """pandas found rows of at most ``found`` fields where ``names`` asked for more."""

    def __init__(self, found: int) -> None:
        super().__init__("The rows have fewer fields than the first lines suggest; check the file's quotes.")
        self.found = found


def _read(data: bytes, options: dict[str, Any], **more: Any) -> pd.DataFrame:
    """``pandas.read_csv`` of the content (C engine, ``#`` starts a comment); its errors become DataError."""
    import pandas as pd

    try:
        return pd.read_csv(io.BytesIO(data), **_PANDAS, na_values=_MISSING, **options, **more)
    except (ValueError, OverflowError, IndexError) as exc:  # pandas' ParserError is a ValueError
        if "EOF inside string" in str(exc):
            raise DataError(
                'The file has an unmatched double quote ("), which swallows the rest of the file. Check the '
                "quotes, or remove them."
            ) from None
        if found := _FOUND_FIELDS.search(str(exc)):
            raise _TooFewFieldsError(int(found[1])) from None
        reason = " ".join(str(exc).split())
        raise DataError(f"The file is not valid CSV ({reason}). Check its quotes and delimiters.") from None


def _read_sample(data: bytes, options: dict[str, Any]) -> pd.DataFrame:
    """The first rows as text, one column per field.

    ``options["names"]`` comes from counting delimiters in the first lines; when pandas finds no row that
    wide (delimiters inside quotes do not count), it is cut to the widest row found and the rows read again.
    """
    nrows = max(5, min(_SAMPLE_ROWS, _SAMPLE_CELLS // len(options["names"])))
    try:
        return _read(data, options, header=None, dtype=str, usecols=options["names"], nrows=nrows)
    except _TooFewFieldsError as exc:
        options["names"] = range(exc.found)
        return _read(data, options, header=None, dtype=str, usecols=options["names"], nrows=nrows)


def _numbers(cells: pd.Series, commas: bool = False) -> pd.Series:
    """The cells as float64: NaN where a cell is missing or not a number; with ``commas``, "1,5" is 1.5."""
    import pandas as pd

    if cells.dtype.kind not in "iuf":
        cells = cells.astype("str")
        if commas:
            cells = cells.str.replace(",", ".", regex=False)
    return pd.to_numeric(cells, errors="coerce").astype(np.float64)


def _layout(sample: pd.DataFrame, commas: bool, how: str) -> tuple[int | None, list[str], list[int]]:
    """(row of the header or None, column names, numeric columns) from the first rows read as text."""
    sample = sample.dropna(how="all")  # rows of empty cells
    if sample.empty:
        raise DataError("The file has no data rows, only blank or comment (#) lines.")
    numbers = sample.apply(_numbers, commas=commas).notna()
    text = sample.notna() & ~numbers

    def numeric_columns(start: int) -> list[int]:
        n, t = numbers.iloc[start:].sum(), text.iloc[start:].sum()
        return [c for c in range(sample.shape[1]) if 0 < n[c] >= t[c]]

    has_header = bool(text.iloc[0][numeric_columns(1)].any() if len(sample) > 1 else text.iloc[0].any())
    first = sample.iloc[0].fillna("") if has_header else [""] * sample.shape[1]
    names = _unique([clean_name(str(cell), f"column {c + 1}") for c, cell in enumerate(first)])
    if has_header and len(sample) == 1:
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        raise DataError(f"The file has only a header row ({shown}) and no data below it. Add rows of data.")
    numeric = numeric_columns(1 if has_header else 0)
    if len(numeric) < 2:
        found = f"only one column ({names[numeric[0]]!r})" if numeric else "no column"
        raise DataError(
            f"Found {found} of numbers among {_plural(len(names), 'column')} separated by {how}. Kernel "
            "regression needs two numeric columns, x and y; check that the file holds numbers and that its "
            "columns are separated by commas, semicolons, tabs or pipes."
        )
    return (int(sample.index[0]) if has_header else None), names, numeric


def _choose(names: list[str], numeric: list[int], x_column: Any, y_column: Any) -> tuple[int, int]:
    xi, yi = _pick(x_column, names, numeric, "x"), _pick(y_column, names, numeric, "y")
    xi = next(c for c in numeric if c != yi) if xi is None else xi
    yi = next(c for c in numeric if c != xi) if yi is None else yi
    if xi == yi:
        raise DataError(f"x and y are both column {names[xi]!r}; choose two different columns.")
    return xi, yi


def _pick(choice: Any, names: list[str], numeric: list[int], role: str) -> int | None:
    """0-based position of the column chosen by name or position (None: no choice)."""
    if choice is None:
        return None
    listing = " Numeric columns (position: name): " + "; ".join(f"{i}: {names[i]!r}" for i in numeric) + "."
    if isinstance(choice, str):
        wanted = choice.strip()
        found = [i for i, n in enumerate(names) if n == wanted]
        found = found or [i for i, n in enumerate(names) if n.casefold() == wanted.casefold()]
        if not found:
            raise DataError(f"There is no column called {choice!r} for {role}." + listing)
        pos = found[0]
    else:
        try:
            pos = _as_int(choice, f"The {role} column")
        except DataError:
            raise DataError(
                f"The {role} column must be a column name or a 0-based position; got {choice!r}." + listing
            ) from None
        if not 0 <= pos < len(names):
            raise DataError(
                f"There is no column at position {pos} for {role}; the file has {len(names)} columns "
                f"(positions 0 to {len(names) - 1})." + listing
            )
    if pos not in numeric:
        raise DataError(
            f"Column {names[pos]!r} (position {pos}) chosen for {role} does not hold numbers." + listing
        )
    return pos


def _line_number(data: bytes, skip: int, row: int) -> int:
    """The 1-based line of the file holding pandas' row ``row``: blank and ``#`` lines are not rows."""
    number, wanted = 0, row
    for number, line in enumerate(_lines(data), start=1):
        if number > skip and line.strip() and not line.startswith("#"):
            if wanted == 0:
                break
            wanted -= 1
    return number


def _unique(names: list[str]) -> list[str]:
    """Names made distinct by appending " (2)", " (3)", … to repeats."""
    out: list[str] = []
    for name in names:
        k, new = 1, name
        while new in out:
            k += 1
            new = f"{name[: NAME_CHARS - 6]} ({k})"
        out.append(new)
    return out
