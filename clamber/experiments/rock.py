"""Hold selection on generated rock walls: the checked planner against the nearest-hold rule.

Each trial is one planned climb (:func:`clamber.quadruped.planning.rollout.plan_climb`) of one
rule on the wall of one seed; every rule climbs the same walls from the same start, with the
same map noise. A trial succeeds when the body climbs the planned distance.
"""

from __future__ import annotations

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
from clamber.quadruped.planning.rollout import PlanClimbSettings, StopReason, plan_climb

#: How each way a planned climb stops is recorded.
STOP_FAILURES = {
    StopReason.START: FailureReason.INFEASIBLE_START,
    StopReason.NO_HOLD: FailureReason.NO_HOLD,
    StopReason.NOT_ENGAGED: FailureReason.GRASP_MISSED,
    StopReason.FELL: FailureReason.FELL,
    StopReason.STUCK: FailureReason.GRIPPER_STUCK,
}


def hold_selection_trial(task: TrialTask) -> TrialOutcome:
    """One planned climb (pure in the task)."""
    r = plan_climb(task.condition, task.seed)
    metrics = {"rule": r.rule, "incline_deg": r.incline_deg, "distance_m": r.distance_m,
               "steps": r.steps, "grasp_attempts": r.attempts, "grasps_engaged": r.engaged,
               "grasp_success_rate": r.grasp_success_rate if r.attempts else None,
               "candidates_checked": r.checked, "winch_tries": r.winch_tries,
               "grasp_time_s": r.grasp_time_s, "release_time_s": r.release_time_s}
    return TrialOutcome(r.success, STOP_FAILURES.get(r.stop), r.stop.value, metrics)


def hold_selection_study(conditions: Sequence[PlanClimbSettings], seeds: Sequence[int]
                         ) -> Study:
    """A study of ``conditions`` x ``seeds`` (the configuration a run folder records)."""
    seeds = tuple(int(s) for s in seeds)
    if any(s < 0 for s in seeds):
        raise ConfigError("seeds must be >= 0")
    config = {"conditions": [repr(c) for c in conditions], "seeds": list(seeds)}
    return Study("hold-selection", config, tuple(conditions), seeds, hold_selection_trial)


def summarize_holds(trials: Sequence[StudyTrial]) -> dict[str, Any]:
    """Success rate (climbed the distance) and the share of grasps that engaged (pooled over
    the trials' attempts), each with its Wilson interval; mean and median distance [m]; with
    the winch, its tries and the winch time per engaged grasp [s] (failed tries included)."""
    if not trials:
        raise ConfigError("no trials to summarize")
    ok = sum(t.success for t in trials)
    attempts = sum(int(t.metrics.get("grasp_attempts") or 0) for t in trials)
    engaged = sum(int(t.metrics.get("grasps_engaged") or 0) for t in trials)
    iv = wilson_interval(ok, len(trials))
    g = wilson_interval(engaged, attempts) if attempts else None
    d = np.array([float(t.metrics.get("distance_m") or 0.0) for t in trials])
    tries = sum(int(t.metrics.get("winch_tries") or 0) for t in trials)
    grasp_time = sum(float(t.metrics.get("grasp_time_s") or 0.0) for t in trials)
    return {"trials": len(trials), "successes": ok, "success_rate": iv.rate,
            "success_interval": [iv.low, iv.high], "grasp_attempts": attempts,
            "grasps_engaged": engaged, "grasp_success_rate": g.rate if g else None,
            "grasp_success_interval": [g.low, g.high] if g else None,
            "distance_m": float(d.mean()), "distance_median_m": float(np.median(d)),
            "winch_tries": tries,
            "mean_grasp_time_s": grasp_time / engaged if tries and engaged else None,
            "failures": failure_counts(trials)}


@dataclass(frozen=True)
class HoldSummary:
    """One condition (rule, incline) and the summary of its trials."""

    settings: PlanClimbSettings
    summary: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.settings.rule, "incline_deg": self.settings.incline_deg,
                "distance_goal_m": self.settings.distance, **self.summary}


def run_hold_selection_study(conditions: Sequence[PlanClimbSettings], seeds: Sequence[int],
                             evaluator: Evaluator | None = None,
                             run_dir: str | Path | None = None, resume: bool = False,
                             progress: ProgressCallback | None = None
                             ) -> tuple[list[HoldSummary], list[StudyTrial]]:
    """Run (or resume) the study; per-condition summaries and every trial record."""
    study = hold_selection_study(conditions, seeds)
    trials = run_study(study, evaluator, run_dir, resume, progress)
    groups = group_trials(trials, len(study.conditions))
    return ([HoldSummary(c, summarize_holds(g))
             for c, g in zip(study.conditions, groups, strict=True)], trials)


def holds_table(results: Sequence[HoldSummary]) -> str:
    """The comparison as a Markdown table."""
    lines = ["| rule | incline [deg] | climbs done | success (95 % CI) | grasps engaged "
             "| mean distance [m] | failures |", "|---|---|---|---|---|---|---|"]
    for r in results:
        s = r.summary
        lo, hi = s["success_interval"]
        g = s["grasp_success_rate"]
        grasp = "-" if g is None else f"{s['grasps_engaged']}/{s['grasp_attempts']} ({g:.0%})"
        fails = ", ".join(f"{k} {v}" for k, v in sorted(s["failures"].items())) or "-"
        lines.append(f"| {r.settings.rule} | {r.settings.incline_deg:g} | "
                     f"{s['successes']}/{s['trials']} | {s['success_rate']:.0%} "
                     f"({lo:.0%}-{hi:.0%}) | {grasp} | {s['distance_m']:.2f} | {fails} |")
    return "\n".join(lines)
