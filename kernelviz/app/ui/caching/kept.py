"""Results kept from the default views, so that a fresh server draws every page at once.

On a fresh server (a Cloud container that has just woken up) a page's first run compiles each program it
needs, several seconds for a chapter. But what a first visitor sees is always the same: every page with
its default controls on the sidebar's first data set (the blog post's own sample; d2l's for d2l's
sections). Those results are computed once, by the code that computes them live, and kept in
``kept_results.pkl.xz`` beside this module. ``lookup`` serves a cached call (``cache.cached``) from them
when its arguments are exactly those of a kept call, so those pages compile nothing; the warm-up compiles
in the background what the first slider move will need. ``KERNELVIZ_KEPT=0`` turns this off.

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
import inspect
import lzma
import os
import pickle
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from kernelviz.app.ui.page_data import Data
from kernelviz.runtime.i18n import language

__all__ = [
    "ENV", "MISSING", "STORE", "call_key", "drawn_from_kept", "load", "lookup", "mark", "note", "recording",
    "write",
]

STORE = Path(__file__).with_name("kept_results.pkl.xz")
ENV = "KERNELVIZ_KEPT"  # "0": compute every result, kept or not
MISSING = object()
_recorded: dict[str, object] | None = None
_lock = threading.Lock()
_drawn = threading.local()  # per script thread: a kept result asked for since the code expander last asked


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
    """The kept results by call key ({} when the file is missing or unreadable)."""
    try:
        with lzma.open(STORE, "rb") as f:
            kept = pickle.load(f)  # our own file, written by ``write``
    except (OSError, EOFError, lzma.LZMAError, pickle.UnpicklingError, AttributeError, ImportError):
        return {}
    return kept if isinstance(kept, dict) else {}


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


def write(results: dict[str, object], path: Path = STORE) -> Path:
    """Write ``results`` (call key → result) to ``path``."""
    with lzma.open(path, "wb", preset=9) as f:
        pickle.dump(dict(sorted(results.items())), f, protocol=5)
    load.cache_clear()
    return path

