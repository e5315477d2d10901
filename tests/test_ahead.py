"""The next notch prepared while the server is idle: which settings come next (``notches.next_settings``),
the background thread that runs only the newest request and only when idle (``ui.ahead``), chapters 4 and 5
asking for the right one, and what they prepare being what the pages then read from the caches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
import pytest
from test_app import ok, start

import kernelviz as kv
from kernelviz.app.ui import server
from kernelviz.app.ui.caching import ahead, kept
from kernelviz.app.ui.caching import attention as cache_attention
from kernelviz.app.ui.caching import incontext as cache_incontext
from kernelviz.app.ui.page_data import Data
from kernelviz.app.views import incontext as vi
from kernelviz.app.views import page_settings as ps
from kernelviz.app.views import training as vt
from kernelviz.app.views.notches import Options, next_settings, replace, settings_ahead
from kernelviz.models import incontext
from kernelviz.models.attention.training import LayerRequest
from kernelviz.models.incontext import PretrainRequest

BASE = PretrainRequest(family="sine", roughness=3.0, noise=0.1, n=32, heads=1, steps=1500, seed=0)
LAYER = LayerRequest(heads=2, d_qk=2, d_v=1, holdout=10, steps=300, learning_rate=0.1, seed=0)
NOTCHES = ps.IN_CONTEXT.notches(None)  # chapter 5's (no range depends on the data)
LAYER_NOTCHES = ps.LAYER.notches(SimpleNamespace(train=np.zeros(150)))  # hold-out sizes 1 to 148


def step(before, now):
    """Chapter 5's settings one notch on."""
    return next_settings(before, now, NOTCHES)


WAIT_S = 30.0


@pytest.mark.parametrize("field", list(NOTCHES))
def test_next_settings_steps_the_moved_slider_once_more_the_same_way(field):
    notch = NOTCHES[field]

    def at(k: float) -> PretrainRequest:  # the slider k notches above the middle of its range
        return replace(BASE, **{field: notch.snap(notch.snap((notch.low + notch.high) / 2) + k * notch.step)})

    assert step(at(0), at(1)) == at(2)
    assert step(at(1), at(0)) == at(-1)
    top, bottom = replace(BASE, **{field: notch.high}), replace(BASE, **{field: notch.low})
    assert step(replace(top, **{field: notch.snap(notch.high - notch.step)}), top) is None
    assert step(replace(bottom, **{field: notch.snap(notch.low + notch.step)}), bottom) is None


def test_a_select_slider_steps_to_the_next_option_and_stops_at_its_ends():
    rates = LAYER_NOTCHES["learning_rate"]
    assert isinstance(rates, Options) and rates.values == vt.ATTENTION_LEARNING_RATES
    i = rates.values.index(0.1)

    def at(k: int) -> LayerRequest:
        return replace(LAYER, learning_rate=rates.values[i + k])

    assert next_settings(at(-1), at(0), LAYER_NOTCHES) == at(1)
    assert next_settings(at(1), at(0), LAYER_NOTCHES) == at(-1)
    top = replace(LAYER, learning_rate=rates.values[-1])
    assert next_settings(replace(top, learning_rate=rates.values[-2]), top, LAYER_NOTCHES) is None
    odd = replace(LAYER, learning_rate=0.25)  # no option lists it
    assert next_settings(LAYER, odd, LAYER_NOTCHES) is None
    assert next_settings(odd, LAYER, LAYER_NOTCHES) is None
    assert next_settings(LAYER, replace(LAYER, start="random"), LAYER_NOTCHES) is None  # a select box
    assert next_settings(replace(LAYER, holdout=147), replace(LAYER, holdout=148), LAYER_NOTCHES) is None


def test_settings_ahead_keeps_stepping_the_same_way_and_stops_at_the_end():
    top = NOTCHES["heads"].high

    def at(heads: int) -> PretrainRequest:
        return replace(BASE, heads=heads)

    assert settings_ahead(at(1), at(2), NOTCHES, 3) == [at(3), at(4), at(5)]
    assert settings_ahead(at(5), at(4), NOTCHES, 3) == [at(3), at(2), at(1)]
    assert settings_ahead(at(top - 2), at(top - 1), NOTCHES, 3) == [at(top)]
    assert settings_ahead(None, at(2), NOTCHES, 3) == []
    assert settings_ahead(at(1), at(2), NOTCHES, 1) == [next_settings(at(1), at(2), NOTCHES)]


