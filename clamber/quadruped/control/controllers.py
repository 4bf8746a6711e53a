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
import pinocchio as pin

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control.controller_kernels import (
    clipped_torques,
    distribution_weights,
    integral_target,
    pd_acceleration,
    pose_error,
    servo_command,
    virtual_wrench,
)
from clamber.quadruped.control.controller_kernels import configuration as configuration_of
from clamber.quadruped.control.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.control.reference import MotionReference
from clamber.quadruped.control.wbc_problem import MIN_LOAD, QWBCWeights
from clamber.quadruped.model.kinematics import EVERY_LEG, Clik
from clamber.quadruped.model.robot import LEG_NAMES, N_JOINTS
from clamber.quadruped.model.robot_model import RobotModel, RobotState
from clamber.quadruped.model.statics import N_WRENCH, Statics, StaticsEvaluator
from clamber.quadruped.model.statics_kernels import clik_goal
from clamber.small_linalg import solve_vector

_sum = np.add.reduce


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

    @classmethod
    def trusted(cls, position: np.ndarray, torque: np.ndarray, current_limit: np.ndarray,
                status: WrenchStatus | None, wrenches: np.ndarray) -> JointCommand:
        """A command from arrays a controller made, without the frozen dataclass's
        per-field set-up (a control cycle's worth of Python calls)."""
        c = object.__new__(cls)
        c.__dict__.update(position=position, torque=torque, current_limit=current_limit,
                          status=status, wrenches=wrenches)
        return c


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

    def acceleration(self, state: RobotState, ref: MotionReference,
                     body: pin.SE3 | None = None) -> np.ndarray:
        """The clipped body acceleration; ``body`` is ``state.body_pose`` if the caller
        already built it (the state's arrays are read either way)."""
        Ad, e, pose = self._action, self._error, ref.body_pose
        pose_error(state.body_rotation, state.body_position, pose.rotation, pose.translation,
                   Ad, e)
        a = np.empty(6)
        pd_acceleration(Ad @ ref.body_acceleration, self.kp, e, self.kd, Ad @ ref.body_twist,
                        state.body_twist, self._lo, self._hi, a)
        return a

    def acceleration_plain(self, state: RobotState, ref: MotionReference) -> np.ndarray:
        """:meth:`acceleration` through Pinocchio's ``SE3`` objects and NumPy (the
        reference of the compiled one)."""
        err = state.body_pose.actInv(ref.body_pose)
        Ad = err.toActionMatrix()
        twist_ref = Ad @ ref.body_twist
        a_ref = Ad @ ref.body_acceleration
        a = a_ref + self.kp * pin.log6(err).vector + self.kd * (twist_ref - state.body_twist)
        np.minimum(np.maximum(a, self._lo), self._hi, out=a)
        return a

    def wrench_error(self, state: RobotState, ref: MotionReference,
                     body: pin.SE3 | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Pose error ``log6(T^-1 T_ref)`` and twist error in {B} (``body`` as in
        :meth:`acceleration`)."""
        Ad, e, pose = self._action, np.empty(6), ref.body_pose
        pose_error(state.body_rotation, state.body_position, pose.rotation, pose.translation,
                   Ad, e)
        return e, Ad @ ref.body_twist - state.body_twist

    def pose_error(self, state: RobotState, ref: MotionReference) -> np.ndarray:
        """The pose error ``log6(T^-1 T_ref)`` of :meth:`wrench_error` alone."""
        e, pose = np.empty(6), ref.body_pose
        pose_error(state.body_rotation, state.body_position, pose.rotation, pose.translation,
                   self._action, e)
        return e


class Controller(ABC):
    """Shared plumbing: checks, CLIK goal positions, torque and current mapping."""

    min_attached = 3

    def __init__(self, rm: RobotModel | None = None, clik_gain: float = 0.5,
                 current_margin: float = 0.1) -> None:
        self.rm = rm or RobotModel()
        self.clik = Clik(self.rm, gain=clik_gain)
        self.current_margin = current_margin
        self._q = np.zeros(self.rm.model.nq)
        self._targets = (np.zeros(len(LEG_NAMES), dtype=np.int64),
                         np.zeros((len(LEG_NAMES), 3, 3)), np.zeros((len(LEG_NAMES), 3)))

    def _configuration(self, state: RobotState) -> np.ndarray:
        """Pinocchio's configuration (27,) of the state (``configuration(state.body_pose,
        state.joint_positions)``, the same numbers), in a buffer reused every cycle."""
        configuration_of(state.body_rotation, state.body_position, state.joint_positions,
                         self._q)
        return self._q

    def _check(self, state: RobotState, ref: MotionReference) -> None:
        if not isinstance(state, RobotState) or not isinstance(ref, MotionReference):
            raise ConfigError("step needs a RobotState and a MotionReference")
        if len(ref.stance) < self.min_attached:
            raise ConfigError(f"{type(self).__name__} needs at least {self.min_attached} "
                              f"attached grippers, got {list(ref.stance)}")

    def _positions(self, state: RobotState, ref: MotionReference,
                   statics: Statics | None = None, body: pin.SE3 | None = None) -> np.ndarray:
        """CLIK goal positions; reuses the kinematics of ``statics`` (evaluated at the
        state's configuration) when given, so a cycle computes them once (``body``:
        ``state.body_pose`` if the caller already built it)."""
        if statics is not None:
            return self._goal_positions(state, ref, statics)
        if body is None:
            body = state.body_pose
        stance, swing, keep = ref.stance, ref.foot_targets, ref.stance_attitudes
        feet_b, J = self.clik.kinematics(state.joint_positions)
        feet = [body * f for f in feet_b]
        targets = {leg: swing.get(leg, feet[i]) if leg not in stance else
                   pin.SE3(keep[leg], feet[i].translation) if leg in keep else feet[i]
                   for i, leg in enumerate(LEG_NAMES)}
        return self.clik.step_from(state.joint_positions, feet_b, J, ref.body_pose, targets)

    def _leg_targets(self, ref: MotionReference) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every leg's CLIK target as :func:`clik_goal` takes it: modes (4,) (0: stay where
        it is, 1: a stance attitude, 2: a swing target), rotations (4, 3, 3) and
        translations (4, 3) (arrays reused from cycle to cycle)."""
        modes, rotations, translations = self._targets
        stance, swing, keep = ref.stance, ref.foot_targets, ref.stance_attitudes
        if not swing and not keep:  # every leg stays where it is
            modes.fill(0)
            return modes, rotations, translations
        for i, leg in enumerate(LEG_NAMES):
            if leg not in stance:
                target = swing.get(leg)
                if target is None:
                    modes[i] = 0
                else:
                    modes[i] = 2
                    rotations[i] = target.rotation
                    translations[i] = target.translation
            elif leg in keep:
                modes[i] = 1
                rotations[i] = keep[leg]
            else:
                modes[i] = 0
        return modes, rotations, translations

    def _goal_positions(self, state: RobotState, ref: MotionReference, statics: Statics,
                        body_target: tuple[np.ndarray, np.ndarray] | None = None
                        ) -> np.ndarray:
        """:meth:`_positions` from ``statics`` in one compiled call: the pose errors of
        :meth:`_positions_plain` and :meth:`Clik.step_every_leg` (the same numbers).
        ``body_target`` (rotation, translation) replaces ``ref.body_pose`` if given."""
        clik, rm = self.clik, self.rm
        if body_target is None:
            pose = ref.body_pose
            body_target = pose.rotation, pose.translation
        modes, rotations, translations = self._leg_targets(ref)
        goal = np.empty(N_JOINTS)
        clik_goal(statics.foot_rotations, statics.foot_translations, state.body_rotation,
                  state.body_position, *body_target, rotations, translations, modes,
                  state.joint_positions, statics.leg_jacobians, EVERY_LEG, clik.gain, clik.w,
                  clik.damping**2, rm.q_min, rm.q_max, goal)
        return goal

    def _positions_plain(self, state: RobotState, ref: MotionReference, statics: Statics,
                         body: pin.SE3 | None = None) -> np.ndarray:
        """:meth:`_positions` from ``statics`` through Pinocchio's ``SE3`` objects (the
        reference of the compiled :meth:`_goal_positions`)."""
        if body is None:
            body = state.body_pose
        stance, swing, keep = ref.stance, ref.foot_targets, ref.stance_attitudes
        # Every leg has a target: the errors of :meth:`Clik.step_from` in one loop.
        feet, body_inv = statics.foot_poses, body.inverse()
        target_inv, log6 = ref.body_pose.inverse(), pin.log6
        e = np.empty((len(LEG_NAMES), 6))
        for i, leg in enumerate(LEG_NAMES):
            f = feet[i]
            target = swing.get(leg, f) if leg not in stance else \
                pin.SE3(keep[leg], f.translation) if leg in keep else f
            e[i] = log6((body_inv * f).actInv(target_inv * target)).vector
        return self.clik.step_every_leg(state.joint_positions, statics.leg_jacobians, e)

    def _command_from(self, position: np.ndarray, statics: Statics,
                      status: WrenchStatus | None, F: np.ndarray) -> JointCommand:
        """:meth:`_command` of the torques ``statics.torques(F)`` in one compiled call (the
        same numbers)."""
        rm = self.rm
        tau, current = np.empty(N_JOINTS), np.empty(N_JOINTS)
        servo_command(statics.tau_bias, statics.leg_jacobians,
                      np.ascontiguousarray(F, dtype=float).reshape(N_WRENCH), rm.tau_max,
                      rm.current_per_torque, self.current_margin, rm.current_max, tau, current)
        return JointCommand.trusted(position, tau, current, status, F)

    def _command(self, position: np.ndarray, torque: np.ndarray, status: WrenchStatus | None,
                 F: np.ndarray) -> JointCommand:
        """The command of goal positions (already inside the joint limits: from
        :meth:`_positions`), torques clipped to the servos' limits and the current limits
        that let the servos apply them."""
        rm = self.rm
        if not (math.isfinite(_sum(torque)) or np.isfinite(torque).all()):
            torque = np.nan_to_num(torque)
        tau = np.maximum(torque, -rm.tau_max)
        np.minimum(tau, rm.tau_max, out=tau)
        current = np.abs(tau)
        current *= rm.current_per_torque
        current += self.current_margin * rm.current_max
        np.minimum(current, rm.current_max, out=current)
        return JointCommand(position, tau, current, status, F)

    @abstractmethod
    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        """One control cycle: joint goals, feed-forward torques and current limits."""


