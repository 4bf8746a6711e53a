"""The controllers' compiled per-cycle arithmetic against Pinocchio's ``SE3`` algebra and
NumPy formulas written here: the body PD law, the configuration, the CLIK goal positions,
the servo commands and the weighted wrench distribution."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.control import controller_kernels as kernels
from clamber.quadruped.control.reference import MotionReference
from clamber.quadruped.control.variants import make_controller
from clamber.quadruped.control.wbc_kernels import MIN_LOAD
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotState


def _states(rm, rng, n, scale=0.1):
    """Random states near the default stance and references near them, with swing targets
    on some legs."""
    s0 = rm.default_state()
    for k in range(n):
        R = pin.exp3(rng.normal(size=3))
        qj = rm.clip_joints(s0.joint_positions + rng.normal(0, 0.2, 20))
        state = RobotState(s0.body_position + rng.normal(0, 0.05, 3), R, qj,
                           rng.normal(0, scale, 6), np.zeros(20))
        body = state.body_pose * pin.exp6(pin.Motion(rng.normal(0, 0.05, 6)))
        load = dict.fromkeys(LEG_NAMES, 1.0)
        swing = {}
        if k % 3:
            leg = LEG_NAMES[k % 4]
            load[leg] = 0.0 if k % 3 == 1 else 0.4
            if k % 3 == 1:
                swing[leg] = pin.SE3(pin.exp3(rng.normal(0, 0.5, 3)), rng.normal(0, 0.3, 3))
        yield state, MotionReference(body, rng.normal(0, scale, 6), rng.normal(0, scale, 6),
                                     {g: x for g, x in load.items() if x > 0}, swing)


def test_body_pd_law_is_pinocchios(rm):
    """The PD acceleration equals ``a_ref' + kp log6(T^-1 T_ref) + kd (V_ref' - V)`` (the
    reference's twist and acceleration carried by the error's action matrix), clipped,
    computed with Pinocchio's ``SE3`` objects, to 1e-12."""
    ctrl = make_controller("qwbc", rm)
    pd = ctrl.pd
    rng = np.random.default_rng(1)
    clipped = 0
    for state, ref in _states(rm, rng, 60, scale=2.0):
        err = state.body_pose.actInv(ref.body_pose)
        Ad = err.toActionMatrix()
        raw = (Ad @ ref.body_acceleration + pd.kp * pin.log6(err).vector
               + pd.kd * (Ad @ ref.body_twist - state.body_twist))
        hi = np.r_[np.full(3, pd.max_linear), np.full(3, pd.max_angular)]
        clipped += np.any(np.abs(raw) > hi)
        np.testing.assert_allclose(pd.acceleration(state, ref), np.clip(raw, -hi, hi),
                                   rtol=0, atol=1e-12 * max(1.0, np.abs(raw).max()))
        e, de = pd.wrench_error(state, ref)
        np.testing.assert_allclose(e, pin.log6(err).vector, rtol=0, atol=1e-12)
        np.testing.assert_allclose(de, Ad @ ref.body_twist - state.body_twist, atol=1e-12)
    assert clipped > 0


def test_configuration_is_pinocchios(rm):
    """A state's configuration (the controllers' too) is Pinocchio's ``SE3ToXYZQUAT`` of its
    pose (the quaternion up to its sign, to 1e-14) followed by the joints, on every branch
    of the conversion (the trace or one of the three diagonal entries largest)."""
    ctrl = make_controller("vmc", rm)
    rng = np.random.default_rng(2)
    s0 = rm.default_state()
    axes = [np.zeros(3)] + [np.pi * np.eye(3)[i] * 0.97 for i in range(3)]
    for k in range(40):
        R = pin.exp3(axes[k % 4] + rng.normal(0, 0.05, 3))
        state = RobotState(s0.body_position, R, s0.joint_positions)
        want = np.r_[pin.SE3ToXYZQUAT(state.body_pose), s0.joint_positions]
        for q in (state.q(), ctrl._configuration(state)):
            sign = np.sign(q[3:7] @ want[3:7])
            np.testing.assert_array_equal(q[:3], want[:3])
            np.testing.assert_allclose(sign * q[3:7], want[3:7], rtol=0, atol=1e-14)
            np.testing.assert_array_equal(q[7:], want[7:])


