"""Several optimizer starts per candidate: the best start scores it, on any evaluator."""

import math

import cheap
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import (
    CandidateResult,
    CandidateTask,
    FitnessSettings,
    best_start,
    start_guesses,
    start_seed,
)
from clamber.jumper.morphology import Morphology
from clamber.storage.runs import TrialState

CONFIG = CodesignSettings(generations=2, popsize=4, sigma0=0.8, seed=7,
                        fitness=FitnessSettings(failure_speed=-0.05, starts=3))


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    return run_codesign(CONFIG, tmp_path_factory.mktemp("ms") / "run",
                        fitness_fn=cheap.start_fitness)


def _fingerprint(run):
    return [(t.generation, t.index, t.params, t.state, t.fitness, t.info.get("start"))
            for t in run.trials]


def test_each_candidate_is_scored_by_its_best_start(serial_run):
    """A candidate's fitness is the largest converged start's speed (the analytic speed
    plus the known start bonus), with every start listed and the CPU summed."""
    done = [t for t in serial_run.trials if t.state is TrialState.COMPLETE]
    assert done and len(serial_run.trials) == 8
    for t in done:
        starts = t.info["starts"]
        assert [s["start"] for s in starts] == [0, 1, 2]
        ok = [s for s in starts if s["fitness_mps"] is not None]
        best = max(ok, key=lambda s: (s["fitness_mps"], -s["start"]))
        assert t.info["start"] == best["start"] and t.fitness == best["fitness_mps"]
        assert math.isclose(t.info["cpu_time_s"], 0.5 * len(ok))
        if t.index == 0:
            assert starts[2]["status"] == "infeasible"
    every = serial_run.trials  # failed evaluations cost CPU too
    assert math.isclose(serial_run.summary()["cpu_seconds_per_evaluation"],
                        sum(t.info["cpu_time_s"] for t in every) / len(every))


def test_starts_in_parallel_equal_serial(serial_run, tmp_path, dask_two):
    """Two worker processes, starts finishing out of order, record the serial trials."""
    dask = run_codesign(CONFIG, tmp_path / "d", dask_two, fitness_fn=cheap.start_fitness)
    assert _fingerprint(dask) == _fingerprint(serial_run)


def test_all_starts_in_process_equal_the_split_run(serial_run):
    """``start=None`` runs every start in the calling process and picks the same one."""
    t = serial_run.trials[1]
    task = CandidateTask(t.generation, t.index, t.params,
                         Morphology.from_design_vector(t.lengths[:4], t.masses[1:4]),
                         CONFIG.fitness)
    whole = [cheap.start_fitness(CandidateTask(**{**task.__dict__, "start": k}))
             for k in range(3)]
    assert best_start(whole).speed_mps == t.speed_mps


def test_start_guesses_and_seeds():
    """Start 0 warm-starts (seed trajectory as fallback), 1 the designed guess, later ones
    random guesses whose seed depends on the candidate's place only; a failed start
    never beats a converged one."""
    task = CandidateTask(3, 2, (0.0,), Morphology.nominal(), FitnessSettings(starts=4))
    assert [g for _, g in start_guesses(task, 0)] == ["seed"]
    assert start_guesses(task, 1) == [("deterministic", "deterministic")]
    assert start_guesses(task, 3)[0][1] == "random"
    assert start_seed(task, 2) == start_seed(task, 2) != start_seed(task, 3)
    ok = CandidateResult(True, "converged", 0.1, 0.0, 1.0)
    bad = CandidateResult(False, "infeasible", math.nan, 0.0, 2.0)
    assert best_start([bad, ok]).info["start"] == 1
    assert best_start([bad, ok]).wall_time_s == 3.0
    with pytest.raises(ConfigError, match="starts"):
        FitnessSettings(starts=0)
