"""Shared fixtures of the quadruped tests: one robot model for the whole session, random
states, and a vertical climbing scene at rest."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.sim.scene import climb_scene
from clamber.quadruped.sim.servos import ServoBank
from clamber.quadruped.sim.simulator import QuadrupedSim
from clamber.quadruped.sim.world import wall_layout
from clamber.quadruped.trials.stance import NOMINAL_FEET, initial_joints


@pytest.fixture(scope="session")
def rm() -> RobotModel:
    return RobotModel()


def _random_state(rm: RobotModel, rng: np.random.Generator, spread: float = 0.25) -> RobotState:
    """A state near the default stance, random body attitude, joints inside their limits."""
    s = rm.default_state()
    qj = np.clip(s.joint_positions + rng.uniform(-spread, spread, s.joint_positions.size),
                 rm.q_min, rm.q_max)
    R = pin.exp3(rng.normal(size=3) * 1.0)
    return RobotState(s.body_position + rng.normal(size=3) * 0.05, R, qj,
                      rng.normal(size=6) * 0.05, rng.normal(size=20) * 0.1)


@pytest.fixture(scope="session")
def random_state():
    """``random_state(rm, rng, spread)``: a random valid state near the default stance."""
    return _random_state


@pytest.fixture()
def wall_sim():
    """``(sim, layout, body pose)``: the nominal robot on the start holds of a vertical wall,
    grippers open, servos holding the start angles."""
    robot = Marcbot()
    gp = ClimbGaitSettings()
    layout = wall_layout(90.0, gp.stance_offsets(NOMINAL_FEET), gp.stride, 1, seed=3)
    servos = ServoBank(robot)
    sim = QuadrupedSim(climb_scene(robot, layout, servos, 0.004), robot, servos, 50.0,
                       grippers=True)
    R = layout.rotation
    tops = {leg: layout.holds[leg][0].top for leg in LEG_NAMES}
    body = pin.SE3(R, np.mean(list(tops.values()), axis=0) + gp.standoff * R[:, 2])
    q = initial_joints(RobotModel(robot), body, tops,
                        {leg: layout.holds[leg][0].normal for leg in LEG_NAMES}, lift=0.001)
    sim.set_state(body.translation, body.rotation, q)
    return sim, layout, body


@pytest.fixture()
def hold_still():
    """``hold_still(sim)``: a command keeping every servo at its present goal, full current."""
    from clamber.quadruped.control.controllers import JointCommand

    def command(sim: QuadrupedSim) -> JointCommand:
        return JointCommand(sim.data.ctrl.copy(), np.zeros(sim.model.nu),
                            sim.servos.current_max.copy())
    return command


def _tilted_stance(rm: RobotModel, tilts: np.ndarray
                   ) -> tuple[np.ndarray, pin.SE3, list[pin.SE3]]:
    """A vertical-wall stance on the nominal footholds with each sole fitted to a hold top
    tilted by ``tilts[i]`` (rotation vector about the wall's u and y axes) [rad]: joints,
    body pose and world gripper poses."""
    from clamber.quadruped.model.kinematics import Clik
    from clamber.quadruped.sim.world import wall_rotation

    R = wall_rotation(90.0)
    body = pin.SE3(R, 0.16 * R[:, 2])
    tops = {leg: R @ np.array([*NOMINAL_FEET[leg], 0.0]) for leg in LEG_NAMES}
    normals = {leg: R @ pin.exp3(np.array([*tilts[i], 0.0]))[:, 2]
               for i, leg in enumerate(LEG_NAMES)}
    q = initial_joints(rm, body, tops, normals)
    return q, body, [body * f for f in Clik(rm).kinematics(q)[0]]


@pytest.fixture(scope="session")
def tilted_stance():
    """``tilted_stance(rm, tilts)``: joints, body and grippers of a vertical-wall stance with
    soles fitted to tilted hold tops."""
    return _tilted_stance
