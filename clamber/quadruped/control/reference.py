"""What a gait asks of a controller for one control cycle: the :class:`MotionReference`.

It lives apart from the controllers so that gaits (which produce references) and controllers
(which track them) depend on it and not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from clamber.exceptions import ConfigError
from clamber.quadruped.control.wbc_problem import check_load
from clamber.quadruped.model.robot import LEG_NAMES


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
    """

    body_pose: pin.SE3
    body_twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    body_acceleration: np.ndarray = field(default_factory=lambda: np.zeros(6))
    load: dict[str, float] = field(default_factory=lambda: dict.fromkeys(LEG_NAMES, 1.0))
    foot_targets: dict[str, pin.SE3] = field(default_factory=dict)
    stance_attitudes: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("body_twist", "body_acceleration"):
            a = np.asarray(getattr(self, name), dtype=float)
            if a.shape != (6,) or not np.all(np.isfinite(a)):
                raise ConfigError(f"{name} must be 6 finite numbers, got {a}")
            setattr(self, name, a)
        if not isinstance(self.body_pose, pin.SE3) or not np.all(
                np.isfinite(self.body_pose.homogeneous)):
            raise ConfigError("body_pose must be a finite pinocchio.SE3")
        self.load_array = check_load(self.load)
        self.stance = _stance(self.load_array)
        unknown = (set(self.foot_targets) | set(self.stance_attitudes)) - set(LEG_NAMES)
        if unknown:
            raise ConfigError(f"unknown legs {sorted(unknown)}; legs are {', '.join(LEG_NAMES)}")

    @classmethod
    def trusted(cls, body_pose: pin.SE3, body_twist: np.ndarray,
                body_acceleration: np.ndarray, load: dict[str, float],
                foot_targets: dict[str, pin.SE3],
                stance_attitudes: dict[str, np.ndarray] | None = None,
                factors: tuple[tuple[float, ...], tuple[str, ...]] | None = None
                ) -> MotionReference:
        """A reference built by a gait from its own (finite, in-range) numbers, without the
        checks of the constructor. ``factors`` may give the load factors in ``LEG_NAMES``
        order and the stance legs as the gait knows them (what would be derived from
        ``load``: the same numbers, without deriving them)."""
        r = object.__new__(cls)
        r.body_pose, r.body_twist, r.body_acceleration = body_pose, body_twist, body_acceleration
        r.load, r.foot_targets = load, foot_targets
        r.stance_attitudes = {} if stance_attitudes is None else stance_attitudes
        if factors is not None:
            r.load_array, r.stance = np.array(factors[0]), factors[1]
            return r
        values = [load.get(leg, 0.0) for leg in LEG_NAMES]
        r.load_array = np.array(values)
        r.stance = tuple(leg for leg, x in zip(LEG_NAMES, values, strict=True) if x > 0)
        return r

    def with_body_pose(self, body_pose: pin.SE3) -> MotionReference:
        """This reference with another body pose (the rest shared, not copied)."""
        r = object.__new__(MotionReference)
        r.__dict__.update(self.__dict__)
        r.body_pose = body_pose
        return r


def _stance(load: np.ndarray) -> tuple[str, ...]:
    """Legs with a positive load factor: the attached ones."""
    return tuple(leg for leg, x in zip(LEG_NAMES, load, strict=True) if x > 0)
