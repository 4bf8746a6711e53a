"""The swing's lift over the rock between two holds, from the map."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.planning.swing import MAX_LIFT, SWING_MARGIN, swing_clearance, swing_lift
from clamber.quadruped.rock.wall import RockWallSpec, generate_wall


def test_clearance_is_the_highest_rock_in_the_corridor_above_the_path():
    """On a flat map the clearance between two holds is the largest rise of the surface
    above the straight line joining their tops within the corridor: a 5 cm bump on the
    path counts in full (less the line's own height there), a higher bump 10 cm beside a
    6 cm corridor does not, and nothing above the line gives 0. The lift adds the margin
    and stops at its ceiling."""
    wall = generate_wall(90, 0, RockWallSpec(knob_density=0.0))
    z = np.zeros_like(wall.z)
    i0, i1 = np.searchsorted(wall.u, [0.40, 0.70])
    j = int(np.searchsorted(wall.y, 0.0))
    start = wall.to_world(wall.u[i0], wall.y[j], 0.0)
    target = wall.to_world(wall.u[i1], wall.y[j], 0.02)
    assert swing_clearance(wall, z, start, target) == 0.0
    mid = (i0 + i1) // 2
    z[mid, j] = 0.05
    z[mid, j + 10] = 0.08  # 10 cm beside the path
    t = (wall.u[mid] - wall.u[i0]) / (wall.u[i1] - wall.u[i0])
    assert swing_clearance(wall, z, start, target) == pytest.approx(0.05 - 0.02 * t)
    assert swing_clearance(wall, z, start, target, corridor=0.12) == pytest.approx(
        0.08 - 0.02 * t)
    assert swing_lift(0.01) == pytest.approx(0.01 + SWING_MARGIN)
    assert swing_lift(1.0) == MAX_LIFT
    with pytest.raises(ConfigError):
        swing_clearance(wall, z[:-1], start, target)
