"""Small tables as Markdown: a dict of columns turned into a GitHub-flavoured Markdown table string.

A page draws a table of a few rows with ``st.markdown`` instead of ``st.dataframe``, so that the server never
imports pandas and pyarrow for it. Nothing here imports streamlit.
"""

from __future__ import annotations

import numbers
from collections.abc import Collection, Sequence

__all__ = ["markdown_table", "md_escape"]

_MD_SPECIAL = set("\\`*_{}[]()<>#+-.!|$~:")


def md_escape(text: object) -> str:
    """``text`` with every Markdown/LaTeX/HTML special character backslash-escaped, for user strings."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _numeric(values: Sequence[object]) -> bool:
    """A column of numbers: every value a real number (bool is not one), blanks (None) aside."""
    present = [v for v in values if v is not None]
    return bool(present) and all(_is_number(v) for v in present)


def _cell(value: object, number_format: str | None) -> str:
    """One cell: a number in ``number_format``, any other value escaped and on one line; None is blank."""
    if value is None:
        return ""
    if number_format is not None:
        return number_format % value
    return md_escape(" ".join(str(value).split()))


def markdown_table(table: dict[str, Sequence[object]], two_decimals: Collection[str] = ()) -> str:
    """``table`` (column name → values, all columns as long) as a Markdown table: numeric columns
    right-aligned with 4 significant digits (``%.4g``, so that a lengthscale that ran away, 1e+259, shows as
    such instead of as hundreds of digits), those named in ``two_decimals`` with two decimals (``%.2f``);
    text left-aligned, escaped for Markdown (a ``|`` stays inside its cell)."""
    columns = list(table)
    if not columns:
        return ""
    lengths = {len(v) for v in table.values()}
    if len(lengths) != 1:
        raise ValueError(f"columns of different lengths: { {c: len(v) for c, v in table.items()} }")
    formats = {c: ("%.2f" if c in two_decimals else "%.4g") if _numeric(table[c]) else None for c in columns}
    header = "| " + " | ".join(md_escape(c) for c in columns) + " |"
    rule = "| " + " | ".join("---:" if formats[c] else ":---" for c in columns) + " |"
    rows = ["| " + " | ".join(_cell(table[c][i], formats[c]) for c in columns) + " |"
            for i in range(lengths.pop())]
    return "\n".join([header, rule, *rows])
