"""`clamber quadruped compare` on the study layer: tuning and cells record the same trials on
any worker count, a comparison killed with SIGKILL resumes to the same record, and named
scenarios run for the gait cycles asked."""

import json

from clamber.cli import main

#: Two tuning candidates per controller on the two training seeds (12 trials), then two
#: held-out seeds per controller (6 trials); every trial stopped after 1.2 s of simulation.
FAST = ["--trials", "2", "--scenarios", "wall90", "--tune", "--tune-budget", "2",
        "--time-limit", "1.2"]
STUDIES = ("tuning", "cells")


def _compare(capsys, *argv) -> dict:
    assert main(["quadruped", "compare", *FAST, *argv, "--json", "--no-progress",
                 "--no-figures"]) == 0
    return json.loads(capsys.readouterr().out)


def _numbers(summary: dict) -> dict:
    return {"gains": summary["gains"], "tuning": summary["tuning"],
            "cells": {k: {n: v for n, v in s.items() if n != "wall_time_s"}
                      for k, s in summary["results"].items()}}


def test_compare_gives_the_same_numbers_on_any_worker_count(tmp_path, capsys, study_trials):
    """Two Dask workers and the in-process run record identical tuning and evaluation
    trials, choose the same gains and give the same cell statistics."""
    a = _compare(capsys, "--workers", "0", "--out", str(tmp_path / "serial"))
    b = _compare(capsys, "--workers", "2", "--out", str(tmp_path / "dask"))
    assert _numbers(a) == _numbers(b)
    for study in STUDIES:
        assert (study_trials(tmp_path / "serial" / study)
                == study_trials(tmp_path / "dask" / study))
    assert sum(s["trials"] for s in a["results"].values()) == 6
    assert len(a["tuning"]["qwbc"]["candidates"]) == 2


def test_compare_killed_with_sigkill_resumes_to_the_same_record(tmp_path, capsys, kill_study,
                                                                study_trials):
    """A comparison killed inside its tuning study and resumed records exactly the trials of
    an uninterrupted run, in both studies, and reports the same numbers."""
    full = _compare(capsys, "--workers", "0", "--out", str(tmp_path / "full"))
    run_dir = tmp_path / "cut"
    done = kill_study(["quadruped", "compare", *FAST, "--workers", "0", "--out",
                              str(run_dir), "--no-figures"], run_dir / "tuning")
    assert 1 <= done < 12, "the kill should land in the tuning"
    resumed = _compare(capsys, "--workers", "0", "--resume", str(run_dir))
    assert _numbers(resumed) == _numbers(full)
    for study in STUDIES:
        assert study_trials(run_dir / study) == study_trials(tmp_path / "full" / study)


def test_compare_runs_named_scenarios_for_the_cycles_asked(tmp_path, capsys):
    """`compare --scenarios` runs every controller in each named scenario for the gait
    cycles of `--cycles`, with the class-default gains unless `--tune` is given, and writes
    the scenario into the table."""
    assert main(["quadruped", "compare", "--trials", "1", "--scenarios", "payload90",
                 "--cycles", "2", "--workers", "0", "--out", str(tmp_path / "run"), "--json",
                 "--no-progress", "--no-figures"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["command"] == "compare" and s["cycles"] == 2 and s["scenarios"] == ["payload90"]
    assert sorted(s["results"]) == ["clik@payload90", "qwbc@payload90", "vmc@payload90"]
    assert s["gains"] == {} and s["tuning"] == {}
    assert all(c["successes"] == 0 for c in s["results"].values())  # the payload breaks one
    assert "| payload90 | qwbc |" in (tmp_path / "run" / "comparison.md").read_text()
