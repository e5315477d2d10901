"""``streamlit run`` that writes how long each script run took, and when each rerun was asked for: the
server's own time per rerun.

    KERNELVIZ_RUN_LOG=/tmp/runs.txt python benchmarks/timed_streamlit.py run app.py [streamlit options]

Each run of a session's script (a whole page or a fragment) appends one line "<end, time.time()> <seconds>
<session id>" to the file ``KERNELVIZ_RUN_LOG`` names: from the moment the script thread starts the run to
the moment it finishes, so it includes waiting for the interpreter while other sessions' runs hold it, and
nothing of the browser. Each rerun request from a browser (a moved widget) appends "<arrival, time.time()>
<session id> rerun requested" when the server's event loop handles the message. ``run_lines`` and
``request_lines`` read the two kinds back; ``bench_sessions.py`` starts the app this way.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

from streamlit.runtime import app_session
from streamlit.runtime.scriptrunner import script_runner
from streamlit.web import cli

_lock = threading.Lock()
_run_script = script_runner.ScriptRunner._run_script
_handle_backmsg = app_session.AppSession.handle_backmsg


class Run(NamedTuple):
    """One script run: its session, and when it started and ended (``time.time()`` seconds)."""

    session: str
    start: float
    end: float


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


def run_lines(log: Path) -> list[Run]:
    """Every script run in ``log``."""
    rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return [Run(r[2], float(r[0]) - float(r[1]), float(r[0])) for r in rows if len(r) == 3]


def request_lines(log: Path) -> list[tuple[str, float]]:
    """Every rerun request in ``log``: (session id, arrival)."""
    rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return [(r[1], float(r[0])) for r in rows if len(r) == 4 and r[2] == "rerun"]


def served_times(log: Path, since: float, until: float) -> list[float]:
    """For each rerun request that arrived between two ``time.time()``s: seconds from its arrival to the end
    of its session's first run that started after it (the run that carries the new value), on the
    server's clock alone (the browser's share of a press is not in it)."""
    runs = run_lines(log)
    out = []
    for session, arrived in request_lines(log):
        if since <= arrived <= until:
            ends = [r.end for r in runs if r.session == session and r.start >= arrived - 1e-3]
            if ends:
                out.append(min(ends) - arrived)
    return out


if __name__ == "__main__":
    script_runner.ScriptRunner._run_script = _timed_run_script
    app_session.AppSession.handle_backmsg = _noted_backmsg
    sys.exit(cli.main(prog_name="streamlit"))
