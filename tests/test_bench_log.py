"""The timed server's log (benchmarks/timed_streamlit.py, read by tests/measure.py): the server's part of
each press is read from the requests and runs it records."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.measure import Run, request_lines, run_lines, run_times, served_times

LOG = """\
100.0000 a rerun requested
100.3000 0.25000 a
100.0500 b rerun requested
100.2000 0.30000 b
100.9000 0.50000 b
101.0000 0.90000 c
"""


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "runs.txt"
    path.write_text(LOG, encoding="utf-8")
    return path


def test_the_two_kinds_of_line_are_read_apart(log: Path) -> None:
    assert request_lines(log) == [("a", 100.0), ("b", 100.05)]
    assert run_lines(log)[0] == Run("a", pytest.approx(100.05), 100.3)
    assert len(run_lines(log)) == 4
    assert run_times(log, 100.25, 100.95) == [pytest.approx(0.25), pytest.approx(0.5)]  # by their ends


def test_a_press_ends_with_its_sessions_first_run_started_after_it(log: Path) -> None:
    # a: its run started 50 ms after the request and ended at 100.3. b: the run that ended at 100.2 had
    # started before the request (it was cut short); the next one, started at 100.4, carries the value.
    assert served_times(log, 99.0, 102.0) == [pytest.approx(0.3), pytest.approx(0.85)]


def test_only_requests_inside_the_window_count(log: Path) -> None:
    assert served_times(log, 100.01, 102.0) == [pytest.approx(0.85)]
    assert served_times(tmp := log.with_name("missing.txt"), 0.0, 1e12) == [] and not tmp.exists()
