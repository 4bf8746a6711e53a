"""The climbing trial's glue computes the numbers of the plain code it replaces, bit for bit:
the filter's cycles after a grasp or release through the one compiled cycle (the plain
``predict`` and ``update`` kept here as the reference), NumPy's 3-vector BLAS products
compiled in the BLAS's order, the estimate's read-out and a metric sample's errors in one
call each, and whole climbs, through releases, grasps and a gripper breaking off."""

from types import SimpleNamespace

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped import blas_order
from clamber.quadruped.control.variants import limits_active
from clamber.quadruped.estimation import ekf_kernels as kernels
from clamber.quadruped.estimation import estimator
from clamber.quadruped.estimation.estimator import LegOdometryEkf, SimulatedImu
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.trials import climb
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial
from clamber.quadruped.trials.metric_kernels import (
    attitude_errors,
    distance,
    rotation_angle,
    sample_errors,
    sample_row,
)
from clamber.quadruped.trials.result import metric_recorder
from clamber.recorder import Recorder


def _same(a, b):
    """Equal bit for bit (signs of zeros included)."""
    a, b = np.asarray(a), np.asarray(b)
    return np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


# ---- the filter ----------------------------------------------------------------------------


def _plain_cycle(ekf, imu, f, w, dt, q, contacts):
    """One cycle written plainly: the IMU sample and ``predict``, then ``update``."""
    if imu is not None:
        ekf.predict(*imu.measure(f, w, dt), dt)
    ekf.update(q, contacts, dt)


@pytest.fixture
def only_the_fused_cycle(monkeypatch):
    """The estimator's view of its kernels narrowed to the fused cycle and the read-out (any
    other kernel it asks for is an error), for the fused filter's steps."""
    narrowed = SimpleNamespace(cycle=kernels.cycle, read_out=kernels.read_out)

    def patched(on: bool):
        monkeypatch.setattr(estimator, "kernels", narrowed if on else kernels)

    return patched


def test_steps_with_feet_attaching_and_releasing_equal_predict_and_update(only_the_fused_cycle):
    """Two filters (one starting from a column-major attitude, as a trial's does) run 600
    cycles of random readings, joint angles and contacts that change at random (grasps,
    releases, none, all, several at once), now and then without the IMU or without
    velocity rows: ``step`` gives the states, covariances, anchors, last feet and IMU
    biases of the plain ``predict`` and ``update`` after every cycle, and runs no kernel
    but the fused cycle."""
    rm = RobotModel()
    rng = np.random.default_rng(31)
    q0 = rm.robot.default_joint_angles()
    R0 = np.asfortranarray(pin.utils.rpyToMatrix(0.2, -0.1, 0.4))
    fused, plain = (LegOdometryEkf(rm, np.array([0.3, -0.2, 0.5]), R0) for _ in range(2))
    imu_f, imu_p = SimulatedImu(seed=8), SimulatedImu(seed=8)
    contacts, changed = LEG_NAMES, 0
    for k in range(600):
        if rng.uniform() < 0.15:
            contacts = tuple(leg for leg in LEG_NAMES if rng.uniform() < 0.7)
            changed += 1
        q = q0 + 0.03 * np.sin(0.07 * k + np.arange(20)) + rng.normal(0, 1e-3, 20)
        f = np.array([0.0, 0.0, 9.81]) + rng.normal(0, 0.2, 3)
        w = rng.normal(0, 0.02, 3)
        dt = 0.0 if k % 41 == 13 else 0.02
        with_imu = k > 0 and dt > 0 and k % 29 != 5
        only_the_fused_cycle(True)
        fused.step(imu_f if with_imu else None, f, w, dt, q, contacts)
        only_the_fused_cycle(False)
        _plain_cycle(plain, imu_p if with_imu else None, f, w, dt, q, contacts)
        for name in ("p", "v", "R", "b_a", "b_g", "P", "rate", "_prev_feet"):
            assert _same(getattr(fused, name), getattr(plain, name)), (k, name)
        assert _same(imu_f.b_a, imu_p.b_a) and _same(imu_f.b_g, imu_p.b_g)
        assert fused.anchors.keys() == plain.anchors.keys()
        assert all(_same(fused.anchors[leg], plain.anchors[leg]) for leg in plain.anchors)
        assert fused._updates == plain._updates
    assert changed > 50


