"""Resuming a quadruped study reads its record as data: trials of another study, metrics
of the wrong type and a folder of another command are one-line errors, never used."""

import math

import pytest

from clamber.cli.quadruped_compare import check_comparison_folder, check_stored_trials
from clamber.exceptions import ConfigError, FileFormatError
from clamber.experiments.record import StudyTrial, TrialOutcome
from clamber.storage.runs import RunStore, TrialState

KIND = "quadruped-trot"
METRICS = {"kind": "trot", "seed": 0, "success": True, "distance_m": 0.4,
           "max_tracking_error_mm": 3.0, "failure": None}


def _trial(group=0, index=0, seed=0, **metrics) -> StudyTrial:
    return StudyTrial(group, index, seed, TrialState.COMPLETE,
                      TrialOutcome(True, None, "", {**METRICS, **metrics}), 1, math.nan)


def _run(run_dir, trials, kind=KIND):
    with RunStore.create(run_dir, kind, {"trials": 2}, record_type=StudyTrial) as store:
        for t in trials:
            store.append(t)
    return run_dir


def test_a_sound_record_passes(tmp_path):
    """Two seeds of one condition, with TrialResult-typed metrics, pass the check."""
    run = _run(tmp_path / "run", [_trial(0, 0, 0), _trial(0, 1, 1)])
    check_stored_trials(run, KIND, 1, [0, 1])


def test_a_rock_climb_record_passes(tmp_path):
    """A rock climb's metrics (the start's shift is a pair, stored as a JSON list) pass the
    check, so an interrupted rock climb can be resumed."""
    rock = {"planned_steps": 40, "plan_stop": "", "start_shift_m": [0.02, -0.01]}
    run = _run(tmp_path / "run", [_trial(0, 0, 0, **rock), _trial(0, 1, 1, **rock)])
    check_stored_trials(run, KIND, 1, [0, 1])


@pytest.mark.parametrize("shift", [[0.1], [0.1, "up"], 0.1, [[0.1, 0.2], 0.0]])
def test_a_damaged_start_shift_is_named(tmp_path, shift):
    """The start's shift must be two numbers; anything else is named on resume."""
    run = _run(tmp_path / "run", [_trial(0, 0, 0), _trial(0, 1, 1, start_shift_m=shift)])
    with pytest.raises(FileFormatError, match="metric 'start_shift_m'.*tuple"):
        check_stored_trials(run, KIND, 1, [0, 1])


@pytest.mark.parametrize("trial, match", [
    (_trial(1, 0, 0), "not a trial of this study"),          # an extra group
    (_trial(0, 2, 2), "not a trial of this study"),          # beyond --trials
    (_trial(0, 1, 7), "seed 7"),                             # another seed in a slot
    (_trial(0, 1, 1, distance_m="far"), "metric 'distance_m'"),
    (_trial(0, 1, 1, max_tracking_error_mm={"a": 1}), "metric 'max_tracking_error_mm'"),
    (_trial(0, 1, 1, extra=[1, 2]), "metric 'extra'"),
    (_trial(0, 1, 1, success="yes"), "metric 'success'"),
])
def test_foreign_or_damaged_trials_are_named(tmp_path, trial, match):
    """An extra group, a trial beyond the study's seeds, a string, nested or listed
    metric: a FileFormatError naming the trials table and the row."""
    run = _run(tmp_path / "run", [_trial(0, 0, 0), trial])
    with pytest.raises(FileFormatError, match=rf"table trials, row .*{match}"):
        check_stored_trials(run, KIND, 1, [0, 1])


def test_compare_resume_of_a_trot_run_is_refused(tmp_path):
    """`compare --resume` of a folder that records a trot run is a ConfigError naming
    the run's kind, before anything is written into it."""
    run = _run(tmp_path / "run", [_trial()])
    with pytest.raises(ConfigError, match="'quadruped-trot' run, not a comparison"):
        check_comparison_folder(run)


def test_compare_resume_checks_its_sub_studies(tmp_path):
    """A damaged metric in a comparison's tuning record is refused on resume."""
    run = tmp_path / "eval"
    _run(run / "tuning", [_trial(distance_m=[1])], kind="quadruped-tune")
    with pytest.raises(FileFormatError, match="metric 'distance_m'"):
        check_comparison_folder(run)
