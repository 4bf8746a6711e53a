"""The climbing trial's glue computes the numbers of the plain code it replaces, bit for bit:
the filter's cycles after a grasp or release through the one compiled cycle (the plain
``predict`` and ``update`` kept here as the reference), both attitude errors of a metric
sample in one call, and whole climbs, through releases, grasps and a gripper breaking off."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped import ekf_kernels as kernels
from clamber.quadruped.estimator import LegOdometryEkf, SimulatedImu
from clamber.quadruped.model import RobotModel
from clamber.quadruped.robot import LEG_NAMES
from clamber.quadruped.trials import climb
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial
from clamber.quadruped.trials.metric_kernels import attitude_errors, rotation_angle
from clamber.quadruped.variants import limits_active


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
    """The filter's other kernels made to fail when called, for the fused filter's steps."""
    def refuse(*args):
        raise AssertionError("a kernel other than the fused cycle ran")

    kept = {name: getattr(kernels, name) for name in
            ("predict", "update", "foot_positions", "imu_sample")}

    def patched(on: bool):
        for name, fn in kept.items():
            monkeypatch.setattr(kernels, name, refuse if on else fn)

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


# ---- whole climbs --------------------------------------------------------------------------


class PlainTrial(ClimbTrial):
    """The trial written plainly: the filter by ``predict`` and ``update`` every cycle, each
    attitude error by its own ``rotation_angle``."""

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


def test_a_climb_to_a_broken_gripper_is_the_plain_climb():
    """Plain CLIK on the vertical wall (seed 1) settles, releases its first gripper and
    breaks another off: the trial ends in exactly the result, physics state, filter state,
    metric samples and gripper events of the plain trial."""
    settings = ClimbSettings(controller="clik-plain", incline_deg=90.0, time_limit=12.0)
    fast, plain = _outcome(ClimbTrial(settings, 1)), _outcome(PlainTrial(settings, 1))
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
