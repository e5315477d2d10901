"""The catalogue of the code's words: ``kernelviz/locale/kernelviz.pot``, written by Babel's
``pybabel extract`` from every ``_()`` and ``ngettext()`` in the app's code (``babel.cfg``), is kept in the
repository, so a translator and the fidelity checks (``tests/wordtools.py``) read the code's strings
without running it.

* the kept catalogue is what the code holds now (after a change of wording, run the command in
  ``EXTRACT``, as ``docs/translating.md`` says);
* every placeholder in a message is named (``{n}``, ``{ell:.3g}``), so a translation may reorder them;
* no string that a Streamlit element shows is left out of the catalogue: every label, help, caption,
  message and title handed to an ``st.*`` element (or a column or container's) is wrapped, or is a
  placeholder-only template.
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
POT = ROOT / "kernelviz" / "locale" / "kernelviz.pot"
EXTRACT = ("pybabel", "extract", "-F", "babel.cfg", "--omit-header", "--sort-by-file", "--add-location=file",
           "-o", "kernelviz/locale/kernelviz.pot", ".")
CODE = sorted([ROOT / "app.py", *ROOT.glob("chapters/*.py"), *ROOT.glob("kernelviz/app/**/*.py")])
EVERY_MODULE = sorted({*CODE, *ROOT.glob("kernelviz/**/*.py")})  # the pages and every layer of the package

# Streamlit elements whose first argument (and these keywords) a person reads
SHOWN_FIRST = {"title", "header", "subheader", "caption", "info", "warning", "error", "success", "toast",
               "metric", "button", "toggle", "checkbox", "slider", "select_slider", "selectbox", "radio",
               "number_input", "text_input", "text_area", "expander", "spinner", "download_button",
               "popover", "link_button", "file_uploader", "form_submit_button", "status"}
SHOWN_KEYWORDS = {"label", "help", "placeholder", "caption"}
WORD = re.compile(r"[A-Za-z]{2,}")
LOGGERS = {"log", "logger", "_log", "LOG", "logging", "warnings"}  # developers' messages, not the page's


def _extract(out: Path) -> str:
    """The catalogue as ``EXTRACT`` writes it, into ``out``."""
    args = [*EXTRACT[:-2], str(out), "."]
    CommandLineInterface().run(list(args))
    return out.read_text(encoding="utf-8")


def messages() -> list[str]:
    """Every message of the kept catalogue (a plural's two forms each); none where there is no catalogue."""
    if not POT.is_file():
        return []
    with POT.open("rb") as f:
        catalog = read_po(f)
    found: list[str] = []
    for m in catalog:
        if m.id:
            found += list(m.id) if isinstance(m.id, tuple) else [m.id]
    return found


def test_the_kept_catalogue_is_the_codes(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert POT.is_file(), f"no catalogue: run `{' '.join(EXTRACT)}`"
    assert _extract(tmp_path / "now.pot") == POT.read_text(encoding="utf-8"), (
        f"the code's strings and {POT.relative_to(ROOT)} differ: run `{' '.join(EXTRACT)}`")


def test_the_catalogue_holds_the_pages_words():
    shown = messages()
    assert len(shown) > 300
    assert "Where this comes from" in shown and "Try this" in shown


def _fields(message: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(message) if name is not None]


def test_every_placeholder_is_named():
    unnamed = [m for m in messages() if not all(name.isidentifier() for name in _fields(m))]
    assert unnamed == [], "name each placeholder, e.g. {n}, so that a translation may reorder them"


def _letters(node: ast.AST) -> bool:
    """A literal (or an f-string's literal parts) with a word in it: two letters in a row (a formula's
    one-letter symbols, "ℓ = 1/w", are not words)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return WORD.search(node.value) is not None
    if isinstance(node, ast.JoinedStr):
        return any(_letters(v) for v in node.values if isinstance(v, ast.Constant))
    return False


def _receiver(call: ast.Call) -> str:
    value = call.func.value if isinstance(call.func, ast.Attribute) else None
    return value.id if isinstance(value, ast.Name) else ""


def unwrapped(path: Path) -> list[str]:
    """The literals ``path`` hands to a shown Streamlit element without ``_()``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in SHOWN_FIRST or _receiver(node) in LOGGERS:
            continue
        texts = [*node.args[:1], *(k.value for k in node.keywords if k.arg in SHOWN_KEYWORDS)]
        found += [f"{path.relative_to(ROOT)}:{t.lineno}: {ast.unparse(t)[:60]}" for t in texts if _letters(t)]
    return found


def test_every_string_a_streamlit_element_shows_is_wrapped():
    assert [hit for path in CODE for hit in unwrapped(path)] == []


def test_the_check_finds_an_unwrapped_label(tmp_path, monkeypatch):
    page = ROOT / "chapters" / "_probe_unwrapped.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: (
        'st.subheader("Try this")\nc1.metric(_("Error"), 1, help="Root mean squared")\n'
        'log.warning("developers only")\nst.caption(_("ok {n}").format(n=1))\n'))
    assert unwrapped(page) == ['chapters/_probe_unwrapped.py:1: \'Try this\'',
                               'chapters/_probe_unwrapped.py:2: \'Root mean squared\'']


def _binds_underscore(fn: ast.AST) -> bool:
    """``fn`` assigns the name ``_`` itself (a throwaway), which hides gettext's ``_`` in all of ``fn``."""
    own = [n for n in ast.walk(fn) if not isinstance(n, ast.comprehension)]
    comprehension_names = {id(t) for c in ast.walk(fn) if isinstance(c, ast.comprehension)
                           for t in ast.walk(c.target)}
    return any(isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store)
               and id(n) not in comprehension_names for n in own)


def shadowed(path: Path) -> list[str]:
    """The functions of ``path`` that call ``_()`` and also assign ``_``: an UnboundLocalError at their
    first translated word."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        calls = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_"
                    for n in ast.walk(fn))
        if calls and _binds_underscore(fn):
            found.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}")
    return found


def test_no_function_that_translates_hides_gettext():
    assert [hit for path in EVERY_MODULE for hit in shadowed(path)] == []


def in_f_strings(path: Path) -> list[str]:
    """The ``_()`` and ``ngettext()`` calls of ``path`` inside an f-string: Babel's extractor finds them on
    Python 3.12 and later (PEP 701 tokenizes f-strings) but not on 3.11, so the catalogue would depend on
    the Python that wrote it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.JoinedStr):
            continue
        calls = [c for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
        found += [f"{path.relative_to(ROOT)}:{c.lineno}" for c in calls if c.func.id in ("_", "ngettext")]
    return found


def test_no_message_is_wrapped_inside_an_f_string():
    assert [hit for path in EVERY_MODULE for hit in in_f_strings(path)] == []
