"""A page's sliders as notches, and its settings one notch further along the slider moved last.

Pure functions of a page's settings (a NamedTuple or a frozen dataclass, one field a control): ``Notch`` is a
slider from ``low`` to ``high`` by ``step``, ``Options`` a slider over a list of values. ``next_settings``
says where a teacher stepping through one slider goes next, ``settings_ahead`` the next few steps; ``snapped``
puts each value on its notch (0.1 + 0.05 is 0.15), so that the settings a page reads and the ones
``next_settings`` steps to are the same cache key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeVar

__all__ = ["Notch", "Options", "field_names", "next_settings", "replace", "settings_ahead", "snapped"]

S = TypeVar("S")


def field_names(record: Any) -> tuple[str, ...]:
    """The fields of a record (a NamedTuple or a dataclass, or either's class), in order."""
    if dataclasses.is_dataclass(record):
        return tuple(f.name for f in dataclasses.fields(record))
    return tuple(record._fields)


def replace(record: S, **changes: Any) -> S:
    """``record`` with ``changes``: a NamedTuple's ``_replace``, a dataclass's ``dataclasses.replace``."""
    if dataclasses.is_dataclass(record):
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    return record._replace(**changes)  # type: ignore[attr-defined]


class Notch(NamedTuple):
    """A slider of a page: its ``low`` and ``high`` ends, its ``step`` and its ``default``."""

    low: float
    high: float
    step: float
    default: float

    def snap(self, value: float) -> float:
        """``value`` rounded to the nearest notch low + k step (an int where the step is whole)."""
        notch = self.low + round((value - self.low) / self.step) * self.step
        return round(notch) if float(self.step).is_integer() else round(notch, 9)

    def position(self, value: float) -> float:
        return value

    def after(self, value: float, up: bool) -> float | None:
        """The notch after ``value`` going up (or down); None past an end."""
        nxt = value + (self.step if up else -self.step)
        return self.snap(nxt) if self.low <= nxt <= self.high else None


class Options(NamedTuple):
    """A slider over ``values`` (a select slider), starting at ``default``."""

    values: tuple[Any, ...]
    default: Any

    def snap(self, value: Any) -> Any:
        return value

    def position(self, value: Any) -> int:
        """Where ``value`` is in the list (a ValueError for a value not listed)."""
        return self.values.index(value)

    def after(self, value: Any, up: bool) -> Any | None:
        """The option after ``value`` going up (or down); None past an end."""
        i = self.values.index(value) + (1 if up else -1)
        return self.values[i] if 0 <= i < len(self.values) else None


def snapped(settings: S, notches: Mapping[str, Notch | Options]) -> S:
    """``settings`` with each notched field's value on its notch."""
    return replace(settings, **{f: n.snap(getattr(settings, f)) for f, n in notches.items()})


def next_settings(before: S | None, now: S, notches: Mapping[str, Notch | Options]) -> S | None:
    """``now`` with the slider that moved from ``before`` moved one more notch the same way: where a
    teacher stepping through a slider goes next. None when no slider or more than one field moved, when
    the field that moved has no notches, or when the slider is at its end."""
    if before is None or type(before) is not type(now):
        return None
    moved = [f for f in field_names(now) if getattr(before, f) != getattr(now, f)]
    if len(moved) != 1 or moved[0] not in notches:
        return None
    field, notch = moved[0], notches[moved[0]]
    try:
        up = notch.position(getattr(now, field)) > notch.position(getattr(before, field))
    except ValueError:  # a value no option lists
        return None
    value = notch.after(getattr(now, field), up)
    return None if value is None else replace(now, **{field: value})


def settings_ahead(before: S | None, now: S, notches: Mapping[str, Notch | Options], count: int) -> list[S]:
    """The next ``count`` settings of a teacher who keeps stepping the slider that moved from ``before`` to
    ``now`` (``next_settings`` again and again), fewer where the slider reaches its end."""
    ahead: list[S] = []
    while len(ahead) < count and (after := next_settings(before, now, notches)) is not None:
        ahead.append(after)
        before, now = now, after
    return ahead
