"""The code expanders under the charts (``ui.show_code``) are keyed by what they show: the shown functions'
qualified names, the expander's title and the function of the page that draws it. A line added above a call
keeps its key (and so its open or closed state and its element id); other code, or the same code drawn by
another function of the page, gets another key; and no function of a page draws the same code twice."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from kernelviz.app.ui.widgets import text
from kernelviz.core import pooling
from kernelviz.models import smoothing

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "chapters").glob("[1-5]_*.py"))

PAGE = '''
def section():
    show_code(nadaraya_watson_model, pool, ran=SERVED)


def other_section():
    show_code(nadaraya_watson_model, pool, ran=SERVED)


show_code(nadaraya_watson_model, pool, ran=SERVED)
show_code(nadaraya_watson_model, ran=SERVED)
show_code(nadaraya_watson_model, pool, ran=SERVED, label="The code of the kernel shapes")
show_code(pool, nadaraya_watson_model, ran=POST_TRAINED)
show_code(pool, ran=POST_TRAINED)
section()
other_section()
'''


def keys_of(source: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the code expanders that ``source``, run as page ``chapters/9_page.py``, draws."""
    drawn: list[str] = []
    monkeypatch.setattr(text, "_code_expander", lambda label, key, *rest: drawn.append(key))
    monkeypatch.setattr(text.kept, "drawn_from_kept", lambda: False)
    names: dict[str, object] = {"show_code": text.show_code, "pool": pooling.pool, "SERVED": text.SERVED,
                                "nadaraya_watson_model": smoothing.nadaraya_watson_model,
                                "POST_TRAINED": text.POST_TRAINED}
    exec(compile(source, str(ROOT / "chapters" / "9_page.py"), "exec"), names)
    return drawn


def test_a_line_added_above_a_call_keeps_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = keys_of(PAGE, monkeypatch)
    moved = "\n\n# lines above every call\n" + PAGE.replace("():\n", "():\n    shown = True\n\n").replace(
        "\nshow_code(", "\n\nshow_code(")
    assert moved.count("\n") > PAGE.count("\n") + 10
    assert keys_of(moved, monkeypatch) == before


def test_other_code_or_another_drawer_gets_another_key(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = keys_of(PAGE, monkeypatch)
    assert len(keys) == 9  # seven expanders, two of them with a fast path under them
    assert len(set(keys)) == len(keys)  # other functions, another title, another drawing function
    assert all(k.startswith("kv.code.") for k in keys)  # how the app's tests find them (tests/test_app.py)


def test_the_key_names_the_functions_by_module_and_qualified_name() -> None:
    assert text.qualified_name(smoothing.nadaraya_watson_model) == (
        f"{smoothing.nadaraya_watson_model.__module__}.nadaraya_watson_model")
    shown = (smoothing.nadaraya_watson_model, pooling.pool)
    assert text.code_key(shown, "A") == text.code_key(list(shown), "A")
    assert text.code_key(shown, "A") != text.code_key(shown[::-1], "A")
    assert text.code_key(shown, "A", "1_page.<module>") != text.code_key(shown, "A", "1_page.section")


def _is_show_code(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "show_code"


def _shown_by_function(page: Path) -> Counter:
    """(drawing function, shown expressions, label) of every ``show_code`` call of ``page``, counted."""
    tree = ast.parse(page.read_text(encoding="utf-8"))
    found: Counter = Counter()

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if _is_show_code(child):
                label = next((ast.unparse(k.value) for k in child.keywords if k.arg == "label"), "")
                found[(where, tuple(ast.unparse(a) for a in child.args), label)] += 1
            visit(child, inner)

    visit(tree, "<module>")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_function_of_a_page_draws_the_same_code_twice(page: Path) -> None:
    counted = _shown_by_function(page)
    assert counted, page
    assert [call for call, n in counted.items() if n > 1] == []


def _loops(page: Path) -> list[ast.AST]:
    """``show_code`` calls of ``page`` inside a loop (which would draw one key twice)."""
    tree = ast.parse(page.read_text(encoding="utf-8"))
    return [node for loop in ast.walk(tree) if isinstance(loop, (ast.For, ast.While))
            for node in ast.walk(loop) if _is_show_code(node)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_page_draws_code_in_a_loop(page: Path) -> None:
    assert _loops(page) == []
