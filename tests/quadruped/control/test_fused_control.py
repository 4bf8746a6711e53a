"""The controllers' compiled per-cycle paths compute the numbers of the plain Pinocchio and
NumPy code they replace, bit for bit: the SE(3) products and ``log6``, the statics read out
of Pinocchio's data, and the CLIK's goal positions."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.control.controllers import QWBCController
from clamber.quadruped.control.reference import MotionReference
from clamber.quadruped.model import se3_kernels
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel, RobotState, configuration
from clamber.quadruped.model.statics import StaticsEvaluator, placement_table


def _poses(rng, n):
    """Random transforms at every scale of rotation angle (near zero, where ``log6`` takes
    its series, and near pi, where ``log3`` takes its singular branch), some rotations
    slightly off orthonormal (as an estimator's are between re-orthonormalizations)."""
    for k in range(n):
        scale = [1e-12, 1e-9, 1e-6, 1e-4, 1e-2, 0.05, 1.0, 3.0][k % 8]
        R = pin.exp3(rng.standard_normal(3) * scale)
        if k % 11 == 0:
            v = rng.standard_normal(3)
            R = pin.exp3(v * (np.pi - 10.0 ** rng.uniform(-12, -2)) / np.linalg.norm(v))
        if k % 7 == 0:
            R = R + rng.standard_normal((3, 3)) * 1e-12
        yield pin.SE3(R, rng.standard_normal(3) * [1e-4, 0.1, 2.0][k % 3])


def test_se3_kernels_equal_pinocchio():
    """Composition, ``actInv``, inverse, ``log6`` and ``exp6`` equal Pinocchio's bit for
    bit."""
    rng = np.random.default_rng(0)
    R, p, out = np.empty((3, 3)), np.empty(3), np.empty(6)
    for M in _poses(rng, 4000):
        N = pin.SE3.Random()
        se3_kernels.compose(M.rotation, M.translation, N.rotation, N.translation, R, p)
        assert np.array_equal(R, (M * N).rotation) and np.array_equal(p, (M * N).translation)
        se3_kernels.act_inv(M.rotation, M.translation, N.rotation, N.translation, R, p)
        P = M.actInv(N)
        assert np.array_equal(R, P.rotation) and np.array_equal(p, P.translation)
        se3_kernels.inverse(M.rotation, M.translation, R, p)
        assert np.array_equal(R, M.inverse().rotation)
        assert np.array_equal(p, M.inverse().translation)
        se3_kernels.log6(M.rotation, M.translation, out)
        assert np.array_equal(out, pin.log6(M).vector)
        se3_kernels.exp6(out, R, p)
        E = pin.exp6(pin.Motion(out))
        assert np.array_equal(R, E.rotation) and np.array_equal(p, E.translation)


def _configurations(rm, rng, n):
    for R in (pin.exp3(rng.standard_normal(3)) for _ in range(n)):
        qj = rng.uniform(rm.q_min, rm.q_max)
        yield R, rng.standard_normal(3), qj, configuration(pin.SE3(R, np.zeros(3)), qj)


def test_placement_table_follows_pinocchio_frames():
    """The placement table is a view on ``data.oMf``: after an update it reads every
    frame's rotation and translation."""
    rm = RobotModel()
    table = placement_table(rm.data)
    assert table is not None
    rng = np.random.default_rng(1)
    for _, _, _, q in _configurations(rm, rng, 5):
        pin.framesForwardKinematics(rm.model, rm.data, q)
        for k, M in enumerate(rm.data.oMf):
            assert np.array_equal(table[k, :9].reshape(3, 3).T, M.rotation)
            assert np.array_equal(table[k, 9:], M.translation)


@pytest.mark.parametrize("accelerate", [False, True])
def test_compiled_statics_equal_the_bindings(accelerate):
    """On random configurations the compiled read-out's ``A``, ``B``, leg Jacobians, gravity
    torques and gripper placements equal those of ``getFrameJacobian`` and ``oMf`` through
    the bindings, bit for bit, with and without a body acceleration."""
    rm = RobotModel()
    evaluator = StaticsEvaluator(rm)
    rng = np.random.default_rng(2)
    for R, p, qj, _ in _configurations(rm, rng, 200):
        q = configuration(pin.SE3(R, p), qj)
        a = rng.standard_normal(6) if accelerate else None
        st = evaluator.evaluate(q, a)
        got = [x.copy() for x in (st.A, st.B, st.leg_jacobians, st.tau_bias,
                                  st.foot_rotations, st.foot_translations)]
        st = evaluator.evaluate_plain(q, a)
        want = (st.A, st.B, st.leg_jacobians, st.tau_bias, st.foot_rotations,
                st.foot_translations)
        assert all(np.array_equal(x, y) for x, y in zip(got, want, strict=True))
        oMf = rm.data.oMf
        for i, M in enumerate(st.foot_poses):
            assert np.array_equal(M.homogeneous, oMf[rm.foot_ids[i]].homogeneous)


def test_statics_without_the_table_fall_back_to_the_bindings():
    """An evaluator whose model data was replaced (the table would read the old one) takes
    the bindings' path, with the same numbers."""
    rm = RobotModel()
    evaluator = StaticsEvaluator(rm)
    q = rm.default_state().q()
    want = evaluator.evaluate(q).A.copy()
    rm.data = rm.model.createData()
    assert np.array_equal(evaluator.evaluate(q).A, want)


def test_compiled_goal_positions_equal_the_se3_objects():
    """On random states and references (swing targets, stance attitudes, unloading legs)
    the compiled CLIK goal positions equal the errors built from Pinocchio's ``SE3``
    objects followed by :meth:`Clik.step_every_leg`, bit for bit."""
    rm = RobotModel()
    ctrl = QWBCController(rm)
    ctrl.clik.w[3:] = 0.4
    rng = np.random.default_rng(3)
    for n, (R, p, qj, _) in enumerate(_configurations(rm, rng, 600)):
        st = ctrl.statics.evaluate(configuration(pin.SE3(R, p), qj))
        state = RobotState.trusted(p, R, qj, np.zeros(6), np.zeros(20))
        load = {leg: float(rng.choice([0.0, 0.5, 1.0])) for leg in LEG_NAMES}
        swing = {leg: pin.SE3.Random() for leg in LEG_NAMES if rng.random() < 0.5}
        keep = {leg: pin.exp3(rng.standard_normal(3) * 0.1) for leg in LEG_NAMES
                if rng.random() < 0.5}
        body = pin.SE3(pin.exp3(rng.standard_normal(3) * 10.0 ** -(n % 9)) @ R,
                       p + rng.standard_normal(3) * 0.01)
        ref = MotionReference.trusted(body, np.zeros(6), np.zeros(6), load, swing, keep)
        assert np.array_equal(ctrl._positions(state, ref, st),
                              ctrl._positions_plain(state, ref, st))


def _states_and_references(rm, rng, n):
    """Random measured states and references near them (pose errors from 1 rad down to
    1e-9 rad, twists and accelerations at several scales, zero ones included)."""
    for k, (R, p, qj, _) in enumerate(_configurations(rm, rng, n)):
        scale = [0.0, 1e-6, 1e-2, 1.0][k % 4]
        state = RobotState.trusted(p, R, qj, rng.standard_normal(6) * scale,
                                   rng.standard_normal(20))
        body = pin.SE3(pin.exp3(rng.standard_normal(3) * 10.0 ** -(k % 10)) @ R,
                       p + rng.standard_normal(3) * 0.01)
        yield state, MotionReference.trusted(body, rng.standard_normal(6) * scale,
                                             rng.standard_normal(6) * scale,
                                             dict.fromkeys(LEG_NAMES, 1.0), {})


def test_compiled_body_pd_equals_the_se3_objects():
    """The compiled PD law's acceleration and the pose and twist errors equal those built
    from Pinocchio's ``SE3`` objects and NumPy, bit for bit, clipping included."""
    from clamber.quadruped.control.controllers import BodyPD

    rm = RobotModel()
    pd = BodyPD(kp=np.full(6, 400.0), kd=np.full(6, 60.0))
    rng = np.random.default_rng(4)
    for state, ref in _states_and_references(rm, rng, 1000):
        assert np.array_equal(pd.acceleration(state, ref), pd.acceleration_plain(state, ref))
        err = state.body_pose.actInv(ref.body_pose)
        e, de = pd.wrench_error(state, ref)
        assert np.array_equal(e, pin.log6(err).vector)
        assert np.array_equal(de, err.toActionMatrix() @ ref.body_twist - state.body_twist)
        assert np.array_equal(pd.pose_error(state, ref), e)


def test_compiled_configuration_equals_se3_to_xyzquat():
    """A controller's configuration buffer holds ``configuration(state.body_pose, joints)``
    bit for bit, on every branch of the quaternion conversion."""
    from clamber.quadruped.model.robot_model import configuration

    rm = RobotModel()
    ctrl = QWBCController(rm)
    rng = np.random.default_rng(5)
    for k, (R, p, qj, _) in enumerate(_configurations(rm, rng, 3000)):
        if k % 5 == 0:  # near the half turns, where the trace is not positive
            R = pin.exp3(np.eye(3)[k % 3] * (np.pi - 1e-3 * rng.random())) @ pin.exp3(
                rng.standard_normal(3) * 1e-3)
        state = RobotState.trusted(p, R, qj, np.zeros(6), np.zeros(20))
        assert np.array_equal(ctrl._configuration(state),
                              configuration(pin.SE3(R, p), qj))


def test_compiled_servo_command_equals_the_numpy_one():
    """Torques from the statics and wrenches, clipped, with the current limits, equal
    ``_command(statics.torques(F))`` bit for bit, non-finite torques included."""
    rm = RobotModel()
    ctrl = QWBCController(rm)
    rng = np.random.default_rng(6)
    for k, (R, p, qj, _) in enumerate(_configurations(rm, rng, 500)):
        st = ctrl.statics.evaluate(configuration(pin.SE3(R, p), qj))
        F = rng.standard_normal(24) * [1.0, 30.0, 300.0][k % 3]
        if k % 7 == 0:
            F[rng.integers(24)] = [np.nan, np.inf, -np.inf][k % 3]
        goal = rng.standard_normal(20)
        fast = ctrl._command_from(goal, st, None, F)
        with np.errstate(invalid="ignore"):  # inf - inf in the finiteness test
            plain = ctrl._command(goal, st.torques(F), None, F)
        assert np.array_equal(fast.torque, plain.torque)
        assert np.array_equal(fast.current_limit, plain.current_limit)
        assert fast.position is goal and fast.wrenches is F and fast.status is None


def test_compiled_distribution_weights_equal_the_numpy_ones():
    """The weighted distribution with its weights compiled equals the NumPy one bit for
    bit: random loads (swinging grippers and loads below the floor included), axis
    weights and body wrenches."""
    from clamber.quadruped.control.controllers import (
        weighted_distribution,
        weighted_distribution_plain,
    )

    rm = RobotModel()
    evaluator = StaticsEvaluator(rm)
    rng = np.random.default_rng(7)
    for k, (R, p, qj, _) in enumerate(_configurations(rm, rng, 300)):
        st = evaluator.evaluate(configuration(pin.SE3(R, p), qj))
        load = rng.choice([0.0, 0.01, 0.3, 1.0], 4) if k % 2 else rng.uniform(0.01, 1, 4)
        load[rng.integers(4)] = 1.0  # at least one gripper holds
        w = 1.0 / rng.uniform(0.5, 50.0, 6) ** 2 if k % 3 else np.ones(6)
        B = rng.standard_normal(6) * 20.0
        assert np.array_equal(weighted_distribution(st.A, B, w, load),
                              weighted_distribution_plain(st.A, B, w, load))


def _plain_step(ctrl, state, ref):
    """One control cycle written with Pinocchio's objects and NumPy throughout: goal
    positions, torques, current limits and wrenches."""
    from clamber.quadruped.control.controllers import (
        CLIKController,
        QWBCController,
        weighted_distribution_plain,
    )

    body, rm = state.body_pose, ctrl.rm
    q = configuration(body, state.joint_positions)
    if isinstance(ctrl, QWBCController):
        statics = ctrl.statics.evaluate_plain(q, ctrl.pd.acceleration_plain(state, ref))
        sol = ctrl.qp.solve(statics, ref.load_array)
        cmd = ctrl._command(ctrl._positions_plain(state, ref, statics), statics.torques(sol.F),
                            sol.status, sol.F)
        return cmd.position, cmd.torque, cmd.current_limit, cmd.wrenches
    statics = ctrl.statics.evaluate_plain(q)
    err = body.actInv(ref.body_pose)
    if isinstance(ctrl, CLIKController):
        ctrl.integral = np.clip(ctrl.integral + ctrl.ki * ctrl.dt * pin.log6(err).vector,
                                -ctrl._limit, ctrl._limit)
        ref = ref.with_body_pose(ref.body_pose * pin.exp6(pin.Motion(ctrl.integral)))
        F = weighted_distribution_plain(statics.A, statics.B, ctrl.axis_weights,
                                        ref.load_array)
        tau = np.clip(statics.torques(F), -rm.tau_max, rm.tau_max)
        return ctrl._positions_plain(state, ref, statics), tau, rm.current_max, F
    e, de = pin.log6(err).vector, err.toActionMatrix() @ ref.body_twist - state.body_twist
    F = weighted_distribution_plain(statics.A, statics.B + ctrl.k * e + ctrl.d * de,
                                    ctrl.axis_weights, ref.load_array)
    cmd = ctrl._command(ctrl._positions_plain(state, ref, statics), statics.torques(F), None, F)
    return cmd.position, cmd.torque, cmd.current_limit, cmd.wrenches


@pytest.mark.parametrize("name", ["qwbc", "clik", "vmc"])
def test_controllers_step_as_their_plain_cycles(name):
    """Over 150 cycles of a random walk (pose errors large enough to clip the CLIK's
    integral, grippers unloading and swinging), each controller's commands equal those
    of the same cycle written with Pinocchio's objects and NumPy, bit for bit."""
    from clamber.quadruped.control.variants import make_controller

    rm = RobotModel()
    fast, plain = make_controller(name, rm), make_controller(name, rm)
    rng = np.random.default_rng(8)
    state0 = rm.default_state()
    R, p, qj = state0.body_rotation, state0.body_position, state0.joint_positions
    for k in range(150):
        R = pin.exp3(rng.standard_normal(3) * 0.01) @ R
        p = p + rng.standard_normal(3) * 0.002
        qj = np.clip(qj + rng.standard_normal(20) * 0.01, rm.q_min, rm.q_max)
        state = RobotState.trusted(p, R, qj, rng.standard_normal(6) * 0.05, np.zeros(20))
        load = dict.fromkeys(LEG_NAMES, 1.0)
        load[LEG_NAMES[k // 30 % 4]] = [1.0, 0.6, 0.2, 0.0, 1.0][k % 30 // 6]
        if load[LEG_NAMES[k // 30 % 4]] == 0.0:
            del load[LEG_NAMES[k // 30 % 4]]
        swing = {leg: pin.SE3(R, p + rng.standard_normal(3) * 0.1) for leg in LEG_NAMES
                 if leg not in load}
        ref = MotionReference.trusted(
            pin.SE3(pin.exp3(rng.standard_normal(3) * 0.05) @ R,
                    p + rng.standard_normal(3) * 0.03 + [0.05, 0.0, 0.0]),
            rng.standard_normal(6) * 0.02, rng.standard_normal(6) * 0.1, load, swing)
        cmd = fast.step(state, ref)
        want = _plain_step(plain, state, ref)
        got = cmd.position, cmd.torque, cmd.current_limit, cmd.wrenches
        assert all(np.array_equal(x, y) for x, y in zip(got, want, strict=True)), k
    if name == "clik":
        assert np.array_equal(fast.integral, plain.integral)
        assert np.abs(fast.integral).max() == pytest.approx(0.02)  # the clip was reached


def test_compiled_clipped_torques_equal_numpy_clip():
    """CLIK's feed-forward torques, compiled, equal ``np.clip(statics.torques(F))`` bit for
    bit, a NaN or an infinite wrench included."""
    from clamber.quadruped.control.controller_kernels import clipped_torques

    rm = RobotModel()
    evaluator = StaticsEvaluator(rm)
    rng = np.random.default_rng(9)
    for k, (R, p, qj, _) in enumerate(_configurations(rm, rng, 300)):
        st = evaluator.evaluate(configuration(pin.SE3(R, p), qj))
        F = rng.standard_normal(24) * [1.0, 30.0, 300.0][k % 3]
        if k % 7 == 0:
            F[rng.integers(24)] = [np.nan, np.inf, -np.inf][k % 3]
        tau = np.empty(20)
        clipped_torques(st.tau_bias, st.leg_jacobians, F, rm.tau_max, tau)
        with np.errstate(invalid="ignore"):
            want = np.clip(st.torques(F), -rm.tau_max, rm.tau_max)
        assert np.array_equal(tau, want, equal_nan=True)


def test_a_copied_evaluator_reads_its_own_model_data():
    """A deep copy or an unpickled evaluator reads Pinocchio's arrays of its own copy of the
    model data, not copies frozen at the time of copying."""
    import copy
    import pickle

    rm = RobotModel()
    evaluator = StaticsEvaluator(rm)
    rng = np.random.default_rng(10)
    (R, p, qj, _), (R2, p2, qj2, _) = _configurations(rm, rng, 2)
    evaluator.evaluate(configuration(pin.SE3(R, p), qj))
    for other in (copy.deepcopy(evaluator), pickle.loads(pickle.dumps(evaluator))):
        q2 = configuration(pin.SE3(R2, p2), qj2)
        got = other.evaluate(q2).A.copy()
        assert np.array_equal(got, other.evaluate_plain(q2).A)
