"""The Markdown tables of the pages: ``mdtable.markdown_table`` (formatting, alignment, escaping), read back
by the page tests' ``pagetools.markdown_tables``; chapters 3 and 4 draw theirs without pyarrow."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pagetools import markdown_tables

from kernelviz.app.mdtable import markdown_table

ROOT = Path(__file__).resolve().parents[1]


def test_numbers_right_aligned_with_four_significant_digits_text_left_and_escaped():
    text = markdown_table({"model": ["a | b", "c*"], "error": [0.123456, 1e259], "u": [0.5, -1.234]},
                          two_decimals=("u",))
    lines = text.splitlines()
    assert lines[0] == "| model | error | u |"
    assert lines[1] == "| :--- | ---: | ---: |"
    assert lines[2] == r"| a \| b | 0.1235 | 0.50 |"
    assert lines[3] == r"| c\* | 1e+259 | -1.23 |"
    assert markdown_tables(text) == [{"model": ["a | b", "c*"], "error": ["0.1235", "1e+259"],
                                      "u": ["0.50", "-1.23"]}]


def test_integers_blanks_and_odd_text():
    text = markdown_table({"H": [1, 8], "note": [None, "two\nlines"], "flag": [True, False]})
    assert text.splitlines()[1] == "| ---: | :--- | :--- |"  # bools are not numbers
    assert markdown_tables(text) == [{"H": ["1", "8"], "note": ["", "two lines"], "flag": ["True", "False"]}]
    assert markdown_table({}) == ""
    with pytest.raises(ValueError, match="different lengths"):
        markdown_table({"a": [1], "b": [1, 2]})


def test_tables_among_other_markdown():
    prose = "\n\nMore | prose.\n\n"
    text = "Some prose.\n\n" + markdown_table({"a": [1]}) + prose + markdown_table({"b": ["x"]})
    assert markdown_tables(text) == [{"a": ["1"]}, {"b": ["x"]}]


RUN_PAGES = """
import sys
sys.path.insert(0, "tests")
from pagetools import tables
from test_app import start
for page in ("chapters/3_multihead.py", "chapters/4_attention.py"):
    assert tables(start(page)), page
print("pyarrow" in sys.modules, "pandas" in sys.modules)
"""


def test_chapters_three_and_four_draw_their_tables_without_pyarrow():
    """In a fresh interpreter: other tests of this process may have imported pyarrow already."""
    out = subprocess.run([sys.executable, "-c", RUN_PAGES], cwd=ROOT, capture_output=True, text=True,
                         timeout=1200, check=True)
    assert out.stdout.split()[-2:] == ["False", "False"], out.stdout + out.stderr
