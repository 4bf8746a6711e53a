"""The Q-WBC wrench QP: optimality, limits, balance, and agreement with Pinocchio's RNEA."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import lsq_linear

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.control.wbc_problem import QWBCWeights, box_of
from clamber.quadruped.model.robot_model import RobotState
from clamber.quadruped.model.statics import StaticsEvaluator

LOADS = ([1, 1, 1, 1], [1, 1, 1, 0], [0, 1, 1, 1], [1, 1, 0.3, 1], [1, 0.05, 1, 1])


def _polytope() -> WrenchLimits:
    """Paper box cut by the four rows |fx| + |fy| <= 45 N: a non-box polytope."""
    box = WrenchLimits.paper_box()
    cut = np.array([[s1, s2, 0, 0, 0, 0] for s1 in (1, -1) for s2 in (1, -1)], dtype=float)
    return WrenchLimits(np.vstack([box.H, cut]), np.r_[box.h, np.full(4, 45.0)])


def _wall_state(rm, rng, random_state) -> RobotState:
    s = random_state(rm, rng, spread=0.15)
    return RobotState(s.body_position, s.body_rotation, s.joint_positions)


@pytest.mark.parametrize("limits", [WrenchLimits.paper_box(), _polytope()], ids=["box", "poly"])
def test_kkt_and_gripper_frame_bounds(rm, random_state, limits):
    """For random attitudes and stance patterns every solution satisfies the KKT conditions,
    each gripper's own-frame limits (scaled by its load), zero swing wrenches and the torque
    limits; when the status is OPTIMAL the wrenches balance the body exactly."""
    rng = np.random.default_rng(4)
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([limits] * 4, rm.tau_max)
    seen = set()
    for _ in range(12):
        s = _wall_state(rm, rng, random_state)
        statics = ev.evaluate(s.q(), rng.normal(size=6) * 0.2)
        for load in LOADS:
            sol = qp.solve(statics, load)
            seen.add(sol.status)
            assert sol.status is not WrenchStatus.FAILED and np.all(np.isfinite(sol.F))
            kkt = sol.kkt_residuals()
            assert kkt["stationarity"] < 1e-6, kkt
            assert kkt["primal"] < 1e-7, kkt
            assert kkt["complementarity"] < 1e-6, kkt
            for i, lam in enumerate(load):
                Fi = sol.F[6 * i:6 * i + 6]
                if lam == 0:
                    np.testing.assert_array_equal(Fi, 0.0)
                else:
                    assert limits.scaled(lam).contains(Fi, tol=1e-7)
            tau = statics.torques(sol.F)
            stance = np.repeat(np.asarray(load) > 0, 5)
            assert np.all(np.abs(tau[stance]) <= 0.9 * rm.tau_max[stance] + 1e-7)
            if sol.status is WrenchStatus.OPTIMAL:
                np.testing.assert_allclose(statics.A @ sol.F, statics.B, atol=1e-8)
    assert WrenchStatus.OPTIMAL in seen


def test_balance_on_level_ground_and_vertical_wall(rm):
    """Standing level or hanging on a vertical wall, the four grippers carry the whole weight:
    the summed world force is m g upward, exactly."""
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    s0 = rm.default_state()
    for R in (np.eye(3), pin.utils.rotate("y", -np.pi / 2)):
        s = RobotState(s0.body_position, R, s0.joint_positions)
        q = s.q()
        statics = ev.evaluate(q)
        sol = qp.solve(statics, [1, 1, 1, 1])
        assert sol.status is WrenchStatus.OPTIMAL
        pin.framesForwardKinematics(rm.model, rm.data, q)
        total = sum(rm.data.oMf[f].rotation @ sol.F[6 * i:6 * i + 3]
                    for i, f in enumerate(rm.foot_ids))
        np.testing.assert_allclose(total, [0, 0, rm.mass * 9.81], atol=1e-8)


def test_torques_equal_pinocchio_rnea(rm, random_state):
    """tau = M_JB a_B + g_J - sum J^T F equals Pinocchio's RNEA with the gripper wrenches as
    external forces, and RNEA's base rows vanish (the body is balanced)."""
    rng = np.random.default_rng(5)
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    for _ in range(4):
        s = _wall_state(rm, rng, random_state)
        a_b = rng.normal(size=6) * 0.3
        q = s.q()
        statics = ev.evaluate(q, a_b)
        sol = qp.solve(statics, [1, 1, 1, 1])
        assert sol.status is WrenchStatus.OPTIMAL
        tau = statics.torques(sol.F)
        fext = [pin.Force.Zero() for _ in range(rm.model.njoints)]
        for i, fid in enumerate(rm.foot_ids):
            frame = rm.model.frames[fid]
            fext[frame.parentJoint] += frame.placement.act(pin.Force(sol.F[6 * i:6 * i + 6]))
        a = np.r_[a_b, np.zeros(20)]
        tau_rnea = pin.rnea(rm.model, rm.data, q, np.zeros(rm.model.nv), a, fext)
        np.testing.assert_allclose(tau_rnea[:6], 0.0, atol=1e-8)
        np.testing.assert_allclose(tau_rnea[6:], tau, atol=1e-9)


