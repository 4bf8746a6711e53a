"""The CMA-ES driver: reproducible on every backend, failures kept, runs that survive."""

import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import cheap
import numpy as np
import pytest

from clamber.exceptions import ConfigError, FileFormatError
from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.parallel.dask import DaskEvaluator
from clamber.parallel.serial import SerialEvaluator
from clamber.storage.runs import RunStore, TrialState

CONFIG = CodesignSettings(generations=6, popsize=5, sigma0=0.8, seed=7,
                        fitness=FitnessSettings(failure_speed=-0.05))


def _fingerprint(result):
    return [(t.generation, t.index, t.params, t.state, t.fitness) for t in result.trials]


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    np.random.seed(123)  # the global generator must not matter
    return run_codesign(CONFIG, tmp_path_factory.mktemp("serial") / "run",
                        fitness_fn=cheap.cheap_fitness)


def test_seed_reproduces_and_global_numpy_state_is_irrelevant(serial_run, tmp_path):
    """The same seed gives the same trials even after reseeding NumPy's global generator;
    another seed gives other candidates."""
    np.random.seed(999)
    again = run_codesign(CONFIG, tmp_path / "again", fitness_fn=cheap.cheap_fitness)
    assert _fingerprint(again) == _fingerprint(serial_run)
    other = run_codesign(CodesignSettings(generations=1, popsize=5, sigma0=0.8, seed=8,
                                        fitness=CONFIG.fitness),
                         tmp_path / "other", fitness_fn=cheap.cheap_fitness)
    assert other.trials[0].params != serial_run.trials[0].params


@pytest.mark.parametrize("workers", [1, 2])
def test_dask_equals_serial(serial_run, tmp_path, workers, dask_two):
    """A local Dask cluster with 1 or 2 workers records exactly the serial trials."""
    if workers == 2:
        result = run_codesign(CONFIG, tmp_path / "d", dask_two, fitness_fn=cheap.cheap_fitness)
    else:
        with DaskEvaluator(n_workers=1) as ev:
            result = run_codesign(CONFIG, tmp_path / "d", ev, fitness_fn=cheap.cheap_fitness)
    assert _fingerprint(result) == _fingerprint(serial_run)
    assert result.best_speed == serial_run.best_speed


def test_failures_are_recorded_with_the_penalty(serial_run):
    """Every candidate of every generation is recorded; failed solves carry the penalty
    as fitness, NaN speed, and count in the summary."""
    trials = serial_run.trials
    assert len(trials) == CONFIG.generations * CONFIG.popsize
    failed = [t for t in trials if t.state is TrialState.FAIL]
    assert failed, "the cheap fitness fails for L2 < 60 mm; this run should meet some"
    assert all(t.fitness == -0.05 and math.isnan(t.speed_mps) for t in failed)
    assert serial_run.summary()["failed_evaluations"] == len(failed)
    assert [s["failed"] for s in serial_run.generation_summaries] == [
        sum(t.state is TrialState.FAIL for t in trials if t.generation == g)
        for g in range(CONFIG.generations)]


def test_search_improves_on_the_initial_design(serial_run):
    """On the cheap landscape the best design beats the initial one and shows its trends."""
    from clamber.experiments.fitness import CandidateTask
    from clamber.experiments.space import DesignSpace

    z0 = DesignSpace().initial_mean()
    nominal = cheap.analytic_speed(CandidateTask(0, 0, (), DesignSpace().decode(z0),
                                                 CONFIG.fitness))
    assert serial_run.best_speed > nominal + 0.05
    assert serial_run.summary()["findings"]["spine_mass_concentrated"]


def test_interrupted_run_resumes_to_the_same_result(serial_run, tmp_path):
    """Stopping mid-generation and resuming gives the uninterrupted run's trials; the
    finished ones are not evaluated again."""
    part = run_codesign(CONFIG, tmp_path / "r", fitness_fn=cheap.cheap_fitness, stop_after=12)
    assert len(part.trials) == 12
    calls = []

    def counting(task):
        calls.append((task.generation, task.index))
        return cheap.cheap_fitness(task)

    full = run_codesign(CONFIG, tmp_path / "r", resume=True, fitness_fn=counting)
    assert _fingerprint(full) == _fingerprint(serial_run)
    assert len(calls) == CONFIG.generations * CONFIG.popsize - 12
    assert (2, 2) in calls and (2, 1) not in calls


def test_kill_9_then_resume_gives_the_same_result(serial_run, tmp_path):
    """A run killed with SIGKILL at an arbitrary moment resumes to the same final result."""
    run_dir = tmp_path / "killed"
    script = (
        "import sys; sys.path.insert(0, sys.argv[2]); import cheap, test_codesign as t\n"
        "from clamber.experiments.codesign import run_codesign\n"
        "run_codesign(t.CONFIG, sys.argv[1], fitness_fn=cheap.cheap_fitness)\n"
    )
    env = {**os.environ, cheap.DELAY_ENV: "0.03"}
    proc = subprocess.Popen([sys.executable, "-c", script, str(run_dir),
                             str(Path(__file__).parent)], env=env)
    db = run_dir / "run.sqlite"
    deadline = time.time() + 60
    n = 0
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with sqlite3.connect(db) as c:
                    n = c.execute("SELECT count(*) FROM trials").fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
            if n >= 13:
                break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 13 <= n < CONFIG.generations * CONFIG.popsize
    resumed = run_codesign(CONFIG, run_dir, resume=True, fitness_fn=cheap.cheap_fitness)
    assert _fingerprint(resumed) == _fingerprint(serial_run)


