"""How a figure's numbers travel to the browser: short and, where nothing visible changes, small.

``compact`` sends a chart's float arrays as plain lists of short decimals (``short_numbers``) with a data
revision (what Plotly needs to draw a chart a second time for free, ``theme.themed``); ``_single`` makes
animation frames float32 binary arrays where a drawing cannot tell.
"""

from __future__ import annotations

import hashlib

import numpy as np

ARRAY_PROPS = ("x", "y", "z", "customdata")  # trace properties that hold the figure's numbers
SINGLE_TOL = 1e-5  # rounding a drawing cannot show, as a share of an array's range (float32, decimals)


def _reach(finite: np.ndarray) -> float:
    """The range of an array's finite numbers, or their largest size when they are all one value."""
    return float(np.ptp(finite)) or float(np.max(np.abs(finite)))


def _single(a: object) -> object:
    """``a`` as float32 when it is a float array whose largest rounding error, max |a − float32(a)|, is at
    most ``SINGLE_TOL`` of its range (a drawing cannot show that); anything else unchanged."""
    if isinstance(a, tuple | list) and a and all(isinstance(v, float) for v in a):
        a = np.asarray(a, dtype=np.float64)
    if not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.size == 0:
        return a
    finite = a[np.isfinite(a)]
    if finite.size == 0:
        return a.astype(np.float32)
    if np.max(np.abs(finite)) > np.finfo(np.float32).max / 2:
        return a
    small = a.astype(np.float32)
    if np.max(np.abs(finite - small[np.isfinite(a)])) > SINGLE_TOL * (_reach(finite) or 1.0):
        return a
    return small


SIGNIFICANT = 6  # digits a number on a log axis keeps: a millionth of itself, below a pixel or a hover


def _exact(v: np.ndarray, d: np.ndarray | int) -> np.ndarray:
    """v rounded to d decimals (d < 0: to a multiple of 10^−d), as round(v · 10ᵈ) / 10ᵈ: a whole number
    over (or times) an exact power of ten is the double nearest that decimal, which Python (and JSON) writes
    as the decimal, 0.123457 or 1.2e-05. Needs |d| ≤ 22."""
    p = 10.0 ** np.abs(d)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.asarray(d) >= 0, np.round(v * p) / p, np.round(v / p) * p)


def short_numbers(a: np.ndarray, relative: bool = False) -> list:
    """A float array as a (nested) list of short decimals. Each number is rounded to a multiple of
    q = 10^⌊log₁₀(SINGLE_TOL · range)⌋, off by at most ``SINGLE_TOL`` / 2 of the array's range, which no
    drawing on a linear axis and no three- or four-digit hover can show; or, ``relative`` (a log axis, hover
    data), to ``SIGNIFICANT`` significant digits of itself. NaN and ±∞ stay (JSON null: a gap); numbers that
    no exact power of ten reaches (q beyond 10^±22), and an array of zeros, go as they are."""
    v = np.asarray(a, dtype=np.float64)
    finite = np.isfinite(v) & (v != 0)
    if not finite.any():
        return v.tolist()
    if relative:
        d = np.zeros(v.shape, dtype=np.int64)
        d[finite] = SIGNIFICANT - 1 - np.floor(np.log10(np.abs(v[finite]))).astype(np.int64)
    else:
        d = np.full(v.shape, -int(np.floor(np.log10(SINGLE_TOL * _reach(v[finite])))))
    finite &= np.abs(d) <= 22
    return np.where(finite, _exact(v, np.where(finite, d, 0)), v).tolist()


def _fingerprint(digest: hashlib.blake2b, value: object) -> None:
    """Feed everything ``value`` holds to ``digest``: arrays by their bytes, dicts key by key."""
    if isinstance(value, np.ndarray):
        digest.update(value.tobytes() if value.dtype.kind in "biuf" else repr(value.tolist()).encode())
    elif isinstance(value, dict):
        for key in sorted(value):
            digest.update(key.encode())
            _fingerprint(digest, value[key])
    elif isinstance(value, list | tuple) and any(isinstance(v, np.ndarray | dict) for v in value):
        for v in value:
            _fingerprint(digest, v)
    else:
        digest.update(repr(value).encode())


def compact(traces: list[dict], log_axes: frozenset[str] = frozenset()) -> str:
    """Each trace's float arrays (``ARRAY_PROPS``) as plain lists of short decimals (``short_numbers``; x or y
    on an axis of ``log_axes``, such as "y" or "x2", and customdata, which hovers print, keep significant
    digits), in place; returns a digest of the traces, a ``layout.datarevision`` that changes whenever any of
    their data does (Plotly compares no array under an unchanged one).

    A chart Streamlit mounts is drawn twice (hidden, then at its measured width); Plotly redraws in full any
    array it gets as typed binary data, each time it decodes it, but keeps plain lists under an unchanged
    ``datarevision``, so the second draw finds nothing to recompute (``docs/benchmarks.md``). Animation
    frames are left as they are: ``add_scrub`` builds them as float32 (``_single``), drawn when played."""
    digest = hashlib.blake2b(digest_size=8)
    for trace in traces:
        _fingerprint(digest, trace)
        for prop in ARRAY_PROPS:
            value = trace.get(prop)
            if isinstance(value, tuple | list) and value and all(isinstance(v, float) for v in value):
                value = np.asarray(value, dtype=np.float64)
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                relative = prop == "customdata" or trace.get(f"{prop}axis", prop) in log_axes
                trace[prop] = short_numbers(value, relative)
        _as_lists(trace)
    return digest.hexdigest()


def _as_lists(props: dict) -> None:
    """Every NumPy array left in ``props`` (and the dicts it holds), such as whole-number steps or a marker's
    colours, as a plain list, in place: floats to ``SIGNIFICANT`` significant digits. A typed array would
    make Plotly draw the chart in full a second time."""
    for key, value in props.items():
        if isinstance(value, dict):
            _as_lists(value)
        elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            props[key] = short_numbers(value, relative=True) if value.dtype.kind == "f" else value.tolist()
