"""Serving and training go through the adapters (``kernelviz.runtime.serve``, ``kernelviz.runtime.train``):
outside ``kernelviz/runtime/`` no module pads arrays to buckets (``np.pad``, ``jnp.pad``, the ``pad`` and
``bucket`` helpers of ``runtime/shapes``), compiles (``jax.jit``, ``@jit``, ``lean_jit``) or cuts padded
outputs back to the real points, heads or steps (a slice ``[: n]`` whose end is a real count). The modules
that still do are listed below by name, each with its reason; an entry that no longer finds anything fails
too, so the list only shrinks."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kernelviz"

PADDING = re.compile(r"\b(np|jnp)\.pad\(|(?<![.\w])(pad|bucket)\(|\bshapes\.(pad|bucket)\b")
COMPILING = re.compile(r"\bjax\.jit\b|@jit\b|\bpartial\(jax\.jit\b|\blean_jit\b")
# a slice [: end] whose end names a real count: points, queries, keys, heads, widths, steps run
REAL_COUNTS = {"n", "nq", "nk", "nw", "nv", "h", "heads", "d", "dv", "d_qk", "d_v", "run", "done",
               "steps_run", "count"}

ALLOWED = {
    "kernelviz/core/kernels.py": "the kernel shapes for the figures (kernel_value(s)): one compiled core "
                                 "operation each, over a grid of any length, nothing padded",
    "kernelviz/models/attention/selfattention.py": "as_self_attention writes W_q and W_k with a zero row "
                                                   "for ỹ (np.pad): the formula's own row, not a bucket",
    "kernelviz/models/incontext/evaluation.py": "loo_window keeps the first n of the N_MAX points a prompt "
                                                "draws (the task family's shape, not a padded output)",
    "kernelviz/app/ui/caching/cache.py": "bucket() prices a training run (its padded size), pads nothing",
    "kernelviz/app/views/incontext.py": "keeps the first n of the N_MAX points a prompt draws",
    "kernelviz/app/figures/describe.py": "the first n points of a text alternative: not a padded output",
}


def _code_lines(source: str) -> list[str]:
    """``source``'s lines with strings and comments blanked (docstrings may name jax.jit or pad)."""
    lines = source.splitlines()
    out = [list(line) for line in lines]
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                row = out[r - 1]
                lo, hi = (c0 if r == r0 else 0), (c1 if r == r1 else len(row))
                row[lo:hi] = " " * (hi - lo)
    return ["".join(row) for row in out]


def _end_name(e: ast.expr) -> str | None:
    if isinstance(e, ast.Call) and getattr(e.func, "id", "") == "int" and e.args:
        e = e.args[0]
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        e = e.left
    return e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None


def _cuts(source: str) -> list[int]:
    """Lines that read a slice [: end] (or [..., : end]) whose end is a real count."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(s, ast.Slice) and s.lower is None and s.step is None and s.upper is not None
                   and _end_name(s.upper) in REAL_COUNTS for s in parts):
                lines.append(node.lineno)
    return lines


def serving_outside_the_adapters(root: Path = PACKAGE) -> dict[str, list[str]]:
    """Every module of ``root`` outside ``runtime/``: its lines that pad, compile or cut, as "line: what"."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("kernelviz/runtime/"):
            continue
        source = path.read_text(encoding="utf-8")
        hits = []
        for number, line in enumerate(_code_lines(source), 1):
            for pattern, what in ((PADDING, "pads"), (COMPILING, "compiles")):
                if m := pattern.search(line):
                    hits.append(f"{number}: {what} ({m.group(0)})")
        hits += [f"{number}: cuts a padded output" for number in _cuts(source)]
        if hits:
            found[rel] = hits
    return found


def test_nothing_outside_the_adapters_pads_compiles_or_cuts():
    found = serving_outside_the_adapters()
    unlisted = {path: hits for path, hits in found.items() if path not in ALLOWED}
    assert unlisted == {}, f"pad, compile and cut in kernelviz/runtime (serve, train), or list: {unlisted}"


def test_every_listed_module_still_needs_its_entry():
    found = serving_outside_the_adapters()
    assert [path for path in ALLOWED if path not in found] == []
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_grep_sees_padding_compiling_and_cutting():
    source = ("import jax\nimport numpy as np\n"
              "f = jax.jit(g)  # compiled\n"
              "a = np.pad(b, (0, 3))\n"
              "c = out[: p.nq]\n"
              "d = '''jax.jit(g) in a string'''\n")
    lines = _code_lines(source)
    assert COMPILING.search(lines[2]) and PADDING.search(lines[3]) and not COMPILING.search(lines[5])
    assert _cuts(source) == [5]
