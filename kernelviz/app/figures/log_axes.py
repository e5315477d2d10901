"""Log axes whose every label is a whole value: 0.05, 2, 300 or 10⁻⁴, 2×10⁻⁴.

``log_ticks`` chooses the ticks and labels for a set of values; ``log_props`` chooses them for every x or y
axis of a figure, from the numbers its traces and line shapes put there (``style`` applies them).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go

_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_REL = 1e-9  # tolerance when comparing a tick with the ends of the data


def _power_of_ten(e: int) -> str:
    return "1" if e == 0 else "10" if e == 1 else "10" + str(e).translate(_SUPERSCRIPTS)


def _log_label(v: float, scientific: bool) -> str:
    """A tick value written out in full: ``0.05``, ``2`` or, when ``scientific``, ``10⁻⁴`` / ``2×10⁻⁴``."""
    if not scientific:
        return f"{v:.6g}"
    e = int(np.floor(np.log10(v) + 1e-9))
    m = float(f"{v / 10.0**e:.3g}")
    if m >= 10.0:  # rounding carried into the next decade
        m, e = m / 10.0, e + 1
    return _power_of_ten(e) if m == 1.0 else f"{m:g}×{_power_of_ten(e)}"


def _extent(values: object) -> tuple[float, float]:
    """Smallest and largest finite positive value (1e-2 to 1e2 when there is none), never a single point."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    v = v[np.isfinite(v) & (v > 0)]
    lo, hi = (float(v.min()), float(v.max())) if v.size else (1e-2, 1e2)
    if hi <= lo * (1 + 1e-12):
        lo, hi = lo / 2.0, hi * 2.0
    return lo, hi


def _count_inside(ticks: np.ndarray, lo: float, hi: float) -> int:
    return int(np.sum((ticks >= lo * (1 - _REL)) & (ticks <= hi * (1 + _REL))))


def _digit_ticks(decades: np.ndarray, digits: Iterable[int]) -> np.ndarray:
    """Every d × 10ᵏ for the digits d and decades k, sorted."""
    return np.array(sorted(d * 10.0**k for k in decades for d in digits))


def _linear_ticks(lo: float, hi: float, min_ticks: int) -> np.ndarray:
    """An even step of 1, 2 or 5 × 10ᵏ giving about ``min_ticks`` ticks in [lo, hi], continued beyond."""
    width = hi - lo
    unit = 10.0 ** np.floor(np.log10(width / min_ticks))
    lin = float(next(m * unit for m in (1, 2, 5, 10) if width / (m * unit) <= 2 * min_ticks))
    start = np.floor(lo / 10 / lin) * lin
    major = np.arange(max(start, lin), hi * 10 + lin, lin)
    major = np.unique(np.round(major / lin) * lin)
    return major[major > 0]


