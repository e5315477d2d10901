"""kernelviz's chart element in Chromium (``kernelviz/app/ui/chart.py``): a move redraws each chart whose
figure changed once, in place, and nothing else; the charts take the viewer's theme, dark as well as
light; the modebar offers the PNG download and fullscreen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.harness import (
    PLOTS,
    VIEWPORT,
    BrowserErrors,
    StreamlitServer,
    page_state,
    slider_by_label,
    wait_for_repaint,
    wait_until_drawn,
)

pytestmark = pytest.mark.browser

# Marks each chart's Plotly div, keeps each one's figure as JSON, and records every Plotly drawing call
# from now on with the mark of the div it drew into.
WATCH_JS = f"""() => {{
  const P = window.Plotly;
  window.__kvCalls = [];
  const plots = [...document.querySelectorAll({json.dumps(PLOTS)})];
  plots.forEach((gd, i) => {{ gd.__kvMark = i; }});
  if (!P.__kvWatched) {{
    for (const name of ['newPlot', 'react', 'relayout', 'restyle', 'update', 'redraw']) {{
      const f = P[name];
      P[name] = function (gd, ...rest) {{
        window.__kvCalls.push([name, gd && gd.__kvMark]);
        return f.call(this, gd, ...rest);
      }};
    }}
    P.__kvWatched = true;
  }}
  return plots.map((gd) => JSON.stringify([gd.data, gd.layout]));
}}"""
NOW_JS = f"""() => [...document.querySelectorAll({json.dumps(PLOTS)})]
  .map((gd) => [gd.__kvMark, JSON.stringify([gd.data, gd.layout])])"""


def chapter(page: Any, server: StreamlitServer, site_nav: list, name: str) -> None:
    page.goto(server.url + next(p for label, p in site_nav if name in label))
    wait_until_drawn(page)


def test_a_move_redraws_each_changed_chart_once_in_place_and_leaves_the_others(
    warm_server: StreamlitServer, site_nav: list, page: Any, errors: BrowserErrors
) -> None:
    chapter(page, warm_server, site_nav, "Kernel regression")
    before = page.evaluate(WATCH_JS)
    signature = page_state(page)["signature"]
    thumb = slider_by_label(page, "Lengthscale ℓ")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_repaint(page, signature)
    page.wait_for_timeout(500)  # a second draw, if any, would come after the charts' data changed
    after = page.evaluate(NOW_JS)
    calls = page.evaluate("() => window.__kvCalls")
    assert [mark for mark, _ in after] == list(range(len(before))), "a chart's div was replaced"
    changed = [mark for mark, figure in after if figure != before[mark]]
    assert changed, "the move changed no chart"
    assert len(changed) < len(before), "the move changed every chart: nothing shows the others are left"
    assert sorted(calls) == sorted(["react", mark] for mark in changed), calls
    assert errors.messages == []


def test_the_charts_take_the_dark_theme_and_offer_png_and_fullscreen(
    warm_server: StreamlitServer, site_nav: list, browser: Any
) -> None:
    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
    try:
        page = context.new_page()
        chapter(page, warm_server, site_nav, "Kernel regression")
        background = page.evaluate("() => getComputedStyle(document.querySelector('.kv-chart'))"
                                   ".getPropertyValue('--st-background-color').trim()")
        papers = page.evaluate(f"() => [...document.querySelectorAll({json.dumps(PLOTS)})]"
                               ".map((gd) => gd._fullLayout.paper_bgcolor)")
        assert background and int(background.lstrip("#")[:2], 16) < 0x40, f"not a dark theme: {background}"
        assert papers and all(p.lower() == background.lower() for p in papers), (background, papers)
        modebar = page.locator(PLOTS).first.locator(".modebar-btn")
        titles = [modebar.nth(i).get_attribute("data-title") for i in range(modebar.count())]
        assert "Download plot as a PNG" in titles and "Fullscreen" in titles, titles
    finally:
        context.close()
