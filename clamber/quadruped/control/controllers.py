"""Q-WBC, CLIK and VMC behind one interface, and the SE(3) PD law of the body.

Baselines as their sources write them:

* **CLIK** (Siciliano, Sciavicco, Villani, Oriolo, *Robotics: Modelling, Planning and
  Control*, 2009: closed-loop inverse kinematics, Sec. 3.7, under joint PD control with
  gravity compensation, Sec. 8.5.2, and integral action on the task error, Sec. 8.4): the
  body-pose target is corrected by the integral of the measured pose error, and the servos
  get the static torques that carry the robot's weight as feed-forward, so their position
  loops only correct errors instead of sagging under the load.
* **VMC** (Pratt, Chew, Torres, Dilworth, Pratt, "Virtual model control: an intuitive
  approach for bipedal locomotion", IJRR 20(2), 2001): a virtual spring-damper on the body
  gives a body wrench, distributed over the attached grippers. The distribution is the
  weighted pseudo-inverse of the grasp map (the minimum of ``sum_i F_i^T W_i F_i / l_i^2``
  subject to ``A F = B``): each axis weighted by ``1/limit^2`` (a newton and a newton metre
  count as fractions of the gripper's capacity on that axis) and each gripper by its load
  factor ``l_i``, so a gripper being unloaded before release hands its share over (as in
  force distribution for multi-legged robots, e.g. Klein and Kittivatcharapong, 1990).
  No inequality limits, no QP.
* **Q-WBC** (the paper): the same body wrench, distributed by the wrench QP with gripper
  limits, joint-torque limits, weights and the unloading ramp; its ablations switch each
  ingredient off (:class:`QWBCController` options).

Every controller maps a measured :class:`RobotState` and a :class:`MotionReference` to a
:class:`JointCommand` for current-based position control: goal positions (inside the joint
limits), feed-forward torques (inside the torque limits) and per-servo current limits (inside
each servo's maximum). The current limit is what makes a position-controlled servo regulate
force: it caps the torque the servo's position loop can apply.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control import controller_kernels as kernels
from clamber.quadruped.control.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.control.reference import MotionReference
from clamber.quadruped.control.wbc_kernels import MIN_LOAD
from clamber.quadruped.control.wbc_problem import QWBCWeights
from clamber.quadruped.model.kinematics import Clik
from clamber.quadruped.model.robot import LEG_NAMES, N_JOINTS
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.model.statics import N_WRENCH, Statics, StaticsEvaluator
from clamber.quadruped.model.statics_kernels import STAY, TARGET, clik_goal


@dataclass(frozen=True)
class JointCommand:
    """Servo commands (20 joints): goal position [rad], feed-forward torque [N m], current
    limit [A], with the wrench QP's status (None for controllers without a QP) and the
    gripper wrenches the controller planned."""

    position: np.ndarray
    torque: np.ndarray
    current_limit: np.ndarray
    status: WrenchStatus | None = None
    wrenches: np.ndarray = field(default_factory=lambda: np.zeros(24))


@dataclass(frozen=True)
class BodyPD:
    """PD law on SE(3): body acceleration [m/s^2, rad/s^2] in {B} from pose and twist errors.

    ``a = a_ref + kp * log6(T^-1 T_ref) + kd * (Ad(T^-1 T_ref) V_ref - V)``, clipped to
    ``max_linear`` and ``max_angular``.
    """

    kp: np.ndarray = field(default_factory=lambda: np.array([40.0] * 3 + [40.0] * 3))
    kd: np.ndarray = field(default_factory=lambda: np.array([12.0] * 3 + [12.0] * 3))
    max_linear: float = 2.0
    max_angular: float = 5.0

    def __post_init__(self) -> None:
        hi = np.array([self.max_linear] * 3 + [self.max_angular] * 3)
        object.__setattr__(self, "_hi", hi)
        object.__setattr__(self, "_lo", -hi)
        #: Scratch arrays of :meth:`acceleration`: the action matrix and the pose error.
        object.__setattr__(self, "_action", np.zeros((6, 6)))
        object.__setattr__(self, "_error", np.zeros(6))

    def acceleration(self, state: RobotState, ref: MotionReference) -> np.ndarray:
        """The clipped body acceleration [m/s^2, rad/s^2] in {B}."""
        Ad, e = self._action, self._error
        pose = ref.body_pose
        kernels.pose_error(state.body_rotation, state.body_position, pose.rotation,
                           pose.translation, Ad, e)
        a = np.empty(6)
        kernels.pd_acceleration(Ad @ ref.body_acceleration, self.kp, e, self.kd,
                                Ad @ ref.body_twist, state.body_twist, self._lo, self._hi, a)
        return a

    def wrench_error(self, state: RobotState, ref: MotionReference
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Pose error ``log6(T^-1 T_ref)`` and twist error ``Ad(T^-1 T_ref) V_ref - V`` in
        {B}."""
        Ad, e, pose = self._action, np.empty(6), ref.body_pose
        kernels.pose_error(state.body_rotation, state.body_position, pose.rotation,
                           pose.translation, Ad, e)
        return e, Ad @ ref.body_twist - state.body_twist


