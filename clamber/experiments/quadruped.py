"""The quadruped's studies: seeded climbs and trots, the controller comparison, summaries.

Each trial is :func:`clamber.quadruped.trials.climb.run_climb` or ``run_trot`` for one
condition (a :class:`ClimbSettings` or :class:`TrotSettings`) and one seed; every
controller sees the same seeds (the same walls, robots and IMU noise).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clamber.exceptions import ConfigError
from clamber.experiments.record import StudyTrial, TrialOutcome
from clamber.experiments.statistics import wilson_interval
from clamber.experiments.study import (
    ProgressCallback,
    Study,
    TrialTask,
    failure_counts,
    group_trials,
    run_study,
)
from clamber.failures import FailureReason
from clamber.parallel.base import Evaluator
from clamber.quadruped.gaits import TrotGaitSettings
from clamber.quadruped.trials.climb import ClimbSettings, run_climb
from clamber.quadruped.trials.rock_climb import RockClimbSettings, run_rock_climb
from clamber.quadruped.trials.trot import TrotSettings, run_trot

Settings = ClimbSettings | RockClimbSettings | TrotSettings


def quadruped_trial(task: TrialTask) -> TrialOutcome:
    """One seeded climb or trot (pure in the task)."""
    settings: Settings = task.condition
    run = run_climb if isinstance(settings, ClimbSettings) else \
        run_rock_climb if isinstance(settings, RockClimbSettings) else run_trot
    try:
        result = run(settings, task.seed)[0]
    except Exception as e:  # a defect: recorded with its reason, the study goes on
        return TrialOutcome(False, FailureReason.INTERNAL_ERROR,
                            f"{type(e).__name__}: {e}", {})
    return TrialOutcome(result.success, result.failure, result.reason, result.to_dict())


def quadruped_study(kind: str, conditions: Sequence[Settings], seeds: Sequence[int]) -> Study:
    """A study of ``conditions`` x ``seeds`` (the configuration a run folder records)."""
    seeds = tuple(int(s) for s in seeds)
    if any(s < 0 for s in seeds):
        raise ConfigError("seeds must be >= 0")
    config = {"conditions": [repr(c) for c in conditions], "seeds": list(seeds)}
    return Study(kind, config, tuple(conditions), seeds, quadruped_trial)


@dataclass(frozen=True)
class ConditionSummary:
    """One condition's settings and the summary of its trials."""

    settings: Settings
    summary: dict[str, Any]

    def labels(self) -> dict[str, Any]:
        """The condition's identifying fields (JSON-ready)."""
        s = self.settings
        if isinstance(s, RockClimbSettings):
            return {"controller": s.climb.controller, "incline_deg": s.climb.incline_deg,
                    "breakable": s.climb.breakable, "wall": "rock", "grasp": s.grasp,
                    "distance": s.distance,
                    "gripper_limits": "capacity" if s.capacity_limits else "box"}
        if isinstance(s, ClimbSettings):
            return {"controller": s.controller, "incline_deg": s.incline_deg,
                    "breakable": s.breakable, "scenario": s.scenario, "cycles": s.gait.cycles}
        return {"feet": s.feet, "terrain": s.terrain, "estimator": s.estimator,
                "contacts": s.contacts, "level_gain": s.level_gain}

    def to_dict(self) -> dict[str, Any]:
        return {**self.labels(), **self.summary}


def run_quadruped_study(kind: str, conditions: Sequence[Settings], seeds: Sequence[int],
                        evaluator: Evaluator | None = None,
                        run_dir: str | Path | None = None, resume: bool = False,
                        progress: ProgressCallback | None = None
                        ) -> tuple[list[ConditionSummary], list[StudyTrial]]:
    """Run (or resume) a study; per-condition summaries and every trial record."""
    study = quadruped_study(kind, conditions, seeds)
    trials = run_study(study, evaluator, run_dir, resume, progress)
    groups = group_trials(trials, len(study.conditions))
    return ([ConditionSummary(c, summarize(g)) for c, g in zip(study.conditions, groups,
                                                                 strict=True)], trials)


