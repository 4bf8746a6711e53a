"""CMA-ES co-design of the jump-climber's morphology (the paper's Stage 2), ask/tell.

Each generation: ask pycma for ``popsize`` candidates in the coordinates of
:mod:`clamber.experiments.space`, score each by the speed of its optimized jump
(:mod:`clamber.experiments.fitness`) on an :class:`~clamber.parallel.Evaluator`, record
every result as it finishes (:mod:`clamber.storage`), tell pycma the negated speeds, record
the generation's summary. Each candidate is warm-started from the trajectory of the
nearest converged candidate (in optimizer coordinates) of earlier generations only, so a
generation's results do not depend on which worker finishes first, nor on where an
interrupted run stopped.

The record is the state: pycma is deterministic given its seed and what it is told, so
a resumed run replays the recorded generations into a fresh strategy (checking each
replayed mean and step size against the record) instead of restoring a snapshot.
pycma's own data logs go to ``RUN_DIR/cma/`` (``cma.plot("RUN_DIR/cma/")`` draws them).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cma
import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError, FileFormatError
from clamber.experiments.fitness import (
    CandidateResult,
    CandidateTask,
    FitnessSettings,
    best_start,
    evaluate_candidate,
)
from clamber.experiments.space import DesignSpace, paper_findings
from clamber.jumper.morphology import DesignBounds, Morphology
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.base import Evaluator, Outcome
from clamber.parallel.serial import SerialEvaluator
from clamber.storage.runs import CandidateTrial, RunStore, TrialState, best_trial

KIND = "codesign"
#: pycma's data logs, inside the run directory.
CMA_LOG_DIR = "cma"
#: pycma stopping criteria a run may set (``cma.CMAOptions`` documents each). All are off
#: by default: a run does all of its generations unless a criterion set here fires.
STOP_OPTIONS = ("tolfun", "tolfunhist", "tolfunrel", "tolx", "tolfacupx", "tolupsigma",
                "tolconditioncov", "tolflatfitness", "tolstagnation")
FitnessFunction = Callable[[CandidateTask], CandidateResult]
#: Called after every finished evaluation with a progress dict (see :func:`run_codesign`).
ProgressCallback = Callable[[dict[str, Any]], None]


class SeededNormal:
    """Standard normal samples from a private, seeded generator (pycma's ``randn``).

    pycma draws from NumPy's global generator by default; a private one makes a run
    reproducible whatever else the process does, and a replay draws the same numbers.
    """

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape)


@dataclass(frozen=True)
class CodesignSettings:
    """A co-design run (the paper's defaults: 9 candidates, 50 generations)."""

    generations: int = 50
    popsize: int = 9
    sigma0: float = 0.5
    """Initial CMA-ES step size in the unitless coordinates of :mod:`clamber.experiments.space`
    (0.5 is about 20 mm of link length or 15 g of inner mass near the initial design)."""
    seed: int = 0
    fitness: FitnessSettings = field(default_factory=FitnessSettings)
    bounds: DesignBounds = field(default_factory=DesignBounds)
    cma_options: Mapping[str, float] = field(default_factory=dict)
    """pycma stopping criteria (names in :data:`STOP_OPTIONS`, values >= 0, inf allowed),
    e.g. ``{"tolfun": 1e-3}``: the run ends after the first generation where one fires."""

    def __post_init__(self) -> None:
        for name, low in (("generations", 1), ("popsize", 2), ("seed", 0)):
            check.integer("", name, getattr(self, name), low=low)
        check.positive("", "sigma0", self.sigma0)
        if not isinstance(self.cma_options, Mapping):
            raise ConfigError(f"cma_options = {self.cma_options!r}: must be a mapping")
        for k, v in self.cma_options.items():
            if k not in STOP_OPTIONS:
                raise ConfigError(f"cma option {k!r}: not a settable stopping criterion "
                                  f"(one of {', '.join(STOP_OPTIONS)})")
            if not check.is_real(v) or not v >= 0:
                raise ConfigError(f"cma option {k} = {v!r}: must be a number >= 0 (inf allowed)")

    def to_dict(self) -> dict[str, Any]:
        """What decides the results (the run store refuses to resume with another)."""
        return {"generations": self.generations, "popsize": self.popsize,
                "sigma0": self.sigma0, "seed": self.seed, "fitness": self.fitness.to_dict(),
                "bounds": Morphology.nominal(self.bounds).to_dict()["bounds"],
                "cma_options": {k: _json_number(float(v))
                                for k, v in sorted(self.cma_options.items())},
                "cma_version": cma.__version__}


def _json_number(v: float) -> float | str:
    """inf as the string 'inf' (strict JSON has no infinity); float() reads it back."""
    return v if math.isfinite(v) else "inf"


@dataclass
class CodesignResult:
    """The outcome of a (possibly resumed) co-design run."""

    run_dir: Path
    config: CodesignSettings
    trials: list[CandidateTrial]
    generation_summaries: list[dict[str, Any]]
    best: CandidateTrial | None
    best_morphology: Morphology | None
    best_solution_path: Path | None
    wall_time_s: float
    evaluator: dict[str, Any]

    @property
    def evaluations(self) -> int:
        return len(self.trials)

    @property
    def failed_evaluations(self) -> int:
        return sum(t.state is not TrialState.COMPLETE for t in self.trials)

    @property
    def best_speed(self) -> float:
        """Speed of the best design [m/s] (NaN when nothing converged)."""
        return self.best.speed_mps if self.best is not None else math.nan

    def summary(self) -> dict[str, Any]:
        """The run's figures, JSON-ready; ``findings`` checks the paper's three."""
        m = self.best_morphology
        info = self.best.info if self.best is not None else {}
        return {
            "best_speed_mps": self.best_speed,
            "best_fitness": self.best.fitness if self.best is not None else math.nan,
            "best_ready_rate": info.get("ready_rate", math.nan),
            "best_expected_speed_mps": info.get("expected_speed_mps", math.nan),
            "best_climb_success_rate": info.get("climb_success_rate", math.nan),
            "best_speed_bl_per_s": self.best_speed / m.body_length if m else math.nan,
            "best_morphology": m.to_dict() if m else None,
            "best_design": _design_mm_g(m) if m else None,
            "findings": paper_findings(m) if m else None,
            "generations": len(self.generation_summaries),
            "evaluations": self.evaluations,
            "failed_evaluations": self.failed_evaluations,
            "wall_time_s": self.wall_time_s,
            "core_minutes_per_evaluation": (sum(t.wall_time_s for t in self.trials) / 60
                                            / max(self.evaluations, 1)),
            "cpu_seconds_per_evaluation": _cpu_per_evaluation(self.trials),
            "solve_cpu_seconds_per_evaluation": _cpu_per_evaluation(self.trials,
                                                                    "solve_cpu_s"),
            "landing_cpu_seconds_per_evaluation": _cpu_per_evaluation(self.trials,
                                                                      "landing_cpu_s"),
            "stopped_by": (self.generation_summaries[-1].get("stop") or None
                           if self.generation_summaries else None),
            "run_dir": str(self.run_dir),
            "best_solution": str(self.best_solution_path) if self.best_solution_path else None,
            "evaluator": self.evaluator,
        }


def _cpu_per_evaluation(trials: list[CandidateTrial], key: str = "cpu_time_s") -> float:
    """Mean CPU seconds of an evaluation as the worker measured them: all of it
    (``cpu_time_s``: every start, the landing trials included), its trajectory
    optimizations (``solve_cpu_s``) or its landing trials (``landing_cpu_s``); NaN when no
    record has them."""
    cpu = [t.info[key] for t in trials if key in (t.info or {})]
    return sum(cpu) / len(cpu) if cpu else math.nan


def _design_mm_g(m: Morphology) -> dict[str, float]:
    names = ("L1_mm", "L2_mm", "L3_mm", "L4_mm", "m2_g", "m3_g", "m4_g")
    return dict(zip(names, DesignSpace(m.bounds).design_vector(m).tolist(), strict=True))


def make_strategy(config: CodesignSettings,
                  log_dir: Path | None = None) -> cma.CMAEvolutionStrategy:
    """pycma's strategy at the initial design, sampling from its own seeded generator.

    Every stopping test is off unless ``config.cma_options`` sets it; pycma reads no
    signals file. With ``log_dir`` pycma writes its data logs there (rewritten from the
    start when a run is replayed); logging does not change the search.
    """
    space = DesignSpace(config.bounds)
    options: dict[str, Any] = {
        "popsize": config.popsize, "randn": SeededNormal(config.seed), "seed": math.nan,
        "verbose": -8, "verb_disp": 0, "verb_log": 0, "maxiter": math.inf,
        "tolfun": 0, "tolx": 0, "tolflatfitness": math.inf, "tolstagnation": math.inf,
        "signals_filename": "",
    }
    if log_dir is not None:
        options.update(verb_log=1, verb_filenameprefix=str(log_dir) + os.sep)
    options.update({k: float(v) for k, v in config.cma_options.items()})
    return cma.CMAEvolutionStrategy(space.initial_mean(), config.sigma0, options)


#: Called with the run so far after every finished generation (e.g. to rewrite a report).
GenerationCallback = Callable[[CodesignResult], None]


def run_codesign(
    config: CodesignSettings,
    run_dir: str | Path,
    evaluator: Evaluator | None = None,
    resume: bool = False,
    fitness_fn: FitnessFunction = evaluate_candidate,
    progress: ProgressCallback | None = None,
    stop_after: int | None = None,
    on_generation: GenerationCallback | None = None,
    cma_log: bool = True,
) -> CodesignResult:
    """Run (or resume) a co-design in ``run_dir``.

    ``progress`` is called after each finished evaluation with ``generation``,
    ``evaluations_done``, ``evaluations_total``, ``best_speed_mps`` and
    ``evaluations_this_session``. ``on_generation`` is called with the run so far after
    each generation this session finishes. ``stop_after`` ends the session after that
    many new evaluations (a controlled interruption; the record is left resumable).
    ``cma_log`` writes pycma's data logs to ``run_dir/cma/``.
    """
    t0 = time.perf_counter()
    run_dir = Path(run_dir)
    evaluator = evaluator or SerialEvaluator()
    space = DesignSpace(config.bounds)
    cfg = config.to_dict()
    store = RunStore.open(run_dir, KIND, cfg) if resume else RunStore.create(run_dir, KIND, cfg)
    (run_dir / "trajectories").mkdir(exist_ok=True)
    try:
        es = make_strategy(config, run_dir / CMA_LOG_DIR if cma_log else None)
        finished = store.generation_summaries()
        _check_prefix(store, len(finished), config)
        new, done = 0, len(store.trials())
        loaded: dict[str, TrajectorySolution] = {}
        total = config.generations * config.popsize
        for g in range(config.generations):
            Z = np.array(es.ask())
            recorded = {t.index: t for t in store.trials(g)}
            for t in recorded.values():
                if not np.array_equal(np.array(t.params), Z[t.index]):
                    raise FileFormatError(
                        f"{run_dir}: recorded trial {g}/{t.index} does not match the "
                        "candidate the replayed optimizer asks for; the record is corrupt"
                    )
            if g < len(finished):  # replay a finished generation
                es.tell(list(Z), [-recorded[i].fitness for i in range(config.popsize)])
                _check_replay(es, finished[g], run_dir)
                if cma_log:
                    es.logger.add()
                if finished[g].get("stop"):
                    break
                continue
            solved = _solved_before(store, g, loaded)
            todo = [i for i in range(config.popsize) if i not in recorded]
            beat = _race_threshold(store, g) if config.fitness.landing_race else None
            tasks = [CandidateTask(g, i, tuple(Z[i].tolist()), space.decode(Z[i]),
                                   config.fitness, _nearest(solved, Z[i]), beat=beat)
                     for i in todo]
            for k, outcome in _candidate_outcomes(evaluator, fitness_fn, tasks):
                trial = _record(tasks[k], outcome, config.fitness, run_dir)
                store.append(trial)
                recorded[trial.index] = trial
                new += 1
                done += 1
                if progress is not None:
                    progress({"generation": g, "evaluations_done": done,
                              "evaluations_total": total, "evaluations_this_session": new,
                              "best_speed_mps": _best_speed(store)})
                if stop_after is not None and new >= stop_after:
                    return _result(config, store, run_dir, t0, evaluator)
            gen = [recorded[i] for i in range(config.popsize)]
            es.tell(list(Z), [-t.fitness for t in gen])
            if cma_log:
                es.logger.add()
            summary = _generation_summary(g, gen, es, space, store, _fired(es, config))
            store.save_generation(g, summary)
            if on_generation is not None:
                on_generation(_result(config, store, run_dir, t0, evaluator))
            if summary["stop"]:
                break
        return _result(config, store, run_dir, t0, evaluator)
    finally:
        store.close()


def _candidate_outcomes(evaluator: Evaluator, fitness_fn: FitnessFunction,
                        tasks: list[CandidateTask]):
    """``(index, Outcome)`` per candidate as it finishes; with several starts each start
    is its own task and a candidate finishes with its last start, scored by the best
    (:func:`~clamber.experiments.fitness.best_start`, in start order, so the result does
    not depend on which start finished first). A start whose worker was lost counts as
    a failed start; a candidate all of whose starts were lost is lost."""
    n = tasks[0].fitness.starts if tasks else 1
    if n == 1:
        yield from evaluator.imap_unordered(fitness_fn, tasks)
        return
    subtasks = [replace(t, start=k) for t in tasks for k in range(n)]
    done: dict[int, dict[int, Outcome]] = {}
    for j, outcome in evaluator.imap_unordered(fitness_fn, subtasks):
        i, k = divmod(j, n)
        done.setdefault(i, {})[k] = outcome
        if len(done[i]) < n:
            continue
        parts = [done[i][k] for k in range(n)]
        attempts = sum(o.attempts for o in parts)
        if not any(o.ok for o in parts):
            yield i, Outcome(None, False, attempts, parts[0].error)
            continue
        results = [o.value if o.ok else CandidateResult(
            success=False, status="worker_lost", speed_mps=math.nan, solve_time_s=0.0,
            wall_time_s=0.0, error=o.error) for o in parts]
        yield i, Outcome(best_start(results), True, attempts)


def _fired(es: cma.CMAEvolutionStrategy, config: CodesignSettings) -> dict[str, Any]:
    """The stopping criteria of ``config.cma_options`` that hold now (pycma checks more,
    which this run ignores, as it always has)."""
    if not config.cma_options:
        return {}
    return {k: _json_number(float(v)) if isinstance(v, int | float) else str(v)
            for k, v in es.stop().items() if k in config.cma_options}


def _check_prefix(store: RunStore, n_finished: int, config: CodesignSettings) -> None:
    """A record is a prefix of a run: full finished generations, then at most one
    partial one, with every trial in range."""
    for t in store.trials():
        if not (0 <= t.generation <= n_finished and 0 <= t.index < config.popsize):
            raise FileFormatError(f"{store.run_dir}: trial {t.generation}/{t.index} lies "
                                  f"outside a run of {n_finished} finished generations of "
                                  f"{config.popsize}")
    for g in range(n_finished):
        if len(store.trials(g)) != config.popsize:
            raise FileFormatError(f"{store.run_dir}: generation {g} is marked finished but "
                                  "lacks trials")


def _check_replay(es: cma.CMAEvolutionStrategy, summary: dict[str, Any],
                  run_dir: Path) -> None:
    """The replayed optimizer must be where the run's optimizer was after that generation."""
    if (summary.get("mean") != np.asarray(es.mean).tolist()
            or summary.get("sigma") != float(es.sigma)):
        raise FileFormatError(
            f"{run_dir}: replaying generation {summary.get('generation')} does not reproduce "
            "the recorded optimizer state; the record is corrupt or from another pycma"
        )


def _record(task: CandidateTask, outcome: Outcome, fitness: FitnessSettings,
            run_dir: Path) -> CandidateTrial:
    """A frozen trial from a finished task; saves its trajectory next to the store."""
    common = dict(generation=task.generation, index=task.index, params=task.params,
                  lengths=task.morphology.lengths, masses=task.morphology.masses,
                  attempts=outcome.attempts)
    if not outcome.ok:
        return CandidateTrial(state=TrialState.LOST, fitness=fitness.failure_speed,
                           speed_mps=math.nan, status="worker_lost", solve_time_s=math.nan,
                           wall_time_s=math.nan, error=outcome.error, **common)
    r: CandidateResult = outcome.value
    path = ""
    if r.success and r.solution is not None:
        rel = Path("trajectories") / f"g{task.generation:03d}_c{task.index:02d}"
        r.solution.save(run_dir / rel)
        path = str(rel.with_suffix(".npz"))
    return CandidateTrial(
        state=TrialState.COMPLETE if r.success else TrialState.FAIL,
        fitness=(r.speed_mps if math.isnan(r.fitness_mps) else r.fitness_mps) if r.success
        else fitness.failure_speed, speed_mps=r.speed_mps,
        status=r.status, solve_time_s=r.solve_time_s, wall_time_s=r.wall_time_s,
        guess=r.guess, trajectory=path, error=r.error,
        info={**r.info, "refined": r.refined}, **common)


def _solved_before(store: RunStore, before: int, loaded: dict[str, TrajectorySolution]
                   ) -> list[tuple[np.ndarray, TrajectorySolution]]:
    """(optimizer coordinates, stored trajectory) of every converged trial of the
    generations before ``before``, in record order.

    Only finished generations count, so the warm starts of a generation are the same
    whether or not some of its own trials were recorded before an interruption; they are
    read from disk on every backend (once each, kept in ``loaded``), so a resumed run
    starts from the same numbers.
    """
    out = []
    for t in store.trials():
        if t.trajectory and t.generation < before:
            if t.trajectory not in loaded:
                loaded[t.trajectory] = TrajectorySolution.load(store.path(t.trajectory))
            out.append((np.asarray(t.params, dtype=float), loaded[t.trajectory]))
    return out


def _race_threshold(store: RunStore, before: int) -> float | None:
    """The fitness the landing trials of generation ``before`` race against: the best of
    the finished generations before it (None: none converged yet, no race).

    Finished generations only, so a candidate's score does not depend on which of its
    generation's candidates finished first, nor on where an interrupted run stopped.
    """
    done = [t.fitness for t in store.trials()
            if t.generation < before and t.state is TrialState.COMPLETE]
    return max(done) if done else None


def _nearest(solved: list[tuple[np.ndarray, TrajectorySolution]],
             z: np.ndarray) -> TrajectorySolution | None:
    """The solution of the solved design nearest to ``z`` (the first on a tie), or None.

    Measured against the best trajectory so far as the warm start, on two CMA-like
    generations of 9 around the nominal robot: 754 instead of 894 IPOPT iterations
    (see docs/results/jumper_codesign.md).
    """
    if not solved:
        return None
    d = [float(np.sum((p - np.asarray(z, dtype=float)) ** 2)) for p, _ in solved]
    return solved[int(np.argmin(d))][1]


def _best_speed(store: RunStore) -> float:
    best = best_trial(store.trials())
    return best.fitness if best else math.nan


def _generation_summary(g: int, gen: list[CandidateTrial], es: cma.CMAEvolutionStrategy,
                        space: DesignSpace, store: RunStore,
                        stop: dict[str, Any]) -> dict[str, Any]:
    """Figures of generation ``g``; ``mean`` and ``sigma`` (after the tell, in optimizer
    coordinates) let a replay check itself; ``stop``: the criteria that ended the run."""
    speeds = [t.fitness for t in gen]
    mean = space.decode(np.asarray(es.mean))
    return {"generation": g, "best_speed_mps": max(speeds),
            "median_speed_mps": statistics.median(speeds),
            "best_so_far_mps": _best_speed(store),
            "failed": sum(t.state is not TrialState.COMPLETE for t in gen),
            "sigma": float(es.sigma), "mean": np.asarray(es.mean).tolist(),
            "mean_design": space.design_vector(mean).tolist(), "stop": stop}


def _result(config: CodesignSettings, store: RunStore, run_dir: Path, t0: float,
            evaluator: Evaluator) -> CodesignResult:
    trials = store.trials()
    best = best_trial(trials)
    morph = path = None
    if best is not None:
        morph = Morphology.from_design_vector(best.lengths[:4], best.masses[1:4], config.bounds)
        morph.save(run_dir / "best_morphology.toml")
        if best.trajectory:
            path = store.path(best.trajectory)
    return CodesignResult(run_dir=run_dir, config=config, trials=trials,
                          generation_summaries=store.generation_summaries(), best=best,
                          best_morphology=morph, best_solution_path=path,
                          wall_time_s=time.perf_counter() - t0, evaluator=evaluator.describe())
