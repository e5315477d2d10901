"""A view's settings declared once: a record, and for each of its fields the control that sets it.

A view's settings are a record (a NamedTuple or a frozen dataclass, hashable, so that caches key on it by
value); its defaults are the record's own field defaults. ``Controls`` adds, field by field, what a page
needs to show and read each one (``Control``: label, help, kind, range or options, URL key, notches). Ranges
that depend on the data (the hold-out size ≤ n − 1, ℓ within the data's span) are functions of a context
the page passes (its ``Data``). Everything else is derived from the two:

- the widgets (``kernelviz.app.ui.widgets.controls.draw``), their keys and URL parameters (``key``);
- the address: ``from_query`` reads a URL into a record (clamped and snapped, each value it could not take
  named), ``to_query`` writes a record as one;
- the notches a teacher steps through and the look-ahead prepares (``notches``);
- the defaults at a data set's size (``defaults``), which the warm-up and the kept results use.

The page opens with a record (``Controls.start``): the record's own defaults, or, where a page starts a field
elsewhere, the record with that field changed and the reason in a comment beside it. HoloViz ``param``
declares all of this on one object; Streamlit has no widget binding for such an object, and the model layer's
records (``kernelviz.models``) must stay free of words and widgets, so the table sits beside the record
instead and is checked against it when it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from kernelviz.app.views.notches import Notch, Options, field_names, replace
from kernelviz.app.views.values import Spec, make_spec, read, to_url

__all__ = ["Control", "Controls", "Parsed"]

Bound = float | Callable[[Any], float] | None  # an end of a range: a number, or a function of the context


def _resolve(value: Any, context: Any) -> Any:
    return value(context) if callable(value) else value


@dataclass(frozen=True)
class Control:
    """How one field is shown and read: ``label`` and ``help`` as the page shows them, the widget ``kind``
    (``values.KINDS``), the range ``low`` to ``high`` by ``step`` or the ``options`` (each a value or a
    function of the context), the words of each option (``names``), the URL key's last part (``url``, the
    field's name when None), whether a teacher steps it notch by notch (``notched``: the look-ahead
    prepares the next one), whether a change redraws the whole page rather than only the section the
    control is in (``whole_page``: its value feeds other sections), where it opens when that depends on
    the context (``opens_at``: chapter 1's ℓ, scaled to the data; the start record's value otherwise) and
    whether it is off for the context (``disabled``)."""

    label: str
    kind: str = "slider"
    help: str | None = None
    low: Bound = None
    high: Bound = None
    step: Bound = None
    options: tuple | Callable[[Any], tuple] | None = None
    names: Mapping[Any, str] | Callable[[Any], str] | None = None
    url: str | None = None
    notched: bool = True
    whole_page: bool = False
    opens_at: Callable[[Any], Any] | None = None
    disabled: bool | Callable[[Any], bool] = False

    def format(self, value: Any) -> str:
        """The words of option ``value`` (``names``), or the value itself."""
        if callable(self.names):
            return self.names(value)
        return self.names.get(value, str(value)) if self.names is not None else str(value)


class Parsed(NamedTuple):
    """A record read from untrusted values (a URL, a lesson scene): the ``record`` and, for each value it
    could not take as given, a line saying which and why (``problems``)."""

    record: Any
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Controls:
    """The controls of one view's settings, each URL key ``prefix.name``: ``start`` is the record the page
    opens with (the record's own defaults, or the page's where a line beside it says why they differ), and
    ``fields`` the control of each field a page sets. A field without a control keeps its start; a control
    that names no field is a ValueError at import."""

    start: Any
    prefix: str
    fields: Mapping[str, Control]

    def __post_init__(self) -> None:
        unknown = set(self.fields) - set(field_names(self.start))
        if unknown:
            raise ValueError(f"{type(self.start).__name__} has no field {', '.join(sorted(unknown))}")

    def key(self, name: str) -> str:
        """Field ``name``'s widget key, which is also its URL query parameter."""
        return f"{self.prefix}.{self.fields[name].url or name}"

    def spec(self, name: str, context: Any) -> Spec:
        """What field ``name``'s control accepts for ``context``."""
        c = self.fields[name]
        options = _resolve(c.options, context)
        return make_spec(c.kind, None if options is None else tuple(options), getattr(self.start, name),
                         _resolve(c.low, context), _resolve(c.high, context), _resolve(c.step, context))

    def first(self, name: str, context: Any) -> Any:
        """Where field ``name``'s control starts for ``context``: the start record's value (or its
        ``opens_at``), moved into the control's range (a hold-out size of 10 is 4 on 6 training points)."""
        opens_at = self.fields[name].opens_at
        value = getattr(self.start, name) if opens_at is None else opens_at(context)
        started = self.spec(name, context).coerce(value)
        if started is None:
            raise ValueError(f"the start {value!r} of {self.key(name)} is not one of its values")
        return started

    def defaults(self, context: Any) -> Any:
        """The record the page opens with for ``context``: every control at its start."""
        return replace(self.start, **{name: self.first(name, context) for name in self.fields})

    def notches(self, context: Any) -> dict[str, Notch | Options]:
        """The notched controls' notches by field: a slider's range and step, a select slider's options."""
        out: dict[str, Notch | Options] = {}
        for name, c in self.fields.items():
            spec = self.spec(name, context)
            if not c.notched or spec.kind not in ("slider", "select_slider"):
                continue
            start = self.first(name, context)
            out[name] = (Options(spec.options, start) if spec.options else
                         Notch(spec.min_value, spec.max_value, spec.step or 1, start))
        return out

    def snapped(self, record: Any, context: Any) -> Any:
        """``record`` with each control's value made one it accepts (clamped, snapped to its notch)."""
        return replace(record, **{name: self.spec(name, context).coerce(getattr(record, name))
                                  for name in self.fields})

    def from_query(self, query: Mapping[str, Any], context: Any) -> Parsed:
        """The record a URL's (or a scene's) values name: each control's value read by its spec (numbers
        clamped and snapped, options snapped to the nearest), its start where the query has none or none
        it can read; parameters that are no control of this record are left alone."""
        values, problems = {}, []
        for name in self.fields:
            got, problem = read(self.spec(name, context), self.key(name), query.get(self.key(name)))
            problems += [problem] if problem else []
            values[name] = self.first(name, context) if got is None else got
        return Parsed(replace(self.defaults(context), **values), tuple(problems))

    def to_query(self, record: Any) -> dict[str, str]:
        """The URL parameters of ``record``'s controls, each value as a URL writes it (``to_url``)."""
        return {self.key(name): to_url(getattr(record, name)) for name in self.fields}
