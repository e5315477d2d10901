""""The code that ran" under each chart is the model: every function a page shows there has at most 20
lines of statements, and none of the serving in it (padding to buckets, casts, float32, custom gradients),
which the adapter (``kernelviz.runtime.serve``) and the core operations do. The exceptions are named, each
with the reason the cast is the formula itself."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "chapters").glob("[1-5]_*.py"))  # the five chapters
SERVING = re.compile(r"(?<![.\w])(pad|bucket)\(|\.astype\(|float32|custom_vjp")
CASTS_ARE_THE_FORMULA = {
    "post_model": "the blog post computed in float32, and chapters 2 and 3 reprint its runs",
    "holdout_split": "the post's random permutation, an integer sort of its 32-bit keys",
    "layer_output": "chapter 5's prompts are float32; the linear layer's sum is returned in their dtype",
}


def shown(page: Path) -> Iterator[tuple[str, Callable]]:
    """(expression, function) for every argument of every ``ui.show_code`` call of ``page``, resolved with
    the page's own imports (the page itself is not run)."""
    tree = ast.parse(page.read_text(encoding="utf-8"))
    names: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            exec(compile(ast.Module([node], []), str(page), "exec"), names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "show_code":
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
    too_long, serving = {}, {}
    for expression, fn in found:
        count, code = statements(fn)
        if count > 20:
            too_long[expression] = count
        if SERVING.search(code) and fn.__name__ not in CASTS_ARE_THE_FORMULA:
            serving[expression] = SERVING.findall(code)
    assert too_long == {} and serving == {}
