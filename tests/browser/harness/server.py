"""A ``streamlit run <script>`` child process on a loopback port: start, wait until healthy, stop.

The server runs in its own process group, and Linux ends it when the process that started it dies, so
neither a finished nor a killed test or benchmark run leaves a server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class StreamlitServer:
    """A ``streamlit run <script>`` child process on a loopback port; ``stop()`` always ends it."""

    script: str
    port: int
    process: subprocess.Popen
    log_path: Path
    started_at: float = field(default_factory=time.perf_counter)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def wait_healthy(self, timeout: float = 60.0) -> None:
        """Polls ``/_stcore/health`` until it answers ``ok``; raises with the server's log otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise RuntimeError(f"streamlit run {self.script} exited with code {code}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.1)
        raise TimeoutError(f"streamlit run {self.script} unhealthy after {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Terminate the server's process group, then kill it if it has not exited within 10 s."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


try:  # looked up here, in the parent: the child between fork and exec only calls it
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to send SIGTERM when the test or benchmark process dies, so a
    killed run (where no fixture teardown happens) never leaves a server behind."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def start_streamlit(
    script: str = "app.py",
    env: Mapping[str, str] | None = None,
    port: int | None = None,
    health_timeout: float = 60.0,
    launcher: tuple[str, ...] = ("-m", "streamlit"),
) -> StreamlitServer:
    """Starts ``python -m streamlit run <script>`` headless on 127.0.0.1 from the repository root.

    ``env`` adds to (and overrides) the current environment, e.g. ``{"KERNELVIZ_JAX_CACHE": tmp}``;
    ``launcher`` replaces ``-m streamlit`` (a benchmark's timed server, ``benchmarks/timed_streamlit.py``).
    ``KERNELVIZ_SERVER_PYTHON`` names another Python to serve with (a benchmark on another stack, such as
    ``.ci/py313 python ROOT``'s, which runs the server in CI's Python 3.13 root).
    The server runs in its own process group so that ``stop()`` also ends anything it spawned.
    """
    port = port or free_port()
    log = Path(tempfile.mkstemp(prefix="kernelviz-streamlit-", suffix=".log")[1])
    python = os.environ.get("KERNELVIZ_SERVER_PYTHON", sys.executable)
    cmd = [
        python, *launcher, "run", script,
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    server = StreamlitServer(script=script, port=port, process=process, log_path=log)
    try:
        server.wait_healthy(health_timeout)
    except BaseException:
        server.stop()
        raise
    return server
