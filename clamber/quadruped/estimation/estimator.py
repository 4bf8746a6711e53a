"""Body state estimation: a simulated IMU, the error-state EKF core and the leg-odometry EKF.

A filter reads only what the robot senses: the IMU in {B}, the joint encoders and which
feet are in contact. State: body position ``p`` and velocity ``v`` in {S} [m, m/s],
attitude ``R`` ({B} to {S}), accelerometer bias ``b_a`` [m/s^2] and gyro bias ``b_g``
[rad/s] (error-state blocks in :mod:`.ekf_kernels`); the biases follow random walks.

Leg odometry (:class:`LegOdometryEkf`, Bloesch et al. with fixed anchors): the kinematic
foot position ``z = fk(q)`` in {B} measures ``R^T (a - p)``, ``a`` the foot's world anchor
set at touchdown; a foot that stays put also measures ``v = -R (dz/dt + w x z)`` (finite
difference, averaged over the feet, attitude coupling neglected), which keeps trotting, whose
anchors change every half cycle, from drifting. The kinematics are the controller's model,
so link-length mismatch enters as measurement error, as on the robot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.estimation import ekf_kernels as kernels
from clamber.quadruped.estimation.ekf_kernels import (
    ACCEL_BIAS,
    ATTITUDE,
    GYRO_BIAS,
    MOTION,
    N_BODY,
    POSITION,
    VELOCITY,
)
from clamber.quadruped.model.kinematics import body_configuration
from clamber.quadruped.model.robot import LEG_NAMES, N_JOINTS
from clamber.quadruped.model.robot_model import NQ_BASE, RobotModel, RobotState


@dataclass(frozen=True)
class ImuParameters:
    """An industrial MEMS IMU at 100 Hz: white noise per sample (``accel_noise`` [m/s^2],
    ``gyro_noise`` [rad/s]), turn-on bias standard deviations (``accel_bias``, ``gyro_bias``)
    and bias random-walk rates (``*_walk`` [unit/sqrt(s)])."""

    accel_noise: float = 0.03
    gyro_noise: float = 0.003
    accel_bias: float = 0.05
    gyro_bias: float = 0.005
    accel_walk: float = 0.002
    gyro_walk: float = 0.0002

    def __post_init__(self) -> None:
        check.numeric_fields(self, "imu")

    def process_noise(self, dt: float) -> np.ndarray:
        """Variances (15,) the error state gains over ``dt`` [s]: integrated white noise, bias
        walks and small floors that keep the covariance well conditioned."""
        if not dt > 0:
            raise ConfigError(f"dt must be > 0, got {dt}")
        q = np.empty(N_BODY)
        q[POSITION] = 1e-8
        q[VELOCITY] = (self.accel_noise * dt) ** 2 + 1e-8
        q[ATTITUDE] = (self.gyro_noise * dt) ** 2 + 1e-10
        q[ACCEL_BIAS] = self.accel_walk**2 * dt + 1e-12
        q[GYRO_BIAS] = self.gyro_walk**2 * dt + 1e-14
        return q


class SimulatedImu:
    """Adds seeded turn-on bias, bias random walk and white noise to true IMU readings."""

    def __init__(self, spec: ImuParameters | None = None, seed: int = 0) -> None:
        self.spec = spec or ImuParameters()
        self.rng = np.random.default_rng(seed)
        self.b_a = self.rng.normal(0.0, self.spec.accel_bias, 3)
        self.b_g = self.rng.normal(0.0, self.spec.gyro_bias, 3)
        self._dt, self._scale = 0.0, np.zeros(12)

    def measure(self, specific_force: np.ndarray, rate: np.ndarray,
                dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Noisy ``(specific force [m/s^2], angular rate [rad/s])`` in {B} of one sample
        ``dt`` [s] after the last: the biases walk, then white noise is added."""
        if dt != self._dt:  # standard deviations of the bias steps and the white noise
            s = self.spec
            self._dt, self._scale = dt, np.repeat([s.accel_walk * np.sqrt(dt),
                                                   s.gyro_walk * np.sqrt(dt),
                                                   s.accel_noise, s.gyro_noise], 3)
        e = self.rng.standard_normal(12) * self._scale
        self.b_a += e[0:3]
        self.b_g += e[3:6]
        return specific_force + self.b_a + e[6:9], rate + self.b_g + e[9:12]


_AXES = {"JointModelRX": 0, "JointModelRY": 1, "JointModelRZ": 2}