def test_infeasible_gives_closest_feasible_wrench(rm):
    """With limits too small to hold the robot, the QP returns RELAXED, a finite wrench inside
    the limits whose weighted residual matches the bounded least-squares optimum."""
    ev = StaticsEvaluator(rm)
    small = WrenchLimits.paper_box().scaled(0.1)
    weights = QWBCWeights(w2=np.full(6, 1e-8), w3=np.full(6, 1e-8))
    qp = WrenchQP([small] * 4, np.full(20, 1e6), weights)
    s0 = rm.default_state()
    s = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    statics = ev.evaluate(s.q())
    sol = qp.solve(statics, [1, 1, 1, 1])
    assert sol.status is WrenchStatus.RELAXED
    assert np.all(np.isfinite(sol.F))
    assert all(small.contains(sol.F[6 * i:6 * i + 6], tol=1e-7) for i in range(4))
    lo, hi = box_of(small)
    sq = np.sqrt(weights.w1)
    ref = lsq_linear(sq[:, None] * statics.A, sq * statics.B, bounds=(np.tile(lo, 4),
                                                                       np.tile(hi, 4)))
    ours = np.linalg.norm(sq * (statics.A @ sol.F - statics.B))
    assert ours <= np.linalg.norm(sq * (statics.A @ ref.x - statics.B)) * (1 + 1e-4) + 1e-9


def test_preswing_ramp_unloads_gripper(rm):
    """Lowering a gripper's load factor lowers its wrench and raises the others' share."""
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    s0 = rm.default_state()
    s = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    statics = ev.evaluate(s.q())
    norms = []
    for lam in (1.0, 0.6, 0.3, 0.1):
        qp.F_prev[:] = 0.0  # no smoothing toward the last wrench
        sol = qp.solve(statics, [lam, 1, 1, 1])
        assert sol.status is WrenchStatus.OPTIMAL
        norms.append(np.linalg.norm(sol.F[:3]))
    assert all(a > b for a, b in zip(norms, norms[1:], strict=False))


def test_bad_input_raises(rm):
    """Wrong load shapes, NaN, out-of-range loads, unknown legs and missing limits raise."""
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    statics = ev.evaluate(rm.default_state().q())
    for bad in ([1, 1, 1], [1, np.nan, 1, 1], [1, 1, 1, 2], {"XX": 1.0}):
        with pytest.raises(ConfigError):
            qp.solve(statics, bad)
    with pytest.raises(ConfigError):
        WrenchQP([WrenchLimits.paper_box()] * 3, rm.tau_max)
    with pytest.raises(ConfigError):
        ev.evaluate(rm.default_state().q(), np.full(6, np.nan))


def test_set_limits_shares_the_load_by_capacity(rm):
    """A gripper given a weaker box and weights scaled by its capacity (``set_limits``, after
    the solver was warm-started with the old ones) carries less and stays inside its box;
    with no bound active the answer equals the closed-form weighted least-norm wrench
    ``W^-1 A^T (A W^-1 A^T)^-1 B`` (servo torque rows off, as that form has none), so the
    Hessian was rebuilt with the new weights."""
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max, torque_rows=False)
    s0 = rm.default_state()
    s = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    statics = ev.evaluate(s.q())
    before = qp.solve(statics, [1, 1, 1, 1]).F.copy()
    factor = np.full(6, 0.5)
    weak = WrenchLimits.paper_box().scaled(0.5)
    qp.set_limits(0, weak, 1.0 / factor**2)
    qp.F_prev[:] = 0.0  # no smoothing toward the last wrench
    sol = qp.solve(statics, [1, 1, 1, 1])
    assert sol.status is WrenchStatus.OPTIMAL
    assert weak.contains(sol.F[:6], tol=1e-9)
    assert np.linalg.norm(sol.F[:3]) < np.linalg.norm(before[:3])
    w = QWBCWeights()
    diag = np.tile(w.w2 + w.w3, 4)
    diag[:6] = w.w2 / factor**2 + w.w3
    A, B = statics.A, statics.B
    ref = (A.T @ np.linalg.solve((A / diag) @ A.T, B)) / diag
    np.testing.assert_allclose(sol.F, ref, atol=1e-7)
    with pytest.raises(ConfigError):
        qp.set_limits(1, _polytope())
