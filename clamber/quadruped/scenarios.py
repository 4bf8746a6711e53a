"""Climbing scenarios of the controller comparison: walls, overhangs, tilted holds, disturbances.

A scenario is data (frozen, hashable) so that a trial stays a pure function of its task:
the incline, the heading of the climb on the wall (a diagonal climb turns every gripper
frame about the wall normal, so gravity loads both shear axes and the moment about the
normal at once), the rocks (how far a hold's top may tilt from the wall normal), and an
optional disturbance timed from the gait's first release (three grippers hold the robot):

* a **push**: a constant force on the body for ``duration`` [s], along the wall normal out
  of the wall (pull-off), down the slope, or sideways;
* a **payload**: a mass added to the body at once and kept (a dropped-in load).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.sim.world import RockSpec

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


@dataclass(frozen=True)
class Scenario:
    """A named climbing scenario: wall incline [deg], heading on the wall [deg], rocks,
    optional disturbance."""

    name: str
    incline_deg: float
    heading_deg: float = 0.0
    rocks: RockSpec = field(default_factory=RockSpec)
    disturbance: Disturbance | None = None


#: The comparison's scenarios, simple to hard.
SCENARIOS = {s.name: s for s in (
    Scenario("wall70", 70.0),
    Scenario("wall90", 90.0),
    Scenario("overhang115", 115.0),
    Scenario("diagonal90", 90.0, heading_deg=30.0),
    Scenario("push90", 90.0, disturbance=Disturbance("push", 40.0, delay=1.0, duration=0.5)),
    Scenario("payload90", 90.0, disturbance=Disturbance("payload", 2.0, delay=1.0)),
)}


def scenario(name: str) -> Scenario:
    """The named scenario (a key of ``SCENARIOS``)."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ConfigError(f"unknown scenario {name!r}; scenarios are "
                          f"{', '.join(SCENARIOS)}") from None


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

