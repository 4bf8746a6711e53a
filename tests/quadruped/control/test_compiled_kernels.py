"""The climbing loop's compiled kernels against the NumPy code they replace: the QP's data bit
for bit; the sole wrenches, the failure clock's settle and the rotation exponential to
round-off, with the same decisions. (The EKF's kernels: test_quadruped_loop_speed.py.)"""

import numpy as np
import pinocchio as pin
from hypothesis import given, settings
from hypothesis import strategies as st

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.attachment.wrench_set import WRENCH_SCALE
from clamber.quadruped.control.wbc_problem import WrenchProblemBuilder
from clamber.quadruped.estimation.ekf_kernels import exp3
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.statics import StaticsEvaluator
from clamber.quadruped.sim import failure_kernels
from clamber.quadruped.sim.failure import FailureClock, default_wrench_set
from clamber.quadruped.sim.grippers import _sole_wrenches


def test_compiled_box_problem_equals_the_numpy_build_bit_for_bit():
    """On random configurations, body accelerations, load factors (swinging, ramping and
    full), previous solutions and per-gripper weights, with and without the joint-torque
    rows, the compiled hard box problem's H, f, bounds, rows and row bounds are exactly the
    NumPy build's."""
    rm = RobotModel()
    ev = StaticsEvaluator(rm)
    rng = np.random.default_rng(11)
    for torque_rows in (True, False):
        builder = WrenchProblemBuilder([WrenchLimits.paper_box()] * 4, rm.tau_max,
                                       torque_rows=torque_rows)
        for k in range(60):
            q = rm.default_state().q()
            q[7:] += rng.normal(0, 0.2, 20)
            statics = ev.evaluate(q, rng.normal(0, 1, 6))
            load = rng.uniform(0, 1, 4) * (rng.uniform(size=4) > 0.25)
            load[rng.uniform(size=4) < 0.3] = 1.0
            builder.leg_weights[:] = rng.uniform(0.5, 2.0, (4, 6)) if k % 2 else 1.0
            F_prev = rng.normal(0, 5, 24)
            a = builder.build(statics, load, F_prev)
            fast = [x.copy() for x in (a.H, a.f, a.lb, a.ub, a.C, a.lo, a.up)]
            builder._arrays[True] = builder._allocate(True)  # fresh arrays for the reference
            b = builder._build_numpy(statics, load, F_prev, True, load <= 0.0)
            for x, y in zip(fast, (b.H, b.f, b.lb, b.ub, b.C, b.lo, b.up), strict=True):
                assert np.array_equal(x, y) and np.array_equal(np.signbit(x), np.signbit(y))
            assert np.array_equal(a.swing, b.swing) and a.n_eq == b.n_eq == 6


def _gathered(ext, com, pos, mat, bodies, grippers, sites, roots, compliant):
    """The NumPy gather and shift the gripper bank ran before the kernel (the reference)."""
    e = ext.take(bodies, axis=1)
    if compliant:
        e = e + ext.take(grippers, axis=1)
    r = com.take(roots, axis=1) - pos.take(sites, axis=1)
    n, k = e.shape[:2]
    return _sole_wrenches(e.reshape(n * k, 6).copy(), r.reshape(n * k, 3),
                          mat.take(sites, axis=1).reshape(n * k, 9)).reshape(n, k, 6)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), k=st.integers(1, 4), compliant=st.booleans())
def test_compiled_sole_wrenches_equal_the_numpy_shift(seed, k, compliant):
    """Random recorded steps (external wrenches, subtree centres, site positions, rotation
    matrices) of 1-4 grippers give the NumPy gather-shift-rotate's sole wrenches to
    1e-12 relative."""
    rng = np.random.default_rng(seed)
    n, nbody, nsite = 5, 12, 9
    ext = rng.normal(0, 30, (n, nbody, 6))
    com = rng.normal(0, 0.3, (n, nbody, 3))
    pos = rng.normal(0, 0.3, (n, nsite, 3))
    mat = np.array([[pin.exp3(rng.normal(0, 2, 3)).reshape(-1) for _ in range(nsite)]
                    for _ in range(n)])
    bodies = rng.choice(nbody, k, replace=False)
    grippers = rng.choice(nbody, k, replace=False)
    sites = rng.choice(nsite, k, replace=False)
    roots = rng.integers(0, nbody, k).astype(np.int32)
    got = failure_kernels.sole_wrenches(ext, com, pos, mat, bodies, grippers, sites, roots,
                                        compliant)
    want = _gathered(ext, com, pos, mat, bodies, grippers, sites, roots, compliant)
    assert np.allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


def _clock_state(clock):
    return (clock.slide, clock.speed, clock._peak_lo, clock._peak_wrench, clock._ref_wrench,
            clock._ref_gauge, clock._lo_wrench, clock._lo_gauge)


