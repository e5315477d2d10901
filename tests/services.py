"""Real services for the tests, from Debian's packages, on loopback ports: a throwaway Postgres cluster, and
nginx in front of replicas of the app with ``deploy/nginx.conf``.

``KERNELVIZ_TEST_POSTGRES`` names a server to use (CI starts one for both its legs with
``python -m tests.services postgres start DIR``); without it, a test that asks for Postgres starts its own
cluster when Debian's ``postgresql`` is installed (``apt-get install -y postgresql``), and is skipped when it
is not (under ``CI=true`` it fails instead).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

__all__ = [
    "REPLICA_HEADER", "fresh_database", "nginx_bin", "nginx_config", "postgres_bin", "start_nginx",
    "start_postgres", "stop_postgres",
]

REPO = Path(__file__).resolve().parents[1]
REPLICA_HEADER = "X-Kernelviz-Replica"  # the tests' nginx names the replica that answered (not in deploy/)


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


def fresh_database(server: str) -> str:
    """A new, empty database on the Postgres at ``server`` (a URL): its URL."""
    import sqlalchemy as sa

    name = "kv_" + uuid.uuid4().hex[:12]
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as db:
        db.execute(sa.text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return sa.engine.make_url(server).set(database=name).render_as_string(hide_password=False)


def stop_postgres(folder: Path) -> None:
    """Stop the cluster in ``folder`` (nothing if none runs there)."""
    programs = postgres_bin()
    if programs is not None and (folder / "data").exists():
        subprocess.run(_as_postgres([programs / "pg_ctl", "-D", folder / "data", "-m", "fast", "stop"]),
                       check=False, capture_output=True)


def nginx_config(replicas: list[str], port: int) -> str:
    """``deploy/nginx.conf`` with its upstream servers replaced by ``replicas`` (``host:port``), listening on
    127.0.0.1:``port``, and naming in ``REPLICA_HEADER`` the replica that answered each request."""
    text = (REPO / "deploy" / "nginx.conf").read_text()
    text, found = re.subn(r"(?m)^[ \t]*server app\d+:8501;\n", "", text)
    assert found, "deploy/nginx.conf names no app server"
    servers = "".join(f"        server {r};\n" for r in replicas)
    text = text.replace("hash $kv_replica consistent;\n", "hash $kv_replica consistent;\n" + servers)
    text = text.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    named = f"proxy_buffering off;\n            add_header {REPLICA_HEADER} $upstream_addr always;"
    return text.replace("proxy_buffering off;", named)


def nginx_bin() -> str | None:
    """Debian's nginx, if installed."""
    return shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


def start_nginx(folder: Path, replicas: list[str]) -> tuple[subprocess.Popen, str]:
    """Debian's nginx (``apt-get install -y nginx``) in front of ``replicas``, its files in ``folder``:
    returns the process (terminate it to stop) and its address."""
    binary = nginx_bin()
    if binary is None:
        raise RuntimeError("nginx is not installed: apt-get install -y nginx")
    port = _free_port()
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(nginx_config(replicas, port))
    settings = f"daemon off; pid {folder / 'nginx.pid'}; error_log {folder / 'logs' / 'error.log'};"
    proc = subprocess.Popen([binary, "-p", str(folder), "-c", str(conf), "-g", settings])
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"http://127.0.0.1:{port}"
        time.sleep(0.1)
    proc.terminate()
    raise RuntimeError(f"nginx did not start: {(folder / 'logs' / 'error.log').read_text()}")


if __name__ == "__main__":  # python -m tests.services postgres start|stop DIR
    _, service, action, where = sys.argv
    if (service, action) == ("postgres", "start"):
        print(start_postgres(Path(where)))
    elif (service, action) == ("postgres", "stop"):
        stop_postgres(Path(where))
    else:
        sys.exit(f"unknown: {service} {action}")
