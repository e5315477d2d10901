"""Server plumbing (kernelviz.app.ui.server): page runs and the warm-up's compilations take turns."""

from __future__ import annotations

import threading
import time

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
