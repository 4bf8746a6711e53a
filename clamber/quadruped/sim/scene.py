"""MuJoCo scenes of the (perturbed) robot's description with its servos and gripper welds:
a climbing wall with rocks, or a ground."""

from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np

from clamber.exceptions import ConfigError
from clamber.quadruped.model.description import mjcf_string
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.sim.grippers import (
    DEFAULT_SOLE,
    SoleCompliance,
    add_compliant_soles,
    add_welds,
)
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.world import GroundTerrain, WallLayout, height_field

#: Mass [kg] and radius [m] of a rubber foot replacing the gripper.
RUBBER_FOOT_MASS = 0.05
RUBBER_FOOT_RADIUS = 0.025


def quaternion(R: np.ndarray) -> np.ndarray:
    """MuJoCo's unit quaternion (w, x, y, z) of a rotation matrix."""
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R).reshape(-1))
    return q


def robot_spec(robot: Marcbot, servos: ServoBank, physics_dt: float = 0.001) -> mujoco.MjSpec:
    """The robot's spec with its servos, options and light, before any world is added."""
    spec = mujoco.MjSpec.from_string(mjcf_string(robot))
    servos.configure(spec)
    spec.option.timestep = physics_dt
    spec.option.gravity = [0.0, 0.0, -9.81]
    spec.option.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    # One kinematic tree is one constraint island: skip the per-step island search.
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    spec.visual.global_.offwidth = 640
    spec.visual.global_.offheight = 480
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.6, 0.6, 0.6]
    for g in spec.geoms:
        g.rgba = ([0.9, 0.5, 0.15, 1.0] if g.name == "body_geom" else
                  [0.15, 0.15, 0.15, 1.0] if g.name.endswith("gripper_geom") else
                  [0.75, 0.75, 0.78, 1.0])
    light = spec.worldbody.add_light()
    light.pos, light.dir = [0.0, 0.0, 3.0], [0.0, 0.0, -1.0]
    light.type = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    return spec


def gripper_spec(robot: Marcbot, servos: ServoBank, physics_dt: float = 0.001,
                 sole: SoleCompliance | None = DEFAULT_SOLE) -> mujoco.MjSpec:
    """:func:`robot_spec` with the gripper welds; ``sole`` makes the soles compliant pads
    (:mod:`.grippers`), None welds them rigid."""
    spec = robot_spec(robot, servos, physics_dt)
    if sole is not None:
        add_compliant_soles(spec, robot.leg.gripper_height, sole)
    add_welds(spec, compliant=sole is not None)
    return spec


def climb_scene(robot: Marcbot, layout: WallLayout, servos: ServoBank,
                physics_dt: float = 0.001,
                sole: SoleCompliance | None = DEFAULT_SOLE) -> mujoco.MjModel:
    """:func:`gripper_spec` with a wall of ``layout.incline_deg`` and its rocks."""
    spec = gripper_spec(robot, servos, physics_dt, sole)
    q = quaternion(layout.rotation)
    wall = spec.worldbody.add_geom()
    wall.name, wall.type = "wall", mujoco.mjtGeom.mjGEOM_PLANE
    wall.size = [2.0, 1.0, 0.05]
    wall.pos = layout.rotation @ np.array([0.8, 0.0, 0.0])
    wall.quat = q
    wall.rgba = [0.55, 0.5, 0.45, 1.0]
    for hold in layout.all_holds():
        mesh = spec.add_mesh()
        mesh.name = f"{hold.name}_mesh"
        mesh.uservert = hold.vertices.reshape(-1).tolist()
        g = spec.worldbody.add_geom()
        g.name, g.type, g.meshname = hold.name, mujoco.mjtGeom.mjGEOM_MESH, mesh.name
        g.pos, g.quat = hold.base, q
        g.rgba = [0.25, 0.25, 0.27, 1.0]
    return spec.compile()


#: Feet a ground scene can have: the gripper, a rubber point foot, and a rubber-mass foot
#: with the gripper's flat sole.
FEET = ("gripper", "rubber", "rubber_flat")


def robot_with_feet(robot: Marcbot, feet: str) -> Marcbot:
    """``robot`` with the last link's mass of its ``feet``."""
    if feet not in FEET:
        raise ConfigError(f"feet must be one of {', '.join(FEET)}, got {feet!r}")
    if feet == "gripper":
        return robot
    return replace(robot, link_masses=robot.link_masses[:4] + (RUBBER_FOOT_MASS,))


def ground_scene(robot: Marcbot, terrain: GroundTerrain, servos: ServoBank,
                 feet: str = "gripper", physics_dt: float = 0.001, seed: int = 0,
                 size: float = 3.0) -> mujoco.MjModel:
    """The robot on a ground terrain with :data:`FEET` ``feet``; the terrain has contact
    priority (its friction and softness decide) and spans ``size`` [m] along x from 0.5 m
    behind the start."""
    robot = robot_with_feet(robot, feet)
    spec = robot_spec(robot, servos, physics_dt)
    if feet == "rubber":
        for leg in LEG_NAMES:
            g = spec.geom(f"{leg}_gripper_geom")
            g.type = mujoco.mjtGeom.mjGEOM_SPHERE
            g.size = [RUBBER_FOOT_RADIUS, 0.0, 0.0]
            g.pos = [0.0, 0.0, -robot.leg.gripper_height + RUBBER_FOOT_RADIUS]
    ground = spec.worldbody.add_geom()
    ground.name = "ground"
    if terrain.roughness > 0:
        n = max(121, int(round(size / 0.025)) + 1)  # 2.5 cm cells
        z = height_field(terrain, size / 2, n, seed)
        lo, hi = float(z.min()), float(z.max())
        hf = spec.add_hfield()
        hf.name, hf.nrow, hf.ncol = "terrain", n, n
        hf.size = [size / 2, size / 2, hi - lo, 0.05]
        hf.userdata = ((z - lo) / (hi - lo)).reshape(-1).tolist()
        ground.type, ground.hfieldname = mujoco.mjtGeom.mjGEOM_HFIELD, "terrain"
        ground.pos = [size / 2 - 0.5, 0.0, lo]
    else:
        ground.type, ground.size = mujoco.mjtGeom.mjGEOM_PLANE, [size, size, 0.05]
    ground.friction = [terrain.friction, 0.02, 0.001]
    ground.solref = [terrain.timeconst, terrain.dampratio]
    ground.priority = 1
    ground.rgba = [0.45, 0.42, 0.35, 1.0]
    return spec.compile()
