"""Body state estimation: a simulated IMU and an error-state EKF with leg kinematics.

State: body position ``p`` and velocity ``v`` in {S} [m, m/s], attitude ``R`` ({B} to {S}),
accelerometer bias ``b_a`` [m/s^2] and gyro bias ``b_g`` [rad/s]. The filter's error state
is ``[dp, dv, dtheta, db_a, db_g]`` (15), with the attitude perturbed on the right,
``R = R_hat exp(dtheta)``.

* Prediction, each control cycle, from the IMU's specific force ``f`` and rate ``w``:
  ``p += v dt + (R (f - b_a) + g) dt^2 / 2``, ``v += (R (f - b_a) + g) dt``,
  ``R = R exp((w - b_g) dt)``; biases follow random walks.
* Update, for every attached (or stance) foot: the kinematic foot position in {B} from the
  joint angles, ``z = fk(q)``, measures ``R^T (f_W - p)`` where ``f_W`` is the foot's world
  anchor, set from the estimate when the foot touched down and kept while it stays put
  (the leg odometry of Bloesch et al., with anchors fixed instead of estimated); and a foot
  that stays put gives the body velocity ``v = -R (dz/dt + w x z)`` (``dz/dt`` by finite
  difference over the cycle), a measurement of ``v`` alone (its attitude coupling is
  neglected). The velocity rows keep trotting, whose anchors change every half cycle, from
  drifting.

The kinematics use the controller's model, so link-length mismatch enters as measurement
error, as on the robot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.linalg import LinAlgError

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped import blas_order
from clamber.quadruped.estimation import ekf_kernels as kernels
from clamber.quadruped.model.kinematics import body_configuration
from clamber.quadruped.model.robot import LEG_NAMES, N_JOINTS
from clamber.quadruped.model.robot_model import NQ_BASE, RobotModel, RobotState

GRAVITY_VECTOR = np.array([0.0, 0.0, -9.81])


def skew(x: np.ndarray) -> np.ndarray:
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])


def strapdown_step(ekf, specific_force: np.ndarray, rate: np.ndarray, dt: float) -> np.ndarray:
    """Integrate the IMU over ``dt`` [s], propagate ``ekf.P``; return the bias-corrected rate.

    Shared by both filters: their error states start with position, velocity, attitude and
    the accelerometer and gyro biases (15 states); ``ekf._F`` is reused between calls (its
    blocks that depend on ``dt`` alone are written when ``dt`` changes).
    """
    if dt <= 0:
        raise ConfigError(f"dt must be > 0, got {dt}")
    f = specific_force - ekf.b_a
    w = rate - ekf.b_g
    R = ekf.R
    a = R @ f + GRAVITY_VECTOR
    ekf.p += ekf.v * dt + 0.5 * a * dt * dt
    ekf.v += a * dt
    Rw = pin.exp3(w * dt)
    F = ekf._F
    work = getattr(ekf, "_strapdown", None)  # (dt of F's constant blocks, skew buffer)
    if work is None or work[0] != dt:
        F[0:3, 3:6] = ekf._eye3 * dt
        F[6:9, 12:15] = -ekf._eye3 * dt
        work = ekf._strapdown = (dt, np.zeros((3, 3)))
    S = work[1]
    S[0, 1], S[0, 2], S[1, 2] = -f[2], f[1], -f[0]
    S[1, 0], S[2, 0], S[2, 1] = f[2], -f[1], f[0]
    F[3:6, 6:9] = -R @ S * dt
    F[3:6, 9:12] = -R * dt
    F[6:9, 6:9] = Rw.T
    ekf.R = R @ Rw
    ekf.P = F @ ekf.P @ F.T
    return w


@dataclass(frozen=True)
class ImuParameters:
    """IMU noise per sample at the control rate and bias magnitudes.

    ``accel_noise`` [m/s^2] and ``gyro_noise`` [rad/s] are white-noise standard deviations
    per sample; ``accel_bias`` [m/s^2] and ``gyro_bias`` [rad/s] the standard deviations of
    the constant turn-on biases; ``*_walk`` the bias random-walk rates [unit/sqrt(s)].
    Defaults are of an industrial MEMS IMU sampled at 100 Hz.
    """

    accel_noise: float = 0.03
    gyro_noise: float = 0.003
    accel_bias: float = 0.05
    gyro_bias: float = 0.005
    accel_walk: float = 0.002
    gyro_walk: float = 0.0002

    def __post_init__(self) -> None:
        check.numeric_fields(self, "imu")


#: IMU samples drawn from the generator at once.
_IMU_BLOCK = 64


class SimulatedImu:
    """Adds seeded turn-on bias, bias random walk and white noise to true IMU readings."""

    def __init__(self, spec: ImuParameters | None = None, seed: int = 0) -> None:
        self.spec = spec or ImuParameters()
        self.rng = np.random.default_rng(seed)
        self.b_a = self.rng.normal(0.0, self.spec.accel_bias, 3)
        self.b_g = self.rng.normal(0.0, self.spec.gyro_bias, 3)
        #: (dt, the scales (12,) of the random draws: bias walks, then white noise)
        self._walk: tuple[float, np.ndarray] | None = None
        #: Draws of the next samples, a row each, taken in order (the generator fills a
        #: block as it would fill its rows one call at a time: the same numbers).
        self._block = np.empty((0, 12))
        self._row = 0

    def draws(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """One sample's 12 standard normal draws (accelerometer and gyro bias walks, then
        their white noise) and the scales (12,) they are multiplied by at the rate ``1/dt``."""
        walk = self._walk
        if walk is None or walk[0] != dt:
            s = self.spec
            walk = self._walk = (dt, np.repeat([s.accel_walk * np.sqrt(dt),
                                                s.gyro_walk * np.sqrt(dt), s.accel_noise,
                                                s.gyro_noise], 3))
        row = self._row
        if row == len(self._block):
            self._block = self.rng.standard_normal((_IMU_BLOCK, 12))
            row = 0
        self._row = row + 1
        return self._block[row], walk[1]

    def measure(self, specific_force: np.ndarray, rate: np.ndarray,
                dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Noisy ``(specific force [m/s^2], angular rate [rad/s])`` in {B}: the biases walk
        by the first six draws and the last six add white noise
        (:func:`.ekf_kernels.imu_sample`)."""
        return kernels.imu_sample(*self.draws(dt), self.b_a, self.b_g,
                                  np.asarray(specific_force, dtype=float),
                                  np.asarray(rate, dtype=float))