def test_a_cycle_with_no_anchored_leg_only_predicts():
    """The fused cycle with no anchored leg predicts (the plain ``predict``'s numbers),
    computes the feet (``foot_positions``'s) and leaves the covariance and attitude at the
    prediction."""
    rm = RobotModel()
    ekf, plain = (LegOdometryEkf(rm, np.zeros(3), np.eye(3)) for _ in range(2))
    imu, imu_p = SimulatedImu(seed=2), SimulatedImu(seed=2)
    f, w, q = np.array([0.1, 0.2, 9.7]), np.array([0.01, -0.02, 0.03]), \
        rm.robot.default_joint_angles()
    draws, scales = imu.draws(0.02)
    P, R, rate, feet, ok = kernels.cycle(
        ekf.P, ekf.p, ekf.v, ekf.R, ekf.b_a, ekf.b_g, ekf.rate, ekf._noise(0.02), 0.02, True,
        draws, scales, imu.b_a, imu.b_g, f, w, q, *ekf._chains, ekf._no_feet, *ekf._no_legs,
        False, *ekf._variances)
    plain.predict(*imu_p.measure(f, w, 0.02), 0.02)
    assert ok
    assert all(_same(a, b) for a, b in zip((P, R, rate, ekf.p, ekf.v),
                                           (plain.P, plain.R, plain.rate, plain.p, plain.v),
                                           strict=True))
    assert _same(feet, kernels.foot_positions(q, *ekf._chains))


# ---- NumPy's BLAS products in the BLAS's order --------------------------------------------

blas_sums_so = pytest.mark.skipif(not blas_order.same_as_numpy(),
                                  reason="this BLAS sums 3-vector products otherwise")


def _vectors(rng, n):
    """Matrices and vectors at every scale, now and then with zeros of either sign."""
    for k in range(n):
        A = rng.standard_normal((3, 3)) * 10.0 ** rng.uniform(-6, 6, (3, 3))
        x = rng.standard_normal(3) * 10.0 ** rng.uniform(-6, 6, 3)
        if k % 4 == 0:
            x[k % 3] = (-0.0, 0.0)[k % 2]
        yield A, x


@blas_sums_so
def test_compiled_products_sum_as_numpys_blas():
    """Where the probe says so, ``dot3`` and ``gemv_t3`` give NumPy's ``x.dot(y)`` and
    ``A.T @ x`` bit for bit on 20000 random inputs (a sum in another order, or with the
    multiply-adds rounded apart, differs on many of them)."""
    rng = np.random.default_rng(33)
    out = np.empty(3)
    for A, x in _vectors(rng, 20000):
        blas_order.gemv_t3(A, x, out)
        assert _same(out, A.T @ x)
        assert _same(blas_order.dot3(x, A[1]), x.dot(A[1]))
        assert _same(blas_order.dot3(x, x), x.dot(x))


@pytest.mark.parametrize("plain", ["gemv_t3", "dot3"])
def test_the_probe_refuses_plain_sums(monkeypatch, plain):
    """Where the BLAS summed plainly (each product rounded, then added in order) the probe
    would say so: with either kernel replaced by such sums it answers False."""
    def gemv(A, x, out):
        for i in range(3):
            out[i] = (A[0, i] * x[0] + A[1, i] * x[1]) + A[2, i] * x[2]

    def dot(x, y):
        return (x[0] * y[0] + x[1] * y[1]) + x[2] * y[2]

    monkeypatch.setattr(blas_order, plain, gemv if plain == "gemv_t3" else dot)
    monkeypatch.setattr(blas_order, "_checked", None)
    assert not blas_order.same_as_numpy()


