"""A phone (390 × 844, touch) in Chromium: the lesson's presenter view and its predict-then-reveal box are
usable with a thumb (every button, choice, checkbox, select and number box at least 44 × 44 px; a slider's
thumb takes a touch 21 px from its centre), no chart's title runs past the chart or is covered by a toolbar,
every choice of a segmented control is in view (they wrap), and nothing scrolls sideways
(``kernelviz/app/ui/widgets/access.py`` holds the CSS)."""

from __future__ import annotations

from typing import Any

import pytest

from kernelviz.app.ui import platform
from tests.browser.harness import PHONE, StreamlitServer, settled

VIEWS = {
    "a lesson scene with charts": "/?lesson=ten-minutes&scene=1",
    "a lesson question": "/?lesson=from-kernel-regression-to-attention&scene=3",
    "a question with choices": "/?lesson=from-kernel-regression-to-attention&scene=13",
    "chapter 1": "/kernel-regression",
    "chapter 3, a question with long choices": "/multi-head",
}
TARGETS = (f'button, [data-testid="stCheckbox"] label, [data-testid="stNumberInputContainer"], '
           f'{platform.SELECTBOX} {platform.SELECT_FIELD}')
MEASURE_JS = """(targets) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const shown = e => e.offsetParent !== null && !e.closest('.st-key-kv-twins');
  const label = e => (e.getAttribute('aria-label') || e.innerText || '').trim().slice(0, 40);
  const small = [...main.querySelectorAll(targets)].filter(shown)
    .filter(e => !(e.getAttribute('aria-label') || '').startsWith('Help for'))  // help: words beside
    .filter(e => !(e.tagName === 'BUTTON' && e.closest('[data-testid="stSelectbox"]')))  // part of a select
    .map(e => [label(e), e.getBoundingClientRect()]).filter(([, r]) => r.width < 44 || r.height < 44)
    .map(([name, r]) => `${name}: ${Math.round(r.width)} x ${Math.round(r.height)}`);
  const thumbs = [...main.querySelectorAll('[data-testid="stSlider"] input[type="range"]')]
    .map(i => i.parentElement.parentElement).filter(shown).map(t => {
      t.scrollIntoView({block: 'center'});
      const r = t.getBoundingClientRect(), cx = r.x + r.width / 2, cy = r.y + r.height / 2;
      return [[-21, 0], [21, 0], [0, -21], [0, 21]].every(([dx, dy]) => {
        const hit = document.elementFromPoint(cx + dx, cy + dy); return hit !== null && t.contains(hit); });
    });
  const titles = [...main.querySelectorAll('.js-plotly-plot')].filter(shown).flatMap(p => {
    const svg = p.querySelector('svg.main-svg').getBoundingClientRect(), t = p.querySelector('.gtitle');
    return t && t.getBoundingClientRect().right > svg.right + 1 ? [t.textContent] : []; });
  const toolbars = [...main.querySelectorAll('.modebar-container .modebar')]
    .filter(e => getComputedStyle(e).display !== 'none').length;
  const clipped = [...main.querySelectorAll('[data-testid="stButtonGroup"] button')].filter(shown)
    .filter(b => b.getBoundingClientRect().right > innerWidth).map(label);
  const sideways = document.documentElement.scrollWidth - innerWidth;
  return {small, thumbs, titles, toolbars, clipped, sideways};
}"""


@pytest.mark.parametrize("view", list(VIEWS))
def test_a_phone_can_use_it_with_a_thumb(warm_server: StreamlitServer, browser: Any, view: str) -> None:
    context = browser.new_context(**PHONE)
    try:
        page = context.new_page()
        page.goto(warm_server.url + VIEWS[view])
        page.wait_for_selector('[data-testid="stMain"]')
        settled(page)
        found = page.evaluate(MEASURE_JS, TARGETS)
    finally:
        context.close()
    assert found["small"] == []
    assert all(found["thumbs"]) and (found["thumbs"] or view != "a lesson question")
    assert found["titles"] == [] and found["toolbars"] == 0
    assert found["clipped"] == []  # every choice of a button group in view: none hidden past the edge
    assert found["sideways"] <= 0
