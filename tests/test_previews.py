"""The home page on a fresh server: its previews come from the kept inputs (``previews.npz``), which are
what the previews compute, so it draws without compiling; a page asked for during the warm-up goes first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernelviz import make_dataset
from kernelviz.app.ui import preview_store
from kernelviz.app.ui.previews import PREVIEWS
from kernelviz.app.ui.sidebar import make_data

ROOT = Path(__file__).resolve().parents[1]


def test_the_kept_previews_are_what_the_previews_compute():
    name, n, seed = preview_store.KEPT_DATA
    data = make_data(preview_store.KEPT_DATA, make_dataset(name, n=n, seed=seed))
    kept = preview_store.load()
    assert set(kept) == set(PREVIEWS), "rewrite them: python -m kernelviz.app.ui.previews"
    for preview, spec in PREVIEWS.items():
        live = spec.inputs(data)
        assert set(kept[preview]) == set(live), preview
        for field, value in live.items():
            np.testing.assert_allclose(kept[preview][field], np.asarray(value), rtol=1e-6, atol=1e-9,
                                       err_msg=f"{preview}.{field}: python -m kernelviz.app.ui.previews")


def test_other_data_is_not_served_from_the_kept_previews():
    data = make_data(("blog", 100, 2024), make_dataset("blog", n=100, seed=2024))
    assert all(preview_store.kept(p, data) is None for p in PREVIEWS)
    default = make_data(preview_store.KEPT_DATA, make_dataset("blog"))
    assert preview_store.kept("attention", default) is not None


FRESH_SERVER = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
from streamlit.testing.v1 import AppTest
from kernelviz.app.warmup import count_compilations
from kernelviz.runtime import devices

devices.set_up_server()  # the server's one-time set-up (its probes compile a few tiny programs)
with count_compilations() as count:
    at = AppTest.from_file(os.path.join(os.getcwd(), "app.py"), default_timeout=300).run()
    home_done = time.monotonic()
    home_errors = [str(e.value) for e in at.exception]
    while count.threads.count("kernelviz-warmup") < 2:  # the warm-up is under way
        time.sleep(0.05)
    asked = time.monotonic()
    at.switch_page("pages/2_masked_training.py").run()
    page_done = time.monotonic()
    events = list(zip(count.names, count.threads, count.ended, strict=True))
print(json.dumps({"home_errors": home_errors, "page_errors": [str(e.value) for e in at.exception],
                  "home_done": home_done, "asked": asked, "page_done": page_done, "events": events,
                  "charts": len(at.get("plotly_chart"))}))
os._exit(0)  # the warm-up thread need not finish
"""


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory) -> dict:
    """The home page, then chapter 2 asked for during the warm-up, in a fresh process on an empty
    compilation cache: every compilation with its thread and time."""
    env = {**os.environ, "KERNELVIZ_JAX_CACHE": str(tmp_path_factory.mktemp("jax-cache"))}
    out = subprocess.run([sys.executable, "-c", FRESH_SERVER], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_the_home_page_draws_with_no_compiled_program(fresh_server):
    assert fresh_server["home_errors"] == []
    during_home = [(n, t) for n, t, ended in fresh_server["events"] if ended <= fresh_server["home_done"]]
    assert during_home == []


def test_a_page_asked_for_during_the_warm_up_compiles_before_the_warm_up_goes_on(fresh_server):
    """Chapter 2 compiles its programs (on its own thread) while the warm-up waits: once the page's
    first program is done, the warm-up compiles nothing until the page has drawn."""
    r = fresh_server
    assert r["page_errors"] == [] and r["charts"] >= 4
    page = [ended for _, thread, ended in r["events"] if thread != "kernelviz-warmup" and ended > r["asked"]]
    assert len(page) >= 3, "chapter 2 compiles its own programs on a fresh server"
    warm = [(name, ended) for name, thread, ended in r["events"] if thread == "kernelviz-warmup"]
    assert [w for w in warm if min(page) < w[1] < r["page_done"]] == []
