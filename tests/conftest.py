"""The tests run under the server's JAX settings (``kernelviz.runtime.jax_setup.set_up``: float64, the CPU,
the compilation cache, one compute thread), since they call the models' inner functions directly, as the
app does. What importing and calling kernelviz does to a caller's own settings is tested in a fresh process
(``tests/test_import_effects.py``), and by the quickstart notebook (``tests/test_notebook.py``)."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from services import postgres_bin, start_postgres, stop_postgres

from kernelviz.app.ui.caching import ahead
from kernelviz.app.ui.classroom import db as class_db
from kernelviz.runtime import jax_setup

jax_setup.set_up()

# Class sessions (kernelviz/app/ui/classroom/db.py) go to a database of the test run's own, for the app run by
# AppTest and for the browser tests' servers alike, never to the user's ~/.kernelviz.
os.environ[class_db.ENV] = f"sqlite:///{Path(tempfile.mkdtemp(prefix='kv-class-')) / 'class.sqlite3'}"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` (pyproject's addopts): one more than the cores, at least 3 and at most 8. Most
    of the suite's time is spent waiting (on a Streamlit server, on Chromium, on a fresh process), so a
    two-core machine runs it fastest on three."""
    return max(3, min(8, (os.cpu_count() or 1) + 1))


@pytest.fixture(autouse=True)
def nothing_prepared_ahead(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page tests run the app in this process: a slider they move would have the next notch prepared in
    a background thread (``kernelviz.app.ui.caching.ahead``), still running in later tests. Off for them; the
    browser tests' servers keep it, and ``tests/test_ahead.py`` tests it directly."""
    if request.node.get_closest_marker("browser") is None:
        monkeypatch.setenv(ahead.ENV, "0")


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A Postgres server's URL: ``KERNELVIZ_TEST_POSTGRES``'s (CI starts one for both legs), or a cluster
    started for this test run from Debian's postgresql; skipped without either, failed so under CI=true."""
    if os.environ.get("KERNELVIZ_TEST_POSTGRES"):
        yield os.environ["KERNELVIZ_TEST_POSTGRES"]
        return
    if postgres_bin() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI tests on Postgres: install postgresql or set KERNELVIZ_TEST_POSTGRES")
        pytest.skip("no Postgres: apt-get install -y postgresql, or set KERNELVIZ_TEST_POSTGRES")
    folder = Path(tempfile.mkdtemp(prefix="kv-pg-"))  # not under pytest's folder: the postgres user reads it
    try:
        yield start_postgres(folder)
    finally:
        stop_postgres(folder)
        shutil.rmtree(folder, ignore_errors=True)