def weighted_distribution(A: np.ndarray, B: np.ndarray, axis_weights: np.ndarray,
                          load: np.ndarray) -> np.ndarray:
    """Gripper wrenches (24,) minimizing ``sum_i F_i^T diag(w) F_i / l_i^2`` with ``A F = B``.

    ``A`` (6, 24) and ``B`` (6,) are the body statics, ``axis_weights`` (6,) the per-axis
    weights ``w`` [1/N^2, 1/(N m)^2], ``load`` (4,) the load factors ``l_i`` in [0, 1]
    (0: swinging, no wrench). Closed form ``F = W^-1 A^T (A W^-1 A^T)^-1 B``.
    """
    if not (type(A) is np.ndarray and A.dtype == np.float64 and A.flags.c_contiguous
            and A.shape == (6, N_WRENCH)):
        return weighted_distribution_plain(A, B, axis_weights, load)
    # The weights and the scaled A in one compiled call (the same numbers as the NumPy
    # below); the products and the solve stay NumPy's and LAPACK's.
    inv_w, AW = np.empty(N_WRENCH), np.empty((6, N_WRENCH))
    distribution_weights(A, np.asarray(load, dtype=float),
                         np.asarray(axis_weights, dtype=float), MIN_LOAD, inv_w, AW)
    return inv_w * (A.T @ solve_vector(AW @ A.T, B))


