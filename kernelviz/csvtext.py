"""A CSV upload's bytes as checked UTF-8 text: read within the size limit, decoded, refused when binary.

:func:`read_text` is the first half of :func:`kernelviz.csvfile.load_csv`; every problem becomes a
:class:`~kernelviz.data.DataError` saying how to fix it.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from pathlib import Path
from typing import Any

import numpy as np

from kernelviz.data import DataError

__all__ = [
    "MAX_CSV_BYTES", "MAX_CSV_LINE_CHARS", "MAX_CSV_MB", "NAME_CHARS", "clean_name", "read_text",
    "source_name",
]

#: Upload limit in megabytes. ``.streamlit/config.toml`` sets ``[server] maxUploadSize`` to this number,
#: so the browser refuses a bigger file before it is sent and :func:`load_csv` refuses it otherwise.
MAX_CSV_MB: int = 50
#: The same limit in bytes (1 MB = 1024 × 1024 bytes, as Streamlit counts ``maxUploadSize``).
MAX_CSV_BYTES: int = MAX_CSV_MB * 1024 * 1024
#: Longest line a CSV may have, in characters (bytes of its UTF-8 text).
MAX_CSV_LINE_CHARS: int = 1_000_000

NAME_CHARS = 60  # file and column names are cut to this many characters
_SNIFF_CHARS = 65_536  # bytes looked at for binary content
_CONTROL = re.compile(rb"[\x01-\x08\x0e-\x1f]")
_BOMS = [(codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32")]
_BOMS += [(codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")]
_ENCODING_NAMES = {"cp1252": "Windows-1252 (Western European)", "latin-1": "Latin-1"}
_SIGNATURES = {
    b"PK\x03\x04": "a ZIP archive or an Excel workbook (.xlsx)",
    b"\xd0\xcf\x11\xe0": "an old Excel workbook (.xls)",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"\x1f\x8b": "a gzip archive",
    b"SQLite format 3": "an SQLite database",
    b"\x93NUMPY": "a NumPy .npy file",
}


def read_text(source: Any) -> tuple[bytes, str | None]:
    """The content of ``source`` (see ``load_csv``) as UTF-8 bytes without BOM, and a note naming the
    encoding when it was not UTF-8. Refused: more than ``MAX_CSV_BYTES`` bytes (at most one more is read),
    binary content, empty content and a line longer than ``MAX_CSV_LINE_CHARS``."""
    raw = _read_source(source)
    if len(raw) > MAX_CSV_BYTES:
        raise _too_big(len(raw))
    data, note = _to_utf8(raw)
    del raw
    _check_text(data)
    return data, note


def source_name(source: Any) -> str:
    """The file name of a path or of an object with a ``name`` (Streamlit's UploadedFile), else ""."""
    name = getattr(source, "name", None)
    if isinstance(source, str | os.PathLike):
        name = Path(os.fsdecode(source)).name
    return os.path.basename(name) if isinstance(name, str) else ""


def clean_name(name: str, fallback: str) -> str:
    """A one-line name without control characters, at most 60 characters (``fallback`` when empty)."""
    cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
    return (cleaned[: NAME_CHARS - 1] + "…" if len(cleaned) > NAME_CHARS else cleaned) or fallback


def _size_text(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 100 * 1024 else f"{size:,} bytes"


def _too_big(size: int) -> DataError:
    return DataError(
        f"The file is {_size_text(size)}; the limit is {_size_text(MAX_CSV_BYTES)}. Keep only the two "
        "columns you need, or take a sample of the rows (for example every 10th row), and upload that."
    )


def _read_source(source: Any) -> bytes:
    """The content of ``source`` (text is encoded as UTF-8); at most ``MAX_CSV_BYTES`` + 1 bytes are read."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source)
    if isinstance(source, str) and ("\n" in source or "\r" in source):
        raise DataError(
            "load_csv got a string with line breaks, which is not a file name. Pass a path to a file, or "
            "pass the CSV content as bytes (for example text.encode())."
        )
    if not isinstance(source, str | os.PathLike):
        if hasattr(source, "read"):
            return _read_stream(source)
        raise DataError(f"load_csv needs a file path, bytes or an open file; got a {type(source).__name__}.")
    shown = str(source)
    try:
        info = os.stat(source)
        if not stat.S_ISREG(info.st_mode):
            raise DataError(f"{shown!r} is not a regular file (it may be a folder); pass a CSV file.")
        if info.st_size > MAX_CSV_BYTES:
            raise _too_big(info.st_size)
        with open(source, "rb") as fh:
            return fh.read(MAX_CSV_BYTES + 1)
    except DataError:
        raise
    except FileNotFoundError:
        raise DataError(f"There is no file at {shown!r}; check the path.") from None
    except PermissionError:
        raise DataError(f"The file {shown!r} cannot be read (permission denied).") from None
    except (OSError, ValueError, TypeError) as exc:
        raise DataError(f"The file {shown!r} cannot be opened: {exc}.") from None


def _read_stream(stream: Any) -> bytes:
    size = getattr(stream, "size", None)  # Streamlit's UploadedFile knows its size before reading
    if isinstance(size, int) and size > MAX_CSV_BYTES:
        raise _too_big(size)
    parts, total = [], 0
    try:
        if callable(getattr(stream, "seekable", None)) and stream.seekable():
            stream.seek(0)
        while total <= MAX_CSV_BYTES and (part := stream.read(MAX_CSV_BYTES + 1 - total)):
            if not isinstance(part, str | bytes | bytearray | memoryview):
                raise TypeError(f"read() gave a {type(part).__name__}, not text or bytes")
            parts.append(part.encode("utf-8", "replace") if isinstance(part, str) else bytes(part))
            total += len(parts[-1])
    except Exception as exc:  # a file-like object may raise anything from .read()
        raise DataError(f"The file could not be read: {exc}.") from None
    return b"".join(parts)


def _to_utf8(raw: bytes) -> tuple[bytes, str | None]:
    """The content as UTF-8 without BOM, and a note naming the encoding when it was not UTF-8."""
    for magic, what in _SIGNATURES.items():
        if raw.startswith(magic):
            raise DataError(
                f"This looks like {what}, not a CSV text file. Open it in its program and export or save it "
                "as CSV (comma-separated values)."
            )
    guess = next((enc for bom, enc in _BOMS if raw.startswith(bom)), None) or _utf16_without_bom(raw[:4096])
    for encoding in [guess] if guess else ["utf-8", "cp1252", "latin-1"]:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding in ("utf-8", "utf-8-sig"):
            return raw.removeprefix(codecs.BOM_UTF8), None
        name = _ENCODING_NAMES.get(encoding, encoding.upper())
        return text.encode("utf-8"), f"The file is not UTF-8; read it as {name} text."
    raise DataError(
        f"The file starts like {guess.upper()} text but cannot be decoded as such; save it again as UTF-8."
    )


def _utf16_without_bom(head: bytes) -> str | None:
    """'utf-16-le' / 'utf-16-be' when NUL bytes fill the odd / even positions, as in UTF-16 of ASCII text."""
    half = max(1, len(head) // 2)
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if odd >= 0.4 * half and even <= 0.05 * half:
        return "utf-16-le"
    if even >= 0.4 * half and odd <= 0.05 * half:
        return "utf-16-be"
    return None


def _check_text(data: bytes) -> None:
    """Refuse empty content, binary content and lines longer than ``MAX_CSV_LINE_CHARS``."""
    if not data.strip():
        raise DataError("The file is empty. Choose a CSV file with a column of x values and one of y values.")
    head = data[:_SNIFF_CHARS]
    if b"\x00" in data or len(_CONTROL.findall(head)) > max(2, len(head) // 100):
        what = "contains NUL bytes" if b"\x00" in data else "does not look like text (control characters)"
        raise DataError(
            f"The file {what}, so it is binary rather than CSV text. Export the data as CSV (comma-separated "
            "values) and try again."
        )
    ends = np.flatnonzero(np.frombuffer(data.replace(b"\r", b"\n"), dtype=np.uint8) == ord("\n"))
    longest = int(np.diff(ends, prepend=-1, append=len(data)).max()) - 1
    if longest > MAX_CSV_LINE_CHARS:
        raise DataError(
            f"A line of the file is {longest:,} characters long; the limit is {MAX_CSV_LINE_CHARS:,}. Keep "
            "only the columns you need, or check that the file has line breaks."
        )
