"""`clamber quadruped compare` on the study layer: workers change nothing, kill -9 loses
nothing."""

import json

import pytest

from clamber.cli import main

FAST = ["--trials", "2", "--inclines", "90", "--cycles", "1"]


def _compare(capsys, *argv) -> dict:
    assert main(["quadruped", "compare", *argv, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def _numbers(summary: dict) -> list:
    drop = ("wall_time_s",)
    return [{k: v for k, v in s.items() if k not in drop} for s in summary["breakable"]]


def _same_study(capsys, tmp_path, argv, study_trials):
    a = _compare(capsys, *argv, "--workers", "0", "--out", str(tmp_path / "serial"))
    b = _compare(capsys, *argv, "--workers", "2", "--out", str(tmp_path / "dask"))
    assert _numbers(a) == _numbers(b)
    assert study_trials(tmp_path / "serial") == study_trials(tmp_path / "dask")
    return a


def test_compare_gives_the_same_numbers_on_any_worker_count(tmp_path, capsys, study_trials):
    """Two Dask workers and the in-process run record identical trials and summaries."""
    _same_study(capsys, tmp_path, FAST, study_trials)


@pytest.mark.slow
def test_compare_four_trials_same_numbers_on_any_worker_count(tmp_path, capsys, study_trials):
    """The full two-wall comparison with 4 trials per cell: --workers 2 equals --workers 0."""
    _same_study(capsys, tmp_path, ["--trials", "4", "--cycles", "1"], study_trials)


def test_compare_killed_with_sigkill_resumes_to_the_same_record(tmp_path, capsys,
                                                              study_trials, kill_study):
    """A comparison killed after some trials and resumed records exactly the trials of an
    uninterrupted run."""
    full = _compare(capsys, *FAST, "--workers", "0", "--out", str(tmp_path / "full"))
    run_dir = tmp_path / "cut"
    done = kill_study(["quadruped", "compare", *FAST, "--workers", "0",
                              "--out", str(run_dir)], run_dir)
    assert 1 <= done < 6, "the kill should land inside the study"
    resumed = _compare(capsys, *FAST, "--workers", "0", "--resume", str(run_dir))
    assert _numbers(resumed) == _numbers(full)
    assert study_trials(run_dir) == study_trials(tmp_path / "full")


def test_compare_runs_named_scenarios_for_the_cycles_asked(tmp_path, capsys):
    """`compare --scenarios` runs every controller in each named scenario with the gait
    cycles of `--cycles` (in each condition's settings and labels), writes the scenario into
    the table and the CSV, and refuses `--inclines` beside it."""
    s = _compare(capsys, "--trials", "1", "--scenarios", "payload90", "--cycles", "2",
                 "--workers", "0", "--out", str(tmp_path / "run"))
    rows = s["breakable"]
    assert [r["controller"] for r in rows] == ["qwbc", "clik", "vmc"]
    assert {(r["scenario"], r["cycles"], r["incline_deg"]) for r in rows} == \
        {("payload90", 2, 90.0)}
    assert s["cycles"] == 2 and s["scenarios"] == ["payload90"]
    assert all(r["successes"] == 0 for r in rows)  # the dropped payload breaks a gripper
    assert "| payload90 | qwbc |" in (tmp_path / "run" / "comparison.md").read_text()
    lines = (tmp_path / "run" / "comparison.csv").read_text().splitlines()
    assert lines[0].split(",")[3:5] == ["scenario", "cycles"]
    assert lines[1].split(",")[3:5] == ["payload90", "2"]
    assert main(["quadruped", "compare", "--scenarios", "wall90", "--inclines", "90",
                 "--out", str(tmp_path / "both"), "--no-progress"]) == 2


def test_comparison_conditions_climb_the_cycles_asked():
    """The plain-wall and scenario conditions carry the asked gait cycles and nothing else
    differs from the one-cycle conditions."""
    from dataclasses import replace

    from clamber.experiments.quadruped import comparison_conditions, scenario_conditions
    from clamber.experiments.quadruped_scenarios import scenario_settings

    one, five = comparison_conditions((90.0,)), comparison_conditions((90.0,), cycles=5)
    assert [c.gait.cycles for c in five] == [5, 5, 5]
    assert [replace(c, gait=replace(c.gait, cycles=1)) for c in five] == one
    sc = scenario_conditions(["push90"], cycles=5)
    assert sc[0] == scenario_settings("push90", controller="qwbc",
                                      gait=replace(sc[0].gait, cycles=5))
    assert sc[0].gait.cycles == 5
