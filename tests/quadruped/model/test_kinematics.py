"""Leg kinematics: Jacobians, inverse kinematics and CLIK."""


import numpy as np
import pinocchio as pin
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.kinematics import (
    Clik,
    body_configuration,
    foot_jacobians,
    foot_poses,
    leg_ik,
    world_foot_poses,
)
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import NV_BASE, leg_slice


def test_leg_jacobian_matches_finite_differences(rm, random_state):
    """Each column of the LOCAL leg Jacobian is the gripper's twist under a small joint step."""
    rng = np.random.default_rng(2)
    qj = random_state(rm, rng).joint_positions
    eps = 1e-6
    for i, leg in enumerate(LEG_NAMES):
        s = leg_slice(leg)
        J = foot_jacobians(rm, body_configuration(qj))[i][:, NV_BASE + s.start:NV_BASE + s.stop]
        T0 = foot_poses(rm, body_configuration(qj))[i]
        for k, j in enumerate(range(leg_slice(leg).start, leg_slice(leg).stop)):
            dq = qj.copy()
            dq[j] += eps
            T1 = foot_poses(rm, body_configuration(dq))[i]
            np.testing.assert_allclose(pin.log6(T0.actInv(T1)).vector / eps, J[:, k], atol=1e-5)


def test_ik_round_trip(rm, random_state):
    """IK from a perturbed start recovers a pose reached by FK, to 1e-6 m and rad."""
    rng = np.random.default_rng(3)
    for _ in range(4):
        qj = random_state(rm, rng).joint_positions
        poses = foot_poses(rm, body_configuration(qj))
        start = np.clip(qj + rng.uniform(-0.15, 0.15, qj.size), rm.q_min, rm.q_max)
        for i, leg in enumerate(LEG_NAMES):
            res = leg_ik(rm, leg, poses[i], start)
            assert res.converged
            got = foot_poses(rm, body_configuration(res.q))[i]
            assert np.linalg.norm(got.translation - poses[i].translation) < 1e-6
            assert np.linalg.norm(pin.log3(got.rotation.T @ poses[i].rotation)) < 1e-5
            assert np.all(res.q >= rm.q_min) and np.all(res.q <= rm.q_max)


def test_ik_respects_limits_for_unreachable_target(rm):
    """An out-of-reach target leaves IK unconverged with every joint inside its limits."""
    q0 = rm.robot.default_joint_angles()
    target = pin.SE3(np.eye(3), np.array([1.0, 1.0, -0.5]))
    res = leg_ik(rm, "LF", target, q0, max_iter=50)
    assert not res.converged
    assert np.all(res.q >= rm.q_min - 1e-12) and np.all(res.q <= rm.q_max + 1e-12)


def test_clik_moves_body_with_feet_fixed(rm):
    """Iterated CLIK steps bring the body to a shifted, yawed target while the grippers stay."""
    state = rm.default_state()
    feet = world_foot_poses(rm, state)
    target = pin.SE3(pin.exp3(np.array([0, 0, 0.08])),
                     state.body_position + np.array([0.02, -0.01, 0.01]))
    clik = Clik(rm, gain=0.7)
    q = state.joint_positions
    for _ in range(40):
        q = clik.step(q, target, feet)
    q_full = np.concatenate([target.translation, pin.Quaternion(target.rotation).coeffs(), q])
    for leg, pose in zip(LEG_NAMES, foot_poses(rm, q_full), strict=True):
        assert np.linalg.norm(pose.translation - feet[leg].translation) < 1e-5
        assert np.linalg.norm(pin.log3(pose.rotation.T @ feet[leg].rotation)) < 1e-4


def test_unknown_leg_and_bad_shapes_raise(rm):
    """Unknown leg names and wrong-size joint vectors are ConfigErrors."""
    q0 = rm.robot.default_joint_angles()
    with pytest.raises(ConfigError, match="unknown leg"):
        leg_ik(rm, "XX", pin.SE3.Identity(), q0)
    with pytest.raises(ConfigError, match="shape"):
        leg_ik(rm, "LF", pin.SE3.Identity(), q0[:5])
    with pytest.raises(ConfigError):
        Marcbot(link_masses=(0.1, 0.1))
