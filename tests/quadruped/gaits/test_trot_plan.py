"""The planned trot through inverse kinematics: every joint within its servo's no-load speed."""

import numpy as np
import pinocchio as pin

from clamber.quadruped.gaits import TrotGait, TrotGaitSettings
from clamber.quadruped.model.kinematics import leg_ik
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.trials.stance import initial_joints


def _planned_joints(params: TrotGaitSettings, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Joint angles (n, 20) [rad] putting every gripper on its planned pose in the level body
    frame every ``dt`` [s], each IK warm-started from the previous sample; also the largest
    position error [m] per sample."""
    robot = Marcbot()
    rm = RobotModel(robot)
    gait = TrotGait(params, robot=robot)
    body0 = pin.SE3(np.eye(3), gait.body(0.0))
    q = initial_joints(rm, body0, {leg: gait.foot(0.0, leg) for leg in LEG_NAMES},
                        dict.fromkeys(LEG_NAMES, np.array([0.0, 0.0, 1.0])))
    out, errors = [], []
    for t in np.arange(0.0, params.duration, dt):
        body = gait.body(t)
        worst = 0.0
        for leg in LEG_NAMES:
            pose = gait.foot_pose(t, leg)
            res = leg_ik(rm, leg, pin.SE3(pose.rotation, pose.translation - body), q)
            q, worst = res.q, max(worst, res.position_error)
        out.append(q.copy())
        errors.append(worst)
    return np.array(out), np.array(errors)


def test_planned_trot_within_servo_speeds():
    """The paper's trot (0.7 s, duty 0.6, 150 mm steps, 80 mm lift) is reachable all along
    (IK error under 0.1 mm) and its peak joint rates stay below 90 % of each servo's
    no-load speed, so the servos' back-EMF does not cap the swing."""
    p = TrotGaitSettings(cycles=3)
    assert (p.period, p.duty, p.step, p.height) == (0.7, 0.6, 0.15, 0.08)
    dt = 0.004
    q, err = _planned_joints(p, dt)
    assert err.max() < 1e-4
    rates = np.abs(np.diff(q, axis=0)) / dt
    limits = np.array([s.velocity_limit for s in Marcbot().servo_specs()])
    assert np.all(rates.max(axis=0) < 0.9 * limits), rates.max(axis=0) / limits


def test_trot_lift_reaches_step_height():
    """A swing foot leaves and meets the ground at its stance spots and is exactly 80 mm up
    at mid-swing; stance soles are level."""
    gait = TrotGait(TrotGaitSettings())
    p = gait.p
    t_lift = p.start_time + p.period + p.duty * p.period
    swing = (1 - p.duty) * p.period
    mid = t_lift + swing / 2
    assert np.isclose(gait.foot(mid, "LF")[2], p.height)
    ts = np.linspace(t_lift, t_lift + swing, 200)
    z = np.array([gait.foot(t, "LF")[2] for t in ts])
    assert z.min() >= -1e-12 and abs(z[0]) < 1e-9 and abs(z[-1]) < 1e-9
    stance = gait.foot_pose(p.start_time + 0.1, "LF")
    assert np.allclose(stance.rotation[:, 2], [0.0, 0.0, 1.0])
