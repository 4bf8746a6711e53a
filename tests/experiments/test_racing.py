"""Racing the landing trials: a candidate stops only when it cannot beat the threshold."""

import math

import cheap
import numpy as np
import pytest

from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.experiments.landing_fitness import (
    fitness_upper_bound,
    landing_fitness,
    race,
    tally_fitness,
)
from clamber.experiments.record import TrialOutcome
from clamber.failures import FailureReason
from clamber.jumper.seed import seed_solution
from clamber.storage.runs import TrialState


def _climbs(ready_jumps: list[int], jumps: int) -> list[TrialOutcome]:
    return [TrialOutcome(r == jumps, None if r == jumps else FailureReason.FELL, "",
                         {"first_ready": r > 0, "ready_jumps": r}) for r in ready_jumps]


def test_race_never_stops_a_candidate_that_would_reach_the_threshold():
    """Over 2000 constructed climb sequences and thresholds: whenever the race stops
    early, the full evaluation lies below the threshold, and so does the score from the
    trials run; a candidate whose full evaluation reaches the threshold runs every trial
    and scores exactly its full evaluation."""
    rng = np.random.default_rng(0)
    trials, jumps, stopped = 12, 5, 0
    for _ in range(2000):
        p = rng.uniform(0.2, 1.0)
        ready = [int(np.argmin(np.append(rng.random(jumps) < p, False))) for _ in range(trials)]
        speed = rng.uniform(0.2, 0.8)
        full = speed * sum(ready) / (trials * jumps)
        beat = full * rng.uniform(0.5, 1.5)
        tally = race(_climbs(ready, jumps), speed, trials, jumps, beat, min_trials=3)
        score = speed * tally.ready_jumps / (tally.done * jumps)
        if full >= beat:
            assert not tally.raced and tally.done == trials and score == full
        if tally.raced:
            stopped += 1
            assert full < beat and score < beat and tally.done >= 3
            assert score <= fitness_upper_bound(speed, tally.ready_jumps, tally.done,
                                                trials, jumps) < beat
    assert stopped > 200  # the constructed cases do exercise early stops


def test_climbs_score_race_never_stops_a_candidate_that_would_reach_the_threshold():
    """The same property for the 'climbs' score (speed x completed climbs / trials): an
    early stop implies a full score below the threshold and a tally score below it; a
    candidate reaching the threshold runs all trials and scores its full evaluation."""
    _assert_exact_race("climbs", seed=1)


def _measured_climbs(ready_jumps, jumps, per_jump_m, per_jump_s):
    return [TrialOutcome(r == jumps, None if r == jumps else FailureReason.FELL, "",
                         {"first_ready": r > 0, "ready_jumps": r, "climbed_m": r * per_jump_m,
                          "climb_time_s": r * per_jump_s}) for r in ready_jumps]


def test_measured_score_is_the_simulated_speed_capped_at_the_planned_one_and_races_exactly():
    """'measured' scores completed climbs at the climbing speed measured over the ready jumps
    (height over time, waits included) capped at the planned speed; over 2000 constructed
    cases its early stops are exact: a stopped candidate's full and tallied scores lie below
    the threshold, a candidate reaching it runs every trial."""
    late = race(iter(_measured_climbs([5, 5, 5, 2], 5, 0.2, 0.45)), 0.5, 4, 5)
    assert late.climb_speed == pytest.approx(0.2 / 0.45)
    assert tally_fitness(0.5, late, 5, "measured") == pytest.approx(0.2 / 0.45 * 3 / 4)
    fast = race(iter(_measured_climbs([5, 5], 5, 0.2, 0.3)), 0.5, 2, 5)
    assert tally_fitness(0.5, fast, 5, "measured") == pytest.approx(0.5)
    none = race(iter(_measured_climbs([1, 0], 5, 0.2, 0.45)), 0.5, 2, 5)
    assert tally_fitness(0.5, none, 5, "measured") == 0.0
    _assert_exact_race("measured", seed=2)


def _assert_exact_race(score_name: str, seed: int, trials: int = 12, jumps: int = 5) -> None:
    """Over 2000 constructed climb sequences (random ready probability, speed, height and
    time per jump) and thresholds: an early stop implies full and tallied scores below the
    threshold; a candidate whose full score reaches it runs every trial and scores it."""
    rng = np.random.default_rng(seed)
    stopped = 0
    for _ in range(2000):
        p = rng.uniform(0.5, 1.0)
        ready = [int(np.argmin(np.append(rng.random(jumps) < p, False))) for _ in range(trials)]
        speed, height, time = rng.uniform(0.2, 0.8), rng.uniform(0.15, 0.25), rng.uniform(0.35, 0.5)
        climbs = _measured_climbs(ready, jumps, height, time)
        full = tally_fitness(speed, race(iter(climbs), speed, trials, jumps), jumps, score_name)
        rate = (min(speed, height / time) if score_name == "measured" else speed)
        assert full == pytest.approx(rate * sum(r == jumps for r in ready) / trials)
        beat = full * rng.uniform(0.5, 1.5) + 1e-3
        tally = race(iter(climbs), speed, trials, jumps, beat, min_trials=3, score=score_name)
        score = tally_fitness(speed, tally, jumps, score_name)
        if full >= beat:
            assert not tally.raced and tally.done == trials and score == full
        if tally.raced:
            stopped += 1
            assert full < beat and score < beat and tally.done >= 3
    assert stopped > 200  # the constructed cases do exercise early stops