def test_compiled_settle_equals_the_numpy_settle():
    """Two failure clocks fed the same 400 control periods of five wrenches per gripper
    (loads rising and falling inside the set, near its boundary, and outside it, on holds of
    random capacity factors; an LP measured reference now and then), one settling with the
    kernel and one with NumPy, make the same decisions (certified or not) and keep the same
    peaks, peak wrenches, reference wrenches, gauges and slides to 1e-12 relative."""
    wset = default_wrench_set()
    rng = np.random.default_rng(3)
    rows = np.array([0, 2, 3])
    base = rng.standard_normal((3, 6)) * WRENCH_SCALE
    base /= wset.upper(base)[:, None]
    fast, plain = FailureClock(4, wset), FailureClock(4, wset)
    gauges = np.zeros(4)
    outcomes = {True: 0, False: 0}
    for t in range(400):
        level = 0.2 + 0.9 * abs(np.sin(0.02 * t)) + (0.6 if t % 97 == 5 else 0.0)
        period = base[None] * level + rng.standard_normal((5, 3, 6)) * WRENCH_SCALE * 0.01
        factor = rng.uniform(0.8, 1.2, (3, 7 if t % 2 else 6))  # 7: compression apart
        if t % 50 == 0:  # an LP-measured reference, as advance sets one
            for clock in (fast, plain):
                clock._measured(rows[1], period[0, 1] / factor[1])
        ok = fast.settle_into(rows, period, factor, gauges)
        want = plain.settle(rows, period, factor)
        assert ok == (want is not None), t
        outcomes[ok] += 1
        if ok:
            assert np.allclose(gauges[rows], want, rtol=1e-12, atol=0)
        for a, b in zip(_clock_state(fast), _clock_state(plain), strict=True):
            assert np.allclose(a, b, rtol=1e-12, atol=1e-15), t
    assert outcomes[True] > 50 and outcomes[False] > 5  # both branches exercised
    assert np.allclose(fast.peaks(), plain.peaks(), rtol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-4.0, 4.0), min_size=3, max_size=3),
       st.sampled_from([1.0, 1e-3, 1e-5, 1e-9]))
def test_exp3_equals_pinocchio(v, scale):
    """The compiled rotation exponential equals Pinocchio's ``exp3`` to 1e-14 on rotation
    vectors from 4 rad down to 1e-9 rad (its small-angle series included)."""
    w = np.array(v) * scale
    assert np.allclose(exp3(w), pin.exp3(w), rtol=0, atol=1e-14)


def test_compiled_clik_step_and_torques_equal_numpy():
    """On random leg Jacobians, pose errors and subsets of legs, the compiled damped
    least-squares steps equal ``J_w^T solve(J_w J_w^T + d^2 I, e)`` per leg, and the compiled
    torque map equals ``tau_bias - J_i^T F_i``, to 1e-12 relative."""
    from clamber.quadruped.model.clik_kernels import dls_steps, joint_torques

    rng = np.random.default_rng(8)
    w = np.array([1.0, 1.0, 1.0, 0.3, 0.3, 0.3])
    for _ in range(200):
        J = rng.normal(0, 0.2, (4, 6, 5))
        legs = np.sort(rng.choice(4, rng.integers(1, 5), replace=False))
        e = rng.normal(0, 0.05, (len(legs), 6))
        d2 = 10.0 ** rng.uniform(-6, -2)
        want = np.array([(w[:, None] * J[i]).T @ np.linalg.solve(
            (w[:, None] * J[i]) @ (w[:, None] * J[i]).T + d2 * np.eye(6), e[k])
            for k, i in enumerate(legs)])
        got = dls_steps(J, legs, e, w, d2)
        assert np.allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max())
        F, tau_bias = rng.normal(0, 20, 24), rng.normal(0, 2, 20)
        plain = tau_bias - np.concatenate([J[i].T @ F[6 * i:6 * i + 6] for i in range(4)])
        assert np.allclose(joint_torques(tau_bias, J, F), plain, rtol=1e-12, atol=1e-12)


def test_a_kernel_without_a_writable_cache_compiles_in_memory(monkeypatch):
    """Where numba finds no writable cache location (a read-only install without a user
    cache), :func:`clamber.compiled.kernel` still compiles the function, uncached, rather
    than failing at import."""
    from numba.core import caching

    from clamber.compiled import kernel

    monkeypatch.setattr(caching.CacheImpl, "_locator_classes", [])

    def twice(x):
        return 2.0 * x

    compiled = kernel(twice)
    assert compiled(1.5) == 3.0 and compiled._cache.__class__.__name__ == "NullCache"


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
       st.sampled_from([3.0, 1.0, 1e-3, 1e-7]))
def test_rotation_angle_and_load_ratio_equal_their_numpy_forms(v, scale):
    """The compiled attitude error equals ``|log3(Ra^T Rb)|`` (Pinocchio) to 1e-12 rad from
    3 rad down to 1e-7 rad apart (1e-9 rad between 3 rad and pi), and the planned load
    ratio equals NumPy's
    ``(|w| / box).max()`` exactly."""
    from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
    from clamber.quadruped.trials.metric_kernels import load_ratio, rotation_angle

    Ra = pin.exp3(np.array(v[:3]) * 2.0)
    Rb = Ra @ pin.exp3(np.array(v[3:]) * scale)
    want = np.linalg.norm(pin.log3(Ra.T @ Rb))
    # Near pi the rotation's vector part vanishes and both forms lose digits.
    assert abs(rotation_angle(Ra, Rb) - want) <= (1e-12 if want < 3.0 else 1e-9)
    w = np.array(v * 4) * 37.0
    box = np.tile(PAPER_BOX_HALF_WIDTHS, 4)
    assert load_ratio(w, box) == float((np.abs(w) / box).max())
