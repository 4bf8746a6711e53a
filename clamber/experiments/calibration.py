"""Calibration of the landing simulator against the paper's 30-trial hardware experiments.

The hardware evidence is three counts on one robot (Section IV of the paper):

* the open-loop optimized jump: 12/30 front catches, 1/30 ready landings;
* the hand-tuned jump (longer phase 4, simpler hip motion): 25/30 with both grippers caught.

Here the optimized jump is clamber's default optimum of the nominal robot. The tuned jump
is the same optimization with the paper's two hand edits written as settings
(:data:`TUNED_CHANGES`) and, by default, one more property the hardware counts imply: its
free front foot clears the wall after take-off on a robot with a 7.5 % lighter shoulder
motor too (:func:`~clamber.jumper.robust.with_clearance_scenarios`). In the simulator a
front foot that only grazes the wall at take-off is knocked off its flight by the robot's
own manufacturing errors, and no setting of the calibrated parameters then lets more than
about 65 % of trials catch with the front gripper; the tuned robot caught with both
grippers 25 times in 30, so its foot did not graze. ``tuned="edits"`` keeps the two edits
alone (the earlier reproduction) for comparison.

Three simulator parameters are calibrated on a grid, the rest are fixed at stated
physical estimates:

* ``hook_timeconst`` [s]: compliance of a hooked gripper (spines in carpet loops, the
  foot's pivot). A stiff pin stops the robot in a millisecond spike that exceeds the
  spines' load cap and tears them out; hardware shows bounce and a brief positive normal
  force instead.
* ``tolerance_scale`` [-]: the half-widths of every manufacturing and timing
  perturbation (:class:`~clamber.jumper.sim.robustness.Tolerances`) times this factor.
* ``kd_scale`` [-]: the ESCs' derivative gain times this factor (underdamped tracking).

The score is the sum of squared binomial z-scores of the three rates; each grid point is
played on the same seeded trials (common random numbers), so the comparison between
points is not blurred by sampling. Neighbouring points score within sampling noise of the
best, so the calibration picks a region, not a point (docs/results/jumper_landing.md).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from clamber.exceptions import ConfigError
from clamber.experiments.robustness import robustness
from clamber.experiments.statistics import wilson_interval
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.sim.motor import EscGains
from clamber.jumper.sim.robustness import Tolerances
from clamber.jumper.sim.settings import SimulationSettings
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.base import Evaluator

#: The paper's hardware counts: (successes, trials).
HARDWARE = {
    "optimized_front_catch": (12, 30),
    "optimized_ready": (1, 30),
    "tuned_both_caught": (25, 30),
}
#: The paper's hand tuning as settings: phase 4 at least 120 ms (settling before the rear
#: catch) and a ten times stronger torque-rate penalty (fewer direction changes).
TUNED_CHANGES = {"phase_duration_min": (0.090, 0.045, 0.075, 0.120, 0.060),
                 "torque_rate_weight": 0.1}
#: How the tuned jump is reproduced: the paper's two edits alone, or with the take-off
#: clearance that its 25/30 front catches imply (see the module docstring).
TUNED_JUMPS = ("clearance", "edits")
#: The first, coarse grid [s], [-], [-] (60 trials per point): its best point, 10 ms, 1.25
#: and 1.0, missed the ready count in its 200-trial check (15/200 against 1/30).
COARSE_GRID = {"hook_timeconst": (0.004, 0.006, 0.01, 0.015),
               "tolerance_scale": (0.75, 1.0, 1.25),
               "kd_scale": (0.25, 0.5, 1.0)}
#: The grid searched by default, placed around the coarse grid's best point (100 trials).
DEFAULT_GRID = {"hook_timeconst": (0.008, 0.01, 0.012),
                "tolerance_scale": (1.1, 1.25, 1.4),
                "kd_scale": (0.5, 0.75, 1.0)}
#: Named searches: grid and trials per point.
STAGES = {"coarse": (COARSE_GRID, 60), "fine": (DEFAULT_GRID, 100)}
PARAMETERS = ("hook_timeconst", "tolerance_scale", "kd_scale")
#: The calibrated values (``clamber jumper calibrate``: the fine stage's best point, then
#: 200 trials on fresh seeds with all three hardware counts inside their intervals).
CALIBRATED = {"hook_timeconst": 0.01, "tolerance_scale": 1.25, "kd_scale": 0.75}


def point_config(point: dict, **changes) -> SimulationSettings:
    """The simulator at one calibration point (``hook_timeconst``, ``kd_scale``)."""
    gains = EscGains(kp=EscGains().kp, kd=EscGains().kd * point["kd_scale"])
    return SimulationSettings(hook_timeconst=point["hook_timeconst"], gains=gains, **changes)


def calibrated_config(**changes) -> SimulationSettings:
    """The simulator at the calibrated point (other fields from ``changes``)."""
    return point_config(CALIBRATED, **changes)


def calibrated_tolerances(factor: float = 1.0) -> Tolerances:
    """Default tolerances times the calibrated scale (times ``factor``)."""
    return Tolerances().scaled(CALIBRATED["tolerance_scale"] * factor)


def hardware_trajectories(morphology: Morphology | None = None,
                          settings: OptimizationSettings | None = None,
                          tuned: str = "clearance") -> dict[str, TrajectorySolution]:
    """The optimized and the tuned jump of ``morphology`` (fine grid, default settings).

    ``tuned`` is one of :data:`TUNED_JUMPS`: ``"edits"`` applies only the paper's two
    hand edits (:data:`TUNED_CHANGES`); ``"clearance"`` (default) also keeps the free
    front foot off the wall after take-off on a robot with a lighter shoulder motor
    (:func:`~clamber.jumper.robust.with_clearance_scenarios`, reference backend, minutes).
    """
    from clamber.jumper.robust import TUNED_SCENARIOS, with_clearance_scenarios
    from clamber.jumper.solve import optimize

    if tuned not in TUNED_JUMPS:
        raise ConfigError(f"tuned jump {tuned!r} unknown; allowed: {list(TUNED_JUMPS)}")
    morph = morphology or Morphology.nominal()
    base = settings or OptimizationSettings()
    tuned_settings = base.with_(**TUNED_CHANGES)
    out = {"optimized": optimize(morph, base), "tuned": optimize(morph, tuned_settings)}
    if tuned == "clearance" and out["tuned"].status.success:
        out["tuned"] = with_clearance_scenarios(morph, out["tuned"], tuned_settings,
                                                scenarios=TUNED_SCENARIOS)
        if out["tuned"].history[-1].get("scenarios") == "failed":
            raise ConfigError("the tuned jump's take-off clearance solve did not converge")
    for name, sol in out.items():
        if not sol.status.success:
            raise ConfigError(f"the {name} jump did not solve: {sol.return_status}")
    return out


def rates(trajectories: dict[str, TrajectorySolution], config: SimulationSettings,
          tolerances: Tolerances, trials: int, seed: int = 0,
          evaluator: Evaluator | None = None) -> dict:
    """The three simulated counts the hardware measured, on the same seeds for both jumps."""
    opt = robustness(trajectories["optimized"], trials, seed, 1, config, tolerances, evaluator)
    tun = robustness(trajectories["tuned"], trials, seed, 1, config, tolerances, evaluator)
    return {
        "optimized_front_catch": opt.count("first_caught").successes,
        "optimized_ready": opt.ready.successes,
        "tuned_both_caught": tun.both_caught.successes,
        "trials": trials,
    }


def score(counts: dict) -> float:
    """Sum of squared z-scores of simulated against hardware rates (binomial errors of both)."""
    n = counts["trials"]
    total = 0.0
    for key, (k_hw, n_hw) in HARDWARE.items():
        p_hw, p_sim = k_hw / n_hw, counts[key] / n
        pooled = (k_hw + counts[key]) / (n_hw + n)
        var = max(pooled * (1 - pooled), 1e-3) * (1 / n_hw + 1 / n)
        total += (p_sim - p_hw) ** 2 / var
    return total


def inside_intervals(counts: dict) -> dict[str, bool]:
    """Whether each hardware rate lies in the 95 % Wilson interval of the simulated count."""
    out = {}
    for key, (k_hw, n_hw) in HARDWARE.items():
        iv = wilson_interval(counts[key], counts["trials"])
        out[key] = bool(iv.low <= k_hw / n_hw <= iv.high)
    return out


@dataclass
class CalibrationResult:
    """Every grid point's counts and score, the best point and its check."""

    grid: list[dict]
    best: dict
    check: dict
    wall_time: float  # [s]

    def summary(self) -> dict:
        return {"grid": self.grid, "best": self.best, "check": self.check,
                "hardware": {k: list(v) for k, v in HARDWARE.items()},
                "wall_time_s": self.wall_time}


