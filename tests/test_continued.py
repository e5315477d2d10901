"""Runs that go on (``kv.fit(..., start=r)``, ``kernelviz.models.results``): a run continued to more steps
is the fresh run of that many steps, number for number; and the server's store of runs to continue
(``kernelviz.app.ui.caching.continuing``) finds the right one."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import kernelviz as kv
from kernelviz.app.ui.caching import cache, continuing
from kernelviz.app.ui.widgets.sidebar import make_data
from kernelviz.app.views.training import MaskedSettings
from kernelviz.models import heads
from kernelviz.models.results import FitResult


@pytest.fixture(scope="module")
def blog() -> tuple[np.ndarray, np.ndarray]:
    ds = kv.blog_data()
    return ds.x, ds.y


def assert_same_run(a: FitResult, b: FitResult) -> None:
    """Every number of two FitResults equal, bit for bit."""
    for field in ("lengthscales", "mixing", "losses", "trajectory"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.shape == y.shape and x.dtype == y.dtype, field
        np.testing.assert_array_equal(x, y, err_msg=field)
    assert (a.steps_run, a.diverged, a.message, a.method) == (b.steps_run, b.diverged, b.message, b.method)
    assert a.state.step == b.state.step and a.state.fingerprint == b.state.fingerprint
    for x, y in zip(a.state.params + a.state.opt, b.state.params + b.state.opt, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("settings", [
    {},
    {"arithmetic": "post"},
    {"holdout": 10, "learning_rate": 0.5, "seed": 7},
    {"heads": 4, "multihead": True, "holdout": 3},
    {"heads": 2, "multihead": True, "arithmetic": "post", "kernel": "epanechnikov"},
])
def test_a_continued_run_is_the_fresh_run(blog, settings):
    x, y = blog
    fresh = kv.fit(x, y, steps=230, **settings)
    part = kv.fit(x, y, steps=100, **settings)
    assert part.state.step == 100 and part.losses.shape == (100,)
    assert_same_run(kv.fit(x, y, steps=230, start=part, **settings), fresh)
    # continued twice, and by zero steps
    middle = kv.fit(x, y, steps=170, start=part, **settings)
    assert_same_run(kv.fit(x, y, steps=230, start=middle, **settings), fresh)
    assert_same_run(kv.fit(x, y, steps=230, start=fresh, **settings), fresh)


def test_seeds_continue_each_their_own_run(blog):
    x, y = blog
    seeds = [3, 1, 4]
    fresh = kv.fit_seeds(x, y, seeds, steps=300)
    continued = kv.fit_seeds(x, y, seeds, steps=300, start=kv.fit_seeds(x, y, seeds, steps=120))
    for a, b in zip(continued, fresh, strict=True):
        assert_same_run(a, b)
    assert_same_run(continued[1], kv.fit(x, y, steps=300, seed=1))


def test_a_diverged_run_continues_to_the_same_stop(blog):
    x, y = blog
    fresh = kv.fit(x, y, heads=8, steps=300, learning_rate=1e6, seed=0)
    assert fresh.diverged and fresh.steps_run < 300
    part = kv.fit(x, y, heads=8, steps=fresh.steps_run + 1, learning_rate=1e6, seed=0)
    assert part.diverged and part.state.step == fresh.steps_run
    assert_same_run(kv.fit(x, y, heads=8, steps=300, learning_rate=1e6, seed=0, start=part), fresh)


@pytest.mark.parametrize(("change", "words"), [
    ({"seed": 5}, "same data, seed and settings"),
    ({"holdout": 2}, "same data, seed and settings"),
    ({"learning_rate": 0.3}, "same data, seed and settings"),
    ({"arithmetic": "post"}, "same data, seed and settings"),
    ({"steps": 50}, "already run 100 steps, more than 50"),
    ({"kernel": "boxcar"}, "fitted by a search"),
])
def test_a_run_continues_only_its_own_kind(blog, change, words):
    x, y = blog
    part = kv.fit(x, y, steps=100)
    with pytest.raises(ValueError, match=words):
        kv.fit(x, y, **{"steps": 150, **change}, start=part)


def test_other_data_and_a_search_do_not_continue(blog):
    x, y = blog
    part = kv.fit(x, y, steps=100)
    with pytest.raises(ValueError, match="same data"):
        kv.fit(x, y + 1e-9, steps=150, start=part)
    with pytest.raises(ValueError, match="one run to continue per seed"):
        kv.fit_seeds(x, y, [1, 2], steps=150, start=[part])
    searched = kv.fit(x, y, kernel="boxcar", steps=100)
    assert searched.method == "search" and searched.state is None
    with pytest.raises(ValueError, match="same data"):
        kv.fit(x, y, steps=150, start=searched)


def test_the_store_starts_from_the_longest_shorter_run(blog):
    x, y = blog
    starts: list[object] = []

    def train(steps):
        def run(start):
            starts.append(None if start is None else start.state.step)
            return kv.fit(x, y, steps=steps, start=start)
        return run

    setting = ("test", "longest shorter")
    for steps in (200, 100, 300, 150, 300, 50):
        continuing.continued(setting, steps, train(steps))
    assert starts == [None, None, 200, 100, 300, None]
    assert continuing.continued(("test", "other"), 150, train(150)).steps_run == 150
    assert starts[-1] is None


def test_the_store_keeps_the_last_runs_and_skips_a_search(blog):
    x, y = blog
    seen = []

    def run(start):
        seen.append(start)
        return kv.fit(x, y, kernel="boxcar", steps=60, start=start)

    continuing.continued(("test", "search"), 50, lambda start: kv.fit(x, y, kernel="boxcar", steps=50))
    continuing.continued(("test", "search"), 60, run)
    assert seen == [None]
    short = kv.fit(x, y, steps=10)
    for i in range(continuing.RUNS_KEPT + 5):
        continuing.continued(("test", "many", i), 10, lambda start: short)
    assert len(continuing._KEPT._runs) == continuing.RUNS_KEPT
    assert continuing._KEPT.longest(("test", "many", 4), 10) is None  # the oldest went first
    assert continuing._KEPT.longest(("test", "many", continuing.RUNS_KEPT + 4), 10) is short


def test_the_page_fit_continues_the_run_it_kept(monkeypatch):
    data = make_data(("blog", 150, 2024), kv.blog_data())
    starts = []
    real = heads.train
    here = threading.get_ident()

    def spy(x, y, seeds, req, start=None):
        if threading.get_ident() == here:  # the app's warm-up, started by an earlier test, may train too
            starts.append(None if start is None else start[0].state.step)
        return real(x, y, seeds, req, start)

    monkeypatch.setattr(heads, "train", spy)
    first = cache.fit(data, MaskedSettings("gaussian", 3, 120, 0.21, 11))
    later = cache.fit(data, MaskedSettings("gaussian", 3, 170, 0.21, 11))
    assert starts == [None, 120]
    assert first.steps_run == 120 and later.steps_run == 170
    fresh = kv.fit(data.train.x, data.train.y, holdout=3, steps=170, learning_rate=0.21, seed=11)
    assert_same_run(later, fresh)


def test_a_start_the_backend_refuses_costs_only_a_fresh_run(blog):
    x, y = blog
    setting = ("test", "a setting that leaves out the seed")
    continuing.continued(setting, 100, lambda start: kv.fit(x, y, steps=100, seed=1, start=start))
    run = continuing.continued(setting, 150, lambda start: kv.fit(x, y, steps=150, seed=2, start=start))
    assert_same_run(run, kv.fit(x, y, steps=150, seed=2))
    with pytest.raises(ValueError, match="steps"):
        continuing.continued(("test", "bad steps"), 0, lambda start: kv.fit(x, y, steps=0, start=start))
