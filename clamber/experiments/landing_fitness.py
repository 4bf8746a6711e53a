"""A candidate's expected climbing speed in the calibrated simulator.

One jump per trial: the speed times the ready-landing rate. Several jumps per trial: the
speed times the mean fraction of the climb's jumps landed ready before its first
failure (a robot that falls at jump k has climbed k - 1 jumps' height in the time the
whole climb was given, falls included). The second is what separates trajectories whose
first jump lands but whose later ones do not (docs/results/jumper_codesign.md). With
``score="climbs"`` a climb counts only if it lands every jump: the speed times the
fraction of climbs completed (a fall loses the whole climb, as it would a robot that has
to be carried back up). That score prefers designs that fail rarely over designs that
fail late. ``score="measured"`` replaces the planned speed of ``"climbs"`` by the climbing
speed measured in the simulator (height over time of every ready jump, waits for the
catches included; capped at the planned speed, so the racing bound below stays exact): the
planned speed does not see the time a late catch costs.

**Racing.** Given a fitness to beat (the co-design passes the best of its finished
generations), the trials stop as soon as the candidate *cannot* reach it: after ``k`` of
``n`` trials of ``J`` jumps with ``S`` ready jumps so far, no outcome of the remaining
trials gives more than ``speed * (S + (n - k) J) / (n J)``. The bound is exact (not a
confidence bound), so a candidate whose full evaluation would reach the threshold is never
stopped. A stopped candidate scores the same estimator on the trials it ran,
``speed * S / (k J)``, which is at most that bound, so it still ranks below the threshold;
at least ``min_trials`` run so that this estimate exists. Climbs that succeed cost ten
jumps each, failures one or two, so the saving is largest on candidates that land often
but not often enough.

A pure function of the solution and the arguments (the trials' seeds derive from
``seed``; the threshold comes from finished generations only), so every evaluator and
worker count returns the same number. The trials run in the calling process: the
co-design already spreads candidates over the workers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.record import TrialOutcome
from clamber.experiments.robustness import robustness_study
from clamber.experiments.statistics import wilson_interval
from clamber.experiments.study import Study
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.solution import TrajectorySolution

#: Trials a raced candidate runs at least before it may be stopped (its score is the
#: estimate from the trials it ran).
MIN_RACE_TRIALS = 5


#: What a landing trial contributes to the fitness: its jumps landed ready before its
#: first failure, or only whether it completed every jump.
SCORES = ("jumps", "climbs", "measured")


def fitness_upper_bound(speed: float, ready_jumps: int, done: int, trials: int,
                        jumps: int, score: str = "jumps", successes: int = 0) -> float:
    """The largest fitness [m/s] ``trials`` climbs can reach once ``done`` of them landed
    ``ready_jumps`` jumps ready (``successes`` of them every jump): every remaining climb
    lands all its jumps."""
    if score in ("climbs", "measured"):
        return speed * (successes + trials - done) / trials
    return speed * (ready_jumps + (trials - done) * jumps) / (trials * jumps)


@dataclass(frozen=True)
class RaceTally:
    """What the landing trials run so far add up to."""

    done: int
    """Trials run [-]."""
    first_ready: int
    """Trials whose first jump landed ready [-]."""
    success: int
    """Trials that landed every jump ready [-]."""
    ready_jumps: int
    """Jumps landed ready before each trial's first failure, summed [-]."""
    raced: bool
    """True when the trials stopped before the last because the threshold was out of reach."""
    climbed_m: float = 0.0
    """Height gained by the ready jumps, summed [m]."""
    climb_time_s: float = 0.0
    """Duration of the ready jumps, summed (waits included) [s]."""

    @property
    def climb_speed(self) -> float:
        """Height over time of the ready jumps [m/s]; NaN if none landed."""
        return self.climbed_m / self.climb_time_s if self.climb_time_s > 0 else math.nan


def tally_fitness(speed: float, tally: RaceTally, jumps: int, score: str = "jumps") -> float:
    """The fitness [m/s] of the trials a tally counted (see the module docstring)."""
    if score == "climbs":
        return speed * tally.success / tally.done
    if score == "measured":
        if not tally.success:
            return 0.0
        return min(speed, tally.climb_speed) * tally.success / tally.done
    return speed * tally.ready_jumps / (tally.done * jumps)


