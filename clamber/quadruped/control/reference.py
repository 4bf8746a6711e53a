"""What a gait asks of a controller for one control cycle: the :class:`MotionReference`.

It lives apart from the controllers so that gaits (which produce references) and controllers
(which track them) depend on it and not on each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import LEG_NAMES

_LEGS = frozenset(LEG_NAMES)
_F64 = np.dtype(np.float64)


def _finite_vector(name: str, x, n: int) -> np.ndarray:
    """``x`` as a float array of ``n`` finite numbers (a float array of that shape is taken
    as it is, its finiteness proved by a finite sum where it can be)."""
    a = x if type(x) is np.ndarray and x.dtype == _F64 else np.asarray(x, dtype=float)
    if a.shape != (n,) or not (math.isfinite(np.add.reduce(a)) or np.isfinite(a).all()):
        raise ConfigError(f"{name} must be {n} finite numbers, got {a}")
    return a


@dataclass
class MotionReference:
    """Desired body motion and leg phases for one control cycle.

    ``body_twist`` and ``body_acceleration`` are ``[v, w]`` in the desired body frame
    [m/s, rad/s, m/s^2, rad/s^2]. ``load`` maps each leg to its load factor (1 stance,
    0 swing, in between the pre-swing ramp); legs left out are swinging. ``foot_targets``
    holds world poses for swing grippers; stance grippers stay where they are.
    ``stance_attitudes`` optionally holds world attitudes (3x3 rotations) for stance
    grippers: they then stay where they are but turn back to that attitude as far as the
    leg can (a gripper on a compliant sole keeping the attitude it was welded at).
    Derived on construction: ``load_array`` (4,), the factors in ``LEG_NAMES`` order, and
    ``stance``, the legs of positive factor.
    """

    body_pose: pin.SE3
    body_twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    body_acceleration: np.ndarray = field(default_factory=lambda: np.zeros(6))
    load: dict[str, float] = field(default_factory=lambda: dict.fromkeys(LEG_NAMES, 1.0))
    foot_targets: dict[str, pin.SE3] = field(default_factory=dict)
    stance_attitudes: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.body_twist = _finite_vector("body_twist", self.body_twist, 6)
        self.body_acceleration = _finite_vector("body_acceleration", self.body_acceleration, 6)
        if not isinstance(self.body_pose, pin.SE3) or not math.isfinite(
                np.add.reduce(self.body_pose.homogeneous, axis=None)):
            raise ConfigError("body_pose must be a finite pinocchio.SE3")
        load = self.load
        if not isinstance(load, dict):
            raise ConfigError(f"load must map legs to load factors, got {load!r}")
        if not (load.keys() <= _LEGS and self.foot_targets.keys() <= _LEGS
                and self.stance_attitudes.keys() <= _LEGS):
            unknown = (set(load) | set(self.foot_targets) | set(self.stance_attitudes)) - _LEGS
            raise ConfigError(f"unknown legs {sorted(unknown)}; legs are {', '.join(LEG_NAMES)}")
        values = [load.get(leg, 0.0) for leg in LEG_NAMES]
        a, b, c, d = values
        # A NaN fails both comparisons.
        if not (0.0 <= a <= 1.0 and 0.0 <= b <= 1.0 and 0.0 <= c <= 1.0 and 0.0 <= d <= 1.0):
            raise ConfigError(f"load factors must lie in [0, 1], got {load}")
        self.load_array = np.array(values)
        self.stance = tuple(leg for leg, x in zip(LEG_NAMES, values, strict=True) if x > 0)
