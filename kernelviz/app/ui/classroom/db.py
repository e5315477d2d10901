"""The class sessions' database, opened once per server with Streamlit's ``st.connection(type="sql")``.

Where it is, first found first:

1. ``KERNELVIZ_CLASS_DB``, a SQLAlchemy URL (replicas behind a load balancer share one Postgres this way);
2. ``.streamlit/secrets.toml``'s ``[connections.kernelviz_class]`` (``url = "postgresql+psycopg://…"``),
   as Streamlit's SQL connection reads it;
3. a SQLite file, ``~/.kernelviz/class.sqlite3``: nothing to set up. It survives a restart of the app, but
   not a new container (a Community Cloud app that wakes up again starts with an empty one).
"""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa
import streamlit as st

from kernelviz.app.classroom import store

__all__ = ["CONNECTION", "ENV", "engine", "sqlite_default"]

CONNECTION = "kernelviz_class"  # the connection's name, as secrets.toml's [connections.kernelviz_class]
ENV = "KERNELVIZ_CLASS_DB"
_READY: set[int] = set()  # the engines whose tables are in place


def sqlite_default() -> str:
    folder = Path.home() / ".kernelviz"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'class.sqlite3'}"


def _configured() -> bool:
    """Whether secrets.toml configures the connection (Streamlit then reads it; kwargs would override it)."""
    try:
        return bool(st.secrets.get("connections", {}).get(CONNECTION))
    except (FileNotFoundError, KeyError, AttributeError, st.errors.StreamlitSecretNotFoundError):
        return False


def engine() -> sa.Engine:
    """The database's engine, its tables created on first use, when the sessions past their time are
    deleted with their answers (again each time a teacher starts one)."""
    url = os.environ.get(ENV)
    kwargs = {"url": url} if url else {} if _configured() else {"url": sqlite_default()}
    found = st.connection(CONNECTION, type="sql", **kwargs).engine
    if id(found) not in _READY:
        store.create_schema(found)
        store.expire(found)
        _READY.add(id(found))
    return found
