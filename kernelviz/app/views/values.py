"""What a control accepts, and how its value is written in a URL.

A ``Spec`` maps anything (a URL's text, an old value, a lesson scene's value) to a valid value of its control
or None: numbers are clamped to the range and snapped to the step, options snapped to the nearest one,
toggles read from true/false words. Streamlit's own URL binding cannot stand in for it: it writes an option
as its displayed label, and drops a value outside the range or between options instead of moving it to the
nearest one, so links that work today would open another view.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelviz.runtime.i18n import _

__all__ = ["KINDS", "Spec", "lengthscale_choice", "lengthscale_options", "log_options", "make_spec", "read",
           "to_url"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
KINDS = ("slider", "select_slider", "selectbox", "radio", "segmented", "toggle", "number")


def to_url(value: object) -> str:
    """How a control value is written in the URL: floats with 6 significant digits, bools as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _as_number(text: object) -> float | None:
    try:
        v = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class Spec:
    """What values a control accepts; ``coerce`` maps anything to a valid value or None."""

    kind: str
    options: tuple = ()
    min_value: float | None = None
    max_value: float | None = None
    step: float | None = None
    integer: bool = False

    def _snap_option(self, v: object) -> object | None:
        opts = self.options
        if not opts:
            return None
        for o in opts:
            if type(o) is type(v) and o == v:
                return o
        text = to_url(v) if not isinstance(v, str) else v
        for o in opts:
            if to_url(o) == text:
                return o
        num = _as_number(text)
        numeric = [o for o in opts if isinstance(o, int | float) and not isinstance(o, bool)]
        if num is None or len(numeric) != len(opts):
            return None
        arr = np.asarray(numeric, dtype=np.float64)
        if np.all(arr > 0) and num > 0:
            return opts[int(np.argmin(np.abs(np.log(arr) - math.log(num))))]
        return opts[int(np.argmin(np.abs(arr - num)))]

    def _clamp_number(self, v: object) -> float | int | None:
        if isinstance(v, bool):
            return None
        num = _as_number(v)
        if num is None:
            return None
        lo = self.min_value if self.min_value is not None else -math.inf
        hi = self.max_value if self.max_value is not None else math.inf
        num = min(max(num, lo), hi)
        if self.step and self.min_value is not None:
            k = round((num - self.min_value) / self.step)
            num = min(max(self.min_value + k * self.step, lo), hi)
            num = round(num, 12)
        if self.integer:
            return round(num)
        return float(num)

    def _range(self) -> tuple[float, float] | None:
        """The smallest and largest value a numeric control accepts (None for text options and toggles)."""
        numeric = [o for o in self.options if isinstance(o, int | float) and not isinstance(o, bool)]
        if self.options:
            return (min(numeric), max(numeric)) if numeric and len(numeric) == len(self.options) else None
        if self.kind == "toggle":
            return None
        lo = self.min_value if self.min_value is not None else -math.inf
        hi = self.max_value if self.max_value is not None else math.inf
        return lo, hi

    def problem(self, v: object) -> str | None:
        """Why ``v`` is not a value of this control (a lesson's, say), or None when it is one (numbers
        between the ends are snapped to the nearest value without a word)."""
        span = self._range()
        if self.kind == "toggle" or (self.options and span is None):
            got = self.coerce(v)
            if got is not None and (self.kind == "toggle" or to_url(got) == to_url(v)):
                return None
            allowed = (_("{true} or {false}").format(true=to_url(True), false=to_url(False))  # values, kept
                       if self.kind == "toggle" else ", ".join(map(to_url, self.options)))
            return _("not one of: {allowed}").format(allowed=allowed)
        num = None if isinstance(v, bool) else _as_number(v)
        if num is None:
            return _("not a number")
        lo, hi = span
        if not lo <= num <= hi:
            return _("outside {lo} to {hi}; {used} is used").format(lo=to_url(lo), hi=to_url(hi),
                                                                     used=to_url(self.coerce(num)))
        return None

    def coerce(self, v: object) -> Any:
        """A valid value for this control from a URL string or an old value; None when there is none."""
        if v is None:
            return None
        if self.kind == "toggle":
            if isinstance(v, bool):
                return v
            text = str(v).strip().lower()
            return True if text in _TRUE else False if text in _FALSE else None
        if self.kind in ("select_slider", "selectbox", "radio", "segmented"):
            return self._snap_option(v)
        return self._clamp_number(v)


def make_spec(
    kind: str,
    options: Sequence[Any] | None,
    default: Any,
    min_value: float | None,
    max_value: float | None,
    step: float | None,
) -> Spec:
    """The ``Spec`` of a control; sliders and number inputs are integer when all their numbers are."""
    if kind not in KINDS:
        raise ValueError(f"unknown control kind {kind!r}; choose one of {', '.join(KINDS)}")
    integer = kind in ("slider", "number") and all(
        isinstance(v, int) and not isinstance(v, bool)
        for v in (default, min_value, max_value, step)
        if v is not None
    )
    opts = tuple(options) if options is not None else ()
    return Spec(kind, opts, min_value, max_value, step, integer)


def read(spec: Spec, key: str, raw: object) -> tuple[Any, str | None]:
    """An untrusted value ``raw`` of control ``key`` (a URL's, a lesson scene's; None: none given) as
    ``spec`` takes it (None where it takes none), and the line saying why when it is not one of the
    control's values (None when it is, or when none was given)."""
    if raw is None:
        return None, None
    why = spec.problem(raw)
    line = _("{key} = {value} is {why}").format(key=key, value=to_url(raw), why=why) if why else None
    return spec.coerce(raw), line


def log_options(lo: float, hi: float, per_decade: int = 12) -> tuple[float, ...]:
    """Log-spaced values from ``lo`` to ``hi`` (``per_decade`` per factor 10), rounded to 3 significant
    digits."""
    if not (0 < lo < hi and math.isfinite(hi)):
        raise ValueError(f"need 0 < lo < hi, got {lo!r}, {hi!r}")
    count = round(math.log10(hi / lo) * per_decade) + 1
    values = [float(f"{v:.3g}") for v in np.geomspace(lo, hi, count)]
    return tuple(sorted(set(values)))


def lengthscale_options(span: float) -> tuple[float, ...]:
    """ℓ choices for data spanning ``span``: whole decades from about span/1000 to about 2 × span."""
    span = span if math.isfinite(span) and span > 0 else 1.0
    lo = 10.0 ** math.floor(math.log10(span / 1000.0))
    hi = 10.0 ** math.ceil(math.log10(span * 2.0))
    return log_options(lo, hi, 12)


def lengthscale_choice(value: float, span: float) -> float:
    """The ℓ choice (of ``lengthscale_options(span)``) the ℓ slider snaps ``value`` to: the nearest in log."""
    return float(Spec("select_slider", lengthscale_options(span)).coerce(value))
