"""How high a swing must lift its gripper to clear the rock between two holds, from the map.

The climbing gait lifts along the hold's normal, moves straight to above the next hold and
descends. The lift is raised so the gripper passes ``margin`` above the highest mapped rock
within ``corridor`` of the straight path between the two hold tops.
"""

from __future__ import annotations

import numpy as np

from clamber.exceptions import ConfigError
from clamber.quadruped.rock.wall import RockWall

#: Gap [m] left between the gripper's sole and the highest mapped rock under its path.
SWING_MARGIN = 0.03
#: Highest lift [m] a swing is given (within the 5-DOF leg's reach at the nominal standoff).
MAX_LIFT = 0.09


def swing_clearance(wall: RockWall, z: np.ndarray, start: np.ndarray, target: np.ndarray,
                    corridor: float = 0.06) -> float:
    """Height [m] of the mapped surface ``z`` (n_u, n_y) above the straight line from hold
    top ``start`` to hold top ``target`` (world points [m]), the largest over the grid cells
    within ``corridor`` [m] of the path in the wall's plane (0 if nothing rises above it)."""
    if not corridor > 0 or z.shape != wall.z.shape:
        raise ConfigError(f"corridor must be > 0 and the map shaped like the wall's grid, "
                          f"got {corridor} and {z.shape}")
    a, b = wall.to_wall(start), wall.to_wall(target)
    lo = np.minimum(a[:2], b[:2]) - corridor
    hi = np.maximum(a[:2], b[:2]) + corridor
    iu = np.flatnonzero((wall.u >= lo[0]) & (wall.u <= hi[0]))
    jy = np.flatnonzero((wall.y >= lo[1]) & (wall.y <= hi[1]))
    if iu.size == 0 or jy.size == 0:
        return 0.0
    U, Y = np.meshgrid(wall.u[iu], wall.y[jy], indexing="ij")
    d = b[:2] - a[:2]
    t = np.clip(((U - a[0]) * d[0] + (Y - a[1]) * d[1]) / max(float(d @ d), 1e-12), 0.0, 1.0)
    near = np.hypot(U - a[0] - t * d[0], Y - a[1] - t * d[1]) <= corridor
    rise = z[np.ix_(iu, jy)] - (a[2] + t * (b[2] - a[2]))
    return float(max(0.0, rise[near].max(initial=0.0)))


def swing_lift(clearance: float) -> float:
    """Lift height [m] of a swing whose path rises ``clearance`` [m] (:func:`swing_clearance`):
    ``clearance + SWING_MARGIN``, at most ``MAX_LIFT`` (the gait's own lift is the least)."""
    return float(min(MAX_LIFT, max(0.0, clearance) + SWING_MARGIN))
