"""Q-WBC, CLIK and VMC share one interface and never command beyond a servo's limits."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import (
    ATTITUDE_LIMIT,
    BodyPD,
    CLIKController,
    JointCommand,
    MotionReference,
    QWBCController,
    VMCController,
)
from clamber.quadruped.control.qwbc import WrenchStatus
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotState
from clamber.quadruped.model.statics import StaticsEvaluator

CONTROLLERS = (QWBCController, CLIKController, VMCController)


@pytest.fixture(scope="module")
def controllers(rm):
    return {c.__name__: c(rm) for c in CONTROLLERS}


def _reference(state: RobotState, rng, load=None) -> MotionReference:
    offset = rng.normal(size=3) * 0.02
    pose = pin.SE3(state.body_rotation @ pin.exp3(rng.normal(size=3) * 0.05),
                   state.body_position + offset)
    return MotionReference(pose, rng.normal(size=6) * 0.05, rng.normal(size=6) * 0.2,
                           load or dict.fromkeys(LEG_NAMES, 1.0))


@pytest.mark.parametrize("name", [c.__name__ for c in CONTROLLERS])
def test_commands_respect_limits(rm, random_state, controllers, name):
    """For random valid states and references the commands are finite and inside the joint,
    torque and current limits, with one leg swinging or all four attached."""
    rng = np.random.default_rng(6)
    ctrl = controllers[name]
    for k in range(15):
        state = random_state(rm, rng, spread=0.3)
        load = dict.fromkeys(LEG_NAMES, 1.0)
        if k % 3 == 1:
            load[LEG_NAMES[k % 4]] = 0.0
        elif k % 3 == 2:
            load[LEG_NAMES[k % 4]] = 0.25
        cmd = ctrl.step(state, _reference(state, rng, load))
        assert isinstance(cmd, JointCommand)
        for x in (cmd.position, cmd.torque, cmd.current_limit):
            assert x.shape == (20,) and np.all(np.isfinite(x))
        assert np.all(cmd.position >= rm.q_min) and np.all(cmd.position <= rm.q_max)
        assert np.all(np.abs(cmd.torque) <= rm.tau_max)
        assert np.all(cmd.current_limit >= 0) and np.all(cmd.current_limit <= rm.current_max)


def test_qwbc_holds_weight_with_servo_currents(rm):
    """At rest on a vertical wall Q-WBC plans OPTIMAL wrenches and its current limits cover the
    feed-forward torque of every joint (current = torque x A per N m)."""
    s0 = rm.default_state()
    s = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    ctrl = QWBCController(rm)
    cmd = ctrl.step(s, MotionReference(s.body_pose))
    assert cmd.status is WrenchStatus.OPTIMAL
    assert np.all(cmd.current_limit >= np.abs(cmd.torque) * rm.current_per_torque - 1e-12)
    assert np.abs(cmd.torque).max() > 0.5


def test_clik_is_stiff_and_vmc_ignores_limits(rm):
    """CLIK commands full current with a gravity feed-forward that balances the body
    (``A F = B``, torques within the servo limits); the unweighted VMC's wrench share can exceed a
    gripper's box where Q-WBC's cannot; CLIK and VMC report no QP status."""
    s0 = rm.default_state()
    s = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    ref = MotionReference(s.body_pose, load={"LF": 1.0, "LR": 1.0, "RF": 1.0})
    clik = CLIKController(rm).step(s, ref)
    np.testing.assert_array_equal(clik.current_limit, rm.current_max)
    statics = StaticsEvaluator(rm).evaluate(s.q())
    np.testing.assert_allclose(statics.A @ clik.wrenches, statics.B, atol=1e-9)
    np.testing.assert_allclose(clik.torque, np.clip(statics.torques(clik.wrenches),
                                                    -rm.tau_max, rm.tau_max), atol=1e-9)
    box = WrenchLimits.paper_box()
    vmc = VMCController(rm, axis_weights=None, unload=False).step(s, ref)
    qwbc = QWBCController(rm).step(s, ref)
    for cmd in (vmc, qwbc):
        np.testing.assert_array_equal(cmd.wrenches[18:], 0.0)
    assert not all(box.contains(vmc.wrenches[6 * i:6 * i + 6]) for i in range(3))
    assert all(box.contains(qwbc.wrenches[6 * i:6 * i + 6], tol=1e-7) for i in range(3))
    assert clik.status is None and vmc.status is None
    assert qwbc.status is WrenchStatus.OPTIMAL


def test_weighted_distribution_is_the_weighted_least_norm(rm):
    """The VMC distribution solves ``min sum F_i^T W F_i / l_i^2 s.t. A F = B`` (checked
    against the KKT system), leaves swing grippers unloaded, and an unloading gripper
    (l = 0.2) carries less than at full load."""
    from clamber.quadruped.control.controllers import weighted_distribution

    s0 = rm.default_state()
    s = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    st = StaticsEvaluator(rm).evaluate(s.q())
    w = 1.0 / WrenchLimits.paper_box().h[:6] ** 2
    load = np.array([1.0, 0.2, 1.0, 0.0])
    F = weighted_distribution(st.A, st.B, w, load)
    on = np.repeat(load > 0, 6)
    D = np.diag((np.tile(w, 4) / np.repeat(np.maximum(load, 1e-9), 6) ** 2)[on])
    A = st.A[:, on]
    kkt = np.block([[2 * D, A.T], [A, np.zeros((6, 6))]])
    x = np.linalg.solve(kkt, np.concatenate([np.zeros(on.sum()), st.B]))
    np.testing.assert_allclose(F[on], x[:on.sum()], rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(F[18:], 0.0)
    full = weighted_distribution(st.A, st.B, w, np.array([1.0, 1.0, 1.0, 0.0]))
    assert np.linalg.norm(F[6:12] * np.sqrt(w)) < 0.5 * np.linalg.norm(full[6:12] * np.sqrt(w))


def test_clik_integral_action_winds_up_and_is_clamped(rm):
    """A constant body error grows CLIK's integral by ``ki dt e`` per cycle until the clamp."""
    s = rm.default_state()
    target = pin.SE3(np.eye(3), s.body_position + np.array([0.0, 0.0, 0.01]))
    ctrl = CLIKController(rm, integral_gain=0.5, integral_limit=(0.02, 0.1))
    ref = MotionReference(target)
    ctrl.step(s, ref)
    assert ctrl.integral.value[2] == pytest.approx(0.5 * 0.02 * 0.01, rel=1e-6)
    for _ in range(1000):
        ctrl.step(s, ref)
    assert ctrl.integral.value[2] == pytest.approx(0.02)