@blas_sums_so
def test_read_out_is_numpys_copies_and_twist():
    """The compiled read-out of a C-ordered attitude gives ``p.copy()``, ``R.copy()`` (not
    the filter's arrays) and ``concatenate([R.T @ v, rate])`` bit for bit."""
    rng = np.random.default_rng(35)
    for R, v in _vectors(rng, 3000):
        p, rate = rng.standard_normal(3), rng.standard_normal(3)
        got = kernels.read_out(p, R, v, rate)
        want = (p.copy(), R.copy(), np.concatenate([R.T @ v, rate]))
        assert all(_same(a, b) for a, b in zip(got, want, strict=True))
        assert got[0] is not p and got[1] is not R


@pytest.mark.parametrize("order", ["C", "F"])
def test_state_is_the_numpy_state(order):
    """A filter's state equals its NumPy read-out, also from a column-major attitude (a
    trial's first, whose ``R.T @ v`` NumPy's BLAS sums in another order: read by NumPy)."""
    rm = RobotModel()
    rng = np.random.default_rng(37)
    q, dq = rm.robot.default_joint_angles(), np.linspace(-1, 1, 20)
    for k in range(200):
        R0 = np.asarray(pin.exp3(rng.standard_normal(3)), order=order)
        ekf = LegOdometryEkf(rm, rng.standard_normal(3), R0)
        ekf.R = np.asarray(ekf.R, order=order)
        if k % 5:
            ekf.v[:] = rng.standard_normal(3) * 10.0 ** rng.uniform(-6, 0)
        ekf.rate[:] = rng.standard_normal(3) * 0.01
        fast = ekf.state(q, dq)
        ekf._blas = False
        plain = ekf.state(q, dq)
        for name in ("body_position", "body_rotation", "body_twist"):
            assert _same(getattr(fast, name), getattr(plain, name)), name
        assert fast.body_rotation.flags.c_contiguous


# ---- the metric sample ---------------------------------------------------------------------


def test_attitude_errors_are_the_two_rotation_angles():
    """On rotations at every scale of angle (up to a half turn, some off orthonormal at
    round-off) both errors of one call equal ``rotation_angle``'s bit for bit."""
    rng = np.random.default_rng(32)
    for k in range(3000):
        Rs = [pin.exp3(rng.standard_normal(3) * [1e-9, 1e-3, 1.0, 3.0][(k + i) % 4])
              for i in range(3)]
        if k % 3 == 0:
            Rs[1] = Rs[1] + rng.standard_normal((3, 3)) * 1e-12
        got = attitude_errors(*Rs)
        assert _same(got[0], rotation_angle(Rs[0], Rs[2]))
        assert _same(got[1], rotation_angle(Rs[1], Rs[2]))


@blas_sums_so
def test_sample_errors_are_the_norm_and_the_rotation_angles():
    """``distance`` is ``_norm(a - b)`` and ``sample_errors`` the two rotation angles and
    the distance, bit for bit."""
    rng = np.random.default_rng(36)
    for k, (_, x) in enumerate(_vectors(rng, 3000)):
        y = x + rng.standard_normal(3) * 10.0 ** rng.uniform(-9, 0)
        assert _same(distance(x, y), climb._norm(x - y))
        Rs = [pin.exp3(rng.standard_normal(3) * [1e-9, 1e-3, 1.0, 3.0][(k + i) % 4])
              for i in range(3)]
        got = sample_errors(*Rs, x, y)
        assert _same(np.array(got), [rotation_angle(Rs[0], Rs[2]), climb._norm(x - y),
                                     rotation_angle(Rs[1], Rs[2])])


def test_next_row_is_the_row_append_writes():
    """Rows filled through ``next_row`` (past the first allocation, so the recorder grows)
    read back as the rows ``append`` writes, and count as written."""
    rng = np.random.default_rng(38)
    filled, appended = Recorder(("a", "b", "c"), rows=4), Recorder(("a", "b", "c"), rows=4)
    for _ in range(11):
        values = tuple(rng.standard_normal(3))
        filled.next_row()[:] = values
        appended.append(values)
        assert filled.rows == appended.rows
    assert _same(filled.array(), appended.array())


