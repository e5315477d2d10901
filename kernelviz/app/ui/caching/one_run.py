"""One script run's results: a cached call made again in the same run, with the same arguments, returns the
result the run already has.

A chapter's book draws each chart from the data and the settings alone, so two charts that share a trained
model each ask the cache for it; ``st.cache_data`` would unpickle a new copy of the result for each ask.
Within a run (``Runs.running`` opens one, for a page and for a fragment's rerun) the first copy is kept and
handed out again. Threads other than the run's (the look-ahead, the warm-up) have no run: their calls go to
the cache as before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from kernelviz.app.ui.page_data import Data

__all__ = ["MISSING", "call_key", "get", "keep", "one_run"]

MISSING = object()
_RUN: ContextVar[dict | None] = ContextVar("kernelviz_one_run", default=None)


@contextmanager
def one_run() -> Iterator[None]:
    """Within the block, cached results are kept for the run (a block inside another is the same run)."""
    token = _RUN.set({}) if _RUN.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _RUN.reset(token)


def _part(value: Any) -> Hashable:
    """A call's argument as its part of the key: a ``Data`` by its key, anything else by its type and value
    (so that ``1`` and ``True`` differ)."""
    return ("Data", value.key) if isinstance(value, Data) else (type(value).__qualname__, value)


def call_key(fn: Callable, args: tuple, kwargs: dict) -> Hashable | None:
    """The key of a call: the function and its arguments; None where an argument is not hashable."""
    key = (fn, tuple(map(_part, args)), tuple(sorted((k, _part(v)) for k, v in kwargs.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def get(key: Hashable | None) -> Any:
    """The result this run already has for call ``key``, or ``MISSING``."""
    run = _RUN.get()
    return MISSING if run is None or key is None else run.get(key, MISSING)


def keep(key: Hashable | None, result: Any) -> Any:
    """Keep ``result`` of call ``key`` for the rest of this run (when there is a run); returns it."""
    run = _RUN.get()
    if run is not None and key is not None:
        run[key] = result
    return result