def _mean(values: list[Any]) -> float | None:
    v = [x for x in values if x is not None and math.isfinite(x)]
    return float(np.mean(v)) if v else None


def summarize(trials: Sequence[StudyTrial]) -> dict[str, Any]:
    """Success rate with its Wilson interval over the trials that started (a seed whose
    start stance could not be placed is counted in ``infeasible_starts``, not as a
    controller's failure) and metrics: tracking error and powers are means
    over successful trials (over all trials, up to their failure, when none succeeded), peak
    power the largest; the cost of transport only over successful trials; None for what
    was not measured."""
    if not trials:
        raise ConfigError("no trials to summarize")
    ok = [t for t in trials if t.success]
    pool = ok or list(trials)
    started = [t for t in trials if t.outcome.failure is not FailureReason.INFEASIBLE_START]
    iv = wilson_interval(len(ok), len(started)) if started else None

    def over(name: str, group: Sequence[StudyTrial] = pool) -> list[Any]:
        return [t.metrics.get(name) for t in group]

    peaks = [x for x in over("peak_power_w") if x is not None]
    loads = [x for x in over("peak_gripper_load", trials) if x is not None]
    return {**_rock_keys(trials), **_distance_keys(trials), **_retry_keys(trials),
        "trials": len(trials), "infeasible_starts": len(trials) - len(started),
        "successes": len(ok), "success_rate": iv.rate if iv else None,
        "success_interval": [iv.low, iv.high] if iv else None,
        "max_tracking_error_mm": _mean(over("max_tracking_error_mm")),
        "mean_power_w": _mean(over("mean_power_w")),
        "peak_power_w": max(peaks) if peaks else None,
        "cost_of_transport": _mean(over("cost_of_transport", ok)),
        "estimation_rms_mm": _mean(over("estimation_rms_mm")),
        "attitude_error_rms_deg": _mean(over("attitude_error_rms_deg")),
        "attitude_error_max_deg": _mean(over("attitude_error_max_deg")),
        "estimation_attitude_rms_deg": _mean(over("estimation_attitude_rms_deg")),
        "peak_gripper_load": float(np.median(loads)) if loads else None,
        **{name: _mean(over(name, trials)) for name in (
            "estimation_drift_m", "estimation_drift_percent", "contact_precision",
            "contact_recall", "estimation_nis", "estimation_nees")},
        "sim_time_s": float(sum(t.metrics.get("sim_time_s") or 0.0 for t in trials)),
        "wall_time_s": float(sum(t.metrics.get("wall_time_s") or 0.0 for t in trials)),
        "failures": failure_counts(trials),
        "verdict_reruns": sum(bool(t.metrics.get("verdict_rerun")) for t in trials),
    }


def _retry_keys(trials: Sequence[StudyTrial]) -> dict[str, Any]:
    """What a climb's gait did again or in parts, summed over the trials: re-seats tried
    again, flights back over a hold and body moves paused for a wound sole; nothing for
    trials that do not record them."""
    if not any("swing_retries" in t.metrics for t in trials):
        return {}
    return {name: int(sum(t.metrics.get(name) or 0 for t in trials))
            for name in ("reseat_retries", "swing_retries", "moves_paused")}


def _distances(trials: Sequence[StudyTrial]) -> list[float]:
    """Each trial's distance [m] moved, 0 for one that never started."""
    return [t.metrics.get("distance_m") or 0.0 for t in trials]


def _distance_keys(trials: Sequence[StudyTrial]) -> dict[str, Any]:
    """How far [m] the trials moved along their climb or walk (mean, median, largest, every
    trial; 0 for a trial that never started); nothing for trials that do not record it."""
    if not any("distance_m" in t.metrics for t in trials):
        return {}
    dist = _distances(trials)
    return {"distance_m": float(np.mean(dist)), "distance_median_m": float(np.median(dist)),
            "distance_max_m": float(np.max(dist)), "distances_m": [round(d, 3) for d in dist]}