def test_the_two_scores_rank_late_and_early_failures_differently():
    """Four five-jump climbs: one that fails at its last jump and three that complete
    score 19/20 of the speed on 'jumps' and 3/4 on 'climbs'; a climb falling at its
    first jump costs both scores the same quarter."""
    late = race(iter(_climbs([5, 5, 5, 4], 5)), 0.5, 4, 5)
    early = race(iter(_climbs([5, 5, 5, 0], 5)), 0.5, 4, 5)
    assert tally_fitness(0.5, late, 5) == pytest.approx(0.5 * 19 / 20)
    assert tally_fitness(0.5, late, 5, "climbs") == pytest.approx(0.5 * 3 / 4)
    assert tally_fitness(0.5, early, 5) == tally_fitness(0.5, early, 5, "climbs")


def test_race_stops_at_the_first_trial_the_bound_allows():
    """Five-jump climbs at 0.5 m/s against 0.3 m/s: the bound after k failed climbs is
    0.5 (10 - k) / 10, below 0.3 from k = 5 on; min_trials delays the stop, no threshold
    runs every trial, and the counts are those of the trials run."""
    climbs = _climbs([0] * 10, 5)
    tally = race(iter(climbs), 0.5, 10, 5, beat=0.3, min_trials=1)
    assert (tally.done, tally.raced, tally.ready_jumps) == (5, True, 0)
    assert race(iter(climbs), 0.5, 10, 5, beat=0.3, min_trials=7).done == 7
    full = race(iter(_climbs([5, 5, 2, 0], 5)), 0.5, 4, 5)
    assert (full.done, full.raced, full.first_ready, full.success, full.ready_jumps) == (
        4, False, 3, 2, 12)


def test_landing_fitness_race_runs_a_prefix_of_the_same_trials():
    """In the calibrated simulator: an unreachable threshold stops after min_trials, with
    rates over those trials equal to a full evaluation of that many trials (same seeds,
    in order); no threshold runs all trials and reports no race."""
    sol = seed_solution()
    full = landing_fitness(sol, 6, jumps=2)
    raced = landing_fitness(sol, 6, jumps=2, beat=10.0, min_trials=2)
    prefix = landing_fitness(sol, 2, jumps=2)
    assert not full["raced"] and full["landing_trials_run"] == 6
    assert raced["raced"] and raced["landing_trials_run"] == 2
    for key in ("ready_rate", "ready_jump_fraction", "expected_speed_mps"):
        assert raced[key] == prefix[key]
    assert raced["expected_speed_mps"] <= raced["fitness_bound_mps"] < 10.0


RACED = CodesignSettings(generations=3, popsize=5, sigma0=0.6, seed=3, fitness=FitnessSettings(
    failure_speed=-0.05, landing_trials=12, landing_jumps=5, landing_race=True))


@pytest.fixture(scope="module")
def raced_run(tmp_path_factory):
    return run_codesign(RACED, tmp_path_factory.mktemp("race") / "run",
                        fitness_fn=cheap.race_fitness)


def test_threshold_is_the_best_of_the_finished_generations(raced_run):
    """Generation 0 runs without a threshold; generation g races against the best fitness
    of generations 0..g-1; some candidates are stopped early, each below its threshold."""
    trials = [t for t in raced_run.trials if t.state is TrialState.COMPLETE]
    for t in trials:
        earlier = [u.fitness for u in trials if u.generation < t.generation]
        assert t.info["beat"] == (max(earlier) if earlier else None)
    raced = [t for t in trials if t.info["raced"]]
    assert raced and all(t.fitness < t.info["beat"] for t in raced)
    assert all(t.info["landing_trials_run"] == 12 for t in trials if not t.info["raced"])


def test_raced_run_in_parallel_equals_serial(raced_run, tmp_path, dask_two):
    """Two worker processes record exactly the serial run's fitness and trial counts."""
    dask = run_codesign(RACED, tmp_path / "d", dask_two, fitness_fn=cheap.race_fitness)

    def key(run):
        return [(t.generation, t.index, t.params, t.fitness, t.info.get("landing_trials_run"))
                for t in run.trials]

    assert key(dask) == key(raced_run)


def test_summary_splits_the_cpu_of_an_evaluation(raced_run):
    """The summary's CPU seconds per evaluation are the means over the records that have
    them: all of it, the optimization and the landing trials (0.01 s per trial run here)."""
    runs = [t.info["landing_trials_run"] for t in raced_run.trials
            if "landing_trials_run" in t.info]
    s = raced_run.summary()
    assert math.isclose(s["landing_cpu_seconds_per_evaluation"], 0.01 * sum(runs) / len(runs))
    assert math.isclose(s["solve_cpu_seconds_per_evaluation"], 0.005)
    assert math.isclose(s["cpu_seconds_per_evaluation"],
                        0.005 + s["landing_cpu_seconds_per_evaluation"])
