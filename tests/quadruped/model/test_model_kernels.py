"""The model's compiled arithmetic against Pinocchio and finite differences: SE(3) products,
``log6`` and ``exp6``, the statics (LOCAL gripper Jacobians, gravity and inertial terms) and
the base block of the grasp map."""

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clamber.exceptions import ConfigError
from clamber.quadruped.model import se3_kernels as se3
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotState
from clamber.quadruped.model.statics import StaticsEvaluator

#: Rotation angles [rad] the SE(3) tests draw from: ordinary, small (the series branches),
#: exact zero, and within 1e-9 to 1e-3 of a half turn (the symmetric-part branch of log3).
ANGLES = st.sampled_from([0.0, 1e-12, 1e-7, 1e-3, 0.009, 0.011, 0.5, 1.5, 2.5, 3.0,
                          np.pi - 1e-3, np.pi - 1e-6, np.pi - 1e-9])
VECTORS = st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).filter(
    lambda v: np.linalg.norm(v) > 1e-3)


def _pose(axis, angle, translation) -> pin.SE3:
    a = np.asarray(axis) / np.linalg.norm(axis)
    return pin.SE3(pin.exp3(a * angle), np.asarray(translation) * 0.5)


@settings(max_examples=150, deadline=None)
@given(VECTORS, ANGLES, VECTORS, VECTORS, st.floats(0.0, 3.1), VECTORS)
def test_se3_products_and_logarithm_are_pinocchios(a1, t1, p1, a2, t2, p2):
    """Products, inverses and ``log6`` equal Pinocchio's ``SE3`` algebra to 1e-12 at every
    angle (near zero and near a half turn included), and ``exp6(log6(M)) = M`` to 1e-12."""
    M, N = _pose(a1, t1, p1), _pose(a2, t2, p2)
    R, p, out = np.empty((3, 3)), np.empty(3), np.empty(6)
    se3.compose(M.rotation, M.translation, N.rotation, N.translation, R, p)
    assert np.allclose(R, (M * N).rotation, atol=1e-14) and np.allclose(p, (M * N).translation,
                                                                        atol=1e-14)
    se3.act_inv(M.rotation, M.translation, N.rotation, N.translation, R, p)
    assert np.allclose(R, M.actInv(N).rotation, atol=1e-14)
    assert np.allclose(p, M.actInv(N).translation, atol=1e-14)
    se3.inverse(M.rotation, M.translation, R, p)
    assert np.allclose(R, M.inverse().rotation, atol=0) and np.allclose(
        p, M.inverse().translation, atol=1e-14)
    se3.log6(M.rotation, M.translation, out)
    want = pin.log6(M).vector
    if t1 < 3.0:  # at a half turn the sign of the axis is a choice; compared through exp6
        np.testing.assert_allclose(out, want, rtol=0, atol=1e-12)
    se3.exp6(out, R, p)
    np.testing.assert_allclose(R, M.rotation, atol=1e-12)
    np.testing.assert_allclose(p, M.translation, atol=1e-12)
    assert abs(np.linalg.norm(out[3:]) - t1) < 1e-9


@settings(max_examples=150, deadline=None)
@given(VECTORS, ANGLES, VECTORS)
def test_exp6_and_action_matrix_are_pinocchios(axis, angle, v):
    """``exp6`` of a twist and the action matrix of a pose equal Pinocchio's to 1e-13."""
    a = np.asarray(axis) / np.linalg.norm(axis)
    nu = np.r_[np.asarray(v) * 0.3, a * angle]
    R, p, Ad = np.empty((3, 3)), np.empty(3), np.empty((6, 6))
    se3.exp6(nu, R, p)
    want = pin.exp6(pin.Motion(nu))
    np.testing.assert_allclose(R, want.rotation, atol=1e-13)
    np.testing.assert_allclose(p, want.translation, atol=1e-13)
    se3.action_matrix(R, p, Ad)
    np.testing.assert_allclose(Ad, want.toActionMatrix(), atol=1e-13)


