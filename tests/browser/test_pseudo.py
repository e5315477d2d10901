"""The pseudo-locale in Chromium: a server started with ``KERNELVIZ_LANG=en-XA``
(``kernelviz/runtime/i18n.py``) shows every word through the catalogue or the prose files, each letter
swapped for an accented look-alike and each string a third longer. On every page, a lesson's question
before and after its reveal, and a phone's join view of a class session, no run of plain English letters is
left outside what ``UNTRANSLATED`` lists (formulas, code, and words that are not kernelviz's), and no
chart's title, legend or tick runs into other text or off the chart at a projector's 1280 × 720 with the
longer words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kernelviz.app.ui.pages import CHAPTERS, SOURCES
from kernelviz.runtime.i18n import PSEUDO, pseudo
from tests.browser.harness import (
    CHART_TEXT_CLASHES_JS,
    PHONE,
    RERUN_TIMEOUT_S,
    StreamlitServer,
    settled,
    start_streamlit,
)

QUESTION_SCENE = "/?lesson=from-kernel-regression-to-attention&scene=3"
PROJECTOR = {"viewport": {"width": 1280, "height": 720}}

# What is rightly left as it is, each with its reason: the one list of exemptions (regular expressions,
# removed from a text before its words are read).
UNTRANSLATED = {
    "Streamlit's and Plotly's own words (their chrome, which they do not translate)": [
        r"^(?:App pages|Collapse sidebar|Expand sidebar|Skip to main content|Sidebar|Link to heading"
        r"|Increment|Decrement|Upload|Open|Close|Browse files|Drag and drop file here|Press Enter to apply"
        r"|Choose an option|No results|Running\.\.\.|Stop|Deploy|Main menu|Clear all|Clear value"
        r"|file upload)$",
        r"^Help for ", r"^Shortcut \S+$",  # a widget's help button, a button's key (PageDown)
        r"^(?:Limit )?\d+MB per file", r"• [A-Z]{3}(?:, [A-Z]{3})*$",  # the uploader's limit and file types
        r"^[a-z_]+ icon$",  # an icon named by its Material name
    ],
    "formulas and symbols": [r"\$[^$]*\$", r"_[A-Za-z]+"],  # $d_{qk}$ as written in a label; ℓ_post
    "data, not words": [r"\b[A-Z]{5}\b", r"https?://\S+"],  # a class session's join code, its link
}
_EXEMPT = re.compile("|".join(p for patterns in UNTRANSLATED.values() for p in patterns))
_WORD = re.compile(r"[A-Za-z]{2,}")

# Visible text and the accessible names a screen reader reads, outside formulas (KaTeX), code, Plotly's
# toolbar and what the page marks translate="no" (HTML's own mark: Streamlit's icons, their Material names).
TEXT_JS = """() => {
  const skip = '.katex, code, pre, script, style, .modebar, [translate="no"],'
    + ' [data-testid="stCode"], [data-testid="stStatusWidget"], [data-testid="stToolbar"]';
  const out = [];
  const walk = document.createTreeWalker(document.querySelector('[data-testid="stApp"]'),
                                         NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip) || !(el.offsetParent || el.closest('svg'))) continue;
    if (n.textContent.trim()) out.push(n.textContent.trim());
  }
  for (const el of document.querySelectorAll('[aria-label], [title], [alt], [placeholder]'))
    if (!el.closest(skip))
      for (const a of ['aria-label', 'title', 'alt', 'placeholder'])
        if (el.getAttribute(a)) out.push(el.getAttribute(a));
  return out;
}"""


def english(texts: list[str]) -> list[str]:
    """Each text that still holds a run of plain English letters, outside ``UNTRANSLATED``."""
    found = []
    for text in texts:
        if words := _WORD.findall(_EXEMPT.sub(" ", text)):
            found.append(f"{words[:4]} in {text[:120]!r}")
    return sorted(set(found))


def letters(text: str) -> str:
    """``text``'s words as the pseudo-locale writes them, without the padding (for finding a button)."""
    return pseudo(text).rsplit(" ", 1)[0]


@pytest.fixture(scope="module")
def pseudo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    db = Path(tmp_path_factory.mktemp("pseudo")) / "class.sqlite3"
    server = start_streamlit(env={"KERNELVIZ_LANG": PSEUDO, "KERNELVIZ_CLASS_DB": f"sqlite:///{db}"})
    try:
        yield server
    finally:
        server.stop()


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector('[data-testid="stMain"]', timeout=RERUN_TIMEOUT_S * 1e3)
    settled(page)


PAGES = {"overview": "/", **{c.title: f"/{c.url}" for c in (*CHAPTERS, SOURCES)}}


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_is_in_the_pseudo_locale_and_its_charts_fit(pseudo_server: StreamlitServer, browser: Any,
                                                               name: str) -> None:
    context = browser.new_context(**PROJECTOR)
    try:
        page = context.new_page()
        _open(page, pseudo_server.url + PAGES[name])
        assert english(page.evaluate(TEXT_JS)) == []
        assert page.evaluate(CHART_TEXT_CLASHES_JS) == []
    finally:
        context.close()


def test_a_lesson_question_its_reveal_and_a_phones_join_view(pseudo_server: StreamlitServer,
                                                             browser: Any) -> None:
    stage = browser.new_context(**PROJECTOR).new_page()
    phone = browser.new_context(**PHONE).new_page()
    try:
        _open(stage, pseudo_server.url + QUESTION_SCENE)
        assert english(stage.evaluate(TEXT_JS)) == []
        stage.get_by_role("button", name=re.compile("^" + re.escape(letters("Reveal")))).first.click()
        settled(stage)
        assert english(stage.evaluate(TEXT_JS)) == []
        _open(stage, pseudo_server.url + QUESTION_SCENE)
        stage.get_by_role("button", name=re.compile("^" + re.escape(letters("Class session")))).click()
        settled(stage)
        code = re.search(r"class=([A-Z]{5})", stage.url).group(1)
        assert english(stage.evaluate(TEXT_JS)) == []
        _open(phone, f"{pseudo_server.url}/?join={code}")
        assert english(phone.evaluate(TEXT_JS)) == []
    finally:
        stage.context.close()
        phone.context.close()
