"""Smoke test of the robot's scene on a generated rock wall."""

import mujoco
import numpy as np
import pytest

from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.planning.depth_map import observe_wall
from clamber.quadruped.planning.holds import build_hold_map
from clamber.quadruped.planning.rollout import PlanClimbSettings, _start, _Truth
from clamber.quadruped.rock.holding import GripperSurfaceModel
from clamber.quadruped.rock.scene import rock_scene
from clamber.quadruped.rock.wall import generate_wall
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.simulator import QuadrupedSim


@pytest.mark.parametrize("incline", [110.0])
def test_robot_stands_on_the_rock_field_without_warnings(incline):
    """Placed on its planned start holds, the robot's soles touch the height field within
    0.2 s and a second of physics with the servos holding their angles raises no MuJoCo
    warning and keeps the state finite (the fall itself is allowed: no grasps here)."""
    settings = PlanClimbSettings(incline_deg=incline)
    wall = generate_wall(incline, 3)
    model = GripperSurfaceModel()
    rm = RobotModel()
    hm = build_hold_map(wall, observe_wall(wall, settings.noise, np.random.default_rng(0)),
                        model)
    start = _start(rm, _Truth(wall, model), hm, settings)
    assert start is not None
    _, body, q = start
    servos = ServoBank(rm.robot)
    sim = QuadrupedSim(rock_scene(rm.robot, wall, servos, 0.004), rm.robot, servos, 50.0,
                       grippers=True)
    sim.set_state(body.translation + 0.002 * body.rotation[:, 2], body.rotation, q)
    cmd = JointCommand(q, np.zeros(q.size), rm.current_max)
    rock = sim.model.geom("rock").id
    touched = False
    for k in range(50):
        sim.step(cmd)
        d = sim.data
        touched |= any(rock in (d.contact[i].geom1, d.contact[i].geom2)
                       for i in range(d.ncon)) and k < 10
    assert touched
    assert np.all(np.isfinite(sim.data.qpos))
    assert not sim.data.warning.number[int(mujoco.mjtWarning.mjWARN_BADQACC)]
