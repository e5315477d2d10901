"""A fresh server draws every page at its defaults without compiling: the results kept in
``kernelviz/app/ui/caching/kept_results.pkl.xz`` are what the pages compute, calls are served from them
only when exactly the same, and a page asked for during the warm-up compiles before the warm-up goes on."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_app import start as open_page

from kernelviz import make_dataset
from kernelviz.app.keep import record_defaults
from kernelviz.app.ui.caching import cache, kept
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.ui.widgets.sidebar import make_data
from kernelviz.app.ui.widgets.text import KEPT, SERVED

ROOT = Path(__file__).resolve().parents[1]
REWRITE = "rewrite them: python -m kernelviz.app.keep"


def differences(a: object, b: object, path: str = "") -> list[str]:
    """Where two results differ: arrays and numbers beyond 1e-5 (relative), anything else not equal."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return [f"{path}: {a.dtype}{a.shape} against {b.dtype}{b.shape}"]
        if a.dtype.kind in "fc" and not np.allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True):
            return [f"{path}: largest difference {np.nanmax(np.abs(a - b)):.3g}"]
        return [] if a.dtype.kind in "fc" or np.array_equal(a, b) else [f"{path}: arrays differ"]
    if isinstance(a, float) and isinstance(b, float):
        same = math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-8) or (math.isnan(a) and math.isnan(b))
        return [] if same else [f"{path}: {a!r} against {b!r}"]
    if type(a) is not type(b):
        return [f"{path}: {type(a).__name__} against {type(b).__name__}"]
    if dataclasses.is_dataclass(a):
        a, b = vars(a), vars(b)
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(map(str, a))} against {sorted(map(str, b))}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} against {b!r}"]


def test_the_kept_results_are_what_the_pages_compute_at_their_defaults():
    computed = record_defaults(ROOT)
    stored = kept.load()
    assert sorted(stored) == sorted(computed), REWRITE
    found = [d for key in computed for d in differences(stored[key], computed[key], key[:120])]
    assert found == [], REWRITE


def test_a_call_is_served_only_when_its_arguments_are_the_kept_ones(monkeypatch):
    kept_data = make_data(("blog", 150, 2024), make_dataset("blog"))
    other = make_data(("blog", 100, 2024), make_dataset("blog", n=100))
    fn = getattr(cache.predict, "__wrapped__", cache.predict)
    start = cache.start_lengthscale(kept_data)
    assert kept.lookup(fn, (kept_data, start, "gaussian"), {}) is not kept.MISSING
    assert kept.lookup(fn, (kept_data,), {"lengthscale": start, "kernel": "gaussian"}) is not kept.MISSING
    assert kept.lookup(fn, (other, start, "gaussian"), {}) is kept.MISSING
    assert kept.lookup(fn, (kept_data, start * 1.01, "gaussian"), {}) is kept.MISSING
    assert kept.lookup(fn, (kept_data, start, "laplace"), {}) is kept.MISSING
    monkeypatch.setenv(kept.ENV, "0")
    assert kept.lookup(fn, (kept_data, start, "gaussian"), {}) is kept.MISSING


FRESH_SERVER = """
import json, os, sys, time
sys.path.insert(0, os.getcwd())
from streamlit.testing.v1 import AppTest
from kernelviz.app.ui.pages import CHAPTERS
from kernelviz.app.warmup import count_compilations
from kernelviz.runtime import devices

devices.set_up_server()  # the server's one-time set-up (its probes compile a few tiny programs)
runs, errors = [], []
with count_compilations() as count:
    at = AppTest.from_file(os.path.join(os.getcwd(), "app.py"), default_timeout=300)
    for page in [None, *CHAPTERS]:
        start = time.monotonic()
        (at if page is None else at.switch_page(page.path)).run()
        runs.append((page and page.url, start, time.monotonic()))
        errors += [str(e.value) for e in at.exception]
    while count.threads.count("kernelviz-warmup") < 2:  # the warm-up is under way
        time.sleep(0.05)
    asked = time.monotonic()
    at.query_params["masked.holdout"] = "17"  # not a default view: trained and compiled live
    at.switch_page(CHAPTERS[1].path).run()
    done = time.monotonic()
    events = list(zip(count.names, count.threads, count.ended, strict=True))
print(json.dumps({"errors": errors + [str(e.value) for e in at.exception], "runs": runs, "asked": asked,
                  "done": done, "events": events,
                  "holdout": at.slider(key="masked.holdout").value}))
os._exit(0)  # the warm-up thread need not finish
"""


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory) -> dict:
    """Every page at its defaults, then chapter 2 at another hold-out size asked for during the warm-up,
    in a fresh process on an empty compilation cache: every compilation with its thread and time."""
    env = {**os.environ, "KERNELVIZ_JAX_CACHE": str(tmp_path_factory.mktemp("jax-cache"))}
    env.pop(kept.ENV, None)
    out = subprocess.run([sys.executable, "-c", FRESH_SERVER], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_every_page_at_its_defaults_draws_with_no_compiled_program(fresh_server):
    assert fresh_server["errors"] == []
    assert [url for url, _, _ in fresh_server["runs"]] == [None, *(c.url for c in CHAPTERS)]
    for url, start, end in fresh_server["runs"]:
        own = [name for name, thread, ended in fresh_server["events"]
               if thread != "kernelviz-warmup" and start < ended <= end]
        assert own == [], url or "home"


def test_a_page_asked_for_during_the_warm_up_compiles_before_the_warm_up_goes_on(fresh_server):
    """Chapter 2 at a hold-out size of its own compiles its programs while the warm-up waits: from the
    page's first compilation to its end, the warm-up compiles nothing."""
    r = fresh_server
    assert r["holdout"] == 17
    page = [ended for _, thread, ended in r["events"] if thread != "kernelviz-warmup" and ended > r["asked"]]
    assert len(page) >= 1, "chapter 2 trains at a new hold-out size"
    warm = [ended for _, thread, ended in r["events"] if thread == "kernelviz-warmup"]
    assert [w for w in warm if min(page) < w < r["done"]] == []
    assert any(w < r["asked"] for w in warm)  # the warm-up was under way when the page was asked for


def _code_lines(at: object) -> list[str]:
    """The line under each "The code that ran" expander's title, in page order."""
    boxes = (*at.expander, *at.status)  # older AppTests list an expander with an icon under status
    return [e.caption[0].value for e in boxes if e.label == "The code that ran"]


def test_the_code_under_a_chart_says_when_it_drew_kept_results():
    """At chapter 1's defaults on a fresh server the fit is a kept result: the line under its code says that
    nothing ran, and how the code runs otherwise. At a lengthscale no kept run has, it says how the code ran,
    alone."""
    at = open_page(CHAPTERS[0].path)
    assert _code_lines(at)[0] == f"{SERVED.line} {KEPT}"
    ell = at.select_slider(key="kr.lengthscale")
    other = next(v for v in ell.options if v != ell.value)
    moved = open_page(CHAPTERS[0].path, {"kr.lengthscale": other})
    assert moved.select_slider(key="kr.lengthscale").value == float(other)
    assert _code_lines(moved)[0] == SERVED.line
