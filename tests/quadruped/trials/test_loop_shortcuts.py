"""The simulator's and the climbing trial's per-cycle shortcuts compute the numbers of the
plain code they replace, bit for bit: the servos' command and bus power written by
kernels, the stability watch's compiled pre-check, the gait's loads handed to its
reference, and a period's gripper check in one compiled call."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.sim.servos import ServoBank


def _servo_model() -> mujoco.MjModel:
    """Twenty hinges driven by force-limited motors (whose ranges the bank rewrites)."""
    joints = "".join(f"<body pos='0 0 {i}'><joint name='j{i}' type='hinge'/>"
                     f"<geom size='0.1'/></body>" for i in range(20))
    motors = "".join(f"<motor joint='j{i}' forcelimited='true' forcerange='-1 1'/>"
                     for i in range(20))
    return mujoco.MjModel.from_xml_string(
        f"<mujoco><worldbody>{joints}</worldbody><actuator>{motors}</actuator></mujoco>")


def test_servo_command_kernel_writes_what_numpy_writes():
    """Random goals, feed-forward torques and current limits (negative, zero, ``-0.0``,
    beyond the stall current): the compiled write leaves ``ctrl`` and the force ranges
    exactly as the NumPy form does, signs of zeros included."""
    bank = ServoBank(Marcbot())
    m, m_plain = _servo_model(), _servo_model()
    fast, plain = mujoco.MjData(m), mujoco.MjData(m_plain)
    rng = np.random.default_rng(7)
    for k in range(300):
        current = rng.uniform(-1.0, 2.0, 20) * bank.current_max
        current[rng.uniform(size=20) < 0.2] = [0.0, -0.0][k % 2]
        cmd = JointCommand(rng.uniform(-3, 3, 20), rng.uniform(-5, 5, 20) * (k % 3 > 0),
                           current)
        bank.apply(m, fast, cmd)
        ServoBank.apply_plain(bank, m_plain, plain, cmd)
        assert np.array_equal(fast.ctrl, plain.ctrl)
        assert np.array_equal(m.actuator_forcerange, m_plain.actuator_forcerange)
        assert np.array_equal(np.signbit(m.actuator_forcerange),
                              np.signbit(m_plain.actuator_forcerange))


@pytest.mark.parametrize("vector", ["position", "torque", "current_limit"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_servo_command_kernel_rejects_what_numpy_rejects(vector, bad):
    """A non-finite entry raises the NumPy form's error naming its vector, and nothing is
    written; lists and short vectors go through the NumPy form."""
    bank = ServoBank(Marcbot())
    m = _servo_model()
    d = mujoco.MjData(m)
    good = {"position": np.ones(20), "torque": np.zeros(20),
            "current_limit": bank.current_max.copy()}
    bank.apply(m, d, JointCommand(**good))
    ctrl, ranges = d.ctrl.copy(), m.actuator_forcerange.copy()
    broken = dict(good)
    broken[vector] = good[vector].copy()
    broken[vector][5] = bad
    with pytest.raises(ConfigError, match=f"command {vector} must be 20 finite"):
        bank.apply(m, d, JointCommand(**broken))
    assert np.array_equal(d.ctrl, ctrl) and np.array_equal(m.actuator_forcerange, ranges)
    bank.apply(m, d, JointCommand(**{k: v.tolist() for k, v in good.items()}))
    assert np.array_equal(d.ctrl, ctrl)
    with pytest.raises(ConfigError, match="must be 20 finite"):
        bank.apply(m, d, JointCommand(**(good | {vector: np.ones(19)})))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_stability_watch_kernel_says_what_the_numpy_watch_says():
    """On stable states, states with a non-finite or huge entry (sums that overflow with
    every entry finite included) and states with fatal or harmless warnings counted, the
    compiled watch returns exactly the NumPy watch's and :func:`instability`'s verdict."""
    from clamber.sim_stability import StabilityWatch, instability

    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body>"
        "<body pos='1 0 0'><joint type='hinge'/><geom size='0.1'/></body></worldbody></mujoco>")
    d = mujoco.MjData(m)
    watch = StabilityWatch(d)
    rng = np.random.default_rng(9)
    specials = [np.nan, np.inf, -np.inf, 1e301, -1e301, 1.7e308, -1.7e308, 1e300]
    seen = set()
    for k in range(400):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = rng.standard_normal(m.nq)
        d.qvel[:] = rng.standard_normal(m.nv)
        for _ in range(k % 3):
            target = d.qpos if rng.uniform() < 0.5 else d.qvel
            target[rng.integers(len(target))] = specials[rng.integers(len(specials))]
        if k % 7 == 0:
            d.warning[int(rng.integers(len(d.warning.number)))].number = 1
        verdict = instability(d)
        assert watch() == watch.plain() == verdict
        seen.add(verdict is None)
    mujoco.mj_resetData(m, d)
    d.qpos[:] = 1.7e308  # every entry finite, their sum not
    assert watch() == watch.plain() == instability(d) == "non-finite state"
    assert seen == {True, False}


def test_servo_power_kernel_sums_as_numpy_does():
    """On torques of every scale (sums whose order shows in the last bits), the compiled
    power equals the NumPy form's ``V sum(|tau| c + I_idle)`` bit for bit; other inputs go
    through the NumPy form."""
    bank = ServoBank(Marcbot())
    rng = np.random.default_rng(4)
    orders = 0
    for _ in range(3000):
        tau = rng.standard_normal(20) * 10.0 ** rng.uniform(-6, 6, 20)
        plain = bank.power_plain(tau)
        assert bank.power(tau) == plain
        current = np.abs(tau) * bank.current_per_torque + bank.params.idle_current
        orders += float(bank.params.voltage * sum(current.tolist())) != plain
    assert orders > 100  # a running sum would differ: the order is NumPy's
    assert bank.power(list(tau)) == bank.power_plain(list(tau)) == bank.power(tau)


def test_fused_gripper_check_equals_the_three_calls():
    """Recorded periods of random MuJoCo-like data (1-4 grippers, rigid and compliant soles,
    six and seven capacity factors, loads inside, near and outside the set): the one-call
    check writes the sole wrenches of :func:`sole_wrenches`, decides as the scaled wrenches
    settled by :func:`settle` do and leaves the clocks and gauges exactly as they do."""
    import pinocchio as pin

    from clamber.attachment.wrench_set import WRENCH_SCALE
    from clamber.quadruped.sim import failure_kernels
    from clamber.quadruped.sim.failure import (
        _LOWER_MARGIN,
        CERTIFIED,
        FailureClock,
        default_wrench_set,
        scaled_wrench,
    )

    wset = default_wrench_set()
    rng = np.random.default_rng(12)
    n, nbody, nsite = 5, 12, 9
    fast, plain = FailureClock(4, wset), FailureClock(4, wset)
    gauges_fast, gauges_plain = np.zeros(4), np.zeros(4)
    outcomes = set()
    for t in range(300):
        k = 1 + t % 4
        rows = np.sort(rng.choice(4, k, replace=False))
        mat = np.array([[pin.exp3(rng.normal(0, 2, 3)).reshape(-1) for _ in range(nsite)]
                        for _ in range(n)])
        recorded = (rng.normal(0, 1, (n, nbody, 6)) * WRENCH_SCALE
                    * (0.002 + 0.2 * abs(np.sin(0.05 * t))),
                    rng.normal(0, 0.05, (n, nbody, 3)), rng.normal(0, 0.05, (n, nsite, 3)),
                    mat, rng.choice(nbody, k, replace=False),
                    rng.choice(nbody, k, replace=False), rng.choice(nsite, k, replace=False),
                    rng.integers(0, nbody, k), bool(t % 3))
        factor = rng.uniform(0.7, 1.3, (k, 7 if t % 2 else 6))
        w_fast = np.empty((n, k, 6))
        ok = fast.settle_recorded(rows, recorded, factor, gauges_fast, w_fast)
        w = failure_kernels.sole_wrenches(*recorded)
        s = plain.set
        want = failure_kernels.settle(
            np.ascontiguousarray(scaled_wrench(w, factor)), rows, s._inner_t, s._cuts_t,
            CERTIFIED, _LOWER_MARGIN, plain._ref_wrench, plain._ref_gauge, plain._peak_lo,
            plain._peak_wrench, plain._lo_wrench, plain._lo_gauge, plain.slide, plain.speed,
            gauges_plain)
        assert ok == want and np.array_equal(w_fast, w)
        assert np.array_equal(gauges_fast, gauges_plain)
        assert all(np.array_equal(a, b) for a, b in zip(fast.save(), plain.save(), strict=True))
        assert np.array_equal(fast._lo_wrench, plain._lo_wrench)
        assert np.array_equal(fast._lo_gauge, plain._lo_gauge)
        outcomes.add(ok)
    assert outcomes == {True, False}
