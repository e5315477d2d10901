"""Write the package's layout into docs/architecture.md, between its ``<!-- tree -->`` markers, from the
tree itself: every layer, sub-package and module of kernelviz with the first sentence of its docstring.

Run from the repository root: ``python docs/tree.py`` (``--check``: exit 1 if the file is out of date;
``tests/test_docs.py`` runs that check).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kernelviz"
DOC = ROOT / "docs" / "architecture.md"
LAYERS = ("runtime", "core", "data", "models", "app")  # as tests/test_layers.py orders them
BEGIN, END = "<!-- tree: python docs/tree.py writes what follows, from the docstrings -->", "<!-- /tree -->"


def summary(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    return re.split(r"(?<=\.)\s", text)[0].replace("|", "\\|")


def rows(folder: Path) -> list[str]:
    """A table row for every module of ``folder`` and, after them, of its sub-packages."""
    out = []
    for path in sorted(folder.glob("*.py")):
        if path.name != "__init__.py":
            out.append(f"| `{path.relative_to(PACKAGE).as_posix()}` | {summary(path)} |")
    for sub in sorted(p for p in folder.iterdir() if (p / "__init__.py").exists()):
        out.append(f"| `{sub.relative_to(PACKAGE).as_posix()}/` | {summary(sub / '__init__.py')} |")
        out.extend(rows(sub))
    return out


def tree() -> str:
    parts = [BEGIN, ""]
    for layer in LAYERS:
        folder = PACKAGE / layer
        parts += [f"**`kernelviz/{layer}/`**: {summary(folder / '__init__.py')}", "",
                  "| module | what it is |", "| --- | --- |", *rows(folder), ""]
    return "\n".join([*parts, END])


def updated(text: str) -> str:
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + tree() + text[stop:]


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    new = updated(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print("docs/architecture.md is out of date: run python docs/tree.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
