"""The robot on a generated rock wall: its MuJoCo scene (servos, gripper welds, soles, field)."""

from __future__ import annotations

import mujoco

from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.rock.mjcf import add_rock_wall
from clamber.quadruped.rock.wall import RockWall
from clamber.quadruped.sim.grippers import (
    DEFAULT_SOLE,
    SoleCompliance,
    add_compliant_soles,
    add_welds,
)
from clamber.quadruped.sim.scene import robot_spec
from clamber.quadruped.sim.servos import ServoBank


def rock_scene(robot: Marcbot, wall: RockWall, servos: ServoBank, physics_dt: float = 0.001,
               sole: SoleCompliance | None = DEFAULT_SOLE) -> mujoco.MjModel:
    """The robot with its gripper welds (and compliant soles unless ``sole`` is None) and
    the wall as a height field named ``rock``."""
    spec = robot_spec(robot, servos, physics_dt)
    if sole is not None:
        add_compliant_soles(spec, robot.leg.gripper_height, sole)
    add_welds(spec, compliant=sole is not None)
    add_rock_wall(spec, wall)
    return spec.compile()