def test_worker_killed_mid_evaluation_is_retried(serial_run, tmp_path, monkeypatch):
    """A worker that SIGKILLs itself while evaluating a candidate is detected; the
    candidate runs again on a fresh worker and the run's result is unchanged."""
    marker = tmp_path / "killed.pid"
    monkeypatch.setenv(cheap.KILL_MARKER_ENV, str(marker))
    with DaskEvaluator(n_workers=2, max_retries=2) as ev:
        result = run_codesign(CONFIG, tmp_path / "k", ev, fitness_fn=cheap.cheap_fitness)
    assert marker.exists(), "the worker should have killed itself"
    trial = next(t for t in result.trials if (t.generation, t.index) == (0, 1))
    assert trial.attempts >= 2 and trial.state is TrialState.COMPLETE
    assert _fingerprint(result) == _fingerprint(serial_run)


def test_worker_lost_beyond_retries_is_a_recorded_failure(tmp_path, monkeypatch):
    """With no retries allowed the candidate whose worker died is recorded as LOST with
    the penalty, and the run goes on."""
    monkeypatch.setenv(cheap.KILL_MARKER_ENV, str(tmp_path / "killed.pid"))
    cfg = CodesignSettings(generations=2, popsize=3, seed=1, fitness=CONFIG.fitness)
    with DaskEvaluator(n_workers=1, max_retries=0) as ev:
        result = run_codesign(cfg, tmp_path / "l", ev, fitness_fn=cheap.cheap_fitness)
    lost = [t for t in result.trials if t.state is TrialState.LOST]
    assert (0, 1) in [(t.generation, t.index) for t in lost]
    assert all(t.fitness == -0.05 for t in lost)
    assert len(result.trials) == 6


def test_run_directories_refuse_silent_restarts(serial_run, tmp_path):
    """A fresh run into a used directory, a resume with other settings, a corrupt store
    and one from another format version are clear errors."""
    with pytest.raises(ConfigError, match="already holds a run"):
        run_codesign(CONFIG, serial_run.run_dir, fitness_fn=cheap.cheap_fitness)
    other = CodesignSettings(generations=6, popsize=5, sigma0=0.8, seed=8,
                           fitness=CONFIG.fitness)
    with pytest.raises(ConfigError, match="different settings.*seed"):
        run_codesign(other, serial_run.run_dir, resume=True, fitness_fn=cheap.cheap_fitness)
    with pytest.raises(ConfigError, match="no run record"):
        run_codesign(CONFIG, tmp_path / "nothing", resume=True)
    bad = tmp_path / "corrupt"
    bad.mkdir()
    (bad / "run.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(FileFormatError, match="not a readable"):
        run_codesign(CONFIG, bad, resume=True)
    old = tmp_path / "old"
    RunStore.create(old, "codesign", CONFIG.to_dict()).close()
    with sqlite3.connect(old / "run.sqlite") as c:
        c.execute("UPDATE meta SET value = '0' WHERE key = 'format_version'")
    with pytest.raises(FileFormatError, match="format version"):
        run_codesign(CONFIG, old, resume=True)


def test_finished_trials_are_never_rewritten(serial_run):
    """Appending a trial into a taken slot is refused."""
    store = RunStore.open(serial_run.run_dir, "codesign", CONFIG.to_dict())
    try:
        with pytest.raises(FileFormatError, match="never rewritten"):
            store.append(serial_run.trials[0])
    finally:
        store.close()


@pytest.mark.parametrize("kwargs, match", [
    ({"generations": 0}, "generations"), ({"popsize": 1}, "popsize"),
    ({"sigma0": -1.0}, "sigma0"), ({"seed": -3}, "seed"),
])
def test_bad_options_are_config_errors(kwargs, match):
    """Invalid run options raise ConfigError naming the option."""
    with pytest.raises(ConfigError, match=match):
        CodesignSettings(**kwargs)


def test_serial_evaluator_returns_outcomes_in_order():
    """The in-process backend yields one outcome per task, in order, one attempt each."""
    out = SerialEvaluator().map(abs, [-3, 2, -1])
    assert [o.value for o in out] == [3, 2, 1] and all(o.attempts == 1 for o in out)


def test_each_candidate_starts_from_the_nearest_earlier_solution(tmp_path):
    """Every candidate of generation g >= 1 is warm-started from the trajectory of the
    converged trial of generations < g nearest to it in optimizer coordinates (generation
    0 has none): the guess each evaluation received is checked against the record."""
    seen = {}

    def recording(task):
        seen[(task.generation, task.index)] = (
            None if task.guess is None else task.guess.morphology.lengths)
        return cheap.warm_fitness(task)

    cfg = CodesignSettings(generations=3, popsize=5, sigma0=0.8, seed=7,
                         fitness=FitnessSettings(failure_speed=-0.05))
    res = run_codesign(cfg, tmp_path / "run", fitness_fn=recording, cma_log=False)
    checked = 0
    for t in res.trials:
        earlier = [e for e in res.trials if e.generation < t.generation and e.trajectory]
        if not earlier:
            assert seen[(t.generation, t.index)] is None
            continue
        d = [np.sum((np.array(e.params) - np.array(t.params)) ** 2) for e in earlier]
        nearest = earlier[int(np.argmin(d))]
        best = max(earlier, key=lambda e: e.fitness)
        assert seen[(t.generation, t.index)] == pytest.approx(nearest.lengths)
        checked += nearest is not best  # the rule differs from "the best so far" here
    assert checked >= 1
