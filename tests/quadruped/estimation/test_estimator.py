"""The leg-odometry EKF tracks a known body trajectory with a noisy, biased IMU."""

import numpy as np
import pinocchio as pin

from clamber.quadruped.estimation.estimator import ImuParameters, LegOdometryEkf, SimulatedImu
from clamber.quadruped.model.kinematics import foot_poses, leg_ik
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel


def test_ekf_error_small_on_a_known_trajectory():
    """The body sways (2 cm, 3 deg) over feet fixed in the world for 4 s at 50 Hz; the EKF,
    fed the exact joint angles and an IMU with noise and bias, stays within 3 mm and
    0.3 deg."""
    rm = RobotModel()
    s0 = rm.default_state()
    feet = {leg: p for leg, p in zip(LEG_NAMES, foot_poses(rm, s0.q()), strict=True)}
    dt, n = 0.02, 200
    t = np.arange(n + 1) * dt

    def pose(tk: float) -> pin.SE3:
        p = s0.body_position + 0.02 * np.array([np.sin(1.3 * tk), np.sin(0.9 * tk), 0.5
                                                * np.sin(2.1 * tk)])
        return pin.SE3(pin.exp3(np.radians(3) * np.array([np.sin(tk), np.cos(0.7 * tk) - 1,
                                                          0.0])), p)

    poses = [pose(tk) for tk in t]
    imu = SimulatedImu(ImuParameters(), seed=4)
    ekf = LegOdometryEkf(rm, poses[0].translation, poses[0].rotation, imu.spec)
    q = s0.joint_positions.copy()
    P = np.array([T.translation for T in poses])
    ekf.v = (P[1] - P[0]) / dt
    errors, att = [], []
    for k in range(1, n):
        prev = poses[k - 1]
        acc = (P[k] - 2 * P[k - 1] + P[k - 2]) / dt**2 if k >= 2 else np.zeros(3)
        w = pin.log3(prev.rotation.T @ poses[k].rotation) / dt
        ekf.predict(*imu.measure(prev.rotation.T @ (acc + [0, 0, 9.81]), w, dt), dt)
        T = poses[k]
        for leg in LEG_NAMES:
            q = leg_ik(rm, leg, T.actInv(feet[leg]), q, tol=1e-9).q
        ekf.update(q, LEG_NAMES, dt)
        errors.append(np.linalg.norm(ekf.p - T.translation))
        att.append(np.linalg.norm(pin.log3(ekf.R.T @ T.rotation)))
    assert max(errors) < 0.003
    assert np.degrees(max(att)) < 0.3


def _offset_ekf(offset: np.ndarray) -> tuple[LegOdometryEkf, np.ndarray, RobotModel]:
    """An EKF at rest on four anchored feet whose estimate is ``offset`` [m] off the body."""
    rm = RobotModel()
    s0 = rm.default_state()
    ekf = LegOdometryEkf(rm, s0.body_position + offset, s0.body_rotation)
    ekf.update(s0.joint_positions, LEG_NAMES)  # anchors the feet at the (offset) estimate
    return ekf, s0.body_position, s0.joint_positions


def _at_rest(ekf: LegOdometryEkf, q: np.ndarray, cycles: int) -> None:
    """``cycles`` 50 Hz predict-update cycles, the IMU reading rest, all four feet held."""
    f = ekf.R.T @ np.array([0.0, 0.0, 9.81])
    for _ in range(cycles):
        ekf.predict(f, np.zeros(3), 0.02)
        ekf.update(q, LEG_NAMES, 0.02)


def test_a_position_fix_moves_the_odometry_frame_with_the_body():
    """``register`` moves the body estimate ``gain`` of the way to a position fix and the
    anchored feet with it, so leg odometry keeps the fix (within 0.1 mm over 5 s at rest);
    a Kalman update of the body alone with a 3 mm fix is pulled back by the anchors to
    within a tenth of the offset in 1 s."""
    offset = np.array([0.01, -0.02, 0.015])
    ekf, truth, q = _offset_ekf(offset)
    shift = ekf.register(truth, 0.3)
    np.testing.assert_allclose(shift, -0.3 * offset, atol=1e-12)
    np.testing.assert_allclose(ekf.p, truth + 0.7 * offset, atol=1e-12)
    ekf.register(truth, 1.0)
    _at_rest(ekf, q, 250)
    assert np.linalg.norm(ekf.p - truth) < 1e-4

    alone, truth, q = _offset_ekf(offset)
    H = np.zeros((3, alone.P.shape[0]))
    H[:, :3] = np.eye(3)
    alone.correct(H, truth - alone.p, np.full(3, 0.003**2))
    assert np.linalg.norm(alone.p - truth - offset) > 0.2 * np.linalg.norm(offset)
    _at_rest(alone, q, 50)
    assert np.linalg.norm(alone.p - truth - offset) < 0.1 * np.linalg.norm(offset)
