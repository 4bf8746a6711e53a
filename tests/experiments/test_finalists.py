"""Held-out climbs of a robust co-design's finalists."""

import json
import math
from types import SimpleNamespace

import pytest

from clamber.exceptions import ClamberError
from clamber.experiments.codesign import CodesignSettings
from clamber.experiments.finalists import pick_finalists, validate_finalists
from clamber.experiments.fitness import FitnessSettings
from clamber.experiments.landing_fitness import landing_fitness
from clamber.jumper.seed import seed_solution
from clamber.storage.runs import CandidateTrial, TrialState


def _trial(g, i, fitness, params=None, trajectory="trajectories/a.npz",
           state=TrialState.COMPLETE):
    return CandidateTrial(g, i, state, params or (float(g), float(i)), (0.1,) * 4,
                          (0.01,) * 5, fitness, 0.5, "converged", 1.0, 1.0, 1,
                          trajectory=trajectory, info={"climb_success_rate": 0.9})


def test_finalists_are_the_best_distinct_designs_with_a_trajectory():
    """Highest training fitness first, earlier first among equals; failed trials, NaN
    fitness and trials without a trajectory are skipped; a design evaluated twice counts
    once, with its better evaluation."""
    trials = [_trial(0, 0, 0.3), _trial(0, 1, 0.5), _trial(1, 0, 0.5),
              _trial(1, 1, 0.9, state=TrialState.FAIL), _trial(1, 2, math.nan),
              _trial(2, 0, 0.8, trajectory=""), _trial(2, 1, 0.7, params=(0.0, 1.0)),
              _trial(2, 2, 0.1)]
    picked = pick_finalists(trials, 3)
    assert [(t.generation, t.index) for t in picked] == [(2, 1), (1, 0), (0, 0)]
    assert len(pick_finalists(trials, 10)) == 4


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    seed_solution().save(run_dir / "trajectories" / "a.npz")
    config = CodesignSettings(fitness=FitnessSettings(landing_trials=2, landing_jumps=2))
    trials = [_trial(0, 0, 0.2), _trial(0, 1, 0.4)]
    return SimpleNamespace(run_dir=run_dir, config=config, trials=trials)


def test_finalists_are_rescored_on_held_out_climbs(fake_run):
    """Each finalist's held-out figures are the landing study of its trajectory on the
    given master seed; the best is the highest (the earlier finalist among equals); the
    record is written to the run folder."""
    out = validate_finalists(fake_run, count=2, trials=3, seed=5)
    direct = landing_fitness(seed_solution(), 3, seed=5, jumps=2)
    assert [r["index"] for r in out["finalists"]] == [1, 0]
    for r in out["finalists"]:
        assert r["fitness_mps"] == direct["landing_fitness_mps"]
        assert r["climb_success_rate"] == direct["climb_success_rate"]
    assert out["best"]["index"] == 1 and out["best"]["training_fitness_mps"] == 0.4
    assert json.loads((fake_run.run_dir / "validation.json").read_text())["seed"] == 5


def test_validation_refuses_the_training_seed_and_a_speed_only_fitness(fake_run):
    """Seed 0 is the co-design's own climbs; a fitness that simulated no landings has
    nothing to validate."""
    with pytest.raises(ClamberError, match="seed 0"):
        validate_finalists(fake_run, count=1, trials=2, seed=0)
    speed_only = SimpleNamespace(run_dir=fake_run.run_dir, config=CodesignSettings(),
                                 trials=fake_run.trials)
    with pytest.raises(ClamberError, match="--fitness robust"):
        validate_finalists(speed_only, count=1, trials=2, seed=3)
