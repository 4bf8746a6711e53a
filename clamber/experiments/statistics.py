"""Rates with confidence intervals (the statistics every study reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scipy.stats import binomtest

from clamber import _validate as check
from clamber.exceptions import ConfigError


@dataclass(frozen=True)
class Interval:
    """A success rate with its two-sided confidence interval (Wilson score)."""

    rate: float
    low: float
    high: float
    successes: int
    trials: int
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the interval as numbers, never as a string."""
        return {"rate": self.rate, "low": self.low, "high": self.high,
                "successes": self.successes, "trials": self.trials,
                "confidence": self.confidence}


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval of a binomial rate (sound at small ``trials`` and rates near
    0 or 1, unlike the normal approximation); SciPy's implementation."""
    check.integer("", "successes", successes)
    check.integer("", "trials", trials)
    if trials < 1 or not 0 <= successes <= trials:
        raise ConfigError(f"need 0 <= successes <= trials and trials >= 1; "
                          f"got {successes}/{trials}")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence = {confidence!r}: must lie in (0, 1)")
    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence,
                                                    method="wilson")
    p = successes / trials  # the clamps absorb rounding at 0 and 1
    return Interval(p, max(0.0, min(p, float(ci.low))), min(1.0, max(p, float(ci.high))),
                    successes, trials, confidence)
