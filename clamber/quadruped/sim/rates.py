"""The physics step of a climb: the largest step up to 10 ms that divides the control period.

A step that does not divide the period would silently change the control rate. 10 ms is
the coarsest step at which climbs converge: against 4 ms and 1 ms every one-cycle trial ends
the same way, tracking, power and peak gripper load within a few percent
(docs/results/quadruped_physics.md); at 20 ms the pushed climb breaks a gripper. A climb
whose peak gauge comes within :data:`VERDICT_MARGIN` of 1 is climbed again at
:data:`FINE_CLIMB_PHYSICS_DT`, and that climb is its result; long climbs start there.
"""

from __future__ import annotations

import math

from clamber.exceptions import ConfigError

#: The largest physics step of a climb [s] (the convergence study above).
MAX_CLIMB_PHYSICS_DT = 0.01


def physics_step(control_rate: float, max_dt: float = MAX_CLIMB_PHYSICS_DT) -> float:
    """The largest step [s] no longer than ``max_dt`` that divides the control period
    ``1 / control_rate`` into whole steps (10 ms at 50 Hz, 1 ms at 1 kHz)."""
    if not (math.isfinite(control_rate) and control_rate > 0):
        raise ConfigError(f"control rate must be a positive number of Hz, got {control_rate}")
    period = 1.0 / control_rate
    return period / math.ceil(period / max_dt - 1e-9)


def check_physics_step(control_rate: float, dt: float) -> float:
    """``dt`` if it is a positive step dividing the control period into whole steps, else
    a :class:`ConfigError` that names the steps that would."""
    period = 1.0 / control_rate
    if not (math.isfinite(dt) and 0 < dt <= period * (1 + 1e-9)):
        raise ConfigError(f"physics step must be > 0 and at most the control period "
                          f"({1000 * period:g} ms at {control_rate:g} Hz), got {dt}")
    n = period / dt
    if abs(n - round(n)) > 1e-6 * n:
        fits = ", ".join(f"{1000 * period / k:.4g}" for k in range(1, 6))
        raise ConfigError(f"physics step {1000 * dt:g} ms does not divide the control period "
                          f"{1000 * period:g} ms ({control_rate:g} Hz) into whole steps; "
                          f"steps that do [ms]: {fits}, ...")
    return dt


#: The step a marginal verdict is rerun at [s]: 4 ms keeps a gripper's peak gauge within
#: 1.7 % of 1 ms on every comparison scenario (docs/results/quadruped_physics.md).
FINE_CLIMB_PHYSICS_DT = 0.004
#: How close to 1 a climb's peak gripper gauge must come for a rerun at the fine step (peaks
#: at 10 ms are within 3.3 % of 4 ms over one cycle; 1 of 360 five-cycle verdicts is decided
#: by the step outside this margin).
VERDICT_MARGIN = 0.05


def marginal_verdict(peak_gauge: float, margin: float = VERDICT_MARGIN) -> bool:
    """Whether a climb whose largest gripper gauge was ``peak_gauge`` came close enough to a
    gripper's boundary that the coarse step may have decided its outcome."""
    return math.isfinite(peak_gauge) and abs(peak_gauge - 1.0) <= margin + 1e-12


#: Gait cycles from which a breakable climb starts at the fine step rather than climbing
#: twice: a 4 ms cycle costs 1.6 times a 10 ms one and most such climbs were rerun (207 of
#: 360 five-cycle, 61 of 360 one-cycle comparison trials; docs/results/quadruped_speed.md).
FINE_FROM_CYCLES = 3


def climb_step(control_rate: float, cycles: int, settled: bool = True) -> float:
    """Default step [s] of a climb of ``cycles`` cycles: the fine step for a long one whose
    verdict it would settle anyway (``settled``: breakable, reruns on), else the coarse one."""
    long = settled and cycles >= FINE_FROM_CYCLES
    return physics_step(control_rate, FINE_CLIMB_PHYSICS_DT if long else MAX_CLIMB_PHYSICS_DT)