def test_qwbc_attitude_integral_turns_the_goals_not_the_position(rm):
    """Q-WBC's attitude integral grows by ``ki dt e`` on the rotation error alone, stops at
    its clamp, and moves the servos' goals; without it the goals follow the reference."""
    s = rm.default_state()
    turned = pin.SE3(pin.exp3(np.array([0.0, 0.02, 0.0])), s.body_position + [0, 0, 0.01])
    ref = MotionReference(turned)
    plain, integral = QWBCController(rm), QWBCController(rm, attitude_integral=2.0)
    first = integral.step(s, ref)
    assert integral.integral.value[4] == pytest.approx(2.0 * 0.02 * 0.02, rel=1e-6)
    np.testing.assert_array_equal(integral.integral.value[:3], 0.0)
    assert plain.integral.target(s, ref) is None
    for _ in range(500):
        last = integral.step(s, ref)
    assert integral.integral.value[4] == pytest.approx(ATTITUDE_LIMIT)
    np.testing.assert_allclose(first.position, plain.step(s, ref).position, atol=1e-3)
    assert np.abs(last.position - first.position).max() > 1e-3
    with pytest.raises(ConfigError):
        QWBCController(rm, attitude_integral=-1.0)


def test_body_pd_zero_at_reference(rm):
    """The SE(3) PD gives zero acceleration on the reference and pushes toward it otherwise."""
    s = rm.default_state()
    pd = BodyPD()
    np.testing.assert_allclose(pd.acceleration(s, MotionReference(s.body_pose)), 0, atol=1e-12)
    up = pin.SE3(np.eye(3), s.body_position + [0, 0, 0.01])
    assert pd.acceleration(s, MotionReference(up))[2] > 0


def test_bad_input_raises(rm, controllers):
    """NaN, wrong shapes, unknown legs and too few attached grippers are ConfigErrors."""
    s = rm.default_state()
    with pytest.raises(ConfigError):
        RobotState(s.body_position, s.body_rotation, s.joint_positions[:19])
    with pytest.raises(ConfigError):
        RobotState([0, 0, np.nan], s.body_rotation, s.joint_positions)
    with pytest.raises(ConfigError):
        RobotState(s.body_position, 2 * np.eye(3), s.joint_positions)
    with pytest.raises(ConfigError):
        MotionReference(s.body_pose, body_twist=np.zeros(5))
    with pytest.raises(ConfigError, match="unknown legs"):
        MotionReference(s.body_pose, load={"LF": 1.0, "XX": 1.0})
    with pytest.raises(ConfigError, match="unknown legs"):
        MotionReference(s.body_pose, foot_targets={"ZZ": pin.SE3.Identity()})
    for ctrl in controllers.values():
        with pytest.raises(ConfigError, match="at least 3"):
            ctrl.step(s, MotionReference(s.body_pose, load={"LF": 1.0, "RR": 1.0}))
