"""The controller comparison and its ablations on the study layer: tuning, then every cell.

One run (:func:`run_comparison`) tunes the three controllers with one procedure
(:mod:`clamber.experiments.quadruped_tuning`, training seeds 1000+): every candidate of every
controller on the training scenarios and seeds is one study (``tuning/`` in the run folder).
Then every (scenario, controller) cell runs on the evaluation seeds (0, 1, ...; no tuning step
used them) as a second study (``cells/``). Ablations run with the tuned gains of their parent
controller. Both studies run on :func:`~clamber.experiments.study.run_study`, so any evaluator
(``--workers N``, ``--cluster``) records the same trials as the serial one, and a killed
comparison resumes from its run folder without running a finished trial again.

Cell statistics (:func:`summarize_cell`): successes with the Wilson 95 % interval (over the
trials that started; ``infeasible_starts`` counts the others); the mean distance climbed;
the maximum body error, mean and peak power over the *completed* climbs only (the same motion
for every controller; None when none completed); the peak gripper load as the largest gauge
of a gripper's wrench in its achievable set (1 = on the boundary; median and maximum over
all trials); the share of control cycles in which a wrench-QP gripper limit was active; and
where failed trials failed (gait phase, swing leg), with each failed trial's gait cycle,
phase, height up the wall, time and what the failure check measured (``failed_trials``).

Tuning always climbs one gait cycle (the procedure's training climbs); ``cycles`` sets the
evaluation's climbs, so a multi-cycle evaluation is tuned exactly as the one-cycle one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clamber.exceptions import ConfigError
from clamber.experiments.quadruped import quadruped_study
from clamber.experiments.quadruped_scenarios import SCENARIOS, scenario_settings
from clamber.experiments.quadruped_tuning import TuningResult, TuningSettings, candidate_gains, tune
from clamber.experiments.record import StudyTrial
from clamber.experiments.statistics import wilson_interval
from clamber.experiments.study import ProgressCallback, group_trials, run_study
from clamber.failures import FailureReason
from clamber.parallel.base import Evaluator
from clamber.quadruped.control.variants import GAINS, check_name, parent
from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.sim.grippers import DEFAULT_SOLE, SoleCompliance
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.result import TrialIdentity, TrialResult
from clamber.storage.runs import RunStore

#: The compared controllers, then the ablations.
MAIN = tuple(GAINS)
ABLATION_ROWS = ("qwbc", "qwbc-nolimits", "qwbc-noweights", "qwbc-noramp", "qwbc-notorque",
                 "vmc", "vmc-plain", "clik", "clik-plain")

Gains = dict[str, tuple[tuple[str, float], ...]]
#: The tuning procedure of the comparison.
DEFAULT_TUNING = TuningSettings()


def cell_settings(scenario: str, controller: str, gains: tuple[tuple[str, float], ...],
                  cycles: int = 1, reseat_every: int | None = None,
                  **kwargs: Any) -> ClimbSettings:
    """The climb of one cell: scenario, controller, its gains and ``cycles`` gait cycles
    (re-seating ``reseat_every``, :class:`ClimbGaitSettings`); keyword arguments (sole,
    physics_dt, time_limit, ...) are passed on."""
    return scenario_settings(scenario, controller=controller, gains=gains,
                             gait=ClimbGaitSettings(cycles=cycles, reseat_every=reseat_every),
                             **kwargs)


def trial_result(trial: StudyTrial) -> TrialResult:
    """A recorded trial's result (a trial whose every worker died: a failure, no metrics)."""
    if trial.metrics:
        return TrialResult.from_dict(trial.metrics)
    return TrialResult.unmeasured(TrialIdentity("climb", "", "", trial.seed),
                                  trial.outcome.failure or FailureReason.WORKER_LOST,
                                  trial.outcome.detail)


def _sub_run(run_dir: Path | None, name: str, resume: bool) -> tuple[Path | None, bool]:
    """A sub-study's folder, and whether to resume it (only if it was started)."""
    if run_dir is None:
        return None, False
    sub = Path(run_dir) / name
    return sub, resume and RunStore.exists(sub)


