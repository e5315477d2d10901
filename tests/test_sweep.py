"""The whole grid under AppTest: every chapter × every kernel × both data sets × all controls at one end.

For each cell the page's own controls and the sidebar's number of points all go to their minimum (10 points,
the smallest ℓ, one head, one step …) or all to their maximum (5,000 points, the largest ℓ, eight heads,
2,000 steps, the largest learning rate …) in one rerun. Every cell must run without an exception, draw no
infinite value, never join a gap with a line, and any chart with nothing finite to draw must come with a
sentence on the page that says why.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_app import KR, MASKED, charts, ok, set_extreme, start, values
from test_page_attention import PICTURES as ATTN_PICTURES

import kernelviz as kv

MH_PAGE, ATTN_PAGE = "chapters/3_multihead.py", "chapters/4_attention.py"
PICTURES = {"attn.picture": tuple(ATTN_PICTURES), "masked.picture": ("post", "seeds"),
            "mh.picture": ("weights", "mixing", "loss")}  # the pictures of a page, one shown at a time
PAGES = {KR: "kr", MASKED: "masked", MH_PAGE: "mh", ATTN_PAGE: "attn"}
WITH_KERNEL = (KR, MASKED, MH_PAGE)
CELLS = [
    (page, kernel, source, which)
    for page in PAGES
    for kernel in (kv.KERNELS if page in WITH_KERNEL else (None,))
    for source in ("blog", "d2l")
    for which in ("min", "max")
]
EXPLAINS = ("gap", "empty", "undefined", "no ", "diverged", "ran away", "search", "nothing")


def _numbers(trace: dict, field: str) -> np.ndarray:
    """A trace's numeric ``field`` (flat or 2-D, list or base64) as a flat float array; empty for text."""
    raw = trace.get(field)
    if isinstance(raw, list) and raw and isinstance(raw[0], list):
        raw = [v for row in raw for v in row]
    try:
        return values(raw) if raw is not None else np.zeros(0)
    except (TypeError, ValueError):
        return np.zeros(0)  # categories or labels


def _explained(at) -> bool:
    texts = [e.value for e in (*at.warning, *at.info, *at.caption, *at.markdown)]
    return any(word in t.lower() for t in texts for word in EXPLAINS)


@pytest.mark.parametrize(
    ("page", "kernel", "source", "which"),
    CELLS,
    ids=[f"{PAGES[p]}-{k or 'attention'}-{s}-{w}" for p, k, s, w in CELLS],
)
def test_page_at_its_extremes(page, kernel, source, which):
    prefix = PAGES[page]
    query = {"data.source": source}
    if kernel is not None:
        query[f"{prefix}.kernel"] = kernel
    at = start(page, query)
    keys = sorted(
        w.key
        for kind in ("slider", "select_slider", "toggle", "number_input")
        for w in getattr(at, kind)
        if w.key and w.key.startswith(prefix + ".")
    )
    assert keys, "the page has controls"
    for key in (*keys, "data.n"):
        set_extreme(at, key, which)
    at.run()
    ok(at)
    pictures = [p for p in at.segmented_control if p.key and p.key.startswith(prefix + ".")]
    if prefix == "attn":  # chapter 4's one-head pictures use the radio below
        pictures[0].set_value("kernel").run()
    radios = [r for r in at.radio if r.key and r.key.startswith(prefix + ".")]
    for radio in radios:  # the head shown (1 … H): its options follow the number of heads just set
        radio.set_value(1 if which == "min" else len(radio.options))
    if radios:
        at.run()
    ok(at)
    if kernel is not None:
        assert at.selectbox(key=f"{prefix}.kernel").value == kernel
    n = at.select_slider(key="data.n")
    assert n.value == int(n.options[0] if which == "min" else n.options[-1])
    drawn = charts(at)
    for choice in pictures:  # the pictures not shown by default, each at the same extremes
        for picture in PICTURES[choice.key]:
            at.segmented_control(key=choice.key).set_value(picture).run()
            ok(at)
            drawn |= charts(at)
    assert drawn, "the page draws figures"
    for name, fig in drawn.items():
        finite = False
        for trace in fig["data"]:
            assert trace.get("connectgaps") is not True, f"{name}: a gap joined by a line"
            for field in ("x", "y", "z"):
                nums = _numbers(trace, field)
                assert not np.any(np.isinf(nums)), f"{name}: infinite {field} in {trace.get('name')}"
                finite |= bool(np.any(np.isfinite(nums))) and field != "x"
        if not finite:
            assert _explained(at), f"{name} has nothing to draw and no sentence says why"
    json.dumps(drawn)  # every figure is plain JSON