def _rock_keys(trials: Sequence[StudyTrial]) -> dict[str, Any]:
    """A rock climb's extra summary: speed [m/s], grasps engaged over attempted (with the
    Wilson interval), the winch's tries and mean time per grasp and release [s], the swings
    placed again after a missed grasp, the re-seats the three other holds could not carry
    (skipped), pressed again and moved back over their holds, the body moves made in parts
    and the climbs set on the wall off the nominal start; nothing for other trials."""
    if not all("grasps" in t.metrics for t in trials):
        return {}

    def total(name: str) -> int:
        return int(sum(t.metrics.get(name) or 0 for t in trials))

    grasps, engaged = total("grasps"), total("grasps_engaged")
    iv = wilson_interval(engaged, grasps) if grasps else None
    releases = sum(t.metrics.get("steps_done") or 0 for t in trials)
    return {
        "speed_m_s": _mean([t.metrics.get("speed_m_s") for t in trials]),
        "grasp_success_rate": iv.rate if iv else None,
        "grasp_success_interval": [iv.low, iv.high] if iv else None,
        "grasps": grasps, "grasps_engaged": engaged, "winch_tries": total("winch_tries"),
        "grasp_time_per_grasp_s": (sum(t.metrics.get("grasp_time_s") or 0.0 for t in trials)
                                   / grasps if grasps else None),
        "release_time_per_release_s": (sum(t.metrics.get("release_time_s") or 0.0
                                           for t in trials) / releases if releases else None),
        "planned_steps": total("planned_steps"), "steps_done": releases,
        "replacements": total("replacements"),
        "reseats_skipped": total("reseats_skipped"), "reseat_retries": total("reseat_retries"),
        "moves_split": total("moves_split"), "pre_moves": total("pre_moves"),
        "holds_passed_over": total("holds_passed_over"),
        "swings_raised": total("swings_raised"), "early_releases": total("early_releases"),
        "reseats_centred": total("reseats_centred"),
        "starts_moved": sum(any(t.metrics.get("start_shift_m") or ()) for t in trials),
        **_climb_drift(trials),
        "failure_details": [{"seed": t.seed, "failure": t.outcome.failure.name.lower()
                             if t.outcome.failure else None,
                             "where": t.metrics.get("failure_phase"),
                             "distance_m": t.metrics.get("distance_m"),
                             "detail": t.outcome.detail} for t in trials if not t.success],
    }


def _climb_drift(trials: Sequence[StudyTrial]) -> dict[str, Any]:
    """Position drift of the estimates over the climbs: the anchor EKF's (run alongside,
    when it was) final error [m] and RMS [mm], means over the trials, and the final errors
    of it and of the controller's estimate as a share of the distance climbed, pooled
    (sum of errors over sum of distances, in %: short climbs do not dominate)."""
    up = float(sum(max(d, 0.0) for d in _distances(trials)))

    def pooled(name: str) -> float | None:
        x = [t.metrics.get(name) for t in trials]
        if up <= 1e-3 or any(v is None for v in x):
            return None
        return 100.0 * float(sum(x)) / up

    return {"anchor_drift_m": _mean([t.metrics.get("anchor_drift_m") for t in trials]),
            "anchor_rms_mm": _mean([t.metrics.get("anchor_rms_mm") for t in trials]),
            "anchor_drift_percent_pooled": pooled("anchor_drift_m"),
            "estimation_drift_percent_pooled": pooled("estimation_drift_m")}


def trot_conditions(terrains: Sequence[str], feet: Sequence[str] = ("gripper", "rubber"),
                    cycles: int = 20, estimator: str = "anchor", contacts: str = "torque",
                    level_gain: float = 0.0) -> list[TrotSettings]:
    """Trotting with each kind of feet on each terrain (the paper's Fig. 11), all with the
    same estimator, contact source and levelling gain."""
    return [TrotSettings(terrain=terrain, feet=f, gait=TrotGaitSettings(cycles=cycles),
                         estimator=estimator, contacts=contacts, level_gain=level_gain)
            for terrain in terrains for f in feet]
