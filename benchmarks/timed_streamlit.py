"""``streamlit run`` that writes how long each script run took, and when each rerun was asked for: the
server's own time per rerun.

    KERNELVIZ_RUN_LOG=/tmp/runs.txt python benchmarks/timed_streamlit.py run app.py [streamlit options]

Each run of a session's script (a whole page or a fragment) appends one line "<end, time.time()> <seconds>
<session id>" to the file ``KERNELVIZ_RUN_LOG`` names: from the moment the script thread starts the run to
the moment it finishes, so it includes waiting for the interpreter while other sessions' runs hold it, and
nothing of the browser. Each rerun request from a browser (a moved widget) appends "<arrival, time.time()>
<session id> rerun requested" when the server's event loop handles the message. ``tests/measure.py`` reads
the two kinds back (``run_times``, ``served_times``); ``bench_sessions.py`` starts the app this way.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner import script_runner
from streamlit.web import cli

_lock = threading.Lock()
_run_script = script_runner.ScriptRunner._run_script
_handle_backmsg = app_session.AppSession.handle_backmsg


def _write(line: str) -> None:
    with _lock, open(os.environ["KERNELVIZ_RUN_LOG"], "a", encoding="utf-8") as out:
        out.write(line)


def _timed_run_script(self: script_runner.ScriptRunner, rerun_data: object) -> None:
    start = time.perf_counter()
    try:
        _run_script(self, rerun_data)
    finally:
        _write(f"{time.time():.4f} {time.perf_counter() - start:.5f} {self._session_id}\n")


def _noted_backmsg(self: app_session.AppSession, msg: object) -> None:
    if msg.WhichOneof("type") == "rerun_script":
        _write(f"{time.time():.4f} {self.id} rerun requested\n")
    _handle_backmsg(self, msg)


if __name__ == "__main__":
    script_runner.ScriptRunner._run_script = _timed_run_script
    app_session.AppSession.handle_backmsg = _noted_backmsg
    sys.exit(cli.main(prog_name="streamlit"))