def calibrate(trajectories: dict[str, TrajectorySolution], grid: dict | None = None,
              trials: int = 100, check_trials: int = 200, seed: int = 0,
              evaluator: Evaluator | None = None) -> CalibrationResult:
    """Grid search of the two calibrated parameters, then a ``check_trials`` rerun of the best."""
    grid = grid or DEFAULT_GRID
    t0 = time.perf_counter()
    rows = []
    for point in _grid_points(grid):
        counts = rates(trajectories, point_config(point),
                       Tolerances().scaled(point["tolerance_scale"]), trials, seed, evaluator)
        rows.append({**point, **counts, "score": score(counts)})
    best = min(rows, key=lambda r: r["score"])
    point = {k: best[k] for k in PARAMETERS}
    counts = rates(trajectories, point_config(point), Tolerances().scaled(point["tolerance_scale"]),
                   check_trials, seed + 1, evaluator)
    check = {**point, **counts, "score": score(counts),
             "inside_wilson_95": inside_intervals(counts)}
    return CalibrationResult(grid=rows, best=best, check=check,
                             wall_time=time.perf_counter() - t0)


def _grid_points(grid: dict) -> list[dict]:
    unknown = set(grid) - set(PARAMETERS)
    if unknown:
        raise ConfigError(f"calibration grid keys {sorted(unknown)} unknown; allowed: {PARAMETERS}")
    points = [{}]
    for name in PARAMETERS:
        values = grid.get(name, (CALIBRATED[name],))
        points = [{**p, name: v} for p in points for v in values]
    return points


