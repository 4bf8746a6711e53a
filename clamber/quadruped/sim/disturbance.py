"""Disturbances of a climb: a push on the body or a payload dropped onto it.

A disturbance is data (frozen, hashable) so that a trial stays a pure function of its task;
it starts a set time after the gait's first release (three grippers hold the robot):

* a **push**: a constant force on the body for ``duration`` [s], along the wall normal out
  of the wall (pull-off), down the slope, or sideways;
* a **payload**: a mass added to the body at once and kept (a dropped-in load).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError

#: Directions of a push in the wall frame (u up the slope, y left, n out of the wall).
PUSH_DIRECTIONS = {"out": np.array([0.0, 0.0, 1.0]), "down": np.array([-1.0, 0.0, 0.0]),
                   "side": np.array([0.0, 1.0, 0.0])}


@dataclass(frozen=True)
class Disturbance:
    """A push [N] or payload [kg] starting ``delay`` [s] after the first release.

    ``kind`` is "push" or "payload"; ``magnitude`` the force [N] or mass [kg];
    ``duration`` [s] of a push (a payload stays); ``direction`` a key of
    ``PUSH_DIRECTIONS``.
    """

    kind: str
    magnitude: float
    delay: float = 1.0
    duration: float = 0.5
    direction: str = "out"

    def __post_init__(self) -> None:
        if self.kind not in ("push", "payload"):
            raise ConfigError(f"disturbance kind must be 'push' or 'payload', got {self.kind!r}")
        if self.direction not in PUSH_DIRECTIONS:
            raise ConfigError(f"push direction must be one of {', '.join(PUSH_DIRECTIONS)}, "
                              f"got {self.direction!r}")
        check.numeric_fields(self, "disturbance", names=("magnitude", "delay", "duration"))


class DisturbanceDriver:
    """Applies a :class:`Disturbance` to a running simulation (body ``body_id``).

    Call :meth:`update` every control cycle with the time [s] since the first release (None
    before it) and the wall rotation; it sets ``xfrc_applied`` or the body mass.
    """

    def __init__(self, disturbance: Disturbance | None, model, data, body_id: int) -> None:
        self.d, self.model, self.data, self.body = disturbance, model, data, body_id
        self.applied = False

    def update(self, since_release: float | None, wall_rotation: np.ndarray) -> None:
        d = self.d
        if d is None or since_release is None or since_release < d.delay:
            return
        if d.kind == "payload":
            if not self.applied:
                self.model.body_mass[self.body] += d.magnitude
                self.applied = True
            return
        on = since_release < d.delay + d.duration
        force = wall_rotation @ PUSH_DIRECTIONS[d.direction] * d.magnitude if on else 0.0
        self.data.xfrc_applied[self.body, :3] = force
        self.applied = True

