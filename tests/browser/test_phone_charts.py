"""No chart's text runs into other text: on every page, and each picture of a trained model, at a phone's
390 × 844 and 360 × 740 in a phone's browser (whose charts ``kf.themed`` lays out for its narrow screen)
and at a projector's 1280 × 720, no two tick labels, titles, panel titles, axis titles, colour-bar titles or
legend entries of a chart overlap, and none runs past the chart's edge (``CHART_TEXT_CLASHES_JS``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.harness import (
    CHART_TEXT_CLASHES_JS,
    PHONE,
    REFERENCE_PATHS,
    RERUN_TIMEOUT_S,
    StreamlitServer,
    wait_until_drawn,
)

PICTURES = [  # the pictures a segmented control shows in place of the one drawn by default
    "/masked-training?masked.picture=seeds",
    "/multi-head?mh.picture=mixing",
    "/multi-head?mh.picture=loss",
    *(f"/dot-product-attention?attn.picture={p}" for p in ("wo", "kernel", "sequence", "selfcross", "loss")),
]
SCREENS = {"phone": PHONE, "small phone": {**PHONE, "viewport": {"width": 360, "height": 740}},
           "projector": {"viewport": {"width": 1280, "height": 720}}}


@pytest.mark.parametrize("screen", list(SCREENS))
def test_no_chart_text_runs_into_other_text(warm_server: StreamlitServer, browser: Any,
                                            site_nav: list[tuple[str, str]], screen: str) -> None:
    views = [path for _, path in site_nav if path not in REFERENCE_PATHS] + PICTURES
    context = browser.new_context(**SCREENS[screen])
    context.set_default_timeout(RERUN_TIMEOUT_S * 1e3)
    clashes = {}
    try:
        page = context.new_page()
        for path in views:
            page.goto(warm_server.url + path)
            wait_until_drawn(page)
            if found := page.evaluate(CHART_TEXT_CLASHES_JS):
                clashes[path] = found
    finally:
        context.close()
    assert len(views) >= 12
    assert clashes == {}
