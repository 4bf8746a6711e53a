"""The landing normal: the direction within a cone of the hold's normal nearest to the body's
normal, checked against a brute-force search, and the planner landing its soles with it."""

import math

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.windup import landing_normal
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.planning.stance import TILT_TOLERANCE
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb


def _angle(a, b):
    return math.acos(float(np.clip(a @ b / np.linalg.norm(a) / np.linalg.norm(b), -1, 1)))


@pytest.mark.parametrize("tilt", [0.05, 0.3, 1.2])
def test_landing_normal_is_the_nearest_direction_within_the_cone(tilt):
    """Within ``cone`` of the hold's normal, no direction (brute force over the cone's rim
    and inside) lies nearer the body normal than the landing normal; a body normal inside
    the cone is taken as it is."""
    rng = np.random.default_rng(int(tilt * 100))
    body = np.array([0.0, 0.0, 1.0])
    axis = np.array([math.cos(0.7), math.sin(0.7), 0.0])
    hold = np.cos(tilt) * body + np.sin(tilt) * np.cross(axis, body)
    cone = 0.1
    n = landing_normal(hold, body, cone)
    assert abs(np.linalg.norm(n) - 1) < 1e-12
    assert _angle(n, hold) <= cone + 1e-9
    if tilt <= cone:
        np.testing.assert_allclose(n, body)
        return
    best = math.inf
    for _ in range(4000):
        v = rng.normal(size=3)
        v -= (v @ hold) * hold
        v /= np.linalg.norm(v)
        a = rng.uniform(0, cone)
        d = math.cos(a) * hold + math.sin(a) * v
        best = min(best, _angle(d, body))
    assert _angle(n, body) <= best + 1e-9
    assert abs(_angle(n, body) - (tilt - cone)) < 1e-9


def test_landing_cone_must_be_an_angle():
    """A negative cone is a configuration error."""
    with pytest.raises(ConfigError):
        landing_normal(np.array([0, 0, 1.0]), np.array([0, 1.0, 0]), -0.1)


def test_planned_landings_lie_nearer_the_body_normal_and_within_the_tolerance():
    """With the landing cone the first swing's sole lands no farther from the body normal
    than along the hold's normal, and still within the planner's tilt tolerance of it."""
    settings = RockClimbSettings(distance=0.3)
    wall, truth, _ = plan_rock_climb(settings, 0)
    plain = SequencePlanner(wall, settings.plan, 0, truth=truth).next()
    cone = SequencePlanner(wall, settings.plan, 0, truth=truth, landing_cone=0.1).next()
    assert plain.hold.cell == cone.hold.cell
    z = wall.rotation[:, 2]
    assert _angle(cone.sole_rotation[:, 2], z) <= _angle(plain.sole_rotation[:, 2], z) + 1e-6
    assert _angle(cone.sole_rotation[:, 2], cone.hold.normal) <= TILT_TOLERANCE


def test_soles_landed_near_the_body_normal_keep_their_attitude_as_the_body_moves():
    """Kinematic check of why the landing cone helps: after each of the first swings, the
    held soles' tilt away from the attitude they landed with, which the 5-DOF legs cannot
    avoid at the body pose the plan moves to (and the sole hinges then pass to the rock as
    a moment), is smaller in total with the cone than landing along the holds' normals."""
    from clamber.quadruped.planning.stance import reach

    settings = RockClimbSettings(distance=0.3)
    wall, truth, _ = plan_rock_climb(settings, 1)
    total = {}
    for cone in (None, 0.1):
        p = SequencePlanner(wall, settings.plan, 1, truth=truth, landing_cone=cone)
        tilts = []
        for _ in range(4):
            step = p.next()
            assert step is not None
            tops = {leg: h.top for leg, h in p.holds.items()}
            normals = {leg: h.normal for leg, h in p.holds.items()}
            r = reach(p.rm, p.body, tops, normals, p.q)
            tilts.append(sum(t for leg, t in r.tilts.items() if leg != step.leg))
        total[cone] = sum(tilts)
    assert total[0.1] < 0.8 * total[None]
