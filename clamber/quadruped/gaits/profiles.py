"""Time-scaling profiles the gaits move along: a cubic and a smoothed trapezoid."""

from __future__ import annotations

import math

from clamber.exceptions import ConfigError


def cubic(tau: float) -> tuple[float, float, float]:
    """Cubic ``s = 3 tau^2 - 2 tau^3`` on [0, 1] and its first two derivatives in tau."""
    t = min(max(tau, 0.0), 1.0)
    inside = 0.0 < tau < 1.0
    return t * t * (3 - 2 * t), 6 * t * (1 - t) if inside else 0.0, (6 - 12 * t) if inside else 0.0


def smooth_trapezoid(tau: float, ramp: float) -> float:
    """Position ``s`` in [0, 1] at ``tau`` in [0, 1] of a move whose speed ramps on a
    half-cosine over the first and last ``ramp`` of the time and is constant between.

    Peak speed ``1 / (1 - ramp)`` times the mean (cubic: 1.5), acceleration continuous and
    at most ``pi / (2 ramp (1 - ramp))`` [1/tau^2].
    """
    if not 0.0 < ramp <= 0.5:
        raise ConfigError(f"ramp must lie in (0, 0.5], got {ramp}")
    t = min(max(tau, 0.0), 1.0)
    if t > 0.5:
        return 1.0 - smooth_trapezoid(1.0 - t, ramp)
    peak = 1.0 / (1.0 - ramp)
    if t < ramp:
        return peak * (t / 2 - ramp / (2 * math.pi) * math.sin(math.pi * t / ramp))
    return peak * (ramp / 2 + t - ramp)