def run_tuning(spec: TuningSettings, evaluator: Evaluator | None = None, cycles: int = 1,
               run_dir: Path | None = None, resume: bool = False,
               progress: ProgressCallback | None = None, **kwargs: Any
               ) -> dict[str, TuningResult]:
    """The tuning procedure, identically for every controller of ``MAIN``: all candidates'
    training trials as one study, then each controller's search read from its records."""
    keys = [(c, g, sc) for c in MAIN for g in candidate_gains(c, spec) for sc in spec.scenarios]
    conditions = [cell_settings(sc, c, g, cycles, **kwargs) for c, g, sc in keys]
    study = quadruped_study("quadruped-tune", conditions, spec.seeds)
    sub, again = _sub_run(run_dir, "tuning", resume)
    groups = group_trials(run_study(study, evaluator, sub, again, progress), len(conditions))
    outcomes = {key: [(r.success, r.max_tracking_error_mm) for r in map(trial_result, g)]
                for key, g in zip(keys, groups, strict=True)}

    def recorded(controller, gains, scenario, seeds):
        if tuple(seeds) != tuple(spec.seeds):
            raise ConfigError("tuning seeds differ from the recorded study's")
        return outcomes[(controller, gains, scenario)]

    return {c: tune(c, spec, recorded) for c in MAIN}


def run_cells(cells: Sequence[tuple[str, str]], seeds: Sequence[int], gains: Gains,
              evaluator: Evaluator | None = None, cycles: int = 1,
              run_dir: Path | None = None, resume: bool = False,
              progress: ProgressCallback | None = None, **kwargs: Any
              ) -> dict[tuple[str, str], list[TrialResult]]:
    """Trials of every ``(scenario, controller)`` cell on ``seeds`` with the gains of each
    controller's parent, as one study; keyword arguments go to :func:`cell_settings`."""
    for _, name in cells:
        check_name(name)
    conditions = [cell_settings(sc, c, gains.get(parent(c), ()), cycles, **kwargs)
                  for sc, c in cells]
    study = quadruped_study("quadruped-compare", conditions, seeds)
    sub, again = _sub_run(run_dir, "cells", resume)
    groups = group_trials(run_study(study, evaluator, sub, again, progress), len(cells))
    return {cell: [trial_result(t) for t in g] for cell, g in zip(cells, groups, strict=True)}


def failure_record(r: TrialResult) -> dict:
    """Where and why a failed trial failed: seed, gait cycle (0: placement), phase and
    swing leg, height up the wall [m], simulated time [s], reason and what was measured."""
    height = r.failure_distance_m
    return {"seed": r.seed, "cycle": r.failure_cycle, "phase": r.failure_phase,
            "height_m": round(height, 3) if math.isfinite(height) else None,
            "time_s": round(r.failure_time_s, 3) if math.isfinite(r.failure_time_s) else None,
            "reason": r.reason, "detail": r.failure_detail}


def _finite_mean(values: list[float]) -> float | None:
    """Mean of the finite values (None when there are none)."""
    v = [x for x in values if math.isfinite(x)]
    return float(np.mean(v)) if v else None


def summarize_cell(results: list[TrialResult]) -> dict:
    """Statistics of one cell (see the module docstring)."""
    if not results:
        raise ConfigError("no trials to summarize")
    n, ok = len(results), [r for r in results if r.success]
    started = sum(r.failure is not FailureReason.INFEASIBLE_START for r in results)
    ci = wilson_interval(len(ok), started) if started else None
    loads = [r.peak_gripper_load for r in results]
    active = [r.limit_active_fraction for r in results if math.isfinite(r.limit_active_fraction)]
    # The reason without its time ("simulation unstable at t = ..."): where, not when.
    where = Counter(f"{r.reason.split(' at ')[0]} ({r.failure_phase})" for r in results
                    if not r.success)
    return {
        "trials": n, "infeasible_starts": n - started, "successes": len(ok),
        "success_rate": ci.rate if ci else None,
        "success_interval": [float(ci.low), float(ci.high)] if ci else None,
        "max_tracking_error_mm": float(np.mean([r.max_tracking_error_mm for r in ok]))
        if ok else None,
        "worst_tracking_error_mm": float(max(r.max_tracking_error_mm for r in ok))
        if ok else None,
        "mean_power_w": float(np.mean([r.mean_power_w for r in ok])) if ok else None,
        "peak_power_w": float(max(r.peak_power_w for r in ok)) if ok else None,
        "peak_gripper_load_median": float(np.median(loads)),
        "peak_gripper_load_max": float(max(loads)),
        "planned_load_max": float(max(r.planned_load for r in results)),
        "limit_active_fraction": float(np.mean(active)) if active else None,
        "distance_m": _finite_mean([r.distance_m for r in results]),
        "failed_at_m": [round(r.failure_distance_m, 3) for r in results if not r.success],
        "failed_trials": [failure_record(r) for r in results if not r.success],
        "failures": dict(where),
        "sim_time_s": float(sum(r.sim_time_s for r in results)),
        "wall_time_s": float(sum(r.wall_time_s for r in results)),
        "verdict_reruns": sum(bool(r.verdict_rerun) for r in results),
    }


