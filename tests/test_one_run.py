"""One script run's results (kernelviz/app/ui/caching/one_run.py): a cached call asked again in the same run
gets the run's copy, not a new one from the cache; outside a run, and in another run, each call gets its
own."""

from __future__ import annotations

from kernelviz.app.ui.caching import cache, one_run
from kernelviz.app.ui.widgets.sidebar import builtin_data

DATA = builtin_data("blog", 150, 2024)


def test_a_call_asked_twice_in_a_run_gets_one_copy_and_each_run_its_own():
    with one_run.one_run():
        first, again = cache.predict(DATA, 0.25, "gaussian"), cache.predict(DATA, 0.25, "gaussian")
        other = cache.predict(DATA, 0.25, "boxcar")
    assert first is again and other is not first
    with one_run.one_run():
        later = cache.predict(DATA, 0.25, "gaussian")
    assert later is not first and (later.mean == first.mean).all()  # the cache's next copy, equal


def test_outside_a_run_every_call_gets_its_own_copy():
    assert cache.predict(DATA, 0.25, "gaussian") is not cache.predict(DATA, 0.25, "gaussian")


def test_arguments_tell_their_types_apart_and_unhashable_ones_keep_no_copy():
    assert one_run.call_key(len, (1,), {}) != one_run.call_key(len, (True,), {})
    assert one_run.call_key(len, ([1, 2],), {}) is None
    with one_run.one_run():
        with one_run.one_run():  # a fragment inside a page's run: the same run
            one_run.keep(one_run.call_key(len, (1,), {}), "kept")
        assert one_run.get(one_run.call_key(len, (1,), {})) == "kept"
    assert one_run.get(one_run.call_key(len, (1,), {})) is one_run.MISSING
