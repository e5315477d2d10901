"""Server plumbing: one compile warm-up per server process, out of the way of the pages; script runs that
take turns; the pages' fragments (``fragment``) and their controls' way to redraw the whole page
(``rerun_page``).

``Runs`` counts the script runs in progress (of any session): the warm-up waits while one is, and a run
that starts while the warm-up is compiling waits for that compilation (``Runs.gate``), so a page's run and
the warm-up's compilation never overlap (together they can need more memory than a 690 MB server has).
Runs of different sessions take turns (``Runs.turn``); a page's run and its fragments' reruns
(``fragment``) are both runs.
``warm_up`` starts the warm-up once per process in a background thread; when the interpreter exits, the
thread is told to stop and is joined, so a compilation is never cut off halfway (XLA aborts the process
then).
"""

from __future__ import annotations

import atexit
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import streamlit as st

from kernelviz.app.ui.caching import kept, one_run
from kernelviz.app.warmup import warmup
from kernelviz.runtime import memory as _memory

__all__ = ["WARMED", "Runs", "fragment", "rerun_page", "warm_up"]

JOIN_S = 60.0  # the longest an exiting interpreter waits for the warm-up's current compilation
GATE_WAIT_S = 20.0  # the longest a script run waits for the warm-up's current compilation
TURN_WAIT_S = 20.0  # the longest a script run waits for its turn (then it runs beside the others)
QUIET_S = 4.0  # after a run, the warm-up waits this long: the browser loads and draws what the run sent
_STOP = threading.Event()
WARMED = threading.Event()  # set when the warm-up has ended (done, stopped or failed)


F = TypeVar("F", bound=Callable[..., Any])


class Runs:
    """How many script runs (of any session) are in progress or waiting: the warm-up waits while one is,
    and for ``QUIET_S`` after the last one ended: a fresh browser then still fetches the chart library
    and other scripts from this server, and a compilation meanwhile (it holds the interpreter) would
    delay them by seconds (on one core: chapter 4's first chart at 10.6–13.3 s instead of 8.1–8.7 s).

    The warm-up holds ``gate`` while it compiles; a run waits for it (at most ``GATE_WAIT_S``) before it
    starts, counted meanwhile, so the warm-up does not take the gate again first.

    Then the run waits for its ``turn`` (at most ``TURN_WAIT_S``): the runs of different sessions take
    turns. Streamlit runs each session's script in a thread of its own, and threads that share the
    interpreter run slower together than one after the other: each hands the interpreter back and forth
    with the others dozens of times a run. Thirty sessions each pressing chapter 2's hold-out slider every
    5 s on one core, Streamlit's collection after each run off: the server's part of a press 2.3x one
    session's with the runs side by side, 1.3–1.6x taking turns (``bench_sessions.py --sessions 30
    --every 5 --pin --light``, three runs)."""

    count = 0
    ended = -QUIET_S  # time.monotonic() when the last run ended
    lock = threading.Lock()
    gate = threading.Lock()
    turn = threading.RLock()  # taken again by a fragment's run inside its page's

    @classmethod
    @contextmanager
    def running(cls) -> Iterator[None]:
        kept.drawn_from_kept()  # a run starts with nothing drawn from the kept results yet
        with cls.lock:
            cls.count += 1
        turned = False
        try:
            if cls.gate.acquire(timeout=GATE_WAIT_S):
                cls.gate.release()
            turned = cls.turn.acquire(timeout=TURN_WAIT_S)
            with one_run.one_run():  # a cached call asked twice in the run: one copy
                yield
        finally:
            if turned:
                cls.turn.release()
            with cls.lock:
                cls.count -= 1
                cls.ended = time.monotonic()

    @classmethod
    def busy(cls, quiet: float = QUIET_S) -> bool:
        """True while a run is in progress or waiting, or ended less than ``quiet`` seconds ago."""
        with cls.lock:
            return cls.count > 0 or time.monotonic() - cls.ended < quiet


def _compile_all() -> None:
    """Compile every JAX program a session can need; a failure only costs speed, so it is logged.

    First it freezes what the app has imported (Streamlit, JAX, Plotly, kernelviz: about 200,000 objects),
    so that a full garbage collection does not scan them (``kernelviz.runtime.memory``); when it ends, it
    freezes again: the compiled programs and caches."""
    _memory.freeze_long_lived_objects()
    try:
        warmup(stop=_STOP, yield_to=Runs.busy, gate=Runs.gate)
    except Exception:
        logging.getLogger("kernelviz").exception("warm-up failed; programs will compile on first use")
    finally:
        _memory.freeze_long_lived_objects()  # later post-run collections skip modules and programs
        _memory.release_native_heap()  # the compiler's scratch memory
        WARMED.set()


def _stop(thread: threading.Thread) -> None:
    _STOP.set()
    thread.join(JOIN_S)


@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread:
    """Start the warm-up once per server process, in a daemon thread.

    The first visitor does not wait for it: a page compiles what it needs on first use (JAX compilation
    is thread-safe), while the thread compiles the rest, so later slider moves never wait for a compile.
    Compiled programs also land in JAX's persistent cache, so a restarted server loads them from disk.
    """
    thread = threading.Thread(target=_compile_all, name="kernelviz-warmup", daemon=True)
    atexit.register(_stop, thread)
    thread.start()
    return thread


def fragment(body: F | None = None, *, run_every: float | None = None) -> F | Callable[[F], F]:
    """``st.fragment`` (rerun every ``run_every`` s when given), its reruns counted and taking turns with
    every other run (``Runs.running``)."""
    if body is None:
        return functools.partial(fragment, run_every=run_every)

    @functools.wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        with Runs.running():
            return body(*args, **kwargs)

    return st.fragment(run, run_every=run_every)


def rerun_page() -> None:
    """The ``on_change`` of a control in a fragment that feeds parts of the page outside it: the whole page
    reruns instead of the fragment (``st.rerun`` from a widget callback runs before the fragment would,
    so the fragment never runs only to stop).

    So the control a class moves most (chapter 2's hold-out size) reruns only its fragment, while a
    rarer one (its kernel, steps, learning rate, seed) redraws everything that depends on it."""
    st.rerun()
