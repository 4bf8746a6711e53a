"""The quadruped's named options: one vocabulary for every trial, study and command.

Each option is a :class:`enum.StrEnum`, so a member equals its string (``Estimator.ANCHOR ==
"anchor"``) and settings read from the command line or a run record are parsed once, in the
settings' constructor, by :meth:`Option.parse`.
"""

from __future__ import annotations

import enum
from typing import Any, Self

from clamber.exceptions import ConfigError


class Option(enum.StrEnum):
    """A named choice; :meth:`parse` turns a string into a member or says what is allowed."""

    @classmethod
    def parse(cls, value: Any, owner: str, name: str) -> Self:
        """``value`` as a member of this option; a ConfigError naming ``owner.name`` and
        the allowed values otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise ConfigError(f"{owner}.{name} = {value!r}: must be one of "
                              f"{', '.join(m.value for m in cls)}") from None

    @classmethod
    def values(cls) -> tuple[str, ...]:
        """The members' strings, for ``argparse`` choices."""
        return tuple(m.value for m in cls)


class Estimator(Option):
    """What the controller sees as the body state: the leg-odometry EKF (IMU strapdown
    corrected by the stance feet's kinematics), or the EKF that also keeps the attached
    feet's anchors in its state."""

    ODOMETRY = "odometry"
    ANCHOR = "anchor"


class ContactSource(Option):
    """Where the estimator's foot contacts come from: the servo torques, the torques fused
    with the gait schedule, the schedule alone, or the simulator's truth (for ablation)."""

    TORQUE = "torque"
    FUSED = "fused"
    SCHEDULE = "schedule"
    TRUTH = "truth"


class StateSource(Option):
    """Whether the controller runs on the estimate or on the simulator's true state (for
    ablation)."""

    ESTIMATE = "estimate"
    TRUE = "true"


class GraspModel(Option):
    """How a gripper grasps and releases: through the winch's state machine and tendon
    plant, or at once at the gait's fixed phases."""

    WINCH = "winch"
    FIXED = "fixed"


class MapFrame(Option):
    """Where the robot puts each swing's depth map: relative to the body as estimated, or
    in the true world frame (for ablation)."""

    BODY = "body"
    WORLD = "world"
