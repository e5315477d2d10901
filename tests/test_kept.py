"""A fresh server draws every page at its defaults without compiling: the results kept in
``kernelviz/app/ui/caching/kept_results.npz.xz`` are what the pages compute, calls are served from them
only when exactly the same, and a page asked for during the warm-up compiles before the warm-up goes on.
The file is data (arrays and a JSON index), read back exactly and without running anything it names."""

from __future__ import annotations

import builtins
import dataclasses
import io
import json
import lzma
import math
import os
import pickle
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
from kernelviz.app.views import Heatmap, Status
from kernelviz.models.results import TrainState
from kernelviz.models.smoothing import Smooth

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


def exactly(a: object, b: object) -> bool:
    """Whether two results are the same: types, arrays' dtype, shape and bytes, floats bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return a.hex() == b.hex() or (math.isnan(a) and math.isnan(b))
    if dataclasses.is_dataclass(a) or hasattr(a, "_fields"):
        a, b = (vars(a), vars(b)) if dataclasses.is_dataclass(a) else (a._asdict(), b._asdict())
    if isinstance(a, dict):
        same_keys = list(a) == list(b) and all(map(exactly, a, b))
        return same_keys and all(exactly(x, b[k]) for k, x in a.items())
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(exactly(x, y) for x, y in zip(a, b, strict=True))
    return a == b


EVERY_KIND = {
    "arrays": (np.array(2.5), np.array(3, np.int32), np.array(True), np.array([True, False]),
               np.arange(6, dtype=np.int64).reshape(2, 3), np.zeros((0, 4), np.float32),
               np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2], np.array(["é", "ℓ"])),
    "numbers": [0.1, -0.0, 1e-310, 1e308, math.nan, math.inf, -math.inf, 0, -7, 2**70, True, False, None],
    "scalars": (np.float32(0.1), np.int64(-3), np.bool_(True)),
    "text": "kernel ℓ ∈ [0, 5]",
    "nested": ([], (), {}, [[(1, [2.0, {"a": (None,)}])]], ((),)),
    "keys": {1: "int", 2.5: "float", (1, "a"): "tuple", None: "none", False: "bool", "s": "str"},
    "records": (Smooth(np.ones(3), np.zeros(3), None), Status("info", "trained"),
                Heatmap(np.ones(2), np.ones(3), np.eye(2, 3)),
                TrainState(np.array(7, np.int32), (np.ones(2),), (), "f00d")),
}


def test_every_kind_of_result_reads_back_exactly(tmp_path):
    shared = np.linspace(0.0, 1.0, 5)
    results = {**EVERY_KIND, "shared": (shared, [shared])}
    written = kept.write(results, tmp_path / "kept.npz.xz")
    back = kept.read(written)
    assert list(back) == sorted(results)
    for key, value in results.items():
        assert exactly(back[key], value), key
    assert back["shared"][0] is back["shared"][1][0]  # one array, as in the results
    assert kept.write(results, tmp_path / "again.npz.xz").read_bytes() == written.read_bytes()


def test_the_kept_file_is_data_not_a_pickle(monkeypatch):
    """The file opens with NumPy's loader refusing pickles, its index is JSON, and every kept result reads
    back while every unpickler refuses to run."""
    with np.load(io.BytesIO(lzma.decompress(kept.STORE.read_bytes())), allow_pickle=False) as npz:
        members = {name: npz[name] for name in npz.files}
    index = json.loads(members.pop("index").tobytes().decode("utf-8"))
    assert not any(a.dtype.hasobject for a in members.values())

    def refuse(*args, **kwargs):
        raise AssertionError("a kept result was unpickled")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    assert sorted(kept.read(kept.STORE)) == sorted(index["results"]) != []


def kept_file(path: Path, results: dict) -> Path:
    """A file laid out as ``kept.write`` lays it out, with this JSON index and no arrays (NumPy's own zip)."""
    text = json.dumps({"version": 1, "results": results})
    buffer = io.BytesIO()
    np.savez(buffer, index=np.frombuffer(text.encode(), np.uint8))
    path.write_bytes(lzma.compress(buffer.getvalue()))
    return path


KEPT_MODULE = "kernelviz.app.ui.caching.kept"


@pytest.mark.parametrize("name", [
    "os:system", "builtins:eval", "subprocess:Popen", "kernelviz.os:system", "kernelviz:__builtins__.eval",
    f"{KEPT_MODULE}:os.system", f"{KEPT_MODULE}:Path", f"{KEPT_MODULE}:UnkeyableError",
    "kernelviz.app.views:Status.__init__", "kernelviz.app.views:training_status", None, 3,
])
def test_a_record_type_not_one_of_kernelviz_s_records_is_refused_uncalled(tmp_path, monkeypatch, name):
    called = []
    for owner, attr in ((os, "system"), (builtins, "eval"), (subprocess, "Popen")):
        monkeypatch.setattr(owner, attr, lambda *a, **k: called.append(a) or 0)
    bad = {"record": name, "fields": {"command": "touch pwned", "source": "1", "args": ["true"]}}
    path = kept_file(tmp_path / "kept.npz.xz", {"bad": bad, "fine": {"float": "nan"}})
    back = kept.read(path)
    assert list(back) == ["fine"] and math.isnan(back["fine"])  # only the refused result is left out
    assert called == []


STATUS = "kernelviz.app.views:Status"


@pytest.mark.parametrize("tree", [
    {"record": STATUS, "fields": {"level": "info", "message": "m", "loss": 1.0}},  # a field since removed
    {"record": STATUS, "fields": {"level": "info"}},  # a field since added
    {"record": STATUS, "fields": {"message": "m", "level": "info"}},  # in another order
    {"record": "kernelviz.app.views:Renamed", "fields": {}},
    {"array": "a9"}, {"float": "nan?"}, {"tuple": {"a": 1}}, {"set": [1]}, [1, 2], {"items": [[[1], 2]]},
])
def test_a_result_that_does_not_read_back_as_written_is_left_out(tmp_path, tree):
    good = {"record": STATUS, "fields": {"level": "info", "message": "m"}}
    path = kept_file(tmp_path / "kept.npz.xz", {"changed": tree, "same": good})
    assert kept.read(path) == {"same": Status("info", "m")}


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    """``kept.STORE`` at a file of the test's, ``load`` reading it afresh (and the real one after)."""
    monkeypatch.setattr(kept, "STORE", tmp_path / "kept.npz.xz")
    kept.load.cache_clear()
    yield kept.STORE
    kept.load.cache_clear()


def npz(**members: np.ndarray) -> bytes:
    """An xz-compressed ``.npz`` of these members (NumPy's own zip, pickling an object array)."""
    buffer = io.BytesIO()
    np.savez(buffer, **members)
    return lzma.compress(buffer.getvalue())


INDEX = np.frombuffer(b'{"version": 1, "results": {"a": {"array": "a0"}}}', np.uint8)
DAMAGED = {
    "truncated": lambda whole: whole[: len(whole) // 2],
    "garbage": lambda whole: os.urandom(500),
    "empty": lambda whole: b"",
    "a pickle": lambda whole: lzma.compress(pickle.dumps({"a": 1.0})),  # the file as it once was
    "another version": lambda whole: npz(index=np.frombuffer(b'{"version": 2, "results": {}}', np.uint8)),
    "no index": lambda whole: npz(a0=np.ones(2)),
    "an index not JSON": lambda whole: npz(index=np.frombuffer(b"{x", np.uint8)),
    "an index not a dict": lambda whole: npz(index=np.frombuffer(b"[1]", np.uint8)),
    "an object array": lambda whole: npz(index=INDEX, a0=np.array([None], object)),
}


@pytest.mark.parametrize("damage", ["missing", *DAMAGED])
def test_a_missing_or_damaged_file_keeps_nothing_and_raises_nothing(store, damage):
    kept.write({"a": np.arange(1000.0), "b": Status("info", "m")}, store)
    assert len(kept.load()) == 2
    if damage == "missing":
        store.unlink()
    else:
        store.write_bytes(DAMAGED[damage](store.read_bytes()))
    kept.load.cache_clear()
    assert kept.load() == {}


class Loose:
    """A class of the tests', not one of kernelviz's records."""


@pytest.mark.parametrize("value", [Loose(), np.array([None], object), {1, 2}, np.ma.masked_array([1.0])])
def test_a_result_the_file_cannot_hold_is_refused_when_written(tmp_path, value):
    with pytest.raises(TypeError):
        kept.write({"a": 1.0, "b": (value,)}, tmp_path / "kept.npz.xz")
    assert list(tmp_path.iterdir()) == []  # nothing written