def _major_minor(lo: float, hi: float, min_ticks: int, max_powers: int) -> tuple[np.ndarray, np.ndarray]:
    """Labelled (major) and unlabelled (minor) ticks: the coarsest set of ``log_ticks``' list that puts at
    least the needed number of ticks inside [lo, hi]."""
    decades = np.arange(int(np.floor(np.log10(lo))) - 3, int(np.ceil(np.log10(hi))) + 3 + 1)
    powers = 10.0 ** decades.astype(np.float64)
    step = max(1, -(-_count_inside(powers, lo, hi) // max_powers))
    major = powers[decades % step == 0]
    if _count_inside(major, lo, hi) >= min_ticks:
        return major, powers[decades % step != 0] if step > 1 else _digit_ticks(decades, range(2, 10))
    # 1-2-5 is enough over more than a factor of four; every digit only when the values span less
    span = float(np.log10(hi / lo))
    for digits, need in (((1, 2, 5), 2 if span >= 0.6 else min_ticks), (range(1, 10), 2)):
        major = _digit_ticks(decades, digits)
        if _count_inside(major, lo, hi) >= need:
            return major, _digit_ticks(decades, sorted(set(range(1, 10)) - set(digits)))
    return _linear_ticks(lo, hi, min_ticks), np.array([])


def _is_scientific(lo: float, hi: float, shown: np.ndarray) -> bool:
    """Whether labels are written as powers of ten: the data, or a tick near it, leaves [10⁻³, 10⁴)."""
    if lo < 1e-3 * (1 - _REL) or hi >= 1e4:
        return True
    near = shown[(shown >= lo / 1.5) & (shown <= hi * 1.5)]
    return bool(near.size and (near.min() < 1e-3 * (1 - _REL) or near.max() >= 1e4))


def _near_data(ticks: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The ticks within three decades of the data."""
    return ticks[(ticks >= lo / 1e3) & (ticks <= hi * 1e3)]


def log_ticks(values: object = (), *, min_ticks: int = 3, max_powers: int = 7) -> dict:
    """Axis properties for a log axis whose every label is a whole number, never a bare mantissa.

    Plotly's own log ticks label 2 and 5 between powers of ten as bare digits ("2 5 0.1 2 5 1"), which reads
    as 2, 5, 0.1 rather than 0.02, 0.05, 0.1. Here the labelled ticks are chosen from the finite positive
    ``values`` the axis shows, coarsest first, taking the first set with at least ``min_ticks`` ticks inside
    [min, max]:

    1. powers of ten 10ᵏ (every ``step``-th one when there are more than ``max_powers``);
    2. 1, 2, 5 × 10ᵏ (two ticks are enough when the values span more than a factor of four);
    3. 1, 2, …, 9 × 10ᵏ (two ticks are enough);
    4. an even linear step of 1, 2 or 5 × 10ᵏ (values within a factor of about 1.8 of each other).

    Labels are the value in full ("0.05", "2", "300") when every tick lies in [10⁻³, 10⁴), otherwise
    "10⁻⁴" / "2×10⁻⁴" for all of them. Faint unlabelled grid lines (minor ticks) mark the unlabelled
    digits, or the skipped powers. Ticks continue a few decades beyond the data, so zooming out keeps
    labels.
    Returns a dict for ``fig.update_xaxes``/``update_yaxes``: ``type="log"``, ``range`` (log10 of the data's
    extent, padded by 4 % of it), ``tickmode="array"``, ``tickvals``, ``ticktext`` and ``minor``.
    """
    lo, hi = _extent(values)
    major, minor = _major_minor(lo, hi, min_ticks, max_powers)
    shown = _near_data(major, lo, hi)
    scientific = _is_scientific(lo, hi, shown)
    # in decades, so that markers at the ends are not cut in half
    pad = max(0.04 * float(np.log10(hi / lo)), 0.03)
    return {
        "type": "log",
        "range": [float(np.log10(lo)) - pad, float(np.log10(hi)) + pad],
        "tickmode": "array",
        "tickvals": shown.tolist(),
        "ticktext": [_log_label(t, scientific) for t in shown],
        "minor": {
            "tickmode": "array",
            "tickvals": _near_data(minor, lo, hi).tolist(),
            "ticks": "",  # faint grid lines, no marks: a lone tick mark beside the labels reads as a dash
            "showgrid": True,
            "gridcolor": "rgba(128, 128, 128, 0.12)",
        },
    }


def _axis_values(fig: go.Figure, axis: str) -> np.ndarray:
    """Every finite number a figure puts on its x or y axes: trace coordinates and line shapes."""
    out: list[np.ndarray] = []
    for t in fig.data:
        a = getattr(t, axis, None)
        if a is not None:
            arr = np.asarray([np.nan if e is None else e for e in np.ravel(np.asarray(a, dtype=object))])
            try:
                out.append(arr.astype(np.float64))
            except (TypeError, ValueError):  # category names, not numbers
                continue
    for shape in fig.layout.shapes:
        for end in (f"{axis}0", f"{axis}1"):
            ref = getattr(shape, f"{axis}ref", None)
            val = getattr(shape, end, None)
            if val is not None and not (ref and "domain" in str(ref)):
                out.append(np.array([float(val)]))
    return np.concatenate(out) if out else np.array([], dtype=np.float64)


def log_props(fig: go.Figure, axis: str = "y", values: object | None = None) -> dict:
    """``log_ticks`` of ``values``, by default of every finite coordinate the figure's traces and line
    shapes put on its x (``axis="x"``) or y axes."""
    return log_ticks(_axis_values(fig, axis) if values is None else values)

