"""Server plumbing (kernelviz.app.ui.server): page runs and the warm-up's compilations take turns."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from kernelviz.app.ui.server import QUIET_S, Runs


def test_a_run_waits_for_the_warm_ups_compilation_and_is_counted_meanwhile():
    started, finish = threading.Event(), threading.Event()

    def page_run() -> None:
        with Runs.running():
            started.set()
            finish.wait(10)

    with Runs.gate:  # the warm-up compiling
        thread = threading.Thread(target=page_run)
        thread.start()
        assert not started.wait(0.5)  # the run waits for the compilation …
        assert Runs.busy()  # … counted, so the warm-up does not take the gate again first
    assert started.wait(5)
    finish.set()
    thread.join()
    assert Runs.busy()  # the browser is drawing what the run sent: the warm-up waits a little more …
    assert not Runs.busy(quiet=0.0)
    time.sleep(0.3)
    assert not Runs.busy(quiet=0.2)  # … then goes on
    assert QUIET_S >= 1.0


def test_runs_of_different_sessions_take_turns_and_a_fragment_inside_its_page_runs():
    inside, most, lock = [0], [0], threading.Lock()

    def page_run() -> None:
        with Runs.running():
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            with Runs.running():  # a fragment drawn by its page's run: the same turn
                time.sleep(0.02)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=page_run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert most[0] == 1  # never two runs at once
    assert Runs.turn.acquire(timeout=1)  # and the turn is free again
    Runs.turn.release()


def test_a_fragments_rerun_is_a_run(monkeypatch):
    from kernelviz.app.ui import server

    every = []  # the fragment's run_every, as st.fragment got it
    monkeypatch.setattr(server.st, "fragment", lambda body, run_every=None: every.append(run_every) or body)
    seen = []

    @server.fragment
    def section(x: int) -> int:
        seen.append(Runs.busy(quiet=0.0))
        return x + 1

    @server.fragment(run_every=2.0)
    def polled() -> None:
        seen.append(Runs.busy(quiet=0.0))

    assert section(1) == 2 and polled() is None
    assert seen == [True, True] and every == [None, 2.0]


def test_every_fragment_of_the_app_is_counted():
    """The pages' fragments are ``ui.fragment``s: a bare ``st.fragment`` would rerun beside the others."""
    root = Path(__file__).resolve().parents[1]
    files = [root / "app.py", *root.glob("chapters/*.py"), *root.glob("kernelviz/**/*.py")]
    bare = [f.name for f in files if "@st.fragment" in f.read_text(encoding="utf-8")]
    assert bare == []
