"""The package's layers, read from the source with ``ast``: imports go one way, runtime → core → data →
models → app; only the app imports plotly or streamlit; views and figures never import streamlit, views
never import the figures, every cached call goes through ``ui.cache.cached``, and the modules of
``kernelviz.app.ui`` import each other without a cycle. Also the view models' tables, built without
Streamlit."""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from kernelviz.app import views
from kernelviz.app.views import training as views_training

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kernelviz"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path) -> set[str]:
    """The kernelviz modules (and other top-level packages) ``path`` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            subs = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            found.update(subs or {node.module})
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node):], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            if (found := visit(nxt, [*path, node])) is not None:
                return found
        done.add(node)
        return None

    return next((c for start in sorted(graph) if (c := visit(start, [])) is not None), None)


LAYERS = ("runtime", "core", "data", "models", "app")  # the lowest first: each imports only from below


def _layer(module: str) -> int | None:
    """The index in ``LAYERS`` of a kernelviz module's layer; None for the top-level package."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def _uphill(name: str) -> list[str]:
    """The kernelviz imports of module ``name`` that go up the layers (or to the top-level package, which
    gathers the layers, from below the app)."""
    own = _layer(name)
    up = []
    for imported in sorted(_imports(MODULES[name])):
        if imported.split(".")[0] != "kernelviz":
            continue
        theirs = _layer(imported)
        if (theirs is None and own != LAYERS.index("app")) or (theirs is not None and theirs > own):
            up.append(imported)
    return up


def test_every_module_lives_in_a_layer():
    assert {m for m in MODULES if _layer(m) is None} == {"kernelviz"}
    assert {m.split(".")[1] for m in MODULES if m != "kernelviz"} == set(LAYERS)


def test_imports_go_one_way_down_the_layers():
    wrong = {name: up for name in MODULES if _layer(name) is not None and (up := _uphill(name))}
    assert wrong == {}
    assert not any(_layer(i) == LAYERS.index("app") for i in _imports(MODULES["kernelviz"]))


def test_the_top_level_exports_what_a_notebook_needs_each_documented():
    import kernelviz as kv

    assert len(kv.__all__) <= 30
    assert sorted(kv.__all__) == sorted(n for n in vars(kv) if not n.startswith("_") and n not in LAYERS)
    undocumented = [n for n in kv.__all__ if f"``{n}" not in kv.__doc__]
    assert undocumented == []


def test_only_the_app_imports_plotly_or_streamlit():
    below = [m for m in MODULES if _layer(m) != LAYERS.index("app")]
    drawn = {m: i for m in below for i in _imports(MODULES[m]) if i.split(".")[0] in ("plotly", "streamlit")}
    assert drawn == {}


def test_views_and_figures_do_not_import_streamlit_and_views_not_figures():
    pure = [m for m in MODULES if m.startswith(("kernelviz.app.views", "kernelviz.app.figures"))]
    assert {"kernelviz.app.views", "kernelviz.app.views.training", "kernelviz.app.figures.heads"} <= set(pure)
    for name in pure:
        imported = _imports(MODULES[name])
        assert not any(i.split(".")[0] == "streamlit" for i in imported), name
        if name.startswith("kernelviz.app.views"):
            assert not any(i.startswith("kernelviz.app.figures") for i in imported), name
    code = (
        "import sys, kernelviz.app.views.training, kernelviz.app.figures; "
        "print('streamlit' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_every_cached_call_goes_through_the_one_decorator():
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "chapters").glob("*.py"), ROOT / "app.py"]:
        tree = ast.parse(path.read_text())
        clears = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "clear"}
        calls = [n for n in ast.walk(tree)
                 if isinstance(n, ast.Attribute) and n.attr == "cache_data" and id(n) not in clears]
        allowed = 1 if path == PACKAGE / "app" / "ui" / "caching" / "cache.py" else 0  # ``cached``
        assert len(calls) == allowed, path


def test_the_ui_modules_import_each_other_without_a_cycle():
    ui = {m for m in MODULES if m.startswith("kernelviz.app.ui.")}
    graph = {m: {i for i in _imports(MODULES[m]) if i in ui} for m in ui}
    assert graph["kernelviz.app.ui.widgets.sidebar"] >= {"kernelviz.app.ui.widgets.controls",
                                                           "kernelviz.app.ui.page_data"}
    assert _cycle(graph) is None


def test_comparison_table_and_sentence_without_streamlit():
    c = views_training.Comparison(("a", "b", "c"), np.array([0.9, 1.0, 1.1]), np.array([np.nan] * 3),
                                  np.array([1.0, 2.0, 3.0]), 0.5)
    table = views_training.comparison_table(c)
    assert list(table) == ["model", "leave-one-out error", "band width 4s̄"]  # no truth for user data
    assert views_training.comparison_sentence(c) == (
        "Here the trained layer's leave-one-out error is **10.0 % below** the best Gaussian's.")


def test_post_table_and_panels_status_from_panels():
    mh = views_training.MH
    note = views.Status("note", "")
    shown = [views_training.Panel(h, np.ones(h), np.full(h, 0.5), np.full(h, 1.0 / h), np.zeros(3), note)
             for h in mh.panels]
    table = views_training.post_table(shown)
    assert list(table) == list(views_training.POST_COLUMNS)
    assert len(table["H"]) == sum(mh.panels)
    assert views_training.panels_status(shown) == note
    bad = views.Status("warning", "diverged")
    status = views_training.panels_status([shown[0], dataclasses.replace(shown[1], status=bad)])
    assert status.level == "warning" and "H = 2" in status.message


def test_benchmarks_import_tests_never_the_other_way_and_one_entry_point_lists_them_all():
    tests = list((ROOT / "tests").rglob("*.py"))
    code_lines = re.compile(r"^\s*(from|import) benchmarks\b", re.MULTILINE)  # also in code run by -c
    assert [p for p in tests if code_lines.search(p.read_text())] == []
    listed = subprocess.run([sys.executable, "-m", "benchmarks"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    scripts = sorted(p.stem.removeprefix("bench_") for p in (ROOT / "benchmarks").glob("bench_*.py"))
    assert [s for s in scripts if f" {s} " not in listed] == []


def test_every_benchmark_imports():
    """A benchmark is run by hand, so nothing else would notice a name it imports that moved."""
    names = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__main__")
    code = f"import importlib\nfor name in {names!r}:\n    importlib.import_module('benchmarks.' + name)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


SERVING = re.compile(r"\b(np|jnp)\.pad\(|(?<![.\w])pad\(|\bjax\.jit\b|\blean_jit\b|@jit\b")


def test_the_app_and_its_pages_never_pad_arrays_or_compile():
    """Padding to fixed shapes and compiling are serving, done below the app (``kernelviz.runtime.serve``,
    the training loop, the models' own fast forms): no module of ``kernelviz/app`` and no page does it."""
    found = {}
    for path in [*(PACKAGE / "app").rglob("*.py"), *(ROOT / "chapters").glob("*.py"), ROOT / "app.py"]:
        code = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
        hits = [m.group(0) for m in SERVING.finditer(code)]
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}
