"""A candidate's expected climbing speed: its speed times its simulated ready-landing rate.

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
                    seed: int = 0) -> dict[str, float]:
    """Ready rate of ``trials`` one-jump trials in the calibrated simulator and the
    expected speed ``speed x ready rate`` [m/s]."""
    res = robustness(sol, trials, seed, 1, calibrated_config(controller=controller),
                     calibrated_tolerances())
    ready = res.ready
    speed = sol.speed if sol.status.success else math.nan
    return {"ready_rate": ready.rate, "ready_low": ready.low, "ready_high": ready.high,
            "expected_speed_mps": speed * ready.rate, "landing_trials": trials}