def sensitivity(trajectories: dict[str, TrajectorySolution], trials: int = 100, seed: int = 0,
                evaluator: Evaluator | None = None) -> list[dict]:
    """Rates with one parameter moved off the calibrated point at a time (same seeds)."""
    base_cfg, tol = calibrated_config(), calibrated_tolerances()
    cases = [("calibrated", base_cfg, tol)]
    tc = CALIBRATED["hook_timeconst"]
    for f in (0.5, 2.0):
        cases.append((f"hook_timeconst x{f}", replace(base_cfg, hook_timeconst=tc * f), tol))
        cases.append((f"tolerance_scale x{f}", base_cfg, calibrated_tolerances(f)))
        g = base_cfg.gains
        cases.append((f"kd_scale x{f}", replace(base_cfg, gains=replace(g, kd=g.kd * f)), tol))
        pv = base_cfg.pivot
        cases.append((f"pivot spring x{f} (fixed)",
                      replace(base_cfg, pivot=replace(pv, spring=pv.spring * f)), tol))
        cases.append((f"capture angle x{f} (fixed)",
                      replace(base_cfg, pivot=replace(pv, capture_angle=pv.capture_angle * f)),
                      tol))
    out = []
    for name, cfg, tl in cases:
        counts = rates(trajectories, cfg, tl, trials, seed, evaluator)
        out.append({"case": name, **{k: counts[k] / trials for k in HARDWARE},
                    "trials": trials})
    if not math.isfinite(out[0]["optimized_ready"]):
        raise ConfigError("sensitivity produced no rates")
    return out
