"""The climbing loop's shortcuts compute the numbers of the plain code they replace: the load
check, the servos' power (against its formula), the stability watch and the
gait's twists; QP solutions own their arrays."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control.qwbc import WrenchQP
from clamber.quadruped.control.wbc_problem import check_load
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.statics import StaticsEvaluator
from clamber.quadruped.sim.servos import ServoBank
from clamber.sim_stability import StabilityWatch, instability


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1e-12, 1.0 + 1e-12])
def test_load_check_passes_a_float_array_and_rejects_bad_factors(bad):
    """A float array of four factors passes through as is when every factor lies in [0, 1]
    and raises, as a list of them does, when one is NaN, infinite or out of range."""
    ok = np.array([1.0, 0.5, 0.0, 1.0])
    assert check_load(ok) is ok
    load = ok.copy()
    load[1] = bad
    with pytest.raises(ConfigError, match="load factors"):
        check_load(load)
    with pytest.raises(ConfigError, match="load factors"):
        check_load(load.tolist())


def test_servo_power_equals_the_plain_formula():
    """The servos' power equals ``V sum(|tau| c + I_idle)`` to round-off (1e-14 relative),
    for a (20,) array and for a list."""
    bank = ServoBank(Marcbot())
    rng = np.random.default_rng(3)
    for _ in range(100):
        tau = rng.uniform(-3, 3, 20)
        plain = float(bank.params.voltage * (np.abs(tau) * bank.current_per_torque
                                             + bank.params.idle_current).sum())
        assert bank.power(tau) == pytest.approx(plain, rel=1e-14)
        assert bank.power(tau.tolist()) == bank.power(tau)


def test_stability_watch_says_what_instability_says():
    """The watch reading through cached views reports nothing on a stable state and
    exactly :func:`instability`'s message after a warning or a non-finite position."""
    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>")
    d = mujoco.MjData(m)
    watch = StabilityWatch(d)
    mujoco.mj_step(m, d)
    assert watch() is None and instability(d) is None
    d.qpos[2] = np.nan
    assert watch() == instability(d) == "non-finite state"
    d.qpos[2] = 0.0
    d.warning[int(mujoco.mjtWarning.mjWARN_BADQACC)].number = 2
    assert watch() == instability(d) and "BADQACC x2" in watch()


def test_gait_twists_are_in_the_body_frame():
    """A reference at rest carries ``[R^T 0, 0]`` as computed for the gait's rotation (signs
    of zero included), read only, in its twist and acceleration; a moving body's is
    ``[R^T v, 0]``."""
    from clamber.quadruped.gaits import ClimbGait

    R = pin.exp3(np.array([0.3, -1.2, 0.4]))
    holds = {leg: [np.array([0.1 * k, 0.2 * i, 0.0]) for k in range(3)]
             for i, leg in enumerate(LEG_NAMES)}
    normals = {leg: [np.array([0.0, 0.0, 1.0])] * 3 for leg in LEG_NAMES}
    gait = ClimbGait(holds, normals, R)
    ref, _ = gait.reference(0.0, dict, np.zeros(4))
    again, _ = gait.reference(0.02, dict, np.zeros(4))
    zero = np.concatenate([R.T @ np.zeros(3), np.zeros(3)])
    for twist in (ref.body_twist, again.body_twist, again.body_acceleration):
        assert np.array_equal(twist, zero)
        assert np.array_equal(np.signbit(twist), np.signbit(zero))
        assert not twist.flags.writeable
    moving = gait._twist(np.array([0.0, 0.1, 0.0]))
    assert np.array_equal(moving, np.r_[R.T @ [0.0, 0.1, 0.0], 0.0, 0.0, 0.0])


def test_qp_solutions_own_their_arrays():
    """Each solution's wrenches and multipliers are arrays of its own: a later solve or the
    smoothing anchor never changes an earlier solution."""
    rm = RobotModel()
    st = StaticsEvaluator(rm).evaluate(rm.default_state().q())
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    first = qp.solve(st, np.ones(4))
    F, lam = first.F.copy(), first.duals.copy()
    second = qp.solve(st, np.array([1.0, 0.3, 1.0, 1.0]))
    qp.F_prev[:] = 7.0
    assert np.array_equal(first.F, F) and np.array_equal(first.duals, lam)
    assert not np.shares_memory(first.F, second.F) and not np.shares_memory(first.F, qp.F_prev)
    assert not np.shares_memory(first.duals, second.duals)
