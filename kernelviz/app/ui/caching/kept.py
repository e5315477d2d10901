"""Results kept from the default views, so that a fresh server draws every page at once.

On a fresh server (a Cloud container that has just woken up) a page's first run compiles each program it
needs, several seconds for a chapter. But what a first visitor sees is always the same: every page with
its default controls on the sidebar's first data set (the blog post's own sample; d2l's for d2l's
sections). Those results are computed once, by the code that computes them live, and kept in
``kept_results.npz.xz`` beside this module. ``lookup`` serves a cached call (``cache.cached``) from them
when its arguments are exactly those of a kept call, so those pages compile nothing; the warm-up compiles
in the background what the first slider move will need. ``KERNELVIZ_KEPT=0`` turns this off.

The file is data, read without running any code from it: an xz-compressed ``.npz`` (read with
``allow_pickle=False``) whose member ``index`` holds a JSON text (UTF-8 bytes) of every result by its call
key, each value tagged by its kind: a number, string, bool or None as itself (a float by its shortest exact
form; ``{"float": "nan"}``, ``"inf"`` or ``"-inf"`` otherwise), ``{"array": name}`` for the array stored as
member ``name`` (dtype and shape as they were; ``{"scalar": name}`` for a NumPy scalar, kept as a 0-d
array), ``{"tuple": [...]}``, ``{"list": [...]}``, ``{"dict": {...}}`` (string keys) or ``{"items": [[key,
value], ...]}`` (any other keys), and ``{"record": "module:qualname", "fields": {...}}`` for a dataclass or
NamedTuple of kernelviz's. Reading builds a record by calling its class, only a class named in a
``kernelviz.`` module that is a dataclass or NamedTuple whose fields are those the file names; a result
holding anything else (a class renamed, removed or given other fields since the file was written) is
dropped, and computed live, while the others are served. A missing or unreadable file keeps nothing.

The file is recorded in English and its records hold English words (panel titles, the kernels' labels,
the names of chapter 4's comparison, a training run's status message), so kept results serve only a server
whose language (``i18n.language()``) is English; in another language every page computes them live.

``python -m kernelviz.app.keep`` rewrites the file: it opens every page at its defaults (Streamlit's
AppTest) and records each cached call. ``tests/test_kept.py`` recomputes every kept result and fails when
one differs (after a change to a default, a model or a figure's data).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import inspect
import io
import json
import logging
import lzma
import math
import os
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from kernelviz.app.ui.page_data import Data
from kernelviz.runtime.i18n import language

__all__ = [
    "ENV", "MISSING", "STORE", "call_key", "drawn_from_kept", "load", "lookup", "mark", "note", "read",
    "recording", "write",
]

STORE = Path(__file__).with_name("kept_results.npz.xz")
ENV = "KERNELVIZ_KEPT"  # "0": compute every result, kept or not
MISSING = object()
_recorded: dict[str, object] | None = None
_lock = threading.Lock()
_drawn = threading.local()  # per script thread: a kept result asked for since the code expander last asked
_VERSION = 1  # of the file's layout (the module docstring): another version keeps nothing
_INDEX = "index"  # the member holding the JSON text; the arrays are "a0", "a1", …
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_EPOCH = (1980, 1, 1, 0, 0, 0)  # every member's date in the zip, so that the same results give the same bytes
_log = logging.getLogger(__name__)


class UnkeyableError(TypeError):
    """An argument with no stable plain form (the call is neither looked up nor recorded)."""


def _plain(value: Any) -> Any:
    """A stable, comparable form of an argument: a ``Data`` by its key, an array by its bytes, a float to 12
    significant digits (a computed argument, such as a learned ℓ, differs in its last digit from one
    processor to another)."""
    if isinstance(value, Data):
        return ("Data", _plain(tuple(value.key)))
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.12g}"
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ("ndarray", str(value.dtype), value.shape, digest)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_plain(v) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, _plain(dataclasses.astuple(value)))
    raise UnkeyableError(type(value).__name__)


def call_key(fn: Callable, args: tuple, kwargs: dict) -> str | None:
    """The key of a call: the function's module and name with its bound arguments, defaults applied (None
    when an argument has no plain form)."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    try:
        params = tuple((name, _plain(value)) for name, value in bound.arguments.items())
    except UnkeyableError:
        return None
    return repr((fn.__module__, fn.__qualname__, params))


@functools.cache
def load() -> dict[str, object]:
    """The kept results by call key, read from ``STORE`` once per process (``read``)."""
    return read(STORE)


