"""Charts as a screen reader meets them: Chromium's accessibility tree (Playwright's ARIA snapshot) holds each
chart as a figure named by its text alternative, whose numbers are the backend's and follow the controls."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import kernelviz as kv
from tests.browser.harness import (
    FIRST_LOAD_TIMEOUT_S,
    StreamlitServer,
    page_state,
    slider_by_label,
    wait_for_repaint,
    wait_until_drawn,
)


def figures(page: Any) -> list[str]:
    """The accessible names of the figures in the page's ARIA snapshot, in order (a YAML line such as
    ``- figure "NAME":``, single-quoted with ' doubled when NAME holds a colon)."""
    names = []
    for line in page.locator('[data-testid="stMain"]').aria_snapshot().splitlines():
        item = line.strip().removeprefix("- ")
        quoted = item.startswith("'")
        item = item.strip("'").replace("''", "'") if quoted else item
        if item.startswith('figure "'):
            names.append(item[len('figure "'):item.rindex('"')])
    return names


def fit_range(names: list[str]) -> tuple[str, tuple[float, float]]:
    """Chapter 1's fit: its ℓ and the range of m(x) its text alternative gives."""
    (name,) = [n for n in names if "kernel regression m(x)" in n]
    ell = re.search(r"ℓ = ([\d.]+)", name).group(1)
    fit = r"kernel regression m\(x\): from x = \S+ to \S+, y between (\S+) and (\S+) "
    low, high = re.search(fit, name).groups()
    return ell, (float(low), float(high))


def backend_range(ell: str) -> tuple[float, float]:
    ds = kv.blog_data(n=150, seed=2024)
    mean = kv.nadaraya_watson(ds.grid(256), ds.x, ds.y, float(ell), "gaussian").mean
    return float(f"{mean.min():.3g}"), float(f"{mean.max():.3g}")


def test_chapter_1s_charts_are_named_figures_that_follow_the_lengthscale(warm_server: StreamlitServer,
                                                                          page: Any) -> None:
    page.goto(warm_server.url + "/kernel-regression")
    wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
    names = figures(page)
    assert len(names) == page_state(page)["charts"]  # every chart is a figure with a name
    ell, shown = fit_range(names)
    assert shown == backend_range(ell)
    before = page_state(page)["signature"]
    thumb = slider_by_label(page, "Lengthscale ℓ")
    thumb.focus()
    page.keyboard.press("ArrowRight")
    wait_for_repaint(page, before)
    moved, shown_after = fit_range(figures(page))
    assert moved != ell and shown_after == backend_range(moved)
    assert np.isfinite(shown_after).all()


def test_a_lesson_scene_names_its_charts(warm_server: StreamlitServer, page: Any) -> None:
    page.goto(warm_server.url + "/?lesson=ten-minutes&scene=1")
    wait_until_drawn(page, timeout=FIRST_LOAD_TIMEOUT_S)
    names = figures(page)
    assert any("kernel regression m(x)" in n for n in names)
    row = re.compile(r"row x = (\S+): 80% of its weight on \d+ of the \d+ keys, from \S+ to \S+")
    (heatmap,) = [n for n in names if n.startswith("Attention weights")]
    assert abs(float(row.search(heatmap).group(1)) - 1.0) < 0.15  # the drawn row nearest x* = 1, outlined