def test_next_settings_is_none_without_one_slider_moved():
    assert step(None, BASE) is None
    assert step(BASE, BASE) is None
    assert step(BASE, replace(BASE, heads=2, seed=1)) is None  # two sliders at once
    assert step(BASE, replace(BASE, kind="linear")) is None  # no notches
    assert step(BASE, replace(BASE, family="gp")) is None


def test_snapped_settings_are_the_keys_next_settings_steps_to():
    moved = replace(BASE, noise=0.1 + 0.05, roughness=3.0 + 0.5)  # 0.15000000000000002
    read = ps.IN_CONTEXT.snapped(moved, None)
    assert read.noise == 0.15 and read.roughness == 3.5
    assert step(replace(BASE, noise=0.1), replace(BASE, noise=0.15)).noise == 0.2
    assert step(replace(BASE, heads=2), replace(BASE, heads=3)).heads == 4
    assert isinstance(ps.IN_CONTEXT.snapped(replace(BASE, heads=2.0), None).heads, int)


class Switch:
    """An ``idle()`` the test turns on and off."""

    def __init__(self) -> None:
        self.on = False

    def __call__(self) -> bool:
        return self.on


def wait_for(condition, seconds: float = WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_only_the_newest_request_runs_and_only_when_idle():
    idle, ran = Switch(), []
    worker = ahead.Ahead(idle)
    try:
        worker.ask(ahead.Request("a", lambda: ran.append("a")))
        worker.ask(ahead.Request("b", lambda: ran.append("b")))
        time.sleep(0.2)
        assert ran == [] and worker.pending() == "b"
        idle.on = True
        wait_for(lambda: worker.done == ["b"])
        assert ran == ["b"] and worker.pending() is None
        worker.ask(ahead.Request("b", lambda: ran.append("b again")))  # just done: dropped
        worker.ask(ahead.Request("c", lambda: ran.append("c")))
        wait_for(lambda: worker.done == ["b", "c"])
        assert ran == ["b", "c"]
    finally:
        worker.stop()


def test_a_chain_runs_step_by_step_and_a_newer_request_replaces_its_rest():
    idle, ran, gate = Switch(), [], threading.Event()
    idle.on = True
    worker = ahead.Ahead(idle)

    def first() -> None:
        ran.append("a1")
        gate.wait(WAIT_S)

    last = ahead.Request("a3", lambda: ran.append("a3"))
    try:
        worker.ask(ahead.Request("a1", first, ahead.Request("a2", lambda: ran.append("a2"), last)))
        wait_for(lambda: ran == ["a1"])
        worker.ask(ahead.Request("b", lambda: ran.append("b")))  # while a1 runs: a2 and a3 are dropped
        gate.set()
        wait_for(lambda: worker.done[-1:] == ["b"])
        assert ran == ["a1", "b"]
        then = ahead.Request("c", lambda: ran.append("c"))
        worker.ask(ahead.Request("b", lambda: ran.append("b again"), then))
        wait_for(lambda: worker.done[-1:] == ["c"])
        assert ran == ["a1", "b", "c"]  # b was done: skipped, and the step after it ran
    finally:
        worker.stop()


def test_each_step_of_a_chain_waits_for_an_idle_server():
    idle, ran = Switch(), []
    worker = ahead.Ahead(idle)

    def first() -> None:
        ran.append(1)
        idle.on = False  # a run came in

    try:
        worker.ask(ahead.Request(1, first, ahead.Request(2, lambda: ran.append(2))))
        idle.on = True
        wait_for(lambda: ran == [1])
        time.sleep(0.2)
        assert ran == [1] and worker.pending() == 2
        idle.on = True
        wait_for(lambda: ran == [1, 2])
    finally:
        worker.stop()


def test_a_failing_job_is_logged_and_the_next_one_runs(caplog):
    idle, ran = Switch(), []
    idle.on = True
    worker = ahead.Ahead(idle)

    def fails() -> None:
        raise ValueError("no")

    try:
        worker.ask(ahead.Request("bad", fails))
        wait_for(lambda: worker.done == ["bad"])
        worker.ask(ahead.Request("good", lambda: ran.append(1)))
        wait_for(lambda: worker.done == ["bad", "good"])
    finally:
        worker.stop()
    assert ran == [1]
    assert any("preparing 'bad' failed" in r.getMessage() for r in caplog.records)


def test_stop_ends_the_thread_while_it_waits_for_an_idle_server():
    ran = []
    worker = ahead.Ahead(Switch())
    worker.ask(ahead.Request("never", lambda: ran.append("ran while busy")))
    worker.stop()
    assert worker._thread is not None and not worker._thread.is_alive()
    assert ran == [] and worker.done == []


def test_the_server_is_idle_after_the_warm_up_and_a_quiet_spell_without_runs(monkeypatch):
    warmed = threading.Event()
    monkeypatch.setattr(ahead, "WARMED", warmed)
    monkeypatch.setattr(server.Runs, "ended", time.monotonic() - 2 * ahead.QUIET_S)
    assert not ahead.server_idle()  # still warming up
    warmed.set()
    assert ahead.server_idle()
    with server.Runs.running():
        assert not ahead.server_idle()
    assert not ahead.server_idle()  # the browser still draws what the run sent
    time.sleep(ahead.QUIET_S + 0.05)
    assert ahead.server_idle()


def chain(request: ahead.Request | None) -> list[ahead.Request]:
    """The steps of a chain of requests, in order."""
    return [] if request is None else [request, *chain(request.then)]


def record_asks(monkeypatch) -> tuple[list[tuple], list[list[ahead.Request]]]:
    """What pages ask ``ahead`` for from now on: each request's first step as (key, job), and each chain."""
    asked, chains = [], []
    monkeypatch.setattr(ahead, "ask", lambda r: asked.append((r.key, r.job)) or chains.append(chain(r)))
    return asked, chains


def test_chapter_5_asks_for_the_next_notches_of_the_slider_moved(monkeypatch):
    asked, chains = record_asks(monkeypatch)
    at = start("chapters/5_in_context.py", {"icl.steps": "50"})
    assert asked == []  # a first visit moved nothing
    at.slider(key="icl.heads").set_value(2).run()
    ok(at)
    (key, _job), = asked
    settings = key[1]
    assert settings == replace(BASE, heads=3, steps=50)
    assert key == ("icl", settings, (0, False))
    assert [r.key[1].heads for r in chains[0]] == [3, 4, 5][:cache_incontext.AHEAD_NOTCHES]
    at.slider(key="icl.noise").set_value(0.15).run()
    assert asked[-1][0][1].noise == 0.2 and asked[-1][0][1].heads == 2


def test_chapter_4s_sliders_are_its_notches():
    at = start("chapters/4_attention.py")
    notches = ps.LAYER.notches(at.session_state["kv._data"])
    keys = {"heads": "attn.heads", "d_qk": "attn.dqk", "d_v": "attn.dv", "holdout": "attn.holdout",
            "steps": "attn.steps", "seed": "attn.seed"}
    for field, key in keys.items():
        w, notch = at.slider(key=key), notches[field]
        assert (w.min, w.max, w.step, w.value) == (notch.low, notch.high, notch.step, notch.default), field
    lr = at.select_slider(key="attn.lr")
    assert tuple(float(v) for v in lr.options) == notches["learning_rate"].values
    assert set(notches) == set(keys) | {"learning_rate"}


def at_key(at) -> tuple:
    """The key of the data set the sidebar of ``at`` holds (the blog post's sample, its n and seed)."""
    n, seed = at.select_slider(key="data.n").value, at.number_input(key="data.seed").value
    return ("blog", int(float(n)), int(seed))


def test_chapter_4_asks_for_the_next_notch_and_draws_it_from_what_it_prepared(monkeypatch):
    asked, chains = record_asks(monkeypatch)
    at = start("chapters/4_attention.py", {"attn.steps": "150", "attn.seed": "31"})
    at.slider(key="attn.heads").set_value(5).run()  # 4 → 5 heads
    ok(at)
    (key, job), = asked
    after = replace(LAYER, heads=6, d_qk=4, steps=150, learning_rate=0.05, seed=31)
    assert key == ("attn", after, at_key(at))
    assert [r.key[1].heads for r in chains[0]] == [6, 7, 8][:cache_attention.AHEAD_NOTCHES]
    trained = []
    real = kv.fit_attention
    monkeypatch.setattr(kv, "fit_attention", lambda *a, **k: trained.append(k["heads"]) or real(*a, **k))
    job()
    assert trained == [6]
    at.slider(key="attn.heads").set_value(6).run()
    ok(at)
    assert trained == [6]  # the page drew six heads from the caches
    assert asked[-1][0][1].heads == 7


def test_what_is_prepared_is_what_the_page_reads(monkeypatch):
    s = replace(BASE, steps=50, heads=2, seed=7)
    calls = []
    real = incontext.pretrain
    monkeypatch.setattr(incontext, "pretrain", lambda **kw: calls.append(kw) or real(**kw))
    cache_incontext.prepare(s, 3, compare=True)
    assert len(calls) == 2  # this layer and the other kind's
    cache_incontext.pretrain(s)
    cache_incontext.task(s, 3)
    cache_incontext.kernels(s)
    cache_incontext.in_context_error(vi.other_kind(s))
    assert len(calls) == 2  # all from the caches


def test_the_sidebar_n_asks_for_the_next_number_of_points_the_way_it_moved(monkeypatch):
    asked, _ = record_asks(monkeypatch)
    at = start("chapters/3_multihead.py", {"mh.steps": "50", "mh.own_seed": "41"})
    assert asked == []  # a first visit moved nothing
    at.select_slider(key="data.n").set_value(200).run()  # 150 → 200: 300 comes next
    ok(at)
    (key, _job), = asked
    post = vt.MaskedSettings("gaussian", 1, 1000, 0.2, 2024)
    own = vt.HeadsSettings(heads=4, steps=50, seed=41)
    assert key == ("mh.data", ahead.Sample("blog", 300, 2024), (post, own))
    at.select_slider(key="data.n").set_value(100).run()  # down: 75 comes next
    assert asked[-1][0][1] == ahead.Sample("blog", 75, 2024)
    at.select_slider(key="data.n").set_value(10).run()  # the slider's end: nothing more
    assert len(asked) == 2


def test_the_sidebar_n_prepares_the_notches_after_the_next_only_while_they_are_small(monkeypatch):
    _asked, chains = record_asks(monkeypatch)
    at = start(None, {})
    for n in (200, 500, 2000):  # 150 → 200, → 500, → 2,000
        at.select_slider(key="data.n").set_value(n).run()
        ok(at)
    assert ahead.DATA_AHEAD == 4 and ahead.DATA_AHEAD_MOST == 2000
    # four ahead; then 5,000 is left out after 2,000; but the next notch is always prepared
    assert [[r.key[1].n for r in c] for c in chains] == [[300, 500, 1000, 2000], [1000, 2000], [5000]]


def test_what_chapter_3_prepares_for_the_next_n_is_what_it_then_reads(monkeypatch):
    asked, _ = record_asks(monkeypatch)
    at = start("chapters/3_multihead.py", {"mh.steps": "50", "mh.own_seed": "43", "data.n": "20"})
    at.select_slider(key="data.n").set_value(10).run()  # 20 → 10, the end: nothing asked
    at.select_slider(key="data.n").set_value(20).run()  # 10 → 20: 30 comes next
    ok(at)
    (_key, job), = asked
    trained = []
    real = kv.fit
    monkeypatch.setattr(kv, "fit", lambda *a, **k: trained.append(len(a[0])) or real(*a, **k))
    job()
    assert trained == [30] * 5  # the post's four models and the reader's own
    at.select_slider(key="data.n").set_value(30).run()
    ok(at)
    assert trained == [30] * 5  # drawn from the caches


def test_what_chapter_1_prepares_for_the_next_noise_seed_is_what_it_then_reads(monkeypatch):
    asked, _ = record_asks(monkeypatch)
    at = start("chapters/1_kernel_regression.py", {"data.n": "75", "data.seed": "70", "kr.kernel": "cauchy"})
    at.number_input(key="data.seed").set_value(71).run()  # 70 → 71: 72 comes next, at the same n
    ok(at)
    (key, job), = asked
    assert key[:2] == ("kr.data", ahead.Sample("blog", 75, 72))
    computed = []
    real = kept.note
    monkeypatch.setattr(kept, "note", lambda fn, *a: computed.append(fn.__name__) or real(fn, *a))
    job()
    assert {"predict", "heatmap_weights"} <= set(computed)
    done = len(computed)
    at.number_input(key="data.seed").set_value(72).run()
    ok(at)
    assert computed[done:] == []  # every call of the page at seed 72 drawn from the caches


def test_chapter_4_and_the_overview_ask_for_the_next_n_too(monkeypatch):
    asked, _ = record_asks(monkeypatch)
    for page in ("chapters/4_attention.py", None):
        at = start(page, {"attn.steps": "150"})
        at.select_slider(key="data.n").set_value(200).run()
        ok(at)
    assert [key[:2] for key, _ in asked] == [("attn.data", ahead.Sample("blog", 300, 2024)),
                                              ("home.data", ahead.Sample("blog", 300, 2024))]


def test_an_uploaded_csv_has_no_next_n(monkeypatch):
    asked, _ = record_asks(monkeypatch)
    ds = kv.load_csv(b"x,y\n0,1\n1,2\n2,2.5\n3,4\n")
    data = Data(key=("csv", "0" * 64, "x", "y"), ds=ds, train=ds)
    monkeypatch.setattr(ahead.st, "session_state", {})
    for _ in range(2):
        ahead.prepare_next_data("page", data, lambda d: None)
    assert asked == []


def n_moved_to_30(monkeypatch, page: str | None, query: dict[str, str]) -> tuple[tuple, Callable, object]:
    """``page`` opened at 20 points with ``query``, then the sidebar's n moved to 30: the one request it
    asked for (key and job), and the AppTest."""
    asked, _ = record_asks(monkeypatch)
    at = start(page, {**query, "data.n": "20"})
    at.select_slider(key="data.n").set_value(30).run()  # 20 → 30: 50 comes next
    ok(at)
    (key, job), = asked
    return key, job, at


def test_what_the_overview_prepares_for_the_next_n_is_what_it_then_reads(monkeypatch):
    key, job, at = n_moved_to_30(monkeypatch, None, {"data.seed": "47"})
    assert key[:2] == ("home.data", ahead.Sample("blog", 50, 47))
    trained = []
    for name in ("fit", "fit_attention"):
        real = getattr(kv, name)
        monkeypatch.setattr(kv, name, lambda *a, _real=real, **k: trained.append(len(a[0])) or _real(*a, **k))
    job()
    assert trained == [50] * 3  # chapter 2's masked fit, chapter 3's heads, chapter 4's layer
    at.select_slider(key="data.n").set_value(50).run()
    ok(at)
    assert trained == [50] * 3  # drawn from the caches


def test_what_chapter_1_prepares_for_the_next_n_is_what_it_then_reads(monkeypatch):
    key, job, at = n_moved_to_30(monkeypatch, "chapters/1_kernel_regression.py",
                                 {"data.seed": "53", "kr.kernel": "laplace"})
    assert key[:2] == ("kr.data", ahead.Sample("blog", 50, 53))
    computed = []
    real = kept.note
    monkeypatch.setattr(kept, "note", lambda fn, *a: computed.append(fn.__name__) or real(fn, *a))
    job()
    assert {"predict", "lengthscale_path", "heatmap_weights", "lengthscale_panels"} <= set(computed)
    done = len(computed)
    at.select_slider(key="data.n").set_value(50).run()
    ok(at)
    assert computed[done:] == []  # every call of the page at 50 points drawn from the caches
