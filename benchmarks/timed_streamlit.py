"""``streamlit run`` that writes how long each script run took: the server's own time per rerun.

    KERNELVIZ_RUN_LOG=/tmp/runs.txt python benchmarks/timed_streamlit.py run app.py [streamlit options]

Each run of a session's script (a whole page or a fragment) appends one line "<end, time.time()> <seconds>
<session id>" to the file ``KERNELVIZ_RUN_LOG`` names: from the moment the script thread starts the run to
the moment it finishes, so it includes waiting for the interpreter while other sessions' runs hold it, and
nothing of the browser. ``bench_sessions.py`` starts the app this way.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from streamlit.runtime.scriptrunner import script_runner
from streamlit.web import cli

LOG = os.environ["KERNELVIZ_RUN_LOG"]
_lock = threading.Lock()
_run_script = script_runner.ScriptRunner._run_script


def _timed_run_script(self: script_runner.ScriptRunner, rerun_data: object) -> None:
    start = time.perf_counter()
    try:
        _run_script(self, rerun_data)
    finally:
        line = f"{time.time():.4f} {time.perf_counter() - start:.5f} {self._session_id}\n"
        with _lock, open(LOG, "a", encoding="utf-8") as out:
            out.write(line)


script_runner.ScriptRunner._run_script = _timed_run_script

if __name__ == "__main__":
    sys.exit(cli.main(prog_name="streamlit"))
