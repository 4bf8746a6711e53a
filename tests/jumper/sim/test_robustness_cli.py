"""`clamber jumper robustness`: same numbers on any worker count, and it survives kill -9."""

import json

import pytest

from clamber.cli import main

TRIALS = "8"


@pytest.fixture(scope="module")
def solution_file(coarse_solution, tmp_path_factory):
    return str(coarse_solution.save(tmp_path_factory.mktemp("sol") / "solution"))


def _run(capsys, *argv) -> dict:
    assert main(["jumper", "robustness", *argv, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_workers_do_not_change_the_numbers(solution_file, tmp_path, capsys, study_trials):
    """--workers 2 (Dask) and --workers 0 (in-process) record the same trials and rates."""
    a = _run(capsys, solution_file, "--trials", TRIALS, "--workers", "0",
             "--out", str(tmp_path / "a"))
    b = _run(capsys, solution_file, "--trials", TRIALS, "--workers", "2",
             "--out", str(tmp_path / "b"))
    for key in ("trials", "catch_rate", "catch_interval", "landing_rate", "landing_interval",
                "failures"):
        assert a[key] == b[key], key
    assert study_trials(tmp_path / "a") == study_trials(tmp_path / "b")


def test_kill_9_then_resume_gives_the_uninterrupted_record(solution_file, tmp_path, capsys,
                                                           study_trials, kill_study):
    """A study killed with SIGKILL after some trials resumes from its folder (solution and
    options read back from it) and ends with exactly the uninterrupted run's records."""
    full = _run(capsys, solution_file, "--trials", TRIALS, "--workers", "0",
                "--out", str(tmp_path / "full"))
    run_dir = tmp_path / "cut"
    done = kill_study(["jumper", "robustness", solution_file, "--trials", TRIALS,
                              "--workers", "0", "--out", str(run_dir)], run_dir)
    assert 1 <= done < int(TRIALS), "the kill should land inside the study"
    resumed = _run(capsys, "--resume", str(run_dir), "--workers", "0")
    assert resumed["landing_rate"] == full["landing_rate"]
    assert study_trials(run_dir) == study_trials(tmp_path / "full")


def test_a_folder_that_holds_a_run_is_not_overwritten(solution_file, tmp_path, capsys):
    """Starting a new study in a folder that holds one is an error (rc 2, one line)."""
    _run(capsys, solution_file, "--trials", "1", "--workers", "0", "--out", str(tmp_path))
    assert main(["jumper", "robustness", solution_file, "--trials", "1",
                 "--out", str(tmp_path)]) == 2
    assert "already holds a run" in capsys.readouterr().err



def test_the_command_plays_the_calibrated_tolerances(solution_file, coarse_solution, tmp_path,
                                                     capsys, study_trials):
    """Without tolerance options the command samples every calibrated tolerance (gains,
    motors, initial state too) and records, trial for trial, what the library's calibrated
    study records on the same seeds; --mass-tol replaces that one tolerance only, and
    --rear-spar plays the feet of ``FootPivot.with_rear_spar`` (stored for a resume)."""
    from dataclasses import replace

    from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
    from clamber.experiments.robustness import robustness
    from clamber.jumper.sim.gripper import FootPivot

    config = calibrated_config(controller="closed-loop")
    spar = calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar())
    for name, extra, tol, cfg in (
            ("calibrated", [], calibrated_tolerances(), config),
            ("wide", ["--mass-tol", "0.2"], replace(calibrated_tolerances(), mass_rel=0.2),
             config),
            ("spar", ["--rear-spar"], calibrated_tolerances(), spar)):
        _run(capsys, solution_file, "--trials", "3", "--workers", "0", "--seed", "3",
             "--controller", "closed-loop", *extra, "--out", str(tmp_path / name))
        robustness(coarse_solution, 3, seed=3, config=cfg, tolerances=tol,
                   run_dir=tmp_path / f"lib-{name}")
        assert study_trials(tmp_path / name) == study_trials(tmp_path / f"lib-{name}")
    assert study_trials(tmp_path / "calibrated") != study_trials(tmp_path / "wide")
    assert json.loads((tmp_path / "spar" / "study.json").read_text())["rear_spar"] is True
    assert json.loads((tmp_path / "calibrated" / "study.json").read_text())["rear_spar"] is False
