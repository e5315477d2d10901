"""docs/architecture.md's layout of the package is the tree's own: ``python docs/tree.py`` wrote it from
every module's docstring, and it lists every module that exists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_architecture_layout_is_written_from_the_tree():
    command = [sys.executable, "docs/tree.py", "--check"]
    check = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = [p.relative_to(ROOT / "kernelviz").as_posix() for p in (ROOT / "kernelviz").rglob("*.py")
               if p.name != "__init__.py" and p.parent != ROOT / "kernelviz"]
    assert [m for m in modules if f"`{m}`" not in text] == []
