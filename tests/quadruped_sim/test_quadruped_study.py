"""`clamber quadruped compare` on the study layer: workers change nothing, kill -9 loses
nothing."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from clamber.cli import main
from clamber.storage.runs import STORE_NAME

FAST = ["--trials", "2", "--inclines", "90"]


def _compare(capsys, *argv) -> dict:
    assert main(["quadruped", "compare", *argv, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def _rows(run_dir):
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


def _records(run_dir):
    rows = _rows(run_dir)
    out = []
    for (text,) in rows:
        d = json.loads(text)
        d.pop("wall_time_s")
        d["metrics"] = {k: v for k, v in d["metrics"].items()
                        if k not in ("wall_time_s", "setup_time_s")}
        out.append(d)
    return out


def _numbers(summary: dict) -> list:
    drop = ("wall_time_s",)
    return [{k: v for k, v in s.items() if k not in drop} for s in summary["breakable"]]


def _same_study(capsys, tmp_path, argv):
    a = _compare(capsys, *argv, "--workers", "0", "--out", str(tmp_path / "serial"))
    b = _compare(capsys, *argv, "--workers", "2", "--out", str(tmp_path / "dask"))
    assert _numbers(a) == _numbers(b)
    assert _records(tmp_path / "serial") == _records(tmp_path / "dask")
    return a


def test_compare_gives_the_same_numbers_on_any_worker_count(tmp_path, capsys):
    """Two Dask workers and the in-process run record identical trials and summaries."""
    _same_study(capsys, tmp_path, FAST)


@pytest.mark.slow
def test_compare_four_trials_same_numbers_on_any_worker_count(tmp_path, capsys):
    """The full two-wall comparison with 4 trials per cell: --workers 2 equals --workers 0."""
    _same_study(capsys, tmp_path, ["--trials", "4"])


def test_compare_killed_with_sigkill_resumes_to_the_same_record(tmp_path, capsys):
    """A comparison killed after some trials and resumed records exactly the trials of an
    uninterrupted run."""
    full = _compare(capsys, *FAST, "--workers", "0", "--out", str(tmp_path / "full"))
    run_dir = tmp_path / "cut"
    proc = subprocess.Popen(
        [sys.executable, "-m", "clamber", "quadruped", "compare", *FAST, "--workers", "0",
         "--out", str(run_dir), "--no-progress"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, "MPLBACKEND": "Agg"})
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if (run_dir / STORE_NAME).exists() and len(_records(run_dir)) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 1 <= len(_records(run_dir)) < 6, "the kill should land inside the study"
    resumed = _compare(capsys, *FAST, "--workers", "0", "--resume", str(run_dir))
    assert _numbers(resumed) == _numbers(full)
    assert _records(run_dir) == _records(tmp_path / "full")
