"""Which of a few designs lands: each re-optimized with the robust options and played with
closed-loop catching in the calibrated simulator (seeded one-jump trials and climbs).

What ``make demo`` ends with: the co-design's fastest design is not the one that lands
(docs/results/jumper_landing.md), so the demo checks it against the nominal robot and
keeps the one with the larger expected speed (planned speed x fraction of climb jumps landed ready).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.robustness import RobustnessResult, robustness
from clamber.jumper.morphology import Morphology
from clamber.jumper.robust import robust_settings
from clamber.jumper.solution import TrajectorySolution
from clamber.jumper.solve import optimize
from clamber.parallel.base import Evaluator


@dataclass
class LandingCheck:
    """One design's robust optimum and its simulated landings."""

    name: str
    solution: TrajectorySolution
    one_jump: RobustnessResult | None
    climbs: RobustnessResult | None

    @property
    def expected_speed(self) -> float:
        """Planned speed [m/s] x the fraction of climb jumps landed ready (0 unsolved)."""
        if self.climbs is None or not self.solution.status.success:
            return 0.0
        n = len(self.climbs.trials) * self.climbs.jumps
        good = sum(int(t.metrics.get("ready_jumps", 0)) for t in self.climbs.trials)
        return self.solution.speed * good / n

    def summary(self) -> dict:
        out = {"design": self.name, "status": self.solution.status.value,
               "speed_mps": self.solution.speed if self.solution.status.success else math.nan,
               "expected_speed_mps": self.expected_speed}
        if self.one_jump is not None and self.climbs is not None:
            r = self.one_jump.ready
            out |= {"ready_rate": r.rate, "ready_interval": [r.low, r.high],
                    "climb_success_rate": self.climbs.landing.rate,
                    "climb_jumps": self.climbs.jumps, "trials": len(self.one_jump.trials),
                    "climb_speed_mps": self.climbs.climb_speed}
        return out


def check_landing(name: str, morphology: Morphology, trials: int = 30, jumps: int = 10,
                  guess: str | TrajectorySolution = "seed", seed: int = 0,
                  evaluator: Evaluator | None = None,
                  resolution: str = "fine") -> LandingCheck:
    """Robust optimum of ``morphology`` (on ``resolution``, from ``guess``) and ``trials``
    seeded closed-loop one-jump trials and ``jumps``-jump climbs of it."""
    sol = optimize(morphology, robust_settings(), resolution, guess)
    if not sol.status.success:
        return LandingCheck(name, sol, None, None)
    cfg, tol = calibrated_config(controller="closed-loop"), calibrated_tolerances()
    one = robustness(sol, trials, seed, 1, cfg, tol, evaluator)
    climbs = robustness(sol, trials, seed, jumps, cfg, tol, evaluator)
    return LandingCheck(name, sol, one, climbs)
