"""Attached grippers keep their weld attitude: the hinge error, the body turn that lets the
5-DOF legs reach it (checked against a nonlinear least-squares solve of the same problem),
the controller's stance targets, and the planner trying other legs before it stops."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import least_squares

from clamber.quadruped.control.controllers import QWBCController
from clamber.quadruped.control.reference import MotionReference
from clamber.quadruped.model.kinematics import Clik, body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.planning.selection import Choice, ChoiceStatus
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb
from clamber.quadruped.trials.sole_attitude import (
    WeldAttitudes,
    body_turn,
    hinge_error,
    stance_targets,
)


@pytest.fixture(scope="module")
def rm():
    return RobotModel()


def _tilted(R: np.ndarray, angles: tuple[float, float]) -> np.ndarray:
    """``R`` turned by small angles about its own x and y axes."""
    return R @ pin.exp3(np.array([angles[0], angles[1], 0.0]))


def test_hinge_error_is_the_turn_about_the_hinge_axes_only():
    """A turn about the sole's x and y axes is the hinge error; one about z (no hinge there)
    is not."""
    R = pin.exp3(np.array([0.3, -0.2, 0.5]))
    np.testing.assert_allclose(hinge_error(R, _tilted(R, (0.02, -0.01))), [0.02, -0.01, 0.0],
                               atol=1e-6)
    np.testing.assert_allclose(hinge_error(R, R @ pin.exp3(np.array([0, 0, 0.1]))), 0.0,
                               atol=1e-12)


def test_body_turn_matches_a_nonlinear_solve_and_leaves_less_hinge_error(rm):
    """With every gripper fixed in place and kept attitudes a few milliradians off, the
    linear least-squares body turn equals the optimum of the same weighted problem solved
    with the exact kinematics (to 1 mrad, second order, at 15 mrad), and turning the body
    leaves less hinge error than the legs alone can."""
    q0 = rm.robot.default_joint_angles()
    clik = Clik(rm)
    feet_b, J = clik.kinematics(q0)
    rng = np.random.default_rng(3)
    kept = {i: _tilted(feet_b[i].rotation, tuple(rng.uniform(-0.02, 0.02, 2)))
            for i in range(len(LEG_NAMES))}
    d, residual = body_turn(feet_b, J, np.eye(3), kept, position_weight=10.0, turn_weight=0.3)
    _, alone = body_turn(feet_b, J, np.eye(3), kept, turn_weight=1e6)
    assert residual < 0.7 * alone

    def rows(x):
        body = pin.SE3(pin.exp3(x[:3]), np.zeros(3))
        feet = foot_poses(rm, body_configuration(q0 + x[3:]))
        out = []
        for i in kept:
            f = body * feet[i]
            out += list(10.0 * (f.translation - feet_b[i].translation))
            out += list(hinge_error(f.rotation, kept[i])[:2])
        return np.array(out + list(0.3 * x[:3]))

    sol = least_squares(rows, np.zeros(3 + len(q0)), xtol=1e-12, ftol=1e-12)
    np.testing.assert_allclose(d, sol.x[:3], rtol=0.1, atol=1e-3)
    assert np.linalg.norm(d) > 1e-3


def test_stance_legs_turn_back_toward_their_kept_attitude(rm):
    """A stance gripper given a kept attitude is steered toward it (one control cycle of the
    controller's CLIK halves the hinge error) and stays where it is; without one it keeps
    the attitude it has."""
    q0 = rm.robot.default_joint_angles()
    state = RobotState(np.zeros(3), np.eye(3), q0)
    feet = dict(zip(LEG_NAMES, foot_poses(rm, state.q()), strict=True))
    kept = {"LF": _tilted(feet["LF"].rotation, (0.0, 0.03))}
    ctrl = QWBCController(rm)
    ref = MotionReference(pin.SE3.Identity(), stance_attitudes=stance_targets(feet, kept))
    q1 = ctrl._positions(state, ref)
    after = dict(zip(LEG_NAMES, foot_poses(rm, body_configuration(q1)), strict=True))
    before_err = np.linalg.norm(hinge_error(feet["LF"].rotation, kept["LF"]))
    after_err = np.linalg.norm(hinge_error(after["LF"].rotation, kept["LF"]))
    assert after_err < 0.6 * before_err
    assert np.linalg.norm(after["LF"].translation - feet["LF"].translation) < 1e-3
    q_free = ctrl._positions(state, MotionReference(pin.SE3.Identity()))
    np.testing.assert_allclose(q_free, q0, atol=1e-9)


def test_weld_attitudes_are_recorded_at_attachment_and_forgotten_at_release():
    """The attitude of a gripper is taken when it attaches and kept until it lets go."""
    poses = {leg: pin.SE3(pin.exp3(np.array([0.1 * k, 0, 0])), np.zeros(3))
             for k, leg in enumerate(LEG_NAMES)}
    w = WeldAttitudes()
    kept = w.update(("LF", "RR"), lambda: poses)
    np.testing.assert_allclose(kept["LF"], poses["LF"].rotation)
    moved = {leg: pin.SE3(np.eye(3), np.zeros(3)) for leg in LEG_NAMES}
    kept = w.update(("LF",), lambda: moved)
    assert set(kept) == {"LF"}
    np.testing.assert_allclose(kept["LF"], poses["LF"].rotation)


class _NoHoldFor:
    """A rule that finds nothing for one leg and asks the real rule for the others."""

    def __init__(self, rule, leg):
        self.rule, self.leg, self.asked = rule, leg, []

    def choose(self, ctx, exclude):
        self.asked.append(ctx.leg)
        if ctx.leg == self.leg:
            return Choice(ChoiceStatus.NONE_FEASIBLE)
        return self.rule.choose(ctx, exclude)


def test_planner_tries_the_other_legs_before_it_stops():
    """When the leg whose turn it is finds no hold, the reordering planner swings the next
    leg in the gait's order and resumes the order after it; the fixed order stops there."""
    settings = RockClimbSettings(distance=0.3)
    wall, truth, _ = plan_rock_climb(settings, 0)
    fixed = SequencePlanner(wall, settings.plan, 0, truth=truth)
    fixed.rule = _NoHoldFor(fixed.rule, "LR")
    assert fixed.next() is None and "LR at swing 1" in fixed.detail
    adaptive = SequencePlanner(wall, settings.plan, 0, truth=truth, reorder=True)
    adaptive.rule = _NoHoldFor(adaptive.rule, "LR")
    step = adaptive.next()
    assert step is not None and step.leg == "LF"
    assert adaptive.rule.asked == ["LR", "LF"]
    nxt = adaptive.next()
    assert nxt is None or nxt.leg in ("RR", "RF", "LR")
    assert adaptive.rule.asked[2] == "RR"
