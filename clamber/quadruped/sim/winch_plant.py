"""The gripper's winch, tendons and phalanges as a plant for the winch controller.

Past the natural angle the attachment tendons take up their slack (3.5 rad, the paper's
redundancy), then tension builds: against ``engaged_stiffness`` if the spines caught the
rock, else only against the sliding phalanges' ``slip_stiffness``, so the torque never
reaches the controller's band (how a failed grasp shows). The other way the detachment
tendons pull against ``detach_stiffness``. The current is the torque over the torque
constant plus noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber import _validate as check
from clamber.attachment.winch import WinchSettings


@dataclass(frozen=True)
class WinchPlantParameters:
    """Servo ``speed`` [rad/s], tendon ``slack`` [rad of winch], stiffnesses [N m/rad] of the
    engaged chain, of sliding phalanges and of the detachment tendons, current noise [A]."""

    speed: float = 6.0
    slack: float = 3.5
    engaged_stiffness: float = 0.5
    slip_stiffness: float = 0.02
    detach_stiffness: float = 0.4
    current_noise: float = 0.01

    def __post_init__(self) -> None:
        check.numeric_fields(self, "winch plant", strict=True,
                             names=("speed", "slack", "engaged_stiffness", "slip_stiffness",
                                    "detach_stiffness"))
        check.non_negative("winch plant", "current_noise", self.current_noise)


class WinchPlant:
    """One gripper's winch; ``engaged`` says whether its spines have caught the rock."""

    def __init__(self, winch: WinchSettings, params: WinchPlantParameters | None = None,
                 rng: np.random.Generator | None = None) -> None:
        self.winch, self.p = winch, params or WinchPlantParameters()
        self.rng = rng or np.random.default_rng(0)
        self.angle = winch.natural_angle
        self.engaged = False

    def torque(self) -> float:
        """Winch torque [N m]: positive pulling the attachment tendons."""
        p, x = self.p, self.angle - self.winch.natural_angle
        if x > p.slack:
            k = p.engaged_stiffness if self.engaged else p.slip_stiffness
            return k * (x - p.slack)
        if x < -p.slack:
            return p.detach_stiffness * (x + p.slack)
        return 0.0

    def step(self, goal: float, dt: float) -> float:
        """Move toward ``goal`` [rad] for ``dt`` [s]; the measured current [A]."""
        d = float(np.clip(goal - self.angle, -self.p.speed * dt, self.p.speed * dt))
        self.angle += d
        noise = self.rng.normal(0.0, self.p.current_noise) if self.p.current_noise else 0.0
        return self.torque() / self.winch.torque_constant + noise
