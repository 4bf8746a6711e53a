"""Disturbances of a climb, as frozen data: a constant push on the body for ``duration`` [s]
(out of the wall, down the slope or sideways) or a payload added to the body and kept, both
starting a set time after the gait's first release."""

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
    """A ``"push"`` [N] or ``"payload"`` [kg] of ``magnitude`` starting ``delay`` [s] after
    the first release; a push lasts ``duration`` [s] along ``PUSH_DIRECTIONS[direction]``."""

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
    """Applies a :class:`Disturbance` to body ``body_id``: :meth:`update` every cycle with
    the time [s] since the first release (None before it) and the wall rotation."""

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

