"""The Sources page: every catalogue entry shows, each link opens a chapter with controls that exist there,
and the numbers kernelviz prints beside the sources' come from the sources' procedures."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from pagetools import table_with
from prosetools import shown, shown_count
from test_app import ok, start

import kernelviz as kv
from kernelviz.app import defaults
from kernelviz.app.ui import charts
from kernelviz.app.ui.caching import cache
from kernelviz.app.ui.caching import heads as cache_heads
from kernelviz.app.ui.caching import sources as cache_sources
from kernelviz.app.ui.pages import PAGE_URLS
from kernelviz.app.ui.widgets.sidebar import DATA_CONTROLS
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.settings import Controls

SOURCES = "chapters/6_sources.py"
CH = "6_sources"  # its prose: chapters/prose/6_sources.md
ROOT = Path(__file__).resolve().parents[1]


def _control_keys(page: str) -> set[str]:
    """Every control key a page (or the sidebar) can draw: the quoted "prefix.name" strings of its code,
    the keys of every settings table it draws (``ps.NAME``, ``kernelviz.app.views.page_settings``), of the
    sidebar's (``DATA_CONTROLS``) and of its chapter's book (``kernelviz.app.ui.charts``)."""
    text = (ROOT / page).read_text() + (ROOT / "kernelviz/app/ui/widgets/sidebar.py").read_text()
    for extra in ("cache.py", "heads.py", "attention.py"):
        text += (ROOT / "kernelviz/app/ui/caching" / extra).read_text()
    tables = [getattr(ps, name) for name in set(re.findall(r"\bps\.([A-Z_]+)\b", text))]
    drawn = {t.key(f) for t in (*tables, DATA_CONTROLS) if isinstance(t, Controls) for f in t.fields}
    url = PAGE_URLS[page]
    drawn |= set(charts.book(url).keys()) if url in charts.MODULES else set()  # a chapter's book's controls
    return drawn | set(re.findall(r'"((?:kr|masked|mh|attn|icl|data)\.[a-z_0-9]+)"', text))


def test_catalogue_covers_the_sources_and_links_to_real_controls():
    sources = cache_sources.catalogue()
    assert [s["id"] for s in sources] == ["blog", "smoothing", "d2l", "notes", "kotlin", "collins", "garg"]
    for source in sources:
        for item in source["item"]:
            assert item["kind"] in ("figure", "printed", "exercise", "text")
            assert (ROOT / item["page"]).is_file(), item["page"]
            unknown = set(item.get("params", {})) - _control_keys(item["page"])
            assert not unknown, (item["what"], unknown)
        for unshown in source.get("unshown", []):
            assert unshown["what"] and unshown["why"]
    for book in ("d2l", "kotlin"):  # both list their four exercises one by one
        items = next(s["item"] for s in sources if s["id"] == book)
        exercises = [i["what"] for i in items if i["kind"] == "exercise"]
        assert [e[:2] for e in exercises] == ["1.", "2.", "3.", "4."]


def test_page_runs_with_one_link_per_entry():
    at = start(SOURCES)
    ok(at)
    sources = cache_sources.catalogue()
    items = [item for s in sources for item in s["item"]]
    markdown = [m.value for m in at.markdown]
    text = " ".join(markdown)
    kinds = ("**figure**", "**printed**", "**exercise**", "**text**")
    assert sum(text.count(k) for k in kinds) == len(items)
    for item in items:
        assert f"**{item['kind']}** · {item['what']}" in text, item["what"]
    for section in ("lead", "blog_holdouts", "blog_heads", "d2l_w"):
        shown(markdown, CH, section)
    for section in ("sample", "coverage"):
        shown((c.value for c in at.caption), CH, section)
    assert shown_count(markdown, CH, "unshown") == sum(1 for s in sources if s.get("unshown"))


def two_decimals(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def test_page_prints_the_sources_numbers_beside_kernelviz_own():
    at = start(SOURCES)
    items = [item for s in cache_sources.catalogue() for item in s["item"]]
    post = {item["ours"]: item for item in items if item.get("ours", "").startswith("blog_")}
    holdouts = table_with(at, "hold-out")
    rerun = "ℓ_post (re-run of the post's code)"
    assert list(holdouts[rerun]) == [f"{v:.2f}" for v in post["blog_holdouts"]["theirs_l"]]
    assert list(holdouts["ℓ_post (kernelviz)"]) == [f"{v:.2f}" for v in cache_sources.ours("blog_holdouts")]
    heads = table_with(at, "u_h (post)")
    assert list(heads["ℓ_post (post)"]) == [two_decimals(v) for v in post["blog_heads"]["theirs_l"]]
    assert list(heads["u_h (post)"]) == [two_decimals(v) for v in post["blog_heads"]["theirs_u"]]
    assert list(heads["u_h (kernelviz)"]) == [two_decimals(r["u"]) for r in cache_sources.ours("blog_heads")]
    text = " ".join(m.value for m in at.markdown)
    assert f"**{cache_sources.ours('d2l_average'):.4f}**" in text
    printed = [item["theirs"] for item in items if "theirs" in item]  # the Kotlin port's 2.5126
    assert printed and all(f"{v:.4f}" in text for v in printed)
    w = cache_sources.ours("d2l_w")
    assert f"**{w['w']:.4f}**" in text and ", ".join(f"{v:.4f}" for v in w["losses"]) in text


def test_our_numbers_follow_the_sources_procedures():
    heads = cache_sources.ours("blog_heads")  # chapter 3's four panels at their defaults
    assert [len(r["u"]) for r in heads] == [1, 2, 4, 8]
    mh = defaults.MULTIHEAD
    panel = cache_heads.panel(cache_sources.blog_source(), 2, mh.kernel, mh.learning_rate, mh.seed)
    np.testing.assert_allclose(heads[1]["l_post"], panel.lengthscales * math.sqrt(2), rtol=1e-9)
    holdouts = cache_sources.ours("blog_holdouts")  # chapter 2's four panels of the post's figure
    ms = vt.MaskedSettings()
    blog = cache_sources.blog_source()
    first = cache.holdout_panel(blog, "gaussian", 1, ms.steps, ms.learning_rate, ms.seed)
    assert len(holdouts) == 4 and holdouts[0] == pytest.approx(first.lengthscale * math.sqrt(2))
    assert cache_sources.ours("d2l_average") == pytest.approx(float(np.mean(kv.d2l_data().y)))
    w = cache_sources.ours("d2l_w")
    assert len(w["losses"]) == 5 and 0 <= w["w0"] < 1
