"""Parametrized MARCBot-class quadruped climber: dimensions, masses, servos and joint limits.

Body frame {B}: x forward, y left, z away from the surface. Each hip sits on a corner,
turned by ``mount_yaw`` so its x points outward. Joint 1 turns about the body normal, joints
2-4 about the leg's y (positive toward the surface), joint 5 about the ankle's z (parallel
to joint 1 when ``q2 + q3 + q4 = 0``). The gripper frame sits at the sole's contact point, z
along joint 5, x radial. Defaults meet the paper's figures (0.2 m body, 0.39 m leg
extension, 4.8 kg, over 70 % in the limbs); the split among links is a plausible choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clamber.exceptions import ConfigError

#: Leg order everywhere (the order Pinocchio and MuJoCo both give the joints).
LEG_NAMES = ("LF", "LR", "RF", "RR")
JOINTS_PER_LEG = 5
N_LEGS = len(LEG_NAMES)
N_JOINTS = N_LEGS * JOINTS_PER_LEG
#: Earth's gravity [m/s^2], and as the world's vector (z up).
GRAVITY = 9.81
GRAVITY_VECTOR = np.array([0.0, 0.0, -GRAVITY])


@dataclass(frozen=True)
class ServoParameters:
    """A Dynamixel-class servo: usable ``torque_limit`` [N m], ``current_per_torque``
    [A/(N m)] (stall current over stall torque at 12 V) and ``velocity_limit`` [rad/s]."""

    name: str
    torque_limit: float
    current_per_torque: float
    velocity_limit: float

    @property
    def current_limit(self) -> float:
        """Largest current [A] the controller may command."""
        return self.torque_limit * self.current_per_torque


#: Servos with data-sheet-like figures at 12 V: usable torque limit [N m] below stall,
#: stall current over stall torque [A/(N m)], speed limit [rad/s].
SERVOS = {
    "XH540-W270": ServoParameters("XH540-W270", 8.0, 4.4 / 10.6, 4.4),
    "XM430-W350": ServoParameters("XM430-W350", 3.0, 2.3 / 4.1, 4.8),
    "XL430-W250": ServoParameters("XL430-W250", 1.2, 1.4 / 1.5, 6.0),
}


@dataclass(frozen=True)
class Link:
    """A link modelled as a solid cuboid: mass [kg], size (x, y, z) [m], COM offset [m]."""

    mass: float
    size: tuple[float, float, float]
    com: tuple[float, float, float]

    def inertia(self) -> np.ndarray:
        """Rotational inertia about the COM [kg m^2], axes of the link frame (3x3)."""
        a, b, c = self.size
        m = self.mass / 12.0
        return np.diag([m * (b * b + c * c), m * (a * a + c * c), m * (a * a + b * b)])


@dataclass(frozen=True)
class LegGeometry:
    """Link lengths of one leg [m] (see the module docstring for the chain)."""

    hip: float = 0.05
    thigh: float = 0.14
    calf: float = 0.17
    ankle_forward: float = 0.03
    ankle_down: float = 0.04
    gripper_height: float = 0.06


@dataclass(frozen=True)
class Marcbot:
    """Description of the whole robot; every model file and controller is generated from it."""

    body_size: tuple[float, float, float] = (0.20, 0.12, 0.05)
    body_mass: float = 1.2
    leg: LegGeometry = field(default_factory=LegGeometry)
    link_masses: tuple[float, ...] = (0.12, 0.14, 0.14, 0.10, 0.40)
    #: Servo model per joint 1..5 (larger near the body).
    servos: tuple[str, ...] = ("XM430-W350", "XH540-W270", "XH540-W270", "XM430-W350",
                               "XL430-W250")
    #: Joint position limits per joint 1..5 [rad].
    q_min: tuple[float, ...] = (-1.2, -1.4, -0.4, -2.2, -2.6)
    q_max: tuple[float, ...] = (1.2, 1.2, 2.4, 1.4, 2.6)
    #: Yaw of each leg's mount about the body normal [rad], order of ``LEG_NAMES``.
    mount_yaw: tuple[float, ...] = (math.pi / 4, 3 * math.pi / 4, -math.pi / 4,
                                    -3 * math.pi / 4)
    #: Default (stance) joint angles 1..5 [rad]; q2 + q3 + q4 = 0 keeps joint 5 normal.
    q_default: tuple[float, ...] = (0.0, -0.3, 1.0, -0.7, 0.0)

    def __post_init__(self) -> None:
        if len(self.link_masses) != JOINTS_PER_LEG or min(self.link_masses) <= 0:
            raise ConfigError(f"link_masses needs 5 positive masses, got {self.link_masses}")
        if self.body_mass <= 0 or min(self.body_size) <= 0:
            raise ConfigError("body_mass and body_size must be positive")
        for name in self.servos:
            if name not in SERVOS:
                raise ConfigError(f"unknown servo {name!r}; known: {sorted(SERVOS)}")
        for attr in ("servos", "q_min", "q_max", "q_default"):
            if len(getattr(self, attr)) != JOINTS_PER_LEG:
                raise ConfigError(f"{attr} needs {JOINTS_PER_LEG} entries per leg")
        if len(self.mount_yaw) != N_LEGS:
            raise ConfigError(f"mount_yaw needs {N_LEGS} entries ({', '.join(LEG_NAMES)})")
        lo, hi, q0 = map(np.asarray, (self.q_min, self.q_max, self.q_default))
        if np.any(lo >= hi) or np.any(q0 < lo) or np.any(q0 > hi):
            raise ConfigError("joint limits need q_min < q_default < q_max per joint")

    @property
    def total_mass(self) -> float:
        """Mass of the whole robot [kg]."""
        return self.body_mass + N_LEGS * sum(self.link_masses)

    def hip_position(self, leg: int) -> np.ndarray:
        """Joint-1 position of leg ``leg`` in {B} [m]: the body's corners."""
        sx = 1.0 if LEG_NAMES[leg][1] == "F" else -1.0
        sy = 1.0 if LEG_NAMES[leg][0] == "L" else -1.0
        return np.array([sx * self.body_size[0] / 2, sy * self.body_size[1] / 2, 0.0])

    def links(self) -> tuple[Link, ...]:
        """Hip, thigh, calf, ankle and gripper as cuboids in their joint frames."""
        g, m = self.leg, self.link_masses
        w = 0.04
        return (
            Link(m[0], (g.hip, w, w), (g.hip / 2, 0.0, 0.0)),
            Link(m[1], (g.thigh, w, w), (g.thigh / 2, 0.0, 0.0)),
            Link(m[2], (g.calf, w, 0.035), (g.calf / 2, 0.0, 0.0)),
            Link(m[3], (g.ankle_forward + 0.02, 0.035, g.ankle_down),
                 (g.ankle_forward / 2, 0.0, -g.ankle_down / 2)),
            Link(m[4], (0.07, 0.07, g.gripper_height), (0.0, 0.0, -g.gripper_height / 2)),
        )

    def body_link(self) -> Link:
        return Link(self.body_mass, self.body_size, (0.0, 0.0, 0.0))

    def servo_specs(self) -> tuple[ServoParameters, ...]:
        """Servo of each of the 20 joints, leg-major order."""
        return tuple(SERVOS[s] for _ in LEG_NAMES for s in self.servos)

    def joint_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper position limits of the 20 joints [rad]."""
        return np.tile(self.q_min, N_LEGS), np.tile(self.q_max, N_LEGS)

    def torque_limits(self) -> np.ndarray:
        """Usable torque of the 20 joints [N m]."""
        return np.array([s.torque_limit for s in self.servo_specs()])

    def current_per_torque(self) -> np.ndarray:
        """Torque constants of the 20 servos as current per torque [A/(N m)]."""
        return np.array([s.current_per_torque for s in self.servo_specs()])

    def current_limits(self) -> np.ndarray:
        """Largest current of the 20 servos [A]."""
        return np.array([s.current_limit for s in self.servo_specs()])

    def default_joint_angles(self) -> np.ndarray:
        """The default sprawling stance, 20 joint angles [rad]."""
        return np.tile(self.q_default, N_LEGS)


def leg_index(leg: str) -> int:
    """Index of a leg name in ``LEG_NAMES``; raises ConfigError for unknown names."""
    try:
        return LEG_NAMES.index(leg)
    except ValueError:
        raise ConfigError(f"unknown leg {leg!r}; legs are {', '.join(LEG_NAMES)}") from None
