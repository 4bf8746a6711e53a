"""A contact-aided EKF with the feet's anchors in its state (Bloesch et al., RSS 2012).

State: body position ``p`` and velocity ``v`` in {S} [m, m/s], attitude ``R`` ({B} to {S}),
accelerometer and gyro biases ``b_a`` [m/s^2], ``b_g`` [rad/s], and one world anchor ``a_i``
[m] per foot in contact. The error state is ``[dp, dv, dtheta, db_a, db_g, da_LF, da_RF,
da_LR, da_RR]`` (27), attitude perturbed on the right (``R = R_hat exp(dtheta)``); the rows
of a foot out of contact are zero and unused.

* Prediction from the IMU as in :class:`clamber.quadruped.estimation.estimator.LegOdometryEkf`; an
  anchor in contact follows a random walk of ``slip`` [m/sqrt(s)] (the foot may slide).
* Touchdown (a foot newly in ``contacts``): its anchor is added as ``a = p + R z`` from the
  kinematic foot position ``z`` in {B}, with its covariance and its correlation with the
  body state carried over through that map (``da = dp - R [z]x dtheta + R dz``), so the
  anchor is as uncertain as the body was when the foot landed, not more certain.
* Lift-off: the anchor is dropped (its rows and columns zeroed).
* Update, every cycle, for each anchored foot: ``z = R^T (a - p) + n``, the foot position
  the leg kinematics give from the encoder angles. A foot whose normalised innovation
  exceeds ``gate`` (chi-square, 3 degrees of freedom) is left out for that cycle: a foot
  that slips far is not allowed to drag the body along.

Position and yaw are not observable (the anchors move with them); roll, pitch, velocity
and the accelerometer's horizontal bias are, through gravity and the fixed anchors. The
normalised innovations squared (``nis``, with their degrees of freedom) are kept for
consistency checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.quadruped.estimation.estimator import (
    GRAVITY_VECTOR,
    ImuParameters,
    SimulatedImu,
    skew,
    strapdown_step,
)
from clamber.quadruped.model.kinematics import body_configuration
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel, RobotState

#: Size of the error state: 15 body and bias states and four 3-D anchors.
N_ERROR = 27
_LEG_INDEX = {leg: i for i, leg in enumerate(LEG_NAMES)}


@dataclass(frozen=True)
class AnchorEkfSettings:
    """Noise of a kinematic foot position [m] (encoders, link lengths), anchor slip random
    walk [m/sqrt(s)], the innovation gate (chi-square, 3 dof; 0 disables it) and the
    initial uncertainty of position [m], velocity [m/s] and attitude [rad]."""

    foot_noise: float = 0.003
    slip: float = 0.008
    gate: float = 16.3
    initial_position: float = 0.005
    initial_velocity: float = 0.01
    initial_attitude: float = 0.01

    def __post_init__(self) -> None:
        check.numeric_fields(self, "anchor ekf", names=("slip", "gate"))
        check.numeric_fields(self, "anchor ekf", strict=True,
                             names=("foot_noise", "initial_position", "initial_velocity",
                                    "initial_attitude"))


class AnchorEkf:
    """Error-state EKF over the body, the IMU biases and the anchors of the feet in contact."""

    def __init__(self, rm: RobotModel, position: np.ndarray, rotation: np.ndarray,
                 imu: ImuParameters | None = None,
                 settings: AnchorEkfSettings | None = None) -> None:
        self.rm, self.imu = rm, imu or ImuParameters()
        self.par = settings or AnchorEkfSettings()
        self.p = np.array(position, dtype=float)
        self.v = np.zeros(3)
        self.R = np.array(rotation, dtype=float)
        self.b_a, self.b_g = np.zeros(3), np.zeros(3)
        self.anchors = np.zeros((4, 3))
        self.active = np.zeros(4, dtype=bool)
        e = self.par
        self.P = np.zeros((N_ERROR, N_ERROR))
        self.P[:15, :15] = np.diag(np.concatenate([
            np.full(3, e.initial_position**2), np.full(3, e.initial_velocity**2),
            np.full(3, e.initial_attitude**2), np.full(3, self.imu.accel_bias**2),
            np.full(3, self.imu.gyro_bias**2)]))
        self.rate = np.zeros(3)
        #: Normalised innovations squared of the updates and their degrees of freedom.
        self.nis: list[tuple[float, int]] = []
        #: Feet left out by the gate, counted over the run.
        self.rejected = 0
        self._F = np.eye(N_ERROR)
        self._eye3 = np.eye(3)
        self._updates = 0

    def predict(self, specific_force: np.ndarray, rate: np.ndarray, dt: float) -> None:
        """Propagate over ``dt`` [s] with the IMU readings in {B}."""
        w = strapdown_step(self, specific_force, rate, dt)
        s = self.imu
        q = np.zeros(N_ERROR)
        q[:15] = np.repeat([1e-8, (s.accel_noise * dt) ** 2 + 1e-8,
                            (s.gyro_noise * dt) ** 2 + 1e-10, s.accel_walk**2 * dt + 1e-12,
                            s.gyro_walk**2 * dt + 1e-14], 3)
        q[15:] = np.repeat(np.where(self.active, self.par.slip**2 * dt, 0.0), 3)
        self.P.flat[::N_ERROR + 1] += q
        self.rate = w

    def foot_positions(self, q_joints: np.ndarray) -> np.ndarray:
        """Kinematic foot positions in {B} (4, 3) [m] from the controller's model."""
        pin.framesForwardKinematics(self.rm.model, self.rm.data, body_configuration(q_joints))
        return np.array([self.rm.data.oMf[f].translation for f in self.rm.foot_ids])

    def update(self, q_joints: np.ndarray, contacts: tuple[str, ...]) -> None:
        """Drop the anchors of feet that left ``contacts``, anchor the new ones, and correct
        with the feet that were already anchored (joint angles [rad] from the encoders)."""
        self.update_feet(self.foot_positions(q_joints), contacts)

    def update_feet(self, feet: np.ndarray, contacts: tuple[str, ...]) -> None:
        """:meth:`update` from the kinematic foot positions in {B} (4, 3) [m]."""
        now = np.zeros(4, dtype=bool)
        for leg in contacts:
            now[_LEG_INDEX[leg]] = True
        for i in np.flatnonzero(self.active & ~now):
            self._drop(i)
        measured = np.flatnonzero(self.active & now)
        for i in np.flatnonzero(now & ~self.active):
            self._anchor(i, feet[i])
        if measured.size:
            self._correct(measured, feet)

    def _drop(self, i: int) -> None:
        s = slice(15 + 3 * i, 18 + 3 * i)
        self.P[s, :] = 0.0
        self.P[:, s] = 0.0
        self.active[i] = False

    def _anchor(self, i: int, z: np.ndarray) -> None:
        """Add foot ``i``'s anchor from the body estimate and its kinematic position ``z``."""
        s = slice(15 + 3 * i, 18 + 3 * i)
        self.anchors[i] = self.p + self.R @ z
        J = np.zeros((3, N_ERROR))
        J[:, 0:3] = self._eye3
        J[:, 6:9] = -self.R @ skew(z)
        JP = J @ self.P
        self.P[s, :] = JP
        self.P[:, s] = JP.T
        self.P[s, s] = JP @ J.T + self.par.foot_noise**2 * self._eye3
        self.active[i] = True

    def _correct(self, legs: np.ndarray, feet: np.ndarray) -> None:
        Rt = self.R.T
        noise = self.par.foot_noise**2
        rows, residuals = [], []
        for i in legs:
            d_body = Rt @ (self.anchors[i] - self.p)
            H = np.zeros((3, N_ERROR))
            H[:, 0:3] = -Rt
            H[:, 6:9] = skew(d_body)
            H[:, 15 + 3 * i:18 + 3 * i] = Rt
            r = feet[i] - d_body
            S = H @ self.P @ H.T + noise * self._eye3
            nis = float(r @ np.linalg.solve(S, r))
            if self.par.gate > 0 and nis > self.par.gate:
                self.rejected += 1
                continue
            self.nis.append((nis, 3))
            rows.append(H)
            residuals.append(r)
        if not rows:
            return
        H = np.vstack(rows)
        r = np.concatenate(residuals)
        m = r.size
        PHt = self.P @ H.T
        S = H @ PHt
        S.flat[::m + 1] += noise
        K = np.linalg.solve(S, PHt.T).T
        dx = K @ r
        self.p += dx[0:3]
        self.v += dx[3:6]
        self.R = self.R @ pin.exp3(dx[6:9])
        self.b_a += dx[9:12]
        self.b_g += dx[12:15]
        self.anchors += dx[15:].reshape(4, 3) * self.active[:, None]
        KH = K @ H
        KH.flat[::N_ERROR + 1] -= 1.0
        self.P = KH @ self.P @ KH.T + noise * (K @ K.T)
        self._updates += 1
        if self._updates % 500 == 0:
            U, _, Vt = np.linalg.svd(self.R)
            self.R = U @ Vt

    def set_gyro_bias(self, bias: np.ndarray, std: float) -> None:
        """Start from a calibrated gyro bias [rad/s] of standard deviation ``std`` [rad/s]."""
        self.b_g = np.array(bias, dtype=float)
        self.P[12:15, :] = 0.0
        self.P[:, 12:15] = 0.0
        self.P[12:15, 12:15] = std**2 * self._eye3

    def keep_biases(self, other: AnchorEkf) -> None:
        """Take ``other``'s IMU bias estimates and their covariance (a filter restarted after
        standing still keeps the biases it learned there)."""
        self.b_a, self.b_g = other.b_a.copy(), other.b_g.copy()
        self.P[9:15, :] = 0.0
        self.P[:, 9:15] = 0.0
        self.P[9:15, 9:15] = other.P[9:15, 9:15]

    def body_covariance(self) -> np.ndarray:
        """Covariance (9, 9) of the position, velocity and attitude errors."""
        return self.P[:9, :9].copy()

    def state(self, q_joints: np.ndarray, dq_joints: np.ndarray) -> RobotState:
        """The estimate as a :class:`RobotState` (twist in {B} from ``v`` and the gyro)."""
        R = self.R
        return RobotState.trusted(self.p.copy(), R.copy(), q_joints,
                                  np.concatenate([R.T @ self.v, self.rate]), dq_joints)


def calibrate_gyro(imu: SimulatedImu, rotation: np.ndarray, duration: float,
                   dt: float) -> tuple[np.ndarray, float]:
    """Gyro bias [rad/s] as the mean rate over ``duration`` [s] at rest (samples every ``dt``
    [s], the body at attitude ``rotation``), and its standard deviation [rad/s]."""
    n = max(1, int(round(duration / dt)))
    still = np.asarray(rotation).T @ -GRAVITY_VECTOR
    rates = np.array([imu.measure(still, np.zeros(3), dt)[1] for _ in range(n)])
    return rates.mean(axis=0), imu.spec.gyro_noise / np.sqrt(n)


def nees(error: np.ndarray, covariance: np.ndarray) -> float:
    """Normalised estimation error squared ``e^T P^-1 e`` (its mean is the dimension of ``e``
    for a consistent filter)."""
    return float(error @ np.linalg.solve(covariance, error))