def weighted_distribution_plain(A: np.ndarray, B: np.ndarray, axis_weights: np.ndarray,
                                load: np.ndarray) -> np.ndarray:
    """:func:`weighted_distribution` in NumPy (the reference of its compiled weights)."""
    on = load > 0
    if on.all():  # every gripper holds: the same numbers without the masks
        inv_w = (np.maximum(load, MIN_LOAD)[:, None] ** 2 / axis_weights[None, :]).reshape(-1)
    else:
        inv_w = np.zeros(N_WRENCH)
        inv_w[on.repeat(6)] = (np.maximum(load[on], MIN_LOAD)[:, None] ** 2
                               / axis_weights[None, :]).reshape(-1)
    AW = A * inv_w
    return inv_w * (A.T @ solve_vector(AW @ A.T, B))


class QWBCController(Controller):
    """Quasi-whole-body control: SE(3) PD -> ``A F = B`` -> wrench QP -> torques -> currents.

    Ablations: ``ramp=False`` sees every attached gripper at full load (no unloading before
    release); ``torque_rows=False`` drops the joint-torque rows; no gripper limits and no
    weights are a huge box and unit weights passed as ``limits`` and ``weights``.
    """

    def __init__(self, rm: RobotModel | None = None,
                 limits: list[WrenchLimits] | WrenchLimits | None = None,
                 weights: QWBCWeights | None = None, pd: BodyPD | None = None,
                 ramp: bool = True, torque_rows: bool = True, **kwargs) -> None:
        super().__init__(rm, **kwargs)
        if limits is None or isinstance(limits, WrenchLimits):
            limits = [limits or WrenchLimits.paper_box()] * len(LEG_NAMES)
        self.qp = WrenchQP(limits, self.rm.tau_max, weights, torque_rows=torque_rows)
        self.statics = StaticsEvaluator(self.rm)
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
        return self._command_from(self._positions(state, ref, statics), statics, sol.status,
                                  sol.F)


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
        if integral_gain < 0 or control_period <= 0:
            raise ConfigError(f"integral_gain must be >= 0 and control_period > 0, got "
                              f"{integral_gain}, {control_period}")
        self.ki, self.dt = integral_gain, control_period
        self._limit = np.array([integral_limit[0]] * 3 + [integral_limit[1]] * 3)
        self.integral = np.zeros(6)
        self.feedforward = gravity_feedforward
        self.statics = StaticsEvaluator(self.rm)
        self.axis_weights = 1.0 / PAPER_BOX_HALF_WIDTHS**2
        self.pd = BodyPD()
        #: The corrected body target (rotation, translation) and the action matrix of the
        #: pose error, written every cycle.
        self._target = (np.zeros((3, 3)), np.zeros(3))
        self._action, self._error = np.zeros((6, 6)), np.zeros(6)

    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        self._check(state, ref)
        rm = self.rm
        statics = self.statics.evaluate(self._configuration(state))
        target = None
        if self.ki > 0:
            # The integral and the corrected target T_ref exp6(integral) in one compiled
            # call: Pinocchio's numbers, without its objects.
            pose = ref.body_pose
            rotation, translation = pose.rotation, pose.translation
            e, integral, target = self._error, np.empty(6), self._target
            pose_error(state.body_rotation, state.body_position, rotation, translation,
                       self._action, e)
            integral_target(self.integral, e, self.ki * self.dt, self._limit, rotation,
                            translation, *target, integral)
            self.integral = integral
        if self.feedforward:
            F = weighted_distribution(statics.A, statics.B, self.axis_weights, ref.load_array)
            tau = np.empty(N_JOINTS)  # clip(statics.torques(F), -tau_max, tau_max)
            clipped_torques(statics.tau_bias, statics.leg_jacobians, F, rm.tau_max, tau)
        else:
            F, tau = np.zeros(N_WRENCH), np.zeros(N_JOINTS)
        return JointCommand.trusted(self._goal_positions(state, ref, statics, target), tau,
                                    rm.current_max.copy(), None, F)