def _serving() -> bool:
    """Whether kept results serve calls: not while recording, with ``KERNELVIZ_KEPT=0`` or in a language
    other than English."""
    return (_recorded is None and os.environ.get(ENV) != "0"
            and language() == "en")  # recorded in English: its records hold English words


def lookup(fn: Callable, args: tuple, kwargs: dict) -> object:
    """The kept result of this call, or ``MISSING`` (compute it)."""
    if not _serving():
        return MISSING
    key = call_key(fn, args, kwargs)
    return MISSING if key is None else load().get(key, MISSING)


def mark(fn: Callable, args: tuple, kwargs: dict) -> None:
    """Notes, in this thread, whether a page's cached call asks for a kept result or one that must be
    computed (``drawn_from_kept`` tells); the page's cache may then serve either, as it holds the same."""
    if _serving():
        key = call_key(fn, args, kwargs)
        if key is not None and key in load():
            _drawn.kept = True
        else:
            _drawn.computed = True


def drawn_from_kept() -> bool:
    """Whether every cached call this thread made since it last asked this was for a kept result, and there
    was one (the code under a chart asks, for the calls that drew the chart; every run starts afresh)."""
    kept, computed = getattr(_drawn, "kept", False), getattr(_drawn, "computed", False)
    _drawn.kept = _drawn.computed = False
    return kept and not computed


def note(fn: Callable, args: tuple, kwargs: dict, result: object) -> None:
    """While ``recording``: remember this call's result."""
    if _recorded is None:
        return
    key = call_key(fn, args, kwargs)
    if key is not None:
        with _lock:
            _recorded[key] = result


@contextmanager
def recording() -> Iterator[dict[str, object]]:
    """Record every cached call computed in the block (lookups are off meanwhile)."""
    global _recorded
    _recorded = {}
    try:
        yield _recorded
    finally:
        _recorded = None


def _public(name: str) -> bool:
    """Whether ``name`` is a plain public name (no dunder, no ``<locals>``)."""
    return name.isidentifier() and not name.startswith("_")


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The fields of a record class, in order: a NamedTuple's, or a dataclass's when each is an argument of
    its constructor (None for any other class)."""
    if issubclass(cls, tuple):
        fields = getattr(cls, "_fields", None)
        ok = isinstance(fields, tuple) and all(type(f) is str for f in fields)
        return fields if ok else None
    if dataclasses.is_dataclass(cls) and all(f.init for f in dataclasses.fields(cls)):
        return tuple(f.name for f in dataclasses.fields(cls))
    return None


def _type_name(cls: type) -> str | None:
    """``"module:qualname"`` of a record class of kernelviz's (None for any other class)."""
    module, qualname = cls.__module__, cls.__qualname__
    names = (*module.split("."), *qualname.split("."))
    if module.startswith("kernelviz.") and all(map(_public, names)) and _field_names(cls) is not None:
        return f"{module}:{qualname}"
    return None


def _record_type(name: object) -> type:
    """The record class ``name`` ("module:qualname") names: found by importing a ``kernelviz.`` module and
    reading attributes, nothing named in the file called; it must be that module's own dataclass or
    NamedTuple."""
    module, _, qualname = name.partition(":") if isinstance(name, str) else ("", "", "")
    names = (*module.split("."), *qualname.split("."))
    if not (module.startswith("kernelviz.") and all(map(_public, names))):
        raise ValueError(f"refused record type {name!r}")
    found: object = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not (isinstance(found, type) and _type_name(found) == name):
        raise ValueError(f"refused record type {name!r}")
    return found


