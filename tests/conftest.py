"""Helpers shared by the tests of several packages."""

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clamber.experiments.record import StudyTrial
from clamber.storage.runs import STORE_NAME

#: Metrics that time a trial; they differ between two runs of the same trial.
TIMING_METRICS = ("wall_time_s", "setup_time_s")


def _rows(run_dir) -> list[tuple[str]]:
    """The recorded trials' JSON, read while a writer may hold the database."""
    for _ in range(100):
        try:
            db = sqlite3.connect(run_dir / STORE_NAME, timeout=5)
            try:
                return db.execute("SELECT record FROM trials ORDER BY generation, idx").fetchall()
            finally:
                db.close()
        except sqlite3.OperationalError:  # created but not yet initialised, or locked
            time.sleep(0.05)
    raise AssertionError(f"cannot read {run_dir / STORE_NAME}")


def read_study_trials(run_dir) -> list[dict]:
    """Every study trial recorded in ``run_dir`` (in slot order) as a dict, timings left
    out so that two runs of the same trials compare equal."""
    out = []
    for (text,) in _rows(run_dir):
        d = json.loads(StudyTrial.from_json(text).to_json())
        d.pop("wall_time_s")
        d["metrics"] = {k: v for k, v in d["metrics"].items() if k not in TIMING_METRICS}
        out.append(d)
    return out


@pytest.fixture
def study_trials():
    """:func:`read_study_trials`, for tests that compare recorded studies."""
    return read_study_trials


def kill_inside_study(argv: list[str], run_dir: Path, after: int = 2) -> int:
    """Run ``python -m clamber *argv`` and SIGKILL it once ``run_dir`` records ``after``
    trials (or when it ends by itself); returns how many trials it had recorded."""
    proc = subprocess.Popen([sys.executable, "-m", "clamber", *argv, "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if (run_dir / STORE_NAME).exists() and len(read_study_trials(run_dir)) >= after:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return len(read_study_trials(run_dir))


@pytest.fixture
def kill_study():
    """:func:`kill_inside_study`, for the kill-then-resume tests."""
    return kill_inside_study


@pytest.fixture
def clamber_warnings():
    """The warnings clamber's loggers emit during the test, as a list of log records (a
    handler on the ``clamber`` logger: the command line may stop propagation upwards)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("clamber")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