@blas_sums_so
def test_sample_row_writes_the_row_the_trial_appended():
    """``sample_row`` fills a metric recorder's row with the tracking error, the power and
    the errors the trial appended (``rotation_angle``, ``_norm``), bit for bit."""
    rng = np.random.default_rng(39)
    fast, plain = metric_recorder(), metric_recorder()
    for k in range(500):
        Rs = [pin.exp3(rng.standard_normal(3) * [1e-9, 1e-3, 1.0, 3.0][(k + i) % 4])
              for i in range(3)]
        p_est, p_true = rng.standard_normal(3), rng.standard_normal(3) * 1e-3
        err, power = float(rng.uniform(0, 0.05)), float(rng.uniform(0, 200))
        sample_row(fast.next_row(), err, power, *Rs, p_est, p_true)
        plain.append((err, power, rotation_angle(Rs[0], Rs[2]), climb._norm(p_est - p_true),
                      rotation_angle(Rs[1], Rs[2])))
    assert _same(fast.array(), plain.array())


# ---- whole climbs --------------------------------------------------------------------------


class PlainTrial(ClimbTrial):
    """The trial written plainly: the filter by ``predict`` and ``update`` every cycle, its
    state and the errors in NumPy, each attitude error by its own ``rotation_angle``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._blas = self.ekf._blas = False

    def _estimate(self):
        sim, dt = self.sim, self.dt
        qj, dqj = sim.joints()
        f, w = sim.imu_truth()
        _plain_cycle(self.ekf, self.imu if self.k > 0 else None, f, w, dt, qj,
                     sim.grippers.attached)
        return self.ekf.state(qj, dqj) if self.settings.state == "estimate" \
            else sim.true_state()

    def _sample(self, cmd, rec, err, p_true, R_true):
        self.planned_load = max(self.planned_load,
                                climb.load_ratio(cmd.wrenches, climb._BOX24))
        self.n_cycles += 1
        self.n_active += limits_active(self.ctrl)
        ekf = self.ekf
        self.samples.append((err, rec.power, rotation_angle(self.R, R_true),
                             climb._norm(ekf.p - p_true), rotation_angle(ekf.R, R_true)))


class NumpyTrial(ClimbTrial):
    """The trial where the BLAS sums otherwise: the fused filter, NumPy's products."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._blas = self.ekf._blas = False


def _outcome(trial):
    """Everything a climb computed: result (timings left out), physics state, filter, metric
    samples and gripper events."""
    result, _ = trial.run()
    m, d = trial.sim.model, trial.sim.data
    state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    ekf = trial.ekf
    fields = {k: v for k, v in result.to_dict().items() if "wall" not in k and "setup" not in k}
    return fields, repr(trial.sim.grippers.events), [
        state, ekf.p, ekf.v, ekf.R, ekf.b_a, ekf.b_g, ekf.P, trial.samples.array()]


@pytest.mark.parametrize("trial", [ClimbTrial, NumpyTrial])
def test_a_climb_to_a_broken_gripper_is_the_plain_climb(trial):
    """Plain CLIK on the vertical wall (seed 0) settles, releases its first gripper and
    breaks another off: the trial (also with NumPy's products) ends in exactly the result,
    physics state, filter state, metric samples and gripper events of the plain trial."""
    settings = ClimbSettings(controller="clik-plain", incline_deg=90.0, time_limit=12.0)
    fast, plain = _outcome(trial(settings, 0)), _outcome(PlainTrial(settings, 0))
    assert "broke off" in fast[0]["reason"]
    assert "'release'" in fast[1] and "'break'" in fast[1]
    assert fast[0] == plain[0] and fast[1] == plain[1]
    assert all(np.array_equal(a, b, equal_nan=True)
               for a, b in zip(fast[2], plain[2], strict=True))


def test_a_climb_through_grasps_is_the_plain_climb():
    """Q-WBC through its first swing, grasp and the next release (seed 0, 30 s) ends in
    exactly the plain trial's numbers."""
    settings = ClimbSettings(controller="qwbc", incline_deg=90.0, time_limit=30.0)
    fast, plain = _outcome(ClimbTrial(settings, 0)), _outcome(PlainTrial(settings, 0))
    assert fast[1].count("'release'") == 2 and fast[1].count("'attach'") == 5
    assert fast[0] == plain[0] and fast[1] == plain[1]
    assert all(np.array_equal(a, b, equal_nan=True)
               for a, b in zip(fast[2], plain[2], strict=True))
