"""A seeded trial whose start stance cannot be placed is an outcome, not an abort: it is
recorded as ``infeasible_start`` with the leg and the reach error, nothing is simulated, and
the summaries count it apart from the controllers' failures."""

from dataclasses import replace

from clamber.exceptions import InfeasibleStart
from clamber.experiments.quadruped_comparison import cell_settings, summarize_cell
from clamber.failures import FailureReason
from clamber.quadruped.trials.climb import ClimbTrial, run_climb

SEEDS = range(5000, 5020)


def test_seeds_5000_to_5019_start_or_are_recorded():
    """Over seeds 5000-5019 on the 70 deg wall every trial either places its start stance or
    is recorded as ``infeasible_start`` (naming the leg) without raising; at least one seed
    of the range cannot be placed, so the recording path is exercised."""
    settings = cell_settings("wall70", "qwbc", (), cycles=1)
    infeasible = []
    for seed in SEEDS:
        try:
            ClimbTrial(settings, seed)
        except InfeasibleStart:
            infeasible.append(seed)
    assert infeasible, "no seed of the range has an infeasible start"
    results = [run_climb(settings, seed)[0] for seed in infeasible]
    for seed, r in zip(infeasible, results, strict=True):
        assert r.seed == seed and not r.success
        assert r.failure is FailureReason.INFEASIBLE_START
        assert "out of reach for" in r.reason
        assert r.sim_time_s != r.sim_time_s  # NaN: nothing was simulated

    started = replace(results[0], success=True, failure=None, reason="")
    summary = summarize_cell([*results, started])
    assert summary["trials"] == len(results) + 1
    assert summary["infeasible_starts"] == len(results)
    assert summary["success_rate"] == 1.0  # one started, one succeeded
    only_infeasible = summarize_cell(results)
    assert only_infeasible["success_rate"] is None
    assert only_infeasible["success_interval"] is None


def test_an_internal_error_is_recorded_and_the_study_goes_on(monkeypatch):
    """A defect that raises inside one trial becomes that trial's ``internal_error``
    outcome naming the exception, instead of ending the whole study."""
    import clamber.experiments.quadruped as study

    def broken(settings, seed):
        raise RuntimeError("no scheduled swing left")

    monkeypatch.setattr(study, "run_climb", broken)
    task = study.TrialTask(0, 0, 5000, cell_settings("wall70", "qwbc", (), cycles=1))
    outcome = study.quadruped_trial(task)
    assert not outcome.success
    assert outcome.failure is FailureReason.INTERNAL_ERROR
    assert outcome.detail == "RuntimeError: no scheduled swing left"
