"""The perturbed robots of a robustness study: manufacturing and timing tolerances.

One trial's robot (:class:`Tolerances`: masses, link lengths, ESC gains, motor constants,
initial state, reference timing) is a pure function of its seed; the study that plays
them is :mod:`clamber.experiments.robustness`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.jumper.sim.motor import EscGains
from clamber.jumper.sim.settings import Realization, SimulationSettings
from clamber.jumper.solution import TrajectorySolution


@dataclass(frozen=True)
class Tolerances:
    """Half-widths of the uniform perturbations of one trial (units in brackets)."""

    mass_rel: float = 0.05
    """Every point and link mass scaled by 1 + U(-a, a) [-]."""
    length_abs: float = 0.001
    """Every link length and link centre offset shifted by U(-a, a) [m]."""
    gain_rel: float = 0.2
    """Each joint's ESC gains kp, kd scaled by 1 + U(-a, a) [-]."""
    motor_rel: float = 0.1
    """Each motor's k_t (= k_e) and R scaled independently by 1 + U(-a, a) [-]."""
    initial_angle: float = 0.02
    """Joint angles and base angle offset by U(-a, a) at the start, then the stance is
    closed again with the front gripper on the wall [rad]."""
    stance_offset: float = 0.002
    """Front gripper hooked U(-a, a) above its optimized height at the start [m]."""
    initial_speed: float = 0.2
    """Joint speeds offset by U(-a, a) at the start [rad/s]."""
    start_delay: float = 0.002
    """Reference stream starts U(0, a) late [s]."""
    jitter: float = 0.001
    """Each 500 Hz reference packet arrives U(0, a) late [s]."""

    def scaled(self, factor: float) -> Tolerances:
        """Every half-width times ``factor`` (rates capped below 1)."""
        check.non_negative("tolerances", "scale", factor)
        values = {k: v * factor for k, v in self.__dict__.items()}
        for k in ("mass_rel", "gain_rel", "motor_rel"):
            values[k] = min(values[k], 0.9)
        return Tolerances(**values)

    def __post_init__(self) -> None:
        check.numeric_fields(self, "tolerances")
        for name in ("mass_rel", "gain_rel", "motor_rel"):
            if getattr(self, name) >= 1:
                raise ConfigError(f"tolerances.{name} = {getattr(self, name)}: must be < 1")


def sample_realization(sol: TrajectorySolution, config: SimulationSettings, tol: Tolerances,
                       seed: int) -> Realization:
    """One perturbed robot, a pure function of ``seed``."""
    rng = np.random.default_rng(seed)
    p = sol.morphology.parameters().copy()

    def u(a: float, n: int) -> np.ndarray:
        return rng.uniform(-a, a, n)

    lengths = p[0:4] + u(tol.length_abs, 4)
    p[0:4] = np.maximum(lengths, 1e-3)
    p[4:9] *= 1 + u(tol.mass_rel, 5)
    p[9:13] *= 1 + u(tol.mass_rel, 4)
    p[13:17] = np.clip(p[13:17] + np.where(p[9:13] > 0, u(tol.length_abs, 4), 0.0), 0.0, p[0:4])
    motors = tuple(config.motor.scaled(*(1 + u(tol.motor_rel, 2))) for _ in range(3))
    gains = tuple(EscGains(kp=config.gains.kp * (1 + g[0]), kd=config.gains.kd * (1 + g[1]))
                  for g in (u(tol.gain_rel, 2) for _ in range(3)))
    q0 = np.zeros(6)
    q0[2:6] = u(tol.initial_angle, 4)
    qd0 = np.zeros(6)
    qd0[3:6] = u(tol.initial_speed, 3)
    return Realization(parameters=p, motors=motors, gains=gains, q0_offset=q0, qd0_offset=qd0,
                       front_offset=float(rng.uniform(-tol.stance_offset, tol.stance_offset)),
                       start_delay=float(rng.uniform(0, tol.start_delay)), jitter=tol.jitter,
                       seed=int(rng.integers(2**31)))