class LegKinematics:
    """Foot positions in {B} from the joint encoders by the controller's model
    (:func:`.ekf_kernels.foot_positions` on the legs' chains of placements and joints)."""

    def __init__(self, rm: RobotModel) -> None:
        model = rm.model
        data = model.createData()
        pin.framesForwardKinematics(model, data, body_configuration(np.zeros(N_JOINTS)))
        n = N_JOINTS // len(LEG_NAMES)
        self.rotations = np.zeros((len(LEG_NAMES), n + 2, 3, 3))
        self.translations = np.zeros((len(LEG_NAMES), n + 2, 3))
        self.axes = np.zeros((len(LEG_NAMES), n), dtype=np.int64)
        for leg, foot in enumerate(rm.foot_ids):
            frame = model.frames[foot]
            joints, j = [], frame.parentJoint
            while j > 0 and model.joints[j].shortname() in _AXES:
                joints.insert(0, j)
                j = model.parents[j]
            if len(joints) != n or model.joints[j].shortname() != "JointModelFreeFlyer" \
                    or [model.joints[i].idx_q - NQ_BASE for i in joints] != \
                    list(range(n * leg, n * leg + n)):
                raise ConfigError(f"leg {LEG_NAMES[leg]} is not a chain of {n} revolute "
                                 "joints about x, y or z on the free-flyer body")
            placements = [data.oMi[j]] + [model.jointPlacements[i] for i in joints] \
                + [frame.placement]
            for k, M in enumerate(placements):
                self.rotations[leg, k], self.translations[leg, k] = M.rotation, M.translation
            self.axes[leg] = [_AXES[model.joints[i].shortname()] for i in joints]

    def __call__(self, q_joints: np.ndarray) -> np.ndarray:
        """Foot positions (4, 3) [m] in {B} at the joint angles (20,) [rad]."""
        return kernels.foot_positions(np.asarray(q_joints, dtype=float), self.rotations,
                                      self.translations, self.axes)


class ErrorStateEkf:
    """Body state, IMU biases and the covariance of ``n`` error states (the body's first),
    predicted from the IMU and corrected by rows a subclass builds."""

    def __init__(self, rm: RobotModel, position: np.ndarray, rotation: np.ndarray,
                 imu: ImuParameters | None, initial: tuple[float, float, float],
                 n: int = N_BODY) -> None:
        """``initial``: standard deviations of the initial position [m], velocity [m/s] and
        attitude [rad] errors; the biases start at zero with the IMU's bias magnitudes."""
        self.rm, self.imu = rm, imu or ImuParameters()
        self.feet = LegKinematics(rm)
        self.p = np.array(position, dtype=float)
        self.v = np.zeros(3)
        self.R = np.array(rotation, dtype=float, order="C")
        self.b_a, self.b_g = np.zeros(3), np.zeros(3)
        self.rate = np.zeros(3)
        variances = np.zeros(n)
        variances[POSITION] = initial[0] ** 2
        variances[VELOCITY] = initial[1] ** 2
        variances[ATTITUDE] = initial[2] ** 2
        variances[ACCEL_BIAS] = self.imu.accel_bias**2
        variances[GYRO_BIAS] = self.imu.gyro_bias**2
        self.P = np.diag(variances)
        self._work = np.empty_like(self.P)
        self._updates = 0
        self._noise: dict[float, np.ndarray] = {}

    def process_noise(self, dt: float) -> np.ndarray:
        """Diagonal (n,) of the process noise over ``dt`` [s] (the body's; zero beyond)."""
        q = self._noise.get(dt)
        if q is None:
            q = self._noise[dt] = np.zeros(self.P.shape[0])
            q[:N_BODY] = self.imu.process_noise(dt)
        return q

    def predict(self, specific_force: np.ndarray, rate: np.ndarray, dt: float) -> None:
        """Propagate over ``dt`` [s] with the IMU readings in {B} [m/s^2, rad/s]."""
        kernels.predict(self.P, self.p, self.v, self.R, self.b_a, self.b_g, self.rate,
                        np.asarray(specific_force, dtype=float), np.asarray(rate, dtype=float),
                        dt, self.process_noise(dt), self._work)

    def correct(self, H: np.ndarray, r: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray,
                                                                                  float]:
        """Correct with innovation ``r`` (m,) of rows ``H`` (m, n) and noise variances (m,);
        returns the error-state estimate (n,) and the normalised innovation squared."""
        dx, nis = kernels.correct(self.P, H, r, noise, self.p, self.v, self.R, self.b_a,
                                  self.b_g)
        self._corrected()
        return dx, nis

    def _corrected(self) -> None:
        """Count a correction; re-orthonormalise the attitude every 500."""
        self._updates += 1
        if self._updates % 500 == 0:
            U, _, Vt = np.linalg.svd(self.R)
            self.R[:] = U @ Vt

    def body_covariance(self) -> np.ndarray:
        """Covariance (9, 9) of the position, velocity and attitude errors."""
        return self.P[MOTION, MOTION].copy()

    def state(self, q_joints: np.ndarray, dq_joints: np.ndarray) -> RobotState:
        """The estimate as a :class:`RobotState` (twist in {B} from ``v`` and the gyro)."""
        twist = np.empty(6)
        twist[:3] = self.v @ self.R  # R^T v
        twist[3:] = self.rate
        return RobotState(self.p.copy(), self.R.copy(), q_joints, twist, dq_joints)


