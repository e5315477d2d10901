"""The tests run under the server's JAX settings (``kernelviz.runtime.jax_setup.set_up``: float64, the CPU,
the compilation cache, one compute thread), since they call the models' inner functions directly, as the
app does. What importing and calling kernelviz does to a caller's own settings is tested in a fresh process
(``tests/test_import_effects.py``), and by the quickstart notebook (``tests/test_notebook.py``)."""

import os
import tempfile
from pathlib import Path

import pytest

from kernelviz.app.ui import ahead, class_db
from kernelviz.runtime import jax_setup

jax_setup.set_up()

# Class sessions (kernelviz/app/ui/class_db.py) go to a database of the test run's own, for the app run by
# AppTest and for the browser tests' servers alike, never to the user's ~/.kernelviz.
os.environ[class_db.ENV] = f"sqlite:///{Path(tempfile.mkdtemp(prefix='kv-class-')) / 'class.sqlite3'}"


@pytest.fixture(autouse=True)
def nothing_prepared_ahead(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page tests run the app in this process: a slider they move would have the next notch prepared in
    a background thread (``kernelviz.app.ui.ahead``), still running in later tests. Off for them; the
    browser tests' servers keep it, and ``tests/test_ahead.py`` tests it directly."""
    if request.node.get_closest_marker("browser") is None:
        monkeypatch.setenv(ahead.ENV, "0")