#: Largest attitude correction [rad] of the Q-WBC's and VMC's attitude integral.
ATTITUDE_LIMIT = 0.05


class PoseIntegral:
    """Integral action on the body pose: the pose error ``log6(T^-1 T_ref)`` integrated at
    ``gain`` [1/s] into a correction of the CLIK body target ``T_ref exp6(integral)``, each
    component clamped to ``limit`` (position [m], rotation [rad]) against wind-up.

    A stiff position loop settles off its target wherever a load or the closed chain pushes
    back; the integral moves the target until the body itself is where it should be. A
    position limit of 0 makes it act on the attitude alone.
    """

    def __init__(self, gain: float, limit: tuple[float, float] = (0.02, 0.1),
                 period: float = 0.02) -> None:
        if not (math.isfinite(gain) and gain >= 0) or not period > 0 \
                or min(limit) < 0:
            raise ConfigError(f"integral gain must be >= 0, limits >= 0 and control period "
                              f"> 0, got {gain}, {limit}, {period}")
        self.gain_dt = gain * period
        self.limit = np.array([limit[0]] * 3 + [limit[1]] * 3, dtype=float)
        self.value = np.zeros(6)
        #: The corrected body target (rotation, translation) and the pose error's action
        #: matrix and value, written every cycle.
        self._target = (np.zeros((3, 3)), np.zeros(3))
        self._action, self._error = np.zeros((6, 6)), np.zeros(6)

    def target(self, state: RobotState, ref: MotionReference
               ) -> tuple[np.ndarray, np.ndarray] | None:
        """Integrate one control period and return the corrected body target (rotation,
        translation); None when the gain is 0 (the reference stands)."""
        if self.gain_dt == 0:
            return None
        pose = ref.body_pose
        rotation, translation = pose.rotation, pose.translation
        e, value = self._error, np.empty(6)
        kernels.pose_error(state.body_rotation, state.body_position, rotation, translation,
                           self._action, e)
        kernels.integral_target(self.value, e, self.gain_dt, self.limit, rotation,
                                translation, *self._target, value)
        self.value = value
        return self._target