class VMCController(Controller):
    """Virtual model control: a spring-damper on the body gives a body wrench, distributed
    over the attached grippers by the axis- and load-weighted pseudo-inverse
    (:func:`weighted_distribution`; no limits), mapped to torques through the leg Jacobian
    transposes plus gravity compensation. ``axis_weights=None`` weighs every axis alike
    (the minimum-norm pseudo-inverse) and ``unload=False`` ignores the load factors (both
    as the comparison's first VMC had them)."""

    def __init__(self, rm: RobotModel | None = None, stiffness: np.ndarray | None = None,
                 damping: np.ndarray | None = None,
                 axis_weights: np.ndarray | None = 1.0 / PAPER_BOX_HALF_WIDTHS**2,
                 unload: bool = True, **kwargs) -> None:
        super().__init__(rm, **kwargs)
        self.k = np.array([400.0] * 3 + [40.0] * 3) if stiffness is None else stiffness
        self.d = np.array([60.0] * 3 + [6.0] * 3) if damping is None else damping
        self.axis_weights = np.ones(6) if axis_weights is None else np.asarray(axis_weights)
        self.unload = unload
        self.statics = StaticsEvaluator(self.rm)
        self.pd = BodyPD()
        self._action, self._error = np.zeros((6, 6)), np.zeros(6)

    def step(self, state: RobotState, ref: MotionReference) -> JointCommand:
        self._check(state, ref)
        statics = self.statics.evaluate(self._configuration(state))
        # statics.B + k * e + d * de of the pose and twist errors (BodyPD.wrench_error)
        Ad, e, wrench, pose = self._action, self._error, np.empty(6), ref.body_pose
        pose_error(state.body_rotation, state.body_position, pose.rotation, pose.translation,
                   Ad, e)
        virtual_wrench(statics.B, self.k, e, self.d, Ad @ ref.body_twist, state.body_twist,
                       wrench)
        load = ref.load_array if self.unload else (ref.load_array > 0).astype(float)
        F = weighted_distribution(statics.A, wrench, self.axis_weights, load)
        return self._command_from(self._positions(state, ref, statics), statics, None, F)