def test_rotation_defect_flags_non_rotations():
    """A rotation has a defect below 1e-15; a scaled matrix its scale's error; a reflection
    or a NaN entry an infinite one, so states built from them are refused."""
    R = pin.exp3(np.array([0.3, -1.2, 2.0]))
    assert se3.rotation_defect(R) < 1e-15
    assert se3.rotation_defect(1.01 * R) == pytest.approx(1.01**2 - 1)
    assert se3.rotation_defect(-R) == np.inf
    bad = R.copy()
    bad[1, 2] = np.nan
    assert se3.rotation_defect(bad) == np.inf
    s = RobotState(np.zeros(3), R, np.zeros(20))
    for M in (-R, bad, 1.01 * R, np.eye(2)):
        with pytest.raises(ConfigError, match="body_rotation"):
            RobotState(s.body_position, M, s.joint_positions)


def _configurations(rm, rng, n):
    s0 = rm.default_state()
    for _ in range(n):
        q = RobotState(s0.body_position + rng.normal(0, 0.1, 3),
                       pin.exp3(rng.normal(size=3)),
                       rm.clip_joints(s0.joint_positions + rng.normal(0, 0.3, 20))).q()
        yield q


def test_statics_are_pinocchios_jacobians_and_dynamics(rm):
    """At random configurations and body accelerations, ``A`` and the leg Jacobians are the
    base and leg columns of Pinocchio's LOCAL ``getFrameJacobian`` (``A[:, 6i:6i+6] =
    J_i,B^T``), the grippers' placements are ``oMf``, and ``B``, ``tau_bias`` are the base
    and joint rows of RNEA at zero velocity with the body accelerating and the joints not
    (``M a + g``), all to 1e-12."""
    ev = StaticsEvaluator(rm)
    other = rm.model.createData()
    rng = np.random.default_rng(7)
    for k, q in enumerate(_configurations(rm, rng, 20)):
        a = rng.normal(0, 1, 6) if k % 2 else None
        st = ev.evaluate(q, a)
        pin.computeJointJacobians(rm.model, other, q)
        pin.updateFramePlacements(rm.model, other)
        for i, f in enumerate(rm.foot_ids):
            J = pin.getFrameJacobian(rm.model, other, f, pin.LOCAL)
            np.testing.assert_allclose(st.A[:, 6 * i:6 * i + 6], J[:, :6].T, atol=1e-12)
            np.testing.assert_allclose(st.leg_jacobians[i], J[:, 6 + 5 * i:11 + 5 * i],
                                       atol=1e-12)
            np.testing.assert_allclose(st.foot_poses[i].homogeneous,
                                       other.oMf[f].homogeneous, atol=1e-14)
            others = np.delete(J[:, 6:], np.s_[5 * i:5 * i + 5], axis=1)
            assert not others.any()  # a gripper moves with its own leg only
        acc = np.zeros(rm.model.nv)
        if a is not None:
            acc[:6] = a
        tau = pin.rnea(rm.model, other, q, np.zeros(rm.model.nv), acc)
        np.testing.assert_allclose(st.B, tau[:6], atol=1e-10)
        np.testing.assert_allclose(st.tau_bias, tau[6:], atol=1e-10)


def test_grasp_map_is_the_grippers_motion_under_a_body_twist(rm):
    """Column ``c`` of ``A`` (row ``c`` of ``A^T`` for gripper ``i``) is the twist of gripper
    ``i`` in its own frame when the body moves along its ``c``-th twist direction: finite
    differences of the placements, to 1e-6."""
    ev = StaticsEvaluator(rm)
    q = next(_configurations(rm, np.random.default_rng(5), 1))
    A = ev.evaluate(q).A.copy()
    eps = 1e-7

    def feet(q):
        pin.framesForwardKinematics(rm.model, rm.data, q)
        return [rm.data.oMf[f].copy() for f in rm.foot_ids]

    base = feet(q)
    for c in range(6):
        dv = np.zeros(rm.model.nv)
        dv[c] = eps
        moved = feet(pin.integrate(rm.model, q, dv))
        for i in range(len(LEG_NAMES)):
            twist = pin.log6(base[i].actInv(moved[i])).vector / eps
            np.testing.assert_allclose(A[c, 6 * i:6 * i + 6], twist, atol=1e-6)
