"""Training that goes on: a press of a steps slider trains only the steps it adds.

``kv.fit(..., start=r)`` continues run r to more steps, with the numbers of a fresh run of that many steps
(``kernelviz.models.results``). The server keeps the last ``RUNS_KEPT`` runs it trained, each under what it
was trained with but its steps (shared by every visitor, as the cache is: the data set's key is part of
it), and a run asked for starts from the longest of them that is not longer than it. From 1,000 steps to
1,050, a press trains 50 steps instead of 1,050.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

from kernelviz.models.results import FitResult

__all__ = ["RUNS_KEPT", "continued"]

RUNS_KEPT = 48  # a few hundred kB: a one-head run keeps at most 2,000 losses and 2,001 lengthscales

Run = TypeVar("Run", FitResult, list[FitResult])


class _Kept:
    """The last runs trained, by (setting, steps), oldest first; safe to share between sessions' threads."""

    def __init__(self, size: int) -> None:
        self._runs: OrderedDict[tuple[Hashable, int], FitResult | list[FitResult]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def longest(self, setting: Hashable, steps: int) -> FitResult | list[FitResult] | None:
        """The kept run of ``setting`` with the most steps up to ``steps`` that can go on, or None."""
        with self._lock:
            runs = [(s, r) for (key, s), r in self._runs.items() if key == setting and s <= steps]
        runs = [(s, r) for s, r in runs if all(f.state is not None for f in _each(r))]
        return max(runs, key=lambda sr: sr[0])[1] if runs else None

    def keep(self, setting: Hashable, steps: int, run: FitResult | list[FitResult]) -> None:
        with self._lock:
            self._runs[(setting, steps)] = run
            self._runs.move_to_end((setting, steps))
            while len(self._runs) > self._size:
                self._runs.popitem(last=False)


def _each(run: FitResult | list[FitResult]) -> list[FitResult]:
    return run if isinstance(run, list) else [run]


_KEPT = _Kept(RUNS_KEPT)


def continued(setting: Hashable, steps: int, train: Callable[[Run | None], Run]) -> Run:
    """``train(start)`` for a run of ``steps`` steps, ``start`` the longest kept run of ``setting`` (all that
    the run is trained with but its steps) with at most that many steps, or None; the new run is kept.
    A start the backend refuses (a ``setting`` that leaves out something the run depends on) only costs
    a fresh run: ``train(None)``."""
    start = _KEPT.longest(setting, steps)
    try:
        run = train(start)  # type: ignore[arg-type]
    except ValueError:
        if start is None:
            raise
        run = train(None)
    _KEPT.keep(setting, steps, run)
    return run
