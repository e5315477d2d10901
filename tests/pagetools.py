"""Helpers for the page tests of chapters 3 and 4 (AppTest): set controls to their ends, read chart data."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest
from test_app import charts as _charts
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
        if kind in ("slider", "number_input"):
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


_CELL = re.compile(r"\|((?:\\.|[^\\|])*)(?=\|)")  # "|" then text up to the next unescaped "|"
_ESCAPED = re.compile(r"\\(.)")


def _cells(line: str) -> list[str]:
    """The cells of one Markdown table row, unescaped: "| a | b\\|c |" → ["a", "b|c"]."""
    return [_ESCAPED.sub(r"\1", c.strip()) for c in _CELL.findall(line.strip())]


def markdown_tables(text: str) -> list[dict[str, list[str]]]:
    """Every Markdown table in ``text`` (a header row, a ``---`` rule, body rows), column → cells."""
    found, lines = [], text.splitlines()
    for i in range(len(lines) - 1):
        starts = lines[i].lstrip().startswith("|") and (i == 0 or not lines[i - 1].lstrip().startswith("|"))
        if not (starts and re.fullmatch(r"\s*\|(\s*:?-+:?\s*\|)+\s*", lines[i + 1])):
            continue
        header, rows = _cells(lines[i]), []
        for line in lines[i + 2:]:
            if not line.lstrip().startswith("|"):
                break
            rows.append(_cells(line))
        found.append({c: [r[j] for r in rows] for j, c in enumerate(header)})
    return found


def tables(at) -> list[dict[str, list[str]]]:
    """Every table the page draws as Markdown (``ui.show_table``), in order: column → the cells as shown."""
    return [t for m in at.markdown for t in markdown_tables(m.value)]


def table_with(at, column: str) -> dict[str, list[str]]:
    """The (first) table of the page that has ``column``."""
    found = tables(at)
    for t in found:
        if column in t:
            return t
    raise AssertionError(f"no table with a column {column!r}: {[list(t) for t in found]}")


def numbers(cells: list[str]) -> np.ndarray:
    """A table column's cells as floats."""
    return np.asarray([float(c) for c in cells])


def rows_where(table: dict[str, list[str]], column: str, value: str) -> dict[str, list[str]]:
    """The rows of ``table`` whose ``column`` shows ``value``."""
    keep = [i for i, v in enumerate(table[column]) if v == value]
    return {c: [cells[i] for i in keep] for c, cells in table.items()}


def panel_titles(spec: dict) -> list[str]:
    """The subplot titles of a small-multiples figure (its annotations), in order."""
    return [a["text"] for a in spec["layout"].get("annotations", [])]


def traces_named(spec: dict, name: str) -> list[dict]:
    """Every trace of ``spec`` called ``name``, in order."""
    return [t for t in spec["data"] if t.get("name") == name]


def assert_heatmap_subsample(at, key: str, limit: int, n: int) -> None:
    """The heatmaps of chart ``key`` show at most ``limit`` keys, and a caption says they are a subsample
    of the ``n`` points."""
    heat = next(c for k, c in _charts(at).items() if k == key)
    keys = array(next(t for t in heat["data"] if t["type"] == "heatmap")["x"])
    assert keys.size <= limit
    assert any("subsample" in c.value and f"{n:,}" in c.value for c in at.caption)


def assert_controls(at, expected: dict[str, object]) -> None:
    """Each control in ``expected`` shows that value (numbers compared with ``pytest.approx``)."""
    for key, value in expected.items():
        want = pytest.approx(value) if isinstance(value, float) else value
        assert control(at, key)[1].value == want, key


def repaint(at, key: str, value: object, changed: tuple[str, ...]) -> dict[str, dict]:
    """Set control ``key`` to ``value`` and rerun; every chart in ``changed`` must differ from before.
    Returns the charts after the rerun."""
    before = _charts(at)
    control(at, key)[1].set_value(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    after = _charts(at)
    for k in changed:
        assert after[k] != before[k], k
    return after
