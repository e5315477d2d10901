"""Streamlit draws every chart it mounts twice (hidden, then at its measured width): the second draw gets
the same figure but for its width, so Plotly finds nothing else to recompute (``kernelviz/app/figures/
theme.py``). Before, a chart that takes clicks got Streamlit's click and drag modes only on its second
draw, and a heatmap's reversed query axis came back as Plotly had rewritten it, and both were drawn twice
in full. On every page, and on the pictures of heatmaps, each second draw is compared with the chart as
Plotly holds it: its layout and its traces may differ only in the width and in the axis values Plotly fills
in itself (an axis's type and range under autorange), and no array may arrive as typed binary data."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.harness import (
    REFERENCE_PATHS,
    RERUN_TIMEOUT_S,
    VIEWPORT,
    StreamlitServer,
    wait_until_drawn,
)

# Wraps Plotly.react as soon as the page has loaded Plotly: each draw into a chart that has been drawn
# before records the figure as Plotly holds it and the figure it is given (arrays longer than 8 shortened).
RECORD_REDRAWS_JS = """(() => {
  const short = (o) => JSON.parse(JSON.stringify(o ?? null, (k, v) =>
    ArrayBuffer.isView(v) || (Array.isArray(v) && v.length > 8) ? `array of ${v.length}` : v));
  const install = () => {
    const P = window.Plotly;
    if (!P || P.__kvRedraws) return;
    P.__kvRedraws = true;
    window.__kvRedraws = [];
    const react = P.react;
    P.react = function (gd, figure, ...rest) {
      const given = figure && figure.data ? figure : {data: figure, layout: rest[0]};
      if (gd.layout) window.__kvRedraws.push({held: short({layout: gd.layout, data: gd.data}),
                                              given: short({layout: given.layout, data: given.data})});
      return react.call(this, gd, figure, ...rest);
    };
  };
  const timer = setInterval(() => { install(); if (window.Plotly) clearInterval(timer); }, 5);
})();"""
FILLED_IN = {"type", "autorange", "range"}  # an axis's values Plotly fills in when the figure leaves them out
# A colour bar's x, which Plotly once wrote into the figure it held as its default (1.02) under a loaded run
COLORBAR_FILLED_IN = {"x"}
HEATMAP_PICTURES = [f"/dot-product-attention?attn.picture={p}" for p in ("kernel", "selfcross")]


def differences(held: Any, given: Any, path: str = "") -> list[str]:
    """Where ``given`` differs from ``held``: the width, and a value Plotly filled in that the given figure
    leaves out, do not count."""
    if isinstance(held, dict) and isinstance(given, dict):
        return [d for key in held.keys() | given.keys()
                for d in differences(held.get(key), given.get(key), f"{path}.{key}")]
    if isinstance(held, list) and isinstance(given, list) and len(held) == len(given):
        return [d for i, (h, g) in enumerate(zip(held, given, strict=True))
                for d in differences(h, g, f"{path}[{i}]")]
    last = path.rsplit(".", 1)[-1]
    filled_in = (last in FILLED_IN and "axis" in path) or (last in COLORBAR_FILLED_IN and "colorbar" in path)
    if held == given or last == "width" or (given is None and filled_in):
        return []
    return [f"{path}: {held!r:.60} → {given!r:.60}"]


def redraw_differences(browser: Any, url: str) -> tuple[int, list[str]]:
    """How many charts were drawn a second time on the page at ``url``, and what changed in those draws."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(RERUN_TIMEOUT_S * 1e3)
    try:
        context.add_init_script(RECORD_REDRAWS_JS)
        page = context.new_page()
        page.goto(url)
        wait_until_drawn(page)
        redraws = page.evaluate("window.__kvRedraws || []")
        return len(redraws), [d for r in redraws for d in differences(r["held"], r["given"])]
    finally:
        context.close()


@pytest.mark.parametrize("picture", [None, *HEATMAP_PICTURES])
def test_a_charts_second_draw_changes_only_its_width(
    warm_server: StreamlitServer, browser: Any, site_nav: list[tuple[str, str]], picture: str | None
) -> None:
    paths = [path for _, path in site_nav if path not in REFERENCE_PATHS] if picture is None else [picture]
    found = {}
    for path in paths:
        redrawn, changed = redraw_differences(browser, warm_server.url + (path or "/"))
        assert redrawn, f"{path}: no chart drawn a second time"
        if changed:
            found[path] = changed
    assert not found, found
