"""Helpers for the page tests of chapters 3 and 4 (AppTest): set controls to their ends, read chart data."""

from __future__ import annotations

import base64

import numpy as np
from test_app import widget

import kernelviz as kv


def control(at, key: str):
    """The widget with ``key``: test_app's ``widget`` plus radios."""
    for r in at.radio:
        if r.key == key:
            return "radio", r
    return widget(at, key)


def set_all(at, keys: list[str], which: str) -> dict[str, object]:
    """Every control in ``keys`` to its minimum or maximum at once (one rerun for all of them)."""
    values = {}
    for key in keys:
        kind, w = control(at, key)
        i = 0 if which == "min" else len(getattr(w, "options", ())) - 1
        if kind == "slider":
            v = w.min if which == "min" else w.max
            w.set_value(v)
        elif kind == "select_slider":  # options are shown as text; the values are numbers
            v = float(w.options[i])
            w.set_value(v)
        elif kind == "selectbox":  # the kernel: options are its labels
            v = kv.KERNELS[i]
            w.select_index(i)
        elif kind == "radio":  # the head shown: 1 … H
            v = i + 1
            w.set_value(v)
        else:
            raise AssertionError(f"unexpected control {key} ({kind})")
        values[key] = v
    return values


def array(value: object) -> np.ndarray:
    """A Plotly JSON array: a plain list, or a typed array {"dtype", "bdata" (base64), "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if shape:
            flat = flat.reshape([int(d) for d in str(shape).split(",")])
        return flat.astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def heatmap_panels(spec: dict) -> int:
    return sum(1 for t in spec["data"] if t["type"] == "heatmap")


def names(spec: dict) -> list[str]:
    return [t.get("name") for t in spec["data"]]
