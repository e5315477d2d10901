"""Real services for the tests, from Debian's packages, on loopback ports: a throwaway Postgres cluster.

``KERNELVIZ_TEST_POSTGRES`` names a server to use (CI starts one for both its legs with
``python -m tests.services postgres start DIR``); without it, a test that asks for Postgres starts its own
cluster when Debian's ``postgresql`` is installed (``apt-get install -y postgresql``), and is skipped when it
is not (under ``CI=true`` it fails instead).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

__all__ = ["postgres_bin", "start_postgres", "stop_postgres"]


def postgres_bin() -> Path | None:
    """The newest installed Postgres's programs (Debian puts them in /usr/lib/postgresql/VERSION/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(args: list[str]) -> list[str]:
    """``args`` run as the ``postgres`` user when we are root (Postgres refuses to run as root)."""
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(map(str, args))] if os.geteuid() == 0 else args


def start_postgres(folder: Path, port: int | None = None) -> str:
    """A new cluster in ``folder`` listening on 127.0.0.1 only, trusting local connections; returns its
    SQLAlchemy URL."""
    programs = postgres_bin()
    if programs is None:
        raise RuntimeError("Postgres is not installed: apt-get install -y postgresql")
    port = port or _free_port()
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    data = folder / "data"
    subprocess.run(_as_postgres([programs / "initdb", "-D", data, "-A", "trust", "-U", "postgres"]),
                   check=True, capture_output=True)
    options = f"'-p {port} -c listen_addresses=127.0.0.1 -k {folder}'"
    subprocess.run(_as_postgres([programs / "pg_ctl", "-D", data, "-l", folder / "log", "-w", "-o", options,
                                 "start"]), check=True, capture_output=True)
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"


def stop_postgres(folder: Path) -> None:
    """Stop the cluster in ``folder`` (nothing if none runs there)."""
    programs = postgres_bin()
    if programs is not None and (folder / "data").exists():
        subprocess.run(_as_postgres([programs / "pg_ctl", "-D", folder / "data", "-m", "fast", "stop"]),
                       check=False, capture_output=True)


if __name__ == "__main__":  # python -m tests.services postgres start|stop DIR
    _, service, action, where = sys.argv
    if (service, action) == ("postgres", "start"):
        print(start_postgres(Path(where)))
    elif (service, action) == ("postgres", "stop"):
        stop_postgres(Path(where))
    else:
        sys.exit(f"unknown: {service} {action}")
