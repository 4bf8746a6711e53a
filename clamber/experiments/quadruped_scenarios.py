"""The named climbing scenarios of the controller comparison: walls, overhangs, a diagonal
climb, pushes and payloads.

A scenario is data: the incline, the heading of the climb on the wall (a diagonal climb
turns every gripper frame about the wall normal, so gravity loads both shear axes and the
moment about the normal at once), the rocks (how far a hold's top may tilt from the wall
normal) and an optional :class:`~clamber.quadruped.sim.disturbance.Disturbance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clamber.exceptions import ConfigError
from clamber.quadruped.sim.disturbance import Disturbance
from clamber.quadruped.sim.world import RockSpec
from clamber.quadruped.trials.climb import ClimbSettings


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


def scenario_settings(name: str, **kwargs: Any) -> ClimbSettings:
    """:class:`~clamber.quadruped.trials.climb.ClimbSettings` of scenario ``name``; keyword
    arguments (controller, gains, gait, ...) are passed on."""
    sc = scenario(name)
    return ClimbSettings(incline_deg=sc.incline_deg, heading_deg=sc.heading_deg, rocks=sc.rocks,
                         disturbance=sc.disturbance, scenario=sc.name, **kwargs)
