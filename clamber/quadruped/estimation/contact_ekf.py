"""A contact-aided EKF with the feet's anchors in its state (Bloesch et al., RSS 2012).

The body's error state (:mod:`.estimator`) plus one world anchor per foot in contact (27;
a foot out of contact has zero rows). An anchor in contact follows a random walk of
``slip`` [m/sqrt(s)]; at touchdown it is added as ``a = p + R z`` from the kinematic foot
position ``z``, its covariance carried through that map (``da = dp - R [z]x dtheta +
R dz``), so it is as uncertain as the body was; at lift-off it is dropped. Each cycle every
anchored foot measures ``z = R^T (a - p) + n``; one whose normalised innovation exceeds
``gate`` (chi-square, 3 dof) is left out, so a slipping foot cannot drag the body along.
Position and yaw are not observable; roll, pitch, velocity and the accelerometer's
horizontal bias are. The normalised innovations squared are kept (``nis``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber import _validate as check
from clamber.quadruped.estimation.ekf_kernels import (
    ATTITUDE,
    BIASES,
    GYRO_BIAS,
    N_BODY,
    POSITION,
    foot_block,
    skew,
)
from clamber.quadruped.estimation.estimator import (
    ErrorStateEkf,
    ImuParameters,
    SimulatedImu,
)
from clamber.quadruped.model.robot import GRAVITY_VECTOR, LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel

#: Size of the error state: 15 body and bias states and four 3-D anchors.
N_ERROR = N_BODY + 3 * len(LEG_NAMES)
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


class AnchorEkf(ErrorStateEkf):
    """Error-state EKF over the body, the IMU biases and the anchors of the feet in contact."""

    def __init__(self, rm: RobotModel, position: np.ndarray, rotation: np.ndarray,
                 imu: ImuParameters | None = None,
                 settings: AnchorEkfSettings | None = None) -> None:
        self.par = settings or AnchorEkfSettings()
        e = self.par
        super().__init__(rm, position, rotation, imu,
                         (e.initial_position, e.initial_velocity, e.initial_attitude), N_ERROR)
        #: World anchors (4, 3) [m] of the feet, estimated where ``active``.
        self.anchors = np.zeros((len(LEG_NAMES), 3))
        self.active = np.zeros(len(LEG_NAMES), dtype=bool)
        #: Normalised innovations squared of the feet's updates and their degrees of freedom.
        self.nis: list[tuple[float, int]] = []
        #: Feet left out by the gate, counted over the run.
        self.rejected = 0

    def process_noise(self, dt: float) -> np.ndarray:
        """The body's process noise over ``dt`` [s] and the anchors' slip (active feet)."""
        q = super().process_noise(dt).copy()
        for i in np.flatnonzero(self.active):
            q[foot_block(i)] = self.par.slip**2 * dt
        return q

    def update(self, q_joints: np.ndarray, contacts: tuple[str, ...]) -> None:
        """Drop the anchors of feet that left ``contacts``, anchor the new ones, and correct
        with the feet that were already anchored (joint angles [rad] from the encoders)."""
        self.update_feet(self.feet(q_joints), contacts)

    def update_feet(self, feet: np.ndarray, contacts: tuple[str, ...]) -> None:
        """:meth:`update` from the kinematic foot positions in {B} (4, 3) [m]."""
        now = np.zeros(len(LEG_NAMES), dtype=bool)
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
        """Lift-off: foot ``i``'s anchor leaves the state."""
        s = foot_block(i)
        self.P[s, :] = 0.0
        self.P[:, s] = 0.0
        self.active[i] = False

    def _anchor(self, i: int, z: np.ndarray) -> None:
        """Touchdown: foot ``i``'s anchor from its kinematic position ``z`` [m]."""
        s = foot_block(i)
        self.anchors[i] = self.p + self.R @ z
        J = np.zeros((3, N_ERROR))
        J[:, POSITION] = np.eye(3)
        J[:, ATTITUDE] = -self.R @ skew(z)
        JP = J @ self.P
        self.P[s, :] = JP
        self.P[:, s] = JP.T
        self.P[s, s] = JP @ J.T + self.par.foot_noise**2 * np.eye(3)
        self.active[i] = True

    def measurement(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Foot ``i``'s predicted kinematic position ``R^T (a_i - p)`` (3,) [m] in {B} and
        its rows (3, 27) of the measurement Jacobian."""
        Rt = self.R.T
        d = Rt @ (self.anchors[i] - self.p)
        H = np.zeros((3, N_ERROR))
        H[:, POSITION] = -Rt
        H[:, ATTITUDE] = skew(d)
        H[:, foot_block(i)] = Rt
        return d, H

    def _correct(self, legs: np.ndarray, feet: np.ndarray) -> None:
        """One correction with the anchored ``legs`` whose innovation passes the gate."""
        noise = self.par.foot_noise**2
        rows, residuals = [], []
        for i in legs:
            d, H = self.measurement(i)
            r = feet[i] - d
            S = H @ self.P @ H.T + noise * np.eye(3)
            nis = float(r @ np.linalg.solve(S, r))
            if self.par.gate > 0 and nis > self.par.gate:
                self.rejected += 1
                continue
            self.nis.append((nis, 3))
            rows.append(H)
            residuals.append(r)
        if not rows:
            return
        r = np.concatenate(residuals)
        dx, _ = self.correct(np.vstack(rows), r, np.full(r.size, noise))
        for i in np.flatnonzero(self.active):
            self.anchors[i] += dx[foot_block(i)]

    def set_gyro_bias(self, bias: np.ndarray, std: float) -> None:
        """Start from a calibrated gyro bias [rad/s] of standard deviation ``std`` [rad/s]."""
        self.b_g = np.array(bias, dtype=float)
        self.P[GYRO_BIAS, :] = 0.0
        self.P[:, GYRO_BIAS] = 0.0
        self.P[GYRO_BIAS, GYRO_BIAS] = std**2 * np.eye(3)

    def keep_biases(self, other: AnchorEkf) -> None:
        """Take ``other``'s IMU bias estimates and their covariance."""
        self.b_a, self.b_g = other.b_a.copy(), other.b_g.copy()
        self.P[BIASES, :] = 0.0
        self.P[:, BIASES] = 0.0
        self.P[BIASES, BIASES] = other.P[BIASES, BIASES]


def calibrate_gyro(imu: SimulatedImu, rotation: np.ndarray, duration: float,
                   dt: float) -> tuple[np.ndarray, float]:
    """Gyro bias [rad/s] as the mean rate over ``duration`` [s] at rest (samples every ``dt``
    [s], the body at attitude ``rotation``), and its standard deviation [rad/s]."""
    n = max(1, int(round(duration / dt)))
    still = np.asarray(rotation).T @ -GRAVITY_VECTOR
    rates = np.array([imu.measure(still, np.zeros(3), dt)[1] for _ in range(n)])
    return rates.mean(axis=0), imu.spec.gyro_noise / np.sqrt(n)


def nees(error: np.ndarray, covariance: np.ndarray) -> float:
    """Normalised estimation error squared ``e^T P^-1 e`` (mean ``len(e)`` if consistent)."""
    return float(error @ np.linalg.solve(covariance, error))
