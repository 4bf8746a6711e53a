"""A candidate's expected climbing speed in the calibrated simulator.

One jump per trial: the speed times the ready-landing rate. Several jumps per trial: the
speed times the mean fraction of the climb's jumps landed ready before its first
failure (a robot that falls at jump k has climbed k - 1 jumps' height in the time the
whole climb was given, falls included). The second is what separates trajectories whose
first jump lands but whose later ones do not (docs/landing.md).

A pure function of the solution and the arguments (the trials' seeds derive from
``seed``), so every evaluator and worker count returns the same number. The trials run
in the calling process: the co-design already spreads candidates over the workers.
"""

from __future__ import annotations

import math

from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.robustness import robustness
from clamber.jumper.solution import TrajectorySolution


def landing_fitness(sol: TrajectorySolution, trials: int, controller: str = "closed-loop",
                    seed: int = 0, jumps: int = 1) -> dict[str, float]:
    """Ready rate (first jump), climb success and the expected speed [m/s] of ``trials``
    seeded trials of ``jumps`` jumps in the calibrated simulator."""
    res = robustness(sol, trials, seed, jumps, calibrated_config(controller=controller),
                     calibrated_tolerances())
    ready = res.ready
    speed = sol.speed if sol.status.success else math.nan
    fraction = sum(int(t.metrics.get("ready_jumps", 0)) for t in res.trials) / (trials * jumps)
    return {"ready_rate": ready.rate, "ready_low": ready.low, "ready_high": ready.high,
            "climb_success_rate": res.landing.rate, "ready_jump_fraction": fraction,
            "expected_speed_mps": speed * fraction, "landing_trials": trials,
            "landing_jumps": jumps}
