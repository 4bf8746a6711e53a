"""The study runner: serial equals parallel, resume keeps every finished trial."""

import json
import math

import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.record import StudyTrial, TrialOutcome
from clamber.experiments.statistics import wilson_interval
from clamber.experiments.study import Study, TrialTask, failure_counts, run_study
from clamber.failures import FailureReason
from clamber.parallel.dask import DaskEvaluator
from clamber.storage.runs import RunStore, TrialState

CALLS: list[tuple[int, int]] = []


def coin_trial(task: TrialTask) -> TrialOutcome:
    """A cheap seeded trial: succeeds when the seed is even; its metric depends on the
    condition and the seed only."""
    CALLS.append((task.group, task.index))
    value = task.condition * 1000 + task.seed
    if task.seed % 2 == 0:
        return TrialOutcome(True, metrics={"value": value, "ratio": value / 7})
    return TrialOutcome(False, FailureReason.FELL, f"seed {task.seed}",
                        {"value": value, "ratio": math.nan})


def coin_study(seeds=(0, 1, 2, 3, 4, 5)) -> Study:
    return Study("coin", {"seeds": list(seeds)}, (1, 2), tuple(seeds), coin_trial)


def _plain(trials):
    return [{k: v for k, v in json.loads(t.to_json()).items() if k != "wall_time_s"}
            for t in trials]


def test_records_round_trip_through_strict_json():
    """A trial record survives to_json/from_json; NaN metrics become null (strict JSON)."""
    trials = run_study(coin_study())
    text = trials[1].to_json()
    assert "NaN" not in text
    back = StudyTrial.from_json(text)
    assert back.outcome.failure is FailureReason.FELL and back.metrics["ratio"] is None
    assert back.slot == trials[1].slot and back.seed == trials[1].seed


def test_outcome_is_either_a_success_or_a_failure():
    """A successful outcome has no failure reason and a failed one must have one."""
    with pytest.raises(ValueError):
        TrialOutcome(True, FailureReason.FELL)
    with pytest.raises(ValueError):
        TrialOutcome(False)


def test_dask_returns_exactly_the_serial_records():
    """Two Dask workers give the serial records, in (group, index) order."""
    serial = run_study(coin_study())
    with DaskEvaluator(n_workers=2) as ev:
        parallel = run_study(coin_study(), ev)
    assert _plain(serial) == _plain(parallel)
    assert [t.slot for t in serial] == sorted(t.slot for t in serial)
    assert failure_counts(serial) == {"fell": 6}


def test_interrupted_study_resumes_without_rerunning_finished_trials(tmp_path):
    """Stopped after 5 of 12 trials and resumed, the study evaluates only the 7 missing
    trials and its record equals an uninterrupted run's."""
    full = run_study(coin_study(), run_dir=tmp_path / "full")
    CALLS.clear()
    part = run_study(coin_study(), run_dir=tmp_path / "cut", stop_after=5)
    assert len(part) == 5 and len(CALLS) == 5
    CALLS.clear()
    resumed = run_study(coin_study(), run_dir=tmp_path / "cut", resume=True)
    assert len(CALLS) == 7
    assert _plain(resumed) == _plain(full)
    with RunStore.open(tmp_path / "cut", "coin", coin_study().config,
                       record_type=StudyTrial) as store:
        assert len(store.trials()) == 12
        assert all(t.state is TrialState.COMPLETE for t in store.trials())


def test_resume_with_other_settings_is_refused_with_a_diff(tmp_path):
    """Resuming a folder with another configuration names the differing key."""
    run_study(coin_study(), run_dir=tmp_path / "r", stop_after=2)
    with pytest.raises(ConfigError, match="seeds"):
        run_study(coin_study(seeds=(0, 1)), run_dir=tmp_path / "r", resume=True)
    with pytest.raises(ConfigError, match="already holds a run"):
        run_study(coin_study(), run_dir=tmp_path / "r")


def test_wilson_interval_matches_the_closed_form():
    """SciPy's Wilson interval equals the textbook formula and brackets the rate."""
    iv = wilson_interval(12, 30)
    z = 1.959963984540054
    n, p = 30, 0.4
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert iv.low == pytest.approx(centre - half, abs=1e-12)
    assert iv.high == pytest.approx(centre + half, abs=1e-12)
    with pytest.raises(ConfigError):
        wilson_interval(3, 2)