def _clik_goal(ctrl, rm, state, ref, statics):
    """CLIK goal positions with Pinocchio's ``SE3`` objects and ``np.linalg.solve``."""
    stance, swing = ref.stance, ref.foot_targets
    body_inv, target_inv = state.body_pose.inverse(), ref.body_pose.inverse()
    out = state.joint_positions.copy()
    w, d2 = ctrl.clik.w, ctrl.clik.damping**2
    for i, (leg, f) in enumerate(zip(LEG_NAMES, statics.foot_poses, strict=True)):
        target = swing.get(leg, f) if leg not in stance else f
        e = pin.log6((body_inv * f).actInv(target_inv * target)).vector * ctrl.clik.gain * w
        Jw = w[:, None] * statics.leg_jacobians[i]
        out[5 * i:5 * i + 5] += Jw.T @ np.linalg.solve(Jw @ Jw.T + d2 * np.eye(6), e)
    return np.clip(out, rm.q_min, rm.q_max)


def test_clik_goal_positions_are_pinocchios(rm):
    """The compiled CLIK goal (stance legs staying, swing legs moving to their targets)
    equals the step written with Pinocchio's ``SE3`` objects and NumPy's solve to 1e-10
    rad."""
    ctrl = make_controller("qwbc", rm)
    rng = np.random.default_rng(3)
    for state, ref in _states(rm, rng, 60):
        st = ctrl.statics.evaluate(state.q())
        np.testing.assert_allclose(ctrl._positions(state, ref, st),
                                   _clik_goal(ctrl, rm, state, ref, st), rtol=0, atol=1e-10)


def test_servo_command_and_clipped_torques_are_the_torque_map_clipped(rm):
    """The servo command's torques are ``clip(tau_bias - J^T F, +-tau_max)`` with a NaN made
    0 and its currents ``min(|tau| k + margin i_max, i_max)``; CLIK's clipped torques keep a
    NaN (both to 1e-12)."""
    ctrl = make_controller("vmc", rm)
    rng = np.random.default_rng(9)
    for k, (state, _) in enumerate(_states(rm, rng, 60)):
        st = ctrl.statics.evaluate(state.q())
        F = rng.standard_normal(24) * [1.0, 30.0, 300.0][k % 3]
        if k % 7 == 0:
            F[rng.integers(24)] = np.nan
        with np.errstate(invalid="ignore"):
            raw = st.tau_bias - np.concatenate([st.leg_jacobians[i].T @ F[6 * i:6 * i + 6]
                                                for i in range(4)])
            clipped = np.clip(raw, -rm.tau_max, rm.tau_max)
        tau = np.empty(20)
        kernels.clipped_torques(st.tau_bias, st.leg_jacobians, F, rm.tau_max, tau)
        np.testing.assert_allclose(tau, clipped, rtol=1e-12, atol=1e-12)
        cmd = ctrl._command(np.zeros(20), st, None, F)
        tau_cmd = np.nan_to_num(clipped)
        np.testing.assert_allclose(cmd.torque, tau_cmd, rtol=1e-12, atol=1e-12)
        current = np.minimum(np.abs(tau_cmd) * rm.current_per_torque
                             + ctrl.current_margin * rm.current_max, rm.current_max)
        np.testing.assert_allclose(cmd.current_limit, current, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("load", [[1, 1, 1, 1], [1, 1, 1, 0], [0.3, 1, 1, 1],
                                  [1, 0.01, 1, 1]])
def test_weighted_distribution_solves_its_least_norm_problem(rm, load):
    """The compiled distribution is the minimum of ``sum_i F_i^T W F_i / l_i^2`` subject to
    ``A F = B`` (``l_i`` at least the ramp's floor): it balances the body, leaves swinging
    grippers unloaded, and equals the weighted pseudo-inverse solved by NumPy to 1e-9."""
    from clamber.quadruped.control.controllers import weighted_distribution

    ctrl = make_controller("vmc", rm)
    rng = np.random.default_rng(4)
    load = np.asarray(load, dtype=float)
    w = rng.uniform(0.5, 2.0, 6)
    for state, _ in _states(rm, rng, 10):
        st = ctrl.statics.evaluate(state.q())
        B = st.B + rng.normal(0, 5, 6)
        F = weighted_distribution(st.A, B, w, load)
        on = (load > 0).repeat(6)
        inv_w = np.where(on, np.tile(1 / w, 4) * np.maximum(load, MIN_LOAD).repeat(6)**2, 0)
        want = inv_w * (st.A.T @ np.linalg.solve((st.A * inv_w) @ st.A.T, B))
        np.testing.assert_allclose(F, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
        np.testing.assert_allclose(st.A @ F, B, atol=1e-9)
        assert not F[~on].any()
