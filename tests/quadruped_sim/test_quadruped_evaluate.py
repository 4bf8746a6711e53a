"""`clamber quadruped evaluate` on the study layer: tuning and cells record the same trials on
any worker count, and a comparison killed with SIGKILL resumes to the same record."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from clamber.cli import main
from clamber.storage.runs import STORE_NAME

#: Two tuning candidates per controller on the two training seeds (12 trials), then two
#: held-out seeds per controller (6 trials); every trial stopped after 1.2 s of simulation.
FAST = ["--trials", "2", "--scenarios", "wall90", "--tune-budget", "2", "--time-limit", "1.2"]
STUDIES = ("tuning", "cells")


def _records(run_dir) -> list[dict]:
    """The recorded trials without their timings, read while a writer may hold the store."""
    for _ in range(100):
        try:
            db = sqlite3.connect(run_dir / STORE_NAME, timeout=5)
            try:
                rows = db.execute("SELECT record FROM trials ORDER BY generation, idx").fetchall()
            finally:
                db.close()
            break
        except sqlite3.OperationalError:  # created but not yet initialised, or locked
            time.sleep(0.05)
    else:
        raise AssertionError(f"cannot read {run_dir / STORE_NAME}")
    out = []
    for (text,) in rows:
        d = json.loads(text)
        d.pop("wall_time_s")
        d["metrics"] = {k: v for k, v in d["metrics"].items()
                        if k not in ("wall_time_s", "setup_time_s")}
        out.append(d)
    return out


def _evaluate(capsys, *argv) -> dict:
    assert main(["quadruped", "evaluate", *FAST, *argv, "--json", "--no-progress",
                 "--no-figures"]) == 0
    return json.loads(capsys.readouterr().out)


def _numbers(summary: dict) -> dict:
    return {"gains": summary["gains"], "tuning": summary["tuning"],
            "cells": {k: {n: v for n, v in s.items() if n != "wall_time_s"}
                      for k, s in summary["results"].items()}}


def test_evaluate_gives_the_same_numbers_on_any_worker_count(tmp_path, capsys):
    """Two Dask workers and the in-process run record identical tuning and evaluation
    trials, choose the same gains and give the same cell statistics."""
    a = _evaluate(capsys, "--workers", "0", "--out", str(tmp_path / "serial"))
    b = _evaluate(capsys, "--workers", "2", "--out", str(tmp_path / "dask"))
    assert _numbers(a) == _numbers(b)
    for study in STUDIES:
        assert _records(tmp_path / "serial" / study) == _records(tmp_path / "dask" / study)
    assert sum(s["trials"] for s in a["results"].values()) == 6
    assert len(a["tuning"]["qwbc"]["candidates"]) == 2


def test_evaluate_killed_with_sigkill_resumes_to_the_same_record(tmp_path, capsys):
    """An evaluation killed inside its tuning study and resumed records exactly the trials of
    an uninterrupted run, in both studies, and reports the same numbers."""
    full = _evaluate(capsys, "--workers", "0", "--out", str(tmp_path / "full"))
    run_dir = tmp_path / "cut"
    proc = subprocess.Popen(
        [sys.executable, "-m", "clamber", "quadruped", "evaluate", *FAST, "--workers", "0",
         "--out", str(run_dir), "--no-progress", "--no-figures"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, "MPLBACKEND": "Agg"})
    store = run_dir / "tuning" / STORE_NAME
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if store.exists() and len(_records(run_dir / "tuning")) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 1 <= len(_records(run_dir / "tuning")) < 12, "the kill should land in the tuning"
    resumed = _evaluate(capsys, "--workers", "0", "--resume", str(run_dir))
    assert _numbers(resumed) == _numbers(full)
    for study in STUDIES:
        assert _records(run_dir / study) == _records(tmp_path / "full" / study)