def race(outcomes: Iterable[TrialOutcome], speed: float, trials: int, jumps: int,
         beat: float | None = None, min_trials: int = MIN_RACE_TRIALS,
         score: str = "jumps") -> RaceTally:
    """Consume ``outcomes`` (lazily, at most ``trials``) until they are all in, or, with
    ``beat`` [m/s], until at least ``min_trials`` are in and the fitness of all ``trials``
    (``score``: see :func:`tally_fitness`) can no longer reach ``beat``."""
    first_ready = success = ready_jumps = done = 0
    climbed = climb_time = 0.0
    for m in outcomes:
        done += 1
        first_ready += bool(m.metrics.get("first_ready"))
        success += bool(m.success)
        ready_jumps += int(m.metrics.get("ready_jumps", 0))
        climbed += float(m.metrics.get("climbed_m", 0.0))
        climb_time += float(m.metrics.get("climb_time_s", 0.0))
        if done == trials:
            break
        if (beat is not None and done >= min_trials
                and fitness_upper_bound(speed, ready_jumps, done, trials, jumps, score,
                                        success) < beat):
            return RaceTally(done, first_ready, success, ready_jumps, True, climbed,
                             climb_time)
    return RaceTally(done, first_ready, success, ready_jumps, False, climbed, climb_time)


def landing_study(sol: TrajectorySolution, trials: int, controller: str = "closed-loop",
                  seed: int = 0, jumps: int = 1, rear_spar: bool = False,
                  tol_scale: float = 1.0) -> Study:
    """The seeded climbs :func:`landing_fitness` plays: robots drawn from the calibrated
    tolerances times ``tol_scale`` (the scaling of ``robustness --tol-scale``), in the
    calibrated simulator with ``controller`` (and a rear spar if ``rear_spar``)."""
    changes = {"pivot": FootPivot().with_rear_spar()} if rear_spar else {}
    return robustness_study(sol, trials, seed, jumps,
                            calibrated_config(controller=controller, **changes),
                            calibrated_tolerances(tol_scale))


def landing_fitness(sol: TrajectorySolution, trials: int, controller: str = "closed-loop",
                    seed: int = 0, jumps: int = 1, beat: float | None = None,
                    min_trials: int = MIN_RACE_TRIALS,
                    score: str = "jumps", rear_spar: bool = False,
                    tol_scale: float = 1.0) -> dict[str, float]:
    """Ready rate (first jump), climb success, the expected speed [m/s] and the fitness
    [m/s] (``score``, see :func:`tally_fitness`) of ``trials`` seeded trials of ``jumps``
    jumps in the calibrated simulator.

    With ``beat`` [m/s] the trials stop once the expected speed cannot reach it (after at
    least ``min_trials``); the rates are then over the trials run (``landing_trials_run``)
    and ``raced`` is true. ``rear_spar`` plays the climbs with a spar on the rear foot too
    (:meth:`~clamber.jumper.sim.gripper.FootPivot.with_rear_spar`). ``tol_scale`` multiplies
    the calibrated tolerances the robots are drawn from [-] (margin as a design target).
    """
    study = landing_study(sol, trials, controller, seed, jumps, rear_spar, tol_scale)
    speed = sol.speed if sol.status.success else math.nan
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, not {score!r}")
    tally = race((study.trial(t) for t in study.tasks()), speed, trials, jumps, beat,
                 min_trials, score)
    ready = wilson_interval(tally.first_ready, tally.done)
    fraction = tally.ready_jumps / (tally.done * jumps)
    return {"ready_rate": ready.rate, "ready_low": ready.low, "ready_high": ready.high,
            "climb_success_rate": tally.success / tally.done,
            "ready_jump_fraction": fraction, "expected_speed_mps": speed * fraction,
            # 0 when no jump landed ready (a record holds no NaN)
            "climb_speed_mps": tally.climb_speed if tally.climb_time_s > 0 else 0.0,
            "rear_spar": rear_spar, "tol_scale": tol_scale,
            "landing_fitness_mps": tally_fitness(speed, tally, jumps, score),
            "landing_score": score,
            "landing_trials": trials, "landing_jumps": jumps,
            "landing_trials_run": tally.done, "raced": tally.raced,
            "fitness_bound_mps": fitness_upper_bound(speed, tally.ready_jumps,
                                                            tally.done, trials, jumps, score,
                                                            tally.success)}