def _shifted(progress: ProgressCallback | None, done: int, total: int
             ) -> ProgressCallback | None:
    """One study's progress as part of the whole run: ``done`` trials before it, ``total``
    more in the whole run than in it."""
    if progress is None:
        return None
    return lambda d, t: progress(done + d, total + t)


def run_comparison(trials: int, scenarios: Sequence[str], controllers: Sequence[str] = MAIN,
                   seed: int = 0, evaluator: Evaluator | None = None, cycles: int = 1,
                   tuning: TuningSettings | None = DEFAULT_TUNING, gains: Gains | None = None,
                   sole: SoleCompliance | None = DEFAULT_SOLE, physics_dt: float | None = None,
                   run_dir: str | Path | None = None, resume: bool = False,
                   progress: ProgressCallback | None = None,
                   time_limit: float | None = None, state: str = "estimate",
                   reseat_every: int | None = None) -> dict:
    """Tune (unless ``gains`` are given or ``tuning`` is None: class defaults), then run every
    cell on seeds ``seed .. seed + trials - 1``. Returns the gains, the tuning record, the
    cell summaries keyed ``"controller@scenario"`` and every trial's result. With
    ``run_dir`` both studies are recorded there (``tuning/``, ``cells/``) and ``resume``
    continues them. ``physics_dt`` None: the climbs' default step
    (:func:`~clamber.quadruped.sim.rates.climb_step`); ``state``:
    the controllers run on the estimate or (an ablation) the simulator's true state;
    ``reseat_every``: the gait's re-seating (None: its default for ``cycles``)."""
    for sc in scenarios:
        if sc not in SCENARIOS:
            raise ConfigError(f"unknown scenario {sc!r}; scenarios are {', '.join(SCENARIOS)}")
    if trials < 1:
        raise ConfigError(f"trials must be >= 1, got {trials}")
    if set(range(seed, seed + trials)) & set(tuning.seeds if tuning else ()):
        raise ConfigError("evaluation seeds overlap the tuning seeds")
    run_dir = None if run_dir is None else Path(run_dir)
    common = {"sole": sole, "physics_dt": physics_dt, "time_limit": time_limit,
              "state": state, "reseat_every": reseat_every}
    cells = [(sc, c) for sc in scenarios for c in controllers]
    n_cells = len(cells) * trials
    n_tune = 0 if gains is not None or tuning is None else \
        len(MAIN) * tuning.budget * len(tuning.seeds) * len(tuning.scenarios)
    record = {}
    if gains is None:
        gains = {}
        if tuning is not None:
            tuned = run_tuning(tuning, evaluator, 1, run_dir, resume,
                               _shifted(progress, 0, n_cells), **common)
            gains = {c: t.best.gains for c, t in tuned.items()}
            record = {c: t.to_dict() for c, t in tuned.items()}
    results = run_cells(cells, list(range(seed, seed + trials)), gains, evaluator, cycles,
                        run_dir, resume, _shifted(progress, n_tune, n_tune), **common)
    return {"gains": {c: dict(g) for c, g in gains.items()}, "tuning": record,
            "cells": {f"{c}@{sc}": summarize_cell(rs) for (sc, c), rs in results.items()},
            "trials": [r for rs in results.values() for r in rs]}
