""""The code that ran" under each chart is the model: every function a page shows there is a model, loss or
training step of ``kernelviz.core`` or ``kernelviz.models`` (never an orchestrator, a cache or a dispatcher
of the app), has at most 20 lines of statements, and none of the serving in it (padding to buckets, casts,
float32, branches on sizes, bit tricks, custom gradients), which the adapter (``kernelviz.runtime.serve``),
the training loop and the core operations do. Every expander says how its code was run (``ran=``)."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kernelviz.app.ui.widgets import text

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "chapters").glob("[1-5]_*.py"))  # the five chapters
SERVING = re.compile(r"(?<![.\w])(pad|bucket)\(|\.astype\(|float32|custom_vjp|lax\.cond|uint64|<<")
HOMES = ("kernelviz.core.", "kernelviz.models.")


def show_code_calls(page: Path) -> Iterator[ast.Call]:
    """Every ``ui.show_code(...)`` call of ``page``."""
    for node in ast.walk(ast.parse(page.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "show_code":
            yield node


def shown(page: Path) -> Iterator[tuple[str, Callable]]:
    """(expression, function) for every argument of every ``ui.show_code`` call of ``page``, resolved with
    the page's own imports (the page itself is not run)."""
    tree = ast.parse(page.read_text(encoding="utf-8"))
    names: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            exec(compile(ast.Module([node], []), str(page), "exec"), names)
    for node in show_code_calls(page):
        for arg in node.args:
            yield ast.unparse(arg), eval(compile(ast.Expression(arg), str(page), "eval"), names)


def statements(fn: Callable) -> tuple[int, str]:
    """The lines of ``fn``'s statements (its docstring left out) and their source."""
    source = textwrap.dedent(inspect.getsource(inspect.unwrap(fn)))
    body = ast.parse(source).body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    lines = source.splitlines()[body[0].lineno - 1 : body[-1].end_lineno] if body else []
    return len(lines), "\n".join(lines)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_the_code_under_the_charts_is_the_model(page: Path):
    found = list(shown(page))
    assert found, page
    too_long, serving, elsewhere = {}, {}, {}
    for expression, fn in found:
        count, code = statements(fn)
        if count > 20:
            too_long[expression] = count
        if SERVING.search(code):
            serving[expression] = SERVING.findall(code)
        module = inspect.unwrap(fn).__module__ + "."
        if not module.startswith(HOMES):
            elsewhere[expression] = module
    assert too_long == {} and serving == {} and elsewhere == {}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_expander_says_how_its_code_ran(page: Path):
    calls = list(show_code_calls(page))
    assert calls, page
    assert all(any(k.arg == "ran" for k in call.keywords) for call in calls)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_code_is_sent_only_while_its_expander_is_open(page: Path):
    from test_app import code_boxes, open_code, start

    at = start(f"chapters/{page.name}")
    closed = code_boxes(at)
    assert closed and all(len(e.caption) == 1 and len(e.code) == 0 for e in closed)
    opened = code_boxes(open_code(at))
    assert [e.label for e in opened] == [e.label for e in closed]
    sources = {inspect.getsource(inspect.unwrap(fn)).strip() for _, fn in shown(page)}
    for e in opened:
        assert len(e.code) >= 1, e.label
        if e.label != text.FAST_PATH:  # a fast path's functions are named by its ``ran``
            assert {c.value.strip() for c in e.code} <= sources, e.label
