"""One gain-tuning procedure for every controller: a seeded random search on training seeds.

Each controller's gains (:data:`clamber.quadruped.control.variants.GAINS`, three per controller) are
multiples of its class defaults. The search draws ``budget - 1`` points ``u`` in
``[-1, 1]^3`` from one generator seeded by ``search_seed`` — the *same* points for every
controller — and tries the multipliers ``spread ** u`` (log-uniform in
``[1/spread, spread]``) plus the defaults, each on the same training scenarios and seeds
(seeds no evaluation uses). The cost of a candidate is its failure rate plus 0.01 per
millimetre of mean maximum body error (a tie-break among candidates that climb equally
often); the cheapest wins. Nothing in the procedure depends on which controller it tunes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from clamber.exceptions import ConfigError
from clamber.quadruped.control.variants import GAINS

#: Gains per controller (the search's dimension).
N_GAINS = 3
#: Training seeds: disjoint from the evaluation seeds (0, 1, 2, ...).
TRAIN_SEEDS = (1000, 1001)


@dataclass(frozen=True)
class TuningSettings:
    """The procedure's settings: ``budget`` candidates per controller (the defaults
    included), training ``seeds`` and ``scenarios``, the multipliers' ``spread`` and the
    search generator's seed."""

    budget: int = 6
    seeds: tuple[int, ...] = TRAIN_SEEDS
    scenarios: tuple[str, ...] = ("wall90",)
    spread: float = 3.0
    search_seed: int = 0

    def __post_init__(self) -> None:
        if self.budget < 1 or not self.seeds or not self.scenarios:
            raise ConfigError("tuning needs a budget >= 1, seeds and scenarios")
        if not self.spread > 1.0:
            raise ConfigError(f"tuning spread must be > 1, got {self.spread}")


@dataclass(frozen=True)
class Candidate:
    """One tried gain set: multipliers, cost and the trials' outcomes."""

    gains: tuple[tuple[str, float], ...]
    cost: float
    successes: int
    trials: int
    mean_error_mm: float


@dataclass(frozen=True)
class TuningResult:
    """The search of one controller: every candidate in the order tried, the best first
    among equals."""

    controller: str
    spec: TuningSettings
    candidates: tuple[Candidate, ...] = field(default_factory=tuple)

    @property
    def best(self) -> Candidate:
        return min(self.candidates, key=lambda c: c.cost)

    def to_dict(self) -> dict:
        return {"controller": self.controller, "best": dict(self.best.gains),
                "candidates": [{"gains": dict(c.gains), "cost": c.cost,
                                "successes": c.successes, "trials": c.trials,
                                "mean_error_mm": c.mean_error_mm} for c in self.candidates]}


def search_points(spec: TuningSettings) -> np.ndarray:
    """The unit points (budget, 3) every controller is tried at; row 0 is the defaults."""
    rng = np.random.default_rng(spec.search_seed)
    return np.vstack([np.zeros((1, N_GAINS)),
                      rng.uniform(-1.0, 1.0, (spec.budget - 1, N_GAINS))])


def candidate_gains(controller: str, spec: TuningSettings) -> list[tuple[tuple[str, float], ...]]:
    """Gain multipliers of each candidate of ``controller`` (a key of ``GAINS``)."""
    if controller not in GAINS:
        raise ConfigError(f"only {', '.join(GAINS)} are tuned, got {controller!r}")
    names = list(GAINS[controller])
    return [tuple((n, float(spec.spread ** u)) for n, u in zip(names, row, strict=True))
            for row in search_points(spec)]


def cost(successes: int, trials: int, mean_error_mm: float) -> float:
    """Failure rate plus 0.01 per millimetre of mean maximum body error."""
    return (trials - successes) / trials + 0.01 * mean_error_mm


#: ``evaluate(controller, gains, scenario, seeds) -> [(success, max_error_mm), ...]``.
Evaluator = Callable[[str, tuple[tuple[str, float], ...], str, Sequence[int]],
                     list[tuple[bool, float]]]


def tune(controller: str, spec: TuningSettings, evaluate: Evaluator) -> TuningResult:
    """Run the search for one controller with the trial evaluator ``evaluate``."""
    out = []
    for gains in candidate_gains(controller, spec):
        outcomes = [o for sc in spec.scenarios
                    for o in evaluate(controller, gains, sc, list(spec.seeds))]
        ok = sum(s for s, _ in outcomes)
        err = float(np.mean([e for _, e in outcomes]))
        out.append(Candidate(gains, cost(ok, len(outcomes), err), ok, len(outcomes), err))
    return TuningResult(controller, spec, tuple(out))

