"""What a gait asks of a controller for one control cycle: the :class:`MotionReference`
(apart from the controllers, so gaits and controllers depend on it, not on each other)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.compiled import kernel
from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import LEG_NAMES

_LEGS = frozenset(LEG_NAMES)


@kernel
def _all_finite(twist: np.ndarray, acceleration: np.ndarray, pose: np.ndarray) -> bool:
    """Whether every entry of the twist (6,), the acceleration (6,) and the homogeneous
    pose (4, 4) is finite."""
    for k in range(6):
        if not (math.isfinite(twist[k]) and math.isfinite(acceleration[k])):
            return False
    for i in range(4):
        for j in range(4):
            if not math.isfinite(pose[i, j]):
                return False
    return True


@dataclass
class MotionReference:
    """Desired body motion and leg phases for one control cycle.

    ``body_twist`` and ``body_acceleration``: ``[v, w]`` in the desired body frame [m/s,
    rad/s, m/s^2, rad/s^2]. ``load``: each leg's load factor (1 stance, 0 or left out swing,
    between: the pre-swing ramp). ``foot_targets``: world poses of swing grippers.
    Derived: ``load_array`` (4,) in ``LEG_NAMES`` order and ``stance``.
    """

    body_pose: pin.SE3
    body_twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    body_acceleration: np.ndarray = field(default_factory=lambda: np.zeros(6))
    load: dict[str, float] = field(default_factory=lambda: dict.fromkeys(LEG_NAMES, 1.0))
    foot_targets: dict[str, pin.SE3] = field(default_factory=dict)

    def __post_init__(self) -> None:
        twist = self.body_twist = np.asarray(self.body_twist, dtype=float)
        acc = self.body_acceleration = np.asarray(self.body_acceleration, dtype=float)
        if not isinstance(self.body_pose, pin.SE3):
            raise ConfigError("body_pose must be a pinocchio.SE3")
        if twist.shape != (6,) or acc.shape != (6,) or not _all_finite(
                twist, acc, self.body_pose.homogeneous):
            raise ConfigError(f"body_twist and body_acceleration must be 6 finite numbers and "
                              f"body_pose finite, got {twist}, {acc}, {self.body_pose}")
        load = self.load
        if not isinstance(load, dict):
            raise ConfigError(f"load must map legs to load factors, got {load!r}")
        if not (load.keys() <= _LEGS and self.foot_targets.keys() <= _LEGS):
            unknown = (set(load) | set(self.foot_targets)) - _LEGS
            raise ConfigError(f"unknown legs {sorted(unknown)}; legs are {', '.join(LEG_NAMES)}")
        values, stance = [], []
        for leg in LEG_NAMES:
            x = load.get(leg, 0.0)
            if not 0.0 <= x <= 1.0:  # a NaN fails too
                raise ConfigError(f"load factors must lie in [0, 1], got {load}")
            values.append(x)
            if x > 0.0:
                stance.append(leg)
        self.load_array = np.array(values)
        self.stance = tuple(stance)