class Controller(ABC):
    """Shared plumbing: checks, statics, CLIK goal positions, torque and current mapping."""

    min_attached = 3

    def __init__(self, rm: RobotModel | None = None, clik_gain: float = 0.5,
                 current_margin: float = 0.1) -> None:
        self.rm = rm or RobotModel()
        self.clik = Clik(self.rm, gain=clik_gain)
        self.statics = StaticsEvaluator(self.rm)
        self.current_margin = current_margin
        self._q = np.zeros(self.rm.model.nq)
        self._targets = (np.zeros(len(LEG_NAMES), dtype=np.int64),
                         np.zeros((len(LEG_NAMES), 3, 3)), np.zeros((len(LEG_NAMES), 3)))

    def _configuration(self, state: RobotState) -> np.ndarray:
        """Pinocchio's configuration (27,) of the state, in a buffer reused every cycle."""
        return state.q(self._q)

    def _check(self, state: RobotState, ref: MotionReference) -> None:
        if not isinstance(state, RobotState) or not isinstance(ref, MotionReference):
            raise ConfigError("step needs a RobotState and a MotionReference")
        if len(ref.stance) < self.min_attached:
            raise ConfigError(f"{type(self).__name__} needs at least {self.min_attached} "
                              f"attached grippers, got {list(ref.stance)}")

    def _leg_targets(self, ref: MotionReference) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every leg's CLIK target as :func:`clik_goal` takes it: modes (4,), rotations
        (4, 3, 3) and translations (4, 3) (arrays reused from cycle to cycle). A stance leg
        stays where it is, a swing leg goes to its target (or stays where it is without one)."""
        modes, rotations, translations = self._targets
        stance, swing = ref.stance, ref.foot_targets
        for i, leg in enumerate(LEG_NAMES):
            target = swing.get(leg) if leg not in stance else None
            if target is not None:
                modes[i] = TARGET
                rotations[i] = target.rotation
                translations[i] = target.translation
            else:
                modes[i] = STAY
        return modes, rotations, translations

    def _positions(self, state: RobotState, ref: MotionReference,
                   statics: Statics | None = None,
                   body_target: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """CLIK goal positions (20,) [rad], inside the joint limits, in one compiled call;
        ``statics`` evaluated at the state's configuration if the caller has them,
        ``body_target`` (rotation, translation) in place of ``ref.body_pose`` if given."""
        if statics is None:
            statics = self.statics.evaluate(self._configuration(state))
        clik, rm = self.clik, self.rm
        if body_target is None:
            pose = ref.body_pose
            body_target = pose.rotation, pose.translation
        modes, rotations, translations = self._leg_targets(ref)
        goal = np.empty(N_JOINTS)
        clik_goal(statics.foot_rotations, statics.foot_translations, state.body_rotation,
                  state.body_position, *body_target, rotations, translations, modes,
                  state.joint_positions, statics.leg_jacobians, clik.gain, clik.w,
                  clik.damping**2, rm.q_min, rm.q_max, goal)
        return goal

    def _command(self, position: np.ndarray, statics: Statics,
                 status: WrenchStatus | None, F: np.ndarray) -> JointCommand:
        """The command of goal positions (already inside the joint limits), the torques
        ``statics.torques(F)`` clipped to the servos' limits and the current limits that
        let the servos apply them."""
        rm = self.rm
        tau, current = np.empty(N_JOINTS), np.empty(N_JOINTS)
        kernels.servo_command(statics.tau_bias, statics.leg_jacobians,
                              np.ascontiguousarray(F, dtype=float).reshape(N_WRENCH),
                              rm.tau_max, rm.current_per_torque, self.current_margin,
                              rm.current_max, tau, current)
        return JointCommand(position, tau, current, status, F)

    @abstractmethod
    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        """One control cycle: joint goals, feed-forward torques and current limits."""


def weighted_distribution(A: np.ndarray, B: np.ndarray, axis_weights: np.ndarray,
                          load: np.ndarray) -> np.ndarray:
    """Gripper wrenches (24,) minimizing ``sum_i F_i^T diag(w) F_i / l_i^2`` with ``A F = B``.

    ``A`` (6, 24) and ``B`` (6,) are the body statics, ``axis_weights`` (6,) the per-axis
    weights ``w`` [1/N^2, 1/(N m)^2], ``load`` (4,) the load factors ``l_i`` in [0, 1]
    (0: swinging, no wrench). Closed form ``F = W^-1 A^T (A W^-1 A^T)^-1 B``; raises
    ``LinAlgError`` if the holding grippers cannot carry every body wrench.
    """
    F = kernels.weighted_distribution(np.asarray(A, dtype=float), np.asarray(B, dtype=float),
                                      np.asarray(axis_weights, dtype=float),
                                      np.asarray(load, dtype=float), MIN_LOAD)
    if not math.isfinite(np.add.reduce(F)):
        raise np.linalg.LinAlgError("the holding grippers cannot carry every body wrench")
    return F


class QWBCController(Controller):
    """Quasi-whole-body control: SE(3) PD -> ``A F = B`` -> wrench QP -> torques -> currents.

    Ablations: ``ramp=False`` sees every attached gripper at full load (no unloading before
    release); ``torque_rows=False`` drops the joint-torque rows; no gripper limits and no
    weights are a huge box and unit weights passed as ``limits`` and ``weights``.
    ``attitude_integral`` [1/s] adds integral action on the body's attitude to the servos'
    goal positions (:class:`PoseIntegral`; 0: none, as the paper's controller).
    """

    def __init__(self, rm: RobotModel | None = None,
                 limits: list[WrenchLimits] | WrenchLimits | None = None,
                 weights: QWBCWeights | None = None, pd: BodyPD | None = None,
                 ramp: bool = True, torque_rows: bool = True, attitude_integral: float = 0.0,
                 control_period: float = 0.02, **kwargs) -> None:
        super().__init__(rm, **kwargs)
        self.integral = PoseIntegral(attitude_integral, (0.0, ATTITUDE_LIMIT), control_period)
        if limits is None or isinstance(limits, WrenchLimits):
            limits = [limits or WrenchLimits.paper_box()] * len(LEG_NAMES)
        self.qp = WrenchQP(limits, self.rm.tau_max, weights, torque_rows=torque_rows)
        self.pd = pd or BodyPD()
        self.ramp = ramp
        self.last_solution = None

    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        self._check(state, ref)
        a = self.pd.acceleration(state, ref)
        statics = self.statics.evaluate(self._configuration(state), a)
        load = ref.load_array if self.ramp else (ref.load_array > 0).astype(float)
        sol = self.qp.solve(statics, load)
        self.last_solution = sol
        return self._command(self._positions(state, ref, statics,
                                             self.integral.target(state, ref)),
                             statics, sol.status, sol.F)


class CLIKController(Controller):
    """Stiff position control through closed-loop IK with integral action on the body pose
    and gravity feed-forward (full current: no force regulation).

    ``integral_gain`` [1/s] integrates the body's pose error ``log6(T^-1 T_ref)`` into a
    correction of the CLIK body target, clamped to ``integral_limit`` (position [m],
    rotation [rad]) against wind-up; ``gravity_feedforward`` adds the static joint torques
    that carry the weight, distributed like :class:`VMCController`'s wrench (axis weights
    ``1/limit^2``, load factors).
    """

    def __init__(self, rm: RobotModel | None = None, integral_gain: float = 0.5,
                 integral_limit: tuple[float, float] = (0.02, 0.1),
                 gravity_feedforward: bool = True, control_period: float = 0.02,
                 **kwargs) -> None:
        super().__init__(rm, **kwargs)
        self.integral = PoseIntegral(integral_gain, integral_limit, control_period)
        self.feedforward = gravity_feedforward
        self.axis_weights = 1.0 / PAPER_BOX_HALF_WIDTHS**2

    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        self._check(state, ref)
        rm = self.rm
        statics = self.statics.evaluate(self._configuration(state))
        target = self.integral.target(state, ref)
        if self.feedforward:
            F = weighted_distribution(statics.A, statics.B, self.axis_weights, ref.load_array)
            tau = np.empty(N_JOINTS)  # clip(statics.torques(F), -tau_max, tau_max)
            kernels.clipped_torques(statics.tau_bias, statics.leg_jacobians, F, rm.tau_max, tau)
        else:
            F, tau = np.zeros(N_WRENCH), np.zeros(N_JOINTS)
        return JointCommand(self._positions(state, ref, statics, target), tau,
                            rm.current_max.copy(), None, F)


class VMCController(Controller):
    """Virtual model control: a spring-damper on the body gives a body wrench, distributed
    over the attached grippers by the axis- and load-weighted pseudo-inverse
    (:func:`weighted_distribution`; no limits), mapped to torques through the leg Jacobian
    transposes plus gravity compensation. Spring ``k`` [N/m, N m/rad] and damper ``d``
    [N s/m, N m s/rad] per body axis. ``axis_weights=None`` weighs every axis alike (the
    minimum-norm pseudo-inverse) and ``unload=False`` ignores the load factors (both as the
    comparison's first VMC had them). ``attitude_integral`` as :class:`QWBCController`'s."""

    def __init__(self, rm: RobotModel | None = None,
                 axis_weights: np.ndarray | None = 1.0 / PAPER_BOX_HALF_WIDTHS**2,
                 unload: bool = True, attitude_integral: float = 0.0,
                 control_period: float = 0.02, **kwargs) -> None:
        super().__init__(rm, **kwargs)
        self.integral = PoseIntegral(attitude_integral, (0.0, ATTITUDE_LIMIT), control_period)
        self.k = np.array([400.0] * 3 + [40.0] * 3)
        self.d = np.array([60.0] * 3 + [6.0] * 3)
        self.axis_weights = np.ones(6) if axis_weights is None else np.asarray(axis_weights)
        self.unload = unload
        self.pd = BodyPD()

    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        self._check(state, ref)
        statics = self.statics.evaluate(self._configuration(state))
        e, de = self.pd.wrench_error(state, ref)
        wrench = statics.B + self.k * e + self.d * de
        load = ref.load_array if self.unload else (ref.load_array > 0).astype(float)
        F = weighted_distribution(statics.A, wrench, self.axis_weights, load)
        return self._command(self._positions(state, ref, statics,
                                             self.integral.target(state, ref)),
                             statics, None, F)