class _Encoder:
    """Turns results into the file's JSON tree (the module docstring), putting each array in ``arrays`` by
    name (an array met twice, by one name, so that it is one array again on reading)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._names: dict[int, str] = {}  # id of an array held in ``arrays`` → its name

    def _array(self, value: np.ndarray) -> str:
        """The name of ``value`` among ``arrays``."""
        if value.dtype.hasobject:
            raise TypeError("an array of Python objects cannot be kept")
        if id(value) not in self._names:
            self._names[id(value)] = name = f"a{len(self.arrays)}"
            self.arrays[name] = value
        return self._names[id(value)]

    def tree(self, value: object) -> object:
        """The JSON tree of ``value``; a TypeError for a kind the file cannot hold."""
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"float": repr(value)}  # "nan", "inf" or "-inf"
        if type(value) is np.ndarray:
            return {"array": self._array(value)}
        if isinstance(value, np.generic):
            return {"scalar": self._array(np.asarray(value))}
        if type(value) in (tuple, list):
            return {type(value).__name__: [self.tree(v) for v in value]}
        if type(value) is dict:
            if all(type(k) is str for k in value):
                return {"dict": {k: self.tree(v) for k, v in value.items()}}
            return {"items": [[self.tree(k), self.tree(v)] for k, v in value.items()]}
        name = _type_name(type(value))
        if name is None:
            raise TypeError(f"a {type(value).__module__}.{type(value).__qualname__} cannot be kept")
        fields = _field_names(type(value)) or ()
        return {"record": name, "fields": {f: self.tree(getattr(value, f)) for f in fields}}


def _decode(tree: object, arrays: dict[str, np.ndarray]) -> object:
    """The value a JSON tree encodes (``_Encoder.tree``), its arrays from ``arrays``; a ValueError, KeyError
    or TypeError when the tree is not one ``_Encoder`` writes or names a record type refused or changed."""
    if tree is None or type(tree) in (bool, int, float, str):
        return tree
    if type(tree) is not dict or len(tree) != (2 if "record" in tree else 1):
        raise ValueError(f"not a kept value: {str(tree)[:80]}")
    tag = "record" if "record" in tree else next(iter(tree))
    body = tree[tag]
    if tag == "float":
        return _NONFINITE[body]
    if tag in ("array", "scalar"):
        return arrays[body] if tag == "array" else arrays[body][()]
    if tag in ("tuple", "list") and type(body) is list:
        items = [_decode(v, arrays) for v in body]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict" and type(body) is dict:
        return {k: _decode(v, arrays) for k, v in body.items()}
    if tag == "items" and type(body) is list:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in body}
    if tag == "record" and type(tree.get("fields")) is dict:
        cls, fields = _record_type(body), tree["fields"]
        if tuple(fields) != _field_names(cls):
            raise ValueError(f"{body}: fields {list(fields)}, the class's are {_field_names(cls)}")
        return cls(**{f: _decode(v, arrays) for f, v in fields.items()})
    raise ValueError(f"not a kept value: {str(tree)[:80]}")


def write(results: dict[str, object], path: Path = STORE) -> Path:
    """Write ``results`` (call key → result) to ``path`` in the file's layout (the module docstring); a
    TypeError, before anything is written, when a result holds a kind the file cannot hold."""
    encoder = _Encoder()
    index = {"version": _VERSION, "results": {k: encoder.tree(v) for k, v in sorted(results.items())}}
    text = json.dumps(index, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    members = {_INDEX: np.frombuffer(text.encode(), np.uint8), **encoder.arrays}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:  # stored, not deflated: xz compresses the whole better
        for name, array in members.items():
            with z.open(zipfile.ZipInfo(f"{name}.npy", _EPOCH), "w", force_zip64=True) as f:
                np.lib.format.write_array(f, array, allow_pickle=False)
    part = path.with_name(path.name + ".part")
    part.write_bytes(lzma.compress(buffer.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    part.replace(path)  # a reader never finds half a file
    load.cache_clear()
    return path


def _members(path: Path) -> dict[str, np.ndarray]:
    """Every array in the xz-compressed ``.npz`` at ``path``, by name (read with ``allow_pickle=False``)."""
    with np.load(io.BytesIO(lzma.decompress(path.read_bytes())), allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def read(path: Path) -> dict[str, object]:
    """The results kept in the file at ``path`` by call key: {} when it is missing, unreadable or of another
    version; a result that cannot be read back as it was written (a record type refused, renamed or with
    other fields) is left out, to be computed live. No exception comes out."""
    try:
        arrays = _members(path)
        index = json.loads(arrays.pop(_INDEX).tobytes().decode("utf-8"))
        if type(index) is not dict or index.get("version") != _VERSION or type(index["results"]) is not dict:
            raise ValueError(f"not kept results of version {_VERSION}")
        entries = index["results"]
    except Exception as e:  # any damage: nothing kept, every page computes as without the file
        if not isinstance(e, FileNotFoundError):
            _log.warning("no kept results read from %s: %r", path, e)
        return {}
    kept = {}
    for key, tree in entries.items():
        try:
            kept[key] = _decode(tree, arrays)
        except Exception as e:  # a record's class changed (or refused) since the file was written
            _log.warning("kept result left out, computed live: %s: %r", key[:120], e)
    return kept
