"""The robot on a generated rock wall: its MuJoCo scene (servos, gripper welds, soles, field)."""

from __future__ import annotations

import mujoco

from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.rock.mjcf import add_rock_wall
from clamber.quadruped.rock.wall import RockWall
from clamber.quadruped.sim.grippers import DEFAULT_SOLE, SoleCompliance
from clamber.quadruped.sim.scene import gripper_spec
from clamber.quadruped.sim.servos import ServoBank


def rock_scene(robot: Marcbot, wall: RockWall, servos: ServoBank, physics_dt: float = 0.001,
               sole: SoleCompliance | None = DEFAULT_SOLE) -> mujoco.MjModel:
    """:func:`~clamber.quadruped.sim.scene.gripper_spec` with the wall as a height field
    named ``rock``."""
    spec = gripper_spec(robot, servos, physics_dt, sole)
    add_rock_wall(spec, wall)
    return spec.compile()
