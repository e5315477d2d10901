"""The next notch of a slider, prepared while the server is idle.

A teacher steps a slider one notch at a time and talks between the steps. After a run, a page asks for
its settings one more notch along the slider moved last (``prepare_next``, with the job that computes what
the page will need there; ``kernelviz.app.views.notches``); one background thread per server runs the job
once no script run is in progress or waiting (``Runs.busy``, with ``QUIET_S`` for the browser to draw what
the run sent) and the warm-up has ended (``WARMED``). The job fills the same caches the page reads, so the
next notch is drawn from them. The sidebar's number of points and noise seed are sliders of every page that
uses the data (``prepare_next_data``): a page's job then computes what the page needs on the data set one
notch further.

A presenter who presses a slider several times in a row leaves the server idle only for moments between
the presses: a page whose jobs are short asks for a few notches (``depth``), a chain of requests (``then``),
so that the job for the notch after next has run by the time that press comes. Each step of a chain waits
for an idle server again, and a newer request replaces what is left of it. The sidebar's number of points
asks for ``DATA_AHEAD`` data sets, those after the next one only while they are small (``DATA_AHEAD_MOST``).

Only the newest request is kept: one that waited while other runs went on is stale by the time the
server is idle. A step whose key was among the last ``DONE_KEPT`` run is skipped (its value is cached).
A job that fails is logged and forgotten: it only costs the speed it would have bought.
A run that starts during a job and needs the value the job is computing waits for it (Streamlit's lock
on each cached value) instead of computing it again; a run that needs something else shares the core with
the job until the job ends. ``KERNELVIZ_AHEAD=0`` turns it off.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from functools import partial
from typing import NamedTuple

import streamlit as st

import kernelviz as kv
from kernelviz.app.ui.page_data import Data
from kernelviz.app.ui.server import JOIN_S, WARMED, Runs
from kernelviz.app.ui.widgets.sidebar import DATA_CONTROLS, builtin_data, native_sample, point_options
from kernelviz.app.views.notches import Notch, Options, settings_ahead

__all__ = [
    "DATA_AHEAD", "DATA_AHEAD_MOST", "QUIET_S", "Ahead", "Request", "Sample", "ask", "prepare_next",
    "prepare_next_data",
]

QUIET_S = 0.3  # after the last run ends, the job waits this long: the browser draws what the run sent
POLL_S = 0.02
DONE_KEPT = 8  # keys of the jobs run that ``Ahead.done`` keeps
DATA_AHEAD = 4  # the sidebar's n: data sets prepared ahead (the next one, and those after it while small)
DATA_AHEAD_MOST = 2_000  # points of a data set prepared after the next one: a page's job on 5,000 holds the
# server for seconds, and a press that came while it ran would share the cores with it
ENV = "KERNELVIZ_AHEAD"


class Request(NamedTuple):
    """What a page will need next (``key``, to tell requests apart), the ``job`` that computes it and the
    request to run after it, if any (``then``: the notch after)."""

    key: Hashable
    job: Callable[[], object]
    then: Request | None = None


def server_idle() -> bool:
    """True once the warm-up has ended and no script run has been in progress or waiting for ``QUIET_S``."""
    return WARMED.is_set() and not Runs.busy(QUIET_S)


class Ahead:
    """One background thread that runs the newest ``Request`` whenever ``idle()`` holds."""

    def __init__(self, idle: Callable[[], bool] = server_idle) -> None:
        self.idle = idle
        self.done: list[Hashable] = []  # the keys of the jobs run, oldest first (the last ``DONE_KEPT``)
        self._request: Request | None = None
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def ask(self, request: Request) -> None:
        """Run ``request.job`` (and then its ``then``) when the server is idle, in place of any request
        still waiting."""
        with self._wake:
            self._request = request
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="kernelviz-ahead", daemon=True)
                self._thread.start()
                atexit.register(self.stop)
            self._wake.notify()

    def pending(self) -> Hashable | None:
        """The key of the request waiting to run, if any."""
        with self._wake:
            return None if self._request is None else self._request.key

    def stop(self) -> None:
        """End the thread after its current job (at most ``JOIN_S`` of waiting)."""
        self._stop.set()
        with self._wake:
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(JOIN_S)

    def _serve(self) -> None:
        while not self._stop.is_set():
            with self._wake:
                while self._request is None and not self._stop.is_set():
                    self._wake.wait()
            while not self._stop.is_set() and not self.idle():
                time.sleep(POLL_S)
            with self._wake:
                request, self._request = self._request, None
            if request is None or self._stop.is_set():
                continue
            if request.key not in self.done:
                self._run(request)
            with self._wake:
                if self._request is None:  # no newer request: the rest of the chain
                    self._request = request.then

    def _run(self, request: Request) -> None:
        try:
            request.job()
        except Exception:
            logging.getLogger("kernelviz").exception("preparing %r failed", request.key)
        self.done = [*self.done[-DONE_KEPT + 1 :], request.key]


_AHEAD = Ahead()


def ask(request: Request) -> None:
    """The server's ``Ahead``: run ``request`` (what a page will need next) when the server is idle."""
    if os.environ.get(ENV, "1") != "0":
        _AHEAD.ask(request)


def prepare_next(page: str, settings: tuple, notches: Mapping[str, Notch | Options],
                 job: Callable[[tuple], object], context: Hashable = (), depth: int = 1,
                 beyond_next: Callable[[tuple], bool] = lambda s: True) -> None:
    """After a run of ``page``: ``settings`` one more notch along the slider moved since this session's
    last run of it (``notches.settings_ahead``), and so on for ``depth`` notches while ``beyond_next`` holds
    for them (the next notch is always prepared), each prepared by ``job(its settings)`` when the server is
    idle. ``context`` holds what else the job depends on (a toggle, a task number): part of each request's
    key."""
    state = f"kv._ahead_before.{page}"  # not a widget (see ui.controls)
    before, st.session_state[state] = st.session_state.get(state), settings
    ahead = settings_ahead(before, settings, notches, depth)
    ahead = ahead[:1] + list(itertools.takewhile(beyond_next, ahead[1:]))
    chain = None
    for after in reversed(ahead):
        chain = Request((page, after, context), partial(job, after), chain)
    if chain is not None:
        ask(chain)


class Sample(NamedTuple):
    """A built-in data set as the sidebar draws it: its ``source``, number of points ``n`` and noise seed."""

    source: str
    n: int
    seed: int


def prepare_next_data(page: str, data: Data, job: Callable[[Data], object], context: Hashable = (),
                      depth: int = DATA_AHEAD) -> None:
    """After a run of ``page`` on a built-in data set: that data set with the sidebar's number of points or
    its noise seed one more notch along the way it moved since this session's last run of the page,
    prepared by ``job(that data)`` when the server is idle, and the ``depth`` − 1 notches after it of at
    most ``DATA_AHEAD_MOST`` points (as ``prepare_next``). ``context`` holds the page's settings the job
    computes with. An uploaded CSV has no such slider: nothing is prepared for it."""
    source = data.key[0]
    if not isinstance(source, str) or source not in kv.DATASETS:
        return
    sample = Sample(source, int(data.key[1]), int(data.key[2]))
    n, seed = native_sample(source)
    seeds = DATA_CONTROLS.fields["seed"]
    notches = {"n": Options(point_options(source), n), "seed": Notch(seeds.low, seeds.high, seeds.step, seed)}
    prepare_next(f"{page}.data", sample, notches, lambda s: job(builtin_data(*s)), context, depth,
                 beyond_next=lambda s: s.n <= DATA_AHEAD_MOST)
