"""The trotting gait as a reference generator.

Trotting (paper, walking tests): diagonal pairs (LF, RR) and (RF, LR) alternate with a cycle
of ``period`` and a duty factor ``duty``; every foot advances ``step`` per cycle and lifts
``height`` in swing, so the body moves at ``step / period`` (0.15 m / 0.7 s = 0.21 m/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.gaits.profiles import smooth_trapezoid
from clamber.quadruped.model.robot import Marcbot, leg_index


@dataclass(frozen=True)
class TrotGaitSettings:
    """Trotting gait: cycle ``period`` [s], ``duty`` factor, ``step`` per cycle [m], swing
    ``height`` [m] (the paper's 0.7 s, 0.6, 150 mm, 80 mm); ``body_height`` [m] and
    ``nominal`` mid-stance feet (u, y) [m] in {B}, taller and wider than the climbing stance
    so the knee stays off its fold limit. A swing moves forward on a
    :func:`smooth_trapezoid` of ``swing_ramp`` and rises and falls on one each half, turning
    the foot about joint 2; ``cycles`` cycles follow ``start_time`` [s] of standing.
    """

    period: float = 0.7
    duty: float = 0.6
    step: float = 0.15
    height: float = 0.08
    body_height: float = 0.22
    nominal: dict[str, tuple[float, float]] = field(default_factory=lambda: {
        "LF": (0.15, 0.30), "LR": (-0.15, 0.30), "RF": (0.15, -0.30), "RR": (-0.15, -0.30)})
    swing_ramp: float = 0.15
    cycles: int = 20
    start_time: float = 0.5

    def __post_init__(self) -> None:
        if not 0.5 <= self.duty < 1.0:
            raise ConfigError(f"trot duty must lie in [0.5, 1), got {self.duty}")
        check.numeric_fields(self, "trot", strict=True,
                             names=("period", "step", "height", "body_height"))
        check.non_negative("trot", "start_time", self.start_time)
        check.integer("trot", "cycles", self.cycles, low=1)
        if not 0.0 < self.swing_ramp <= 0.5:
            raise ConfigError(f"trot swing_ramp must lie in (0, 0.5], got {self.swing_ramp}")

    @property
    def speed(self) -> float:
        """Mean body speed [m/s]."""
        return self.step / self.period

    @property
    def duration(self) -> float:
        return self.start_time + self.cycles * self.period


#: Phase offsets of the diagonal pairs.
TROT_OFFSETS = {"LF": 0.0, "RR": 0.0, "RF": 0.5, "LR": 0.5}


class TrotGait:
    """Trotting reference: body and world foot poses as functions of time, heading along x;
    leg phase ``psi = (t - start) / period + offset``, in stance while ``psi mod 1 < duty``.
    """

    def __init__(self, params: TrotGaitSettings | None = None, ground_z: float = 0.0,
                 robot: Marcbot | None = None) -> None:
        self.p = params or TrotGaitSettings()
        self.ground_z = ground_z
        self.robot = robot or Marcbot()

    def body_x(self, t: float) -> float:
        return self.p.speed * max(0.0, t - self.p.start_time)

    def phase(self, t: float, leg: str) -> tuple[bool, float, int]:
        """``(stance, progress in [0, 1) of that stance or swing, cycle number)``."""
        p = self.p
        psi = max(0.0, t - p.start_time) / p.period + TROT_OFFSETS[leg]
        k, frac = int(math.floor(psi)), psi - math.floor(psi)
        if t < p.start_time or frac < p.duty:
            return True, frac / p.duty, k
        return False, (frac - p.duty) / (1 - p.duty), k

    def _touchdown_x(self, leg: str, k: int) -> float:
        """World x of ``leg``'s foot during the stance of cycle ``k`` (the nominal spot for a
        stance that began before the start)."""
        p = self.p
        if k - TROT_OFFSETS[leg] <= 0:
            return p.nominal[leg][0]
        t_mid = p.start_time + (k - TROT_OFFSETS[leg] + p.duty / 2) * p.period
        return self.p.speed * max(0.0, t_mid - p.start_time) + p.nominal[leg][0]

    def lift(self, t: float, leg: str) -> float:
        """Height of ``leg``'s foot target above the ground over ``height``, in [0, 1]."""
        stance, s, _ = self.phase(t, leg)
        if stance:
            return 0.0
        r = self.p.swing_ramp
        return smooth_trapezoid(2 * s, r) if s <= 0.5 else smooth_trapezoid(2 * (1 - s), r)

    def foot_pose(self, t: float, leg: str) -> pin.SE3:
        """World pose of ``leg``'s gripper target: the sole's contact point [m] and its
        orientation (z up and x along the leg's mount yaw when on the ground)."""
        p = self.p
        i = leg_index(leg)
        stance, s, k = self.phase(t, leg)
        rotation = pin.utils.rotate("z", self.robot.mount_yaw[i])
        if t < p.start_time:
            x = p.nominal[leg][0]
        elif stance:
            x = self._touchdown_x(leg, k)
        else:
            x0, x1 = self._touchdown_x(leg, k), self._touchdown_x(leg, k + 1)
            x = x0 + smooth_trapezoid(s, p.swing_ramp) * (x1 - x0)
        ground = np.array([x, p.nominal[leg][1], self.ground_z])
        rise = p.height * self.lift(t, leg)
        if rise == 0.0:
            return pin.SE3(rotation, ground)
        # Turn the grounded foot about the (horizontal) joint-2 axis to raise it by ``rise``.
        body = self.body(t)
        hip = body + self.robot.hip_position(i)
        radial = ground[:2] - hip[:2]
        u = radial / np.linalg.norm(radial)
        pivot = hip + self.robot.leg.hip * np.array([u[0], u[1], 0.0])
        out = float(np.linalg.norm(ground[:2] - pivot[:2]))
        drop = float(pivot[2] - ground[2])
        angle = _arc_angle(out, drop, rise)
        turn = pin.AngleAxis(-angle, np.array([-u[1], u[0], 0.0])).matrix()
        return pin.SE3(turn @ rotation, pivot + turn @ (ground - pivot))

    def foot(self, t: float, leg: str) -> np.ndarray:
        """World position of ``leg``'s foot target [m]."""
        return self.foot_pose(t, leg).translation

    def body(self, t: float) -> np.ndarray:
        """World position of the body origin target [m]."""
        return np.array([self.body_x(t), 0.0, self.ground_z + self.p.body_height])


def _arc_angle(out: float, drop: float, rise: float) -> float:
    """Smaller root ``a`` [rad] of ``out sin a + drop (1 - cos a) = rise``: the turn about a
    horizontal axis raising a point ``out`` [m] from it and ``drop`` [m] below by ``rise``."""
    radius = math.hypot(out, drop)
    if rise > radius + drop:
        raise ConfigError(f"a {rise:.3f} m lift is out of reach of the joint-2 arc")
    return math.atan2(drop, out) + math.asin((rise - drop) / radius)