@dataclass(frozen=True)
class EkfSettings:
    """Measurement noise of a kinematic foot position [m] and foot-derived body velocity
    [m/s], and the initial uncertainty of position [m], velocity [m/s] and attitude [rad]."""

    foot_noise: float = 0.004
    velocity_noise: float = 0.05
    initial_position: float = 0.005
    initial_velocity: float = 0.01
    initial_attitude: float = 0.01

    def __post_init__(self) -> None:
        check.numeric_fields(self, "ekf", strict=True)


class LegOdometryEkf(ErrorStateEkf):
    """Error-state EKF fusing the IMU with the kinematics of the attached feet."""

    def __init__(self, rm: RobotModel, position: np.ndarray, rotation: np.ndarray,
                 imu: ImuParameters | None = None, params: EkfSettings | None = None) -> None:
        self.par = params or EkfSettings()
        e = self.par
        super().__init__(rm, position, rotation, imu,
                         (e.initial_position, e.initial_velocity, e.initial_attitude))
        #: World anchors (4, 3) [m] of the feet (``LEG_NAMES`` order), held where ``active``.
        self.anchors = np.zeros((len(LEG_NAMES), 3))
        self.active = np.zeros(len(LEG_NAMES), dtype=bool)
        self._prev_feet: np.ndarray | None = None
        #: The feet (4,) in each set of contacts seen.
        self._masks: dict[tuple[str, ...], np.ndarray] = {}
        #: Stand-ins for the feet of a last update and the noise of a prediction, unused.
        self._no_feet, self._no_noise = np.zeros((len(LEG_NAMES), 3)), np.zeros(N_BODY)

    def register(self, position: np.ndarray, gain: float) -> np.ndarray:
        """Move the odometry's frame ``gain`` (0-1) of the way to an absolute body position
        fix [m] (e.g. a body camera locating the robot among mapped holds): the body estimate
        and the anchored feet shift together, so the anchors do not pull the body back;
        returns the shift [m]. Leg odometry alone walks (its anchors are set at the
        estimate), and its covariance does not see the walk, so a Kalman update of the body
        alone would be undone by the anchors within a few cycles."""
        shift = gain * (np.asarray(position, dtype=float) - self.p)
        self.p += shift
        self.anchors[self.active] += shift
        return shift

    def update(self, q_joints: np.ndarray, contacts: tuple[str, ...], dt: float = 0.0) -> None:
        """Correct with the feet in ``contacts`` (encoder angles ``q_joints`` [rad]) that
        were anchored before; new contacts are anchored at the estimate, the others'
        anchors dropped. ``dt`` [s] is the time since the previous update (0: no velocity
        rows)."""
        self.update_feet(self.feet(q_joints), contacts, dt)

    def update_feet(self, feet: np.ndarray, contacts: tuple[str, ...], dt: float = 0.0) -> None:
        """:meth:`update` from the kinematic foot positions in {B} (4, 3) [m]
        (:func:`.ekf_kernels.odometry_update`)."""
        prev, contact, use_v = self._update_inputs(contacts, dt)
        self._prev_feet = feet
        corrected = kernels.odometry_update(
            self.P, self.p, self.v, self.R, self.b_a, self.b_g, self.rate, feet, prev,
            self.anchors, self.active, contact, use_v, dt, self.par.foot_noise**2,
            self.par.velocity_noise**2)
        self._updated(contact, corrected)

    def _update_inputs(self, contacts: tuple[str, ...], dt: float
                       ) -> tuple[np.ndarray, np.ndarray, bool]:
        """The last update's feet (zeros without one), the feet (4,) in ``contacts`` and
        whether the update has velocity rows."""
        contact = self._masks.get(contacts)
        if contact is None:
            contact = self._masks[contacts] = np.isin(LEG_NAMES, contacts)
        prev = self._prev_feet
        use_v = dt > 0 and prev is not None
        return prev if use_v else self._no_feet, contact, use_v

    def _updated(self, contact: np.ndarray, corrected: bool) -> None:
        """Take the feet now anchored and count the correction."""
        self.active = contact.copy()
        if corrected:
            self._corrected()

    def step(self, imu: tuple[np.ndarray, np.ndarray] | None, dt: float,
             q_joints: np.ndarray, contacts: tuple[str, ...]) -> None:
        """One control cycle: :meth:`predict` from the IMU reading ``(specific force,
        rate)`` (none: no sample this cycle), then :meth:`update`, in one compiled call
        (:func:`.ekf_kernels.odometry_cycle`, in place)."""
        prev, contact, use_v = self._update_inputs(contacts, dt)
        f, w = imu if imu is not None else (self._no_feet[0], self._no_feet[0])
        kin = self.feet
        self._prev_feet, corrected = kernels.odometry_cycle(
            self.P, self._work, self.p, self.v, self.R, self.b_a, self.b_g, self.rate,
            imu is not None, np.asarray(f, dtype=float), np.asarray(w, dtype=float), dt,
            self.process_noise(dt) if imu is not None else self._no_noise,
            np.asarray(q_joints, dtype=float), kin.rotations, kin.translations, kin.axes, prev,
            self.anchors, self.active, contact, use_v, self.par.foot_noise**2,
            self.par.velocity_noise**2)
        self._updated(contact, corrected)