@dataclass(frozen=True)
class EkfSettings:
    """Measurement noise of a kinematic foot position [m] and foot-derived body velocity
    [m/s], and the initial uncertainty."""

    foot_noise: float = 0.004
    velocity_noise: float = 0.05
    initial_position: float = 0.005
    initial_velocity: float = 0.01
    initial_attitude: float = 0.01


_LEG_INDEX = {leg: i for i, leg in enumerate(LEG_NAMES)}
_AXES = {"JointModelRX": 0, "JointModelRY": 1, "JointModelRZ": 2}


def leg_chains(rm: RobotModel) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The legs' chains for :func:`.ekf_kernels.foot_positions` with the body at the
    origin: ``rotations`` (4, 7, 3, 3) and ``translations`` (4, 7, 3) of the placements (the
    body joint's in the world, each joint's in its parent, the foot frame's in the last
    joint) and ``axes`` (4, 5); None unless
    every leg is a chain of revolute joints about x, y or z on the free-flyer body, its
    foot frame on the last joint (then the Pinocchio path computes the feet)."""
    model = rm.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, body_configuration(np.zeros(N_JOINTS)))
    n = N_JOINTS // len(LEG_NAMES)
    rotations = np.zeros((len(LEG_NAMES), n + 2, 3, 3))
    translations = np.zeros((len(LEG_NAMES), n + 2, 3))
    axes = np.zeros((len(LEG_NAMES), n), dtype=np.int64)
    for leg, foot in enumerate(rm.foot_ids):
        frame = model.frames[foot]
        joints, j = [], frame.parentJoint
        while j > 0 and model.joints[j].shortname() in _AXES:
            joints.insert(0, j)
            j = model.parents[j]
        if len(joints) != n or j == 0 or model.joints[j].shortname() != "JointModelFreeFlyer" \
                or [model.joints[i].idx_q - NQ_BASE for i in joints] != \
                list(range(n * leg, n * leg + n)):
            return None
        for k, M in enumerate([data.oMi[j]] + [model.jointPlacements[i] for i in joints]
                              + [frame.placement]):
            rotations[leg, k], translations[leg, k] = M.rotation, M.translation
        axes[leg] = [_AXES[model.joints[i].shortname()] for i in joints]
    return rotations, translations, axes


class LegOdometryEkf:
    """Error-state EKF fusing the IMU with the kinematics of the attached feet."""

    def __init__(self, rm: RobotModel, position: np.ndarray, rotation: np.ndarray,
                 imu: ImuParameters | None = None, params: EkfSettings | None = None) -> None:
        self.rm, self.imu, self.par = rm, imu or ImuParameters(), params or EkfSettings()
        self.p = np.array(position, dtype=float)
        self.v = np.zeros(3)
        self.R = np.array(rotation, dtype=float)
        self.b_a, self.b_g = np.zeros(3), np.zeros(3)
        e = self.par
        self.P = np.diag(np.concatenate([
            np.full(3, e.initial_position**2), np.full(3, e.initial_velocity**2),
            np.full(3, e.initial_attitude**2), np.full(3, self.imu.accel_bias**2),
            np.full(3, self.imu.gyro_bias**2)]))
        self.anchors: dict[str, np.ndarray] = {}
        self.rate = np.zeros(3)
        self._updates = 0
        self._prev_feet: np.ndarray | None = None
        self._noise_cache: dict[float, np.ndarray] = {}
        self._q = body_configuration(np.zeros(N_JOINTS))
        #: The legs' kinematic chains for the compiled foot positions (None: Pinocchio's).
        self._chains = leg_chains(rm)
        self._no_feet = np.zeros((len(LEG_NAMES), 3))
        #: No anchored leg: the rows and anchors of a cycle that only predicts.
        self._no_legs = (np.zeros(0, dtype=np.int64), np.zeros((0, 3)))
        self._indices: dict[tuple[str, ...], np.ndarray] = {}
        #: The anchored legs of the last update, their anchors stacked (n, 3) and rows.
        self._stacked: tuple[tuple[str, ...], np.ndarray, np.ndarray] | None = None
        #: Measurement noise variances: foot position, body velocity.
        self._variances = (self.par.foot_noise**2, self.par.velocity_noise**2)
        #: The contacts of the last update if all of them were anchored before it.
        self._contacts: tuple[str, ...] | None = None
        #: Whether the compiled read-out gives NumPy's numbers here (None: not asked yet;
        #: asked on the first :meth:`state`, as the kernels load then).
        self._blas: bool | None = None

    def predict(self, specific_force: np.ndarray, rate: np.ndarray, dt: float) -> None:
        """Propagate over ``dt`` [s] with the IMU readings in {B} (:func:`strapdown_step`
        and the process noise, compiled into one call: :func:`.ekf_kernels.predict`)."""
        q = self._noise(dt)
        self.P, self.R, self.rate = kernels.predict(
            self.P, self.p, self.v, self.R, self.b_a, self.b_g,
            np.asarray(specific_force, dtype=float), np.asarray(rate, dtype=float), dt, q)

    def _noise(self, dt: float) -> np.ndarray:
        """The process noise over ``dt`` [s] > 0, computed once per step length."""
        q = self._noise_cache.get(dt)
        if q is None:
            if dt <= 0:
                raise ConfigError(f"dt must be > 0, got {dt}")
            q = self._noise_cache[dt] = self._process_noise(dt)
        return q

    def _process_noise(self, dt: float) -> np.ndarray:
        """Diagonal of the process noise over ``dt`` [s] (position, velocity, attitude, biases)."""
        s = self.imu
        return np.repeat([1e-8, (s.accel_noise * dt) ** 2 + 1e-8,
                          (s.gyro_noise * dt) ** 2 + 1e-10, s.accel_walk**2 * dt + 1e-12,
                          s.gyro_walk**2 * dt + 1e-14], 3)

    def _foot_positions(self, q_joints: np.ndarray) -> np.ndarray:
        """Kinematic foot positions in {B} (4, 3) [m] from the controller's model (compiled:
        :func:`.ekf_kernels.foot_positions`, Pinocchio's numbers)."""
        if self._chains is not None:
            return kernels.foot_positions(np.asarray(q_joints, dtype=float), *self._chains)
        return self._pinocchio_foot_positions(q_joints)

    def _pinocchio_foot_positions(self, q_joints: np.ndarray) -> np.ndarray:
        """Kinematic foot positions in {B} (4, 3) [m] by Pinocchio's forward kinematics."""
        rm = self._q
        rm[NQ_BASE:] = q_joints
        data = self.rm.data
        pin.framesForwardKinematics(self.rm.model, data, rm)
        oMf = data.oMf
        return np.array([oMf[f].translation for f in self.rm.foot_ids])

    def _legs_index(self, legs: tuple[str, ...]) -> np.ndarray:
        """Rows (in ``LEG_NAMES`` order) of the anchored ``legs`` (cached per tuple)."""
        idx = self._indices.get(legs)
        if idx is None:
            idx = self._indices[legs] = np.array([_LEG_INDEX[leg] for leg in legs])
        return idx

    def update(self, q_joints: np.ndarray, contacts: tuple[str, ...], dt: float = 0.0) -> None:
        """Correct with the feet in ``contacts``; new contacts are anchored, others dropped.

        ``dt`` [s] is the time since the previous update (0: no velocity rows).
        """
        feet = self._foot_positions(q_joints)
        prev, self._prev_feet = self._prev_feet, feet
        if not (contacts == self._contacts and self._stacked is not None) \
                and not self._anchor(feet, contacts):
            return
        use_v = dt > 0 and prev is not None
        P, R, ok = kernels.update(
            self.P, self.p, self.v, self.R, self.b_a, self.b_g, self.rate, feet,
            prev if use_v else feet, self._stacked[2], self._stacked[1], use_v, dt,
            *self._variances)
        self._corrected(P, R, ok)

    def _anchor(self, feet: np.ndarray, contacts: tuple[str, ...]) -> bool:
        """Anchor the new ``contacts`` at the estimate, drop the anchors of the others and
        stack those anchored before (``_stacked``); False if none was (nothing to update)."""
        anchors = self.anchors
        for leg in list(anchors):
            if leg not in contacts:
                del anchors[leg]
        legs = []
        for leg in contacts:
            if leg not in anchors:
                anchors[leg] = self.p + self.R @ feet[LEG_NAMES.index(leg)]
            else:
                legs.append(leg)
        self._contacts = tuple(contacts) if len(legs) == len(contacts) else None
        if not legs:
            self._stacked = None
            return False
        legs_t = tuple(legs)
        self._stacked = (legs_t, np.array([anchors[leg] for leg in legs_t]),
                         self._legs_index(legs_t))
        return True

    def _corrected(self, P: np.ndarray, R: np.ndarray, ok: bool) -> None:
        """Take an update's covariance and attitude (re-orthonormalized every 500 updates)."""
        if not ok:
            raise LinAlgError("the innovation covariance is not positive definite")
        self.P, self.R = P, R
        self._updates += 1
        if self._updates % 500 == 0:
            U, _, Vt = np.linalg.svd(self.R)
            self.R = U @ Vt

    def step(self, imu: SimulatedImu | None, specific_force: np.ndarray, rate: np.ndarray,
             dt: float, q_joints: np.ndarray, contacts: tuple[str, ...]) -> None:
        """One control cycle: ``predict(*imu.measure(specific_force, rate, dt), dt)`` (none
        without ``imu``), then ``update(q_joints, contacts, dt)``; the readings and joint
        angles [rad] are float arrays.

        The same numbers as those calls, through the compiled :func:`.ekf_kernels.cycle`:
        one call when the contacts are those of the last update and were all anchored then
        (every cycle but the few after a grasp or release); otherwise one call predicts and
        computes the feet, the new contacts are anchored here, and a second call updates
        (so a climb loads no other kernel of the filter). Without compiled chains, by
        those calls.
        """
        stacked, chains = self._stacked, self._chains
        if chains is None:
            if imu is not None:
                self.predict(*imu.measure(specific_force, rate, dt), dt)
            self.update(q_joints, contacts, dt)
            return
        if imu is not None:
            q = self._noise(dt)
            draws, scales = imu.draws(dt)
            imu_b_a, imu_b_g = imu.b_a, imu.b_g
        else:
            q = draws = scales = imu_b_a = imu_b_g = self._no_feet[0]
        prev = self._prev_feet
        use_v = dt > 0 and prev is not None
        if contacts != self._contacts or stacked is None:
            self._anchored_step(imu is not None, q, dt, draws, scales, imu_b_a, imu_b_g,
                                specific_force, rate, q_joints, contacts, use_v)
            return
        P, R, self.rate, self._prev_feet, ok = kernels.cycle(
            self.P, self.p, self.v, self.R, self.b_a, self.b_g, self.rate, q, dt,
            imu is not None, draws, scales, imu_b_a, imu_b_g, specific_force, rate, q_joints,
            *chains, prev if use_v else self._no_feet, stacked[2], stacked[1], use_v,
            *self._variances)
        if not ok:
            self.P, self.R = P, R  # the prediction's
        self._corrected(P, R, ok)

    def _anchored_step(self, predicting: bool, q: np.ndarray, dt: float, draws: np.ndarray,
                       scales: np.ndarray, imu_b_a: np.ndarray, imu_b_g: np.ndarray,
                       specific_force: np.ndarray, rate: np.ndarray, q_joints: np.ndarray,
                       contacts: tuple[str, ...], use_v: bool) -> None:
        """:meth:`step` when the contacts changed: the prediction and the feet (a cycle with
        no anchored leg: no update), the anchors (:meth:`_anchor`), then the update (a cycle
        without prediction; its feet are the same numbers)."""
        no_legs, chains = self._no_legs, self._chains
        P, R, w, feet, _ = kernels.cycle(
            self.P, self.p, self.v, np.ascontiguousarray(self.R), self.b_a, self.b_g,
            self.rate, q, dt, predicting, draws, scales, imu_b_a, imu_b_g, specific_force, rate,
            q_joints, *chains, self._no_feet, no_legs[0], no_legs[1], False, *self._variances)
        if predicting:
            self.P, self.R, self.rate = P, R, w
        prev, self._prev_feet = self._prev_feet, feet
        if not self._anchor(feet, contacts):
            return
        stacked, none = self._stacked, self._no_feet[0]
        P, R, _, _, ok = kernels.cycle(
            self.P, self.p, self.v, np.ascontiguousarray(self.R), self.b_a, self.b_g, self.rate,
            q, dt, False, none, none, none, none, none, none, q_joints, *chains,
            prev if use_v else self._no_feet, stacked[2], stacked[1], use_v, *self._variances)
        self._corrected(P, R, ok)

    def state(self, q_joints: np.ndarray, dq_joints: np.ndarray) -> RobotState:
        """The estimate as a :class:`RobotState` (twist in {B} from ``v`` and the gyro): NumPy's
        copies and ``R.T @ v``, in one compiled call where it gives NumPy's numbers
        (:func:`.ekf_kernels.read_out`; NumPy's BLAS sums ``R.T @ v`` in another order
        unless ``R`` is C-ordered, as it is but before the first prediction)."""
        R = self.R
        blas = self._blas
        if blas is None:
            blas = self._blas = blas_order.same_as_numpy()
        if blas and R.flags.c_contiguous:
            p, R, twist = kernels.read_out(self.p, R, self.v, self.rate)
            return RobotState.trusted(p, R, q_joints, twist, dq_joints)
        return RobotState.trusted(self.p.copy(), R.copy(), q_joints,
                                  np.concatenate([R.T @ self.v, self.rate]), dq_joints)
