"""A rock wall as a MuJoCo height field (in an ``MjSpec`` or a standalone MJCF asset): rows
along the wall's y, columns up the slope, elevations in [0, 1] scaled along the wall normal
(binary file: ``int32 nrow, int32 ncol, float32 data``)."""

from __future__ import annotations

import struct

import mujoco
import numpy as np

from clamber.quadruped.rock.wall import RockWall
from clamber.quadruped.sim.scene import quaternion

#: Depth of the height field's base box below its lowest point [m] (MuJoCo's ``size[3]``).
BASE_DEPTH = 0.05
WALL_RGBA = (0.50, 0.46, 0.42, 1.0)


def hfield_geometry(wall: RockWall) -> tuple[np.ndarray, list[float], np.ndarray]:
    """Elevations (n_y, n_u) in [0, 1], MuJoCo ``size`` and the geom's world position [m]."""
    lo, hi = float(wall.z.min()), float(wall.z.max())
    span = max(hi - lo, 1e-6)
    data = ((wall.z - lo) / span).T
    size = [float(wall.u[-1] - wall.u[0]) / 2, float(wall.y[-1] - wall.y[0]) / 2, span,
            BASE_DEPTH]
    centre = np.array([(wall.u[0] + wall.u[-1]) / 2, (wall.y[0] + wall.y[-1]) / 2, lo])
    return data, size, wall.origin + wall.rotation @ centre


def add_rock_wall(spec: mujoco.MjSpec, wall: RockWall, name: str = "rock") -> None:
    """Add the wall's height field and its geom (named ``name``) to ``spec``'s world."""
    data, size, pos = hfield_geometry(wall)
    hf = spec.add_hfield()
    hf.name, hf.nrow, hf.ncol = f"{name}_hfield", data.shape[0], data.shape[1]
    hf.size = size
    hf.userdata = data.reshape(-1).tolist()
    g = spec.worldbody.add_geom()
    g.name, g.type, g.hfieldname = name, mujoco.mjtGeom.mjGEOM_HFIELD, hf.name
    g.pos, g.quat = pos, quaternion(wall.rotation)
    g.rgba = list(WALL_RGBA)


def hfield_bytes(wall: RockWall) -> bytes:
    """The wall's elevations in MuJoCo's binary height-field format."""
    data = hfield_geometry(wall)[0].astype("<f4")
    return struct.pack("<ii", *data.shape) + data.tobytes()


def wall_mjcf(wall: RockWall, hfield_file: str) -> str:
    """A standalone MJCF asset of the wall reading its elevations from ``hfield_file``
    (:func:`hfield_bytes`, a path relative to the MJCF file)."""
    _, size, pos = hfield_geometry(wall)
    q = quaternion(wall.rotation)

    def fmt(a) -> str:
        return " ".join(f"{float(x):.9g}" for x in a)

    return (f'<mujoco model="rock_wall_seed{wall.seed}_incline{wall.incline_deg:g}">\n'
            f'  <asset>\n'
            f'    <hfield name="rock_hfield" file="{hfield_file}" size="{fmt(size)}"/>\n'
            f'  </asset>\n'
            f'  <worldbody>\n'
            f'    <geom name="rock" type="hfield" hfield="rock_hfield" pos="{fmt(pos)}" '
            f'quat="{fmt(q)}" rgba="{fmt(WALL_RGBA)}"/>\n'
            f'  </worldbody>\n'
            f'</mujoco>\n')
