"""Dynamixel-style servos in "current-based position" mode, as MuJoCo actuators, with power.

Each servo is a position loop whose output current is capped by the commanded current limit:
``tau = clip(kp (q_goal - q) + tau_ff, -tau_lim, tau_lim)`` with ``tau_lim = min(I_lim /
(A per N m), tau_max)``, plus the motor's back-EMF and reducer damping ``-kv qdot`` and the
reflected rotor inertia (armature) on the joint. In MuJoCo this is a ``general`` actuator with
``force = kp ctrl - kp q`` (``ctrl = q_goal + tau_ff / kp``, the feed-forward as a goal
offset), joint damping ``kv``, and ``forcerange = +-tau_lim`` rewritten every control cycle:
the whole servo runs inside MuJoCo's step, so the physics rate costs no Python.

Gains from Dynamixel X-series defaults: position P gain 800 (KPP = 800/128 = 6.25 current
units of 2.69 mA per position tick of 0.088 deg) is ``kp = 10.95 A/rad`` of current, i.e.
``kp = 10.95 A/rad * (N m per A)``; the damping is stall torque over no-load speed
(``kv = tau_max / omega_max``, the back-EMF slope of a DC motor's torque-speed line); the
armature ``0.01 kg m^2`` is the order of a coreless rotor times the square of a 1:270 gear.

Power: the servos draw ``I = |tau| (A per N m) + I_idle`` each from the ``voltage`` bus, and
the robot's power is ``sum V I`` [W] (what the paper computes from the servos' current and
voltage readings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import N_JOINTS, Marcbot
from clamber.quadruped.sim.servo_kernels import PAIRWISE_BLOCK, bus_power, write_command

_sum = np.add.reduce
#: Current per position error of the Dynamixel position loop at default gains [A/rad].
POSITION_GAIN_A_PER_RAD = 6.25 * 2.69e-3 / np.deg2rad(0.088)


@dataclass(frozen=True)
class ServoBankParameters:
    """Servo-bank settings: bus ``voltage`` [V], standby current ``idle_current`` [A] per
    servo (Dynamixel X: about 40 mA), ``armature`` [kg m^2] and a scale on the P gain."""

    voltage: float = 12.0
    idle_current: float = 0.04
    armature: float = 0.01
    gain_scale: float = 1.0

    def __post_init__(self) -> None:
        check.numeric_fields(self, "servo", strict=True, names=("voltage", "gain_scale"))
        check.numeric_fields(self, "servo", names=("idle_current", "armature"))


if not 8 <= N_JOINTS <= PAIRWISE_BLOCK:  # pragma: no cover (the robot has 20 servos)
    raise ImportError("the compiled bus power sums 8 to PAIRWISE_BLOCK servos")


class ServoBank:
    """The 20 servos of a robot: configures a model spec, applies commands, computes power."""

    def __init__(self, robot: Marcbot, params: ServoBankParameters | None = None) -> None:
        self.params = params or ServoBankParameters()
        self.tau_max = robot.torque_limits()
        self.current_per_torque = robot.current_per_torque()
        self.current_max = robot.current_limits()
        vel = np.array([s.velocity_limit for s in robot.servo_specs()])
        self.kp = POSITION_GAIN_A_PER_RAD / self.current_per_torque * self.params.gain_scale
        self.kv = self.tau_max / vel
        #: A command's three vectors side by side, for one finiteness test per cycle.
        self._cmd = np.empty((3, N_JOINTS))
        #: Work arrays of :meth:`apply` and :meth:`power` (20,).
        self._work = np.empty(N_JOINTS)
        self._current = np.empty(N_JOINTS)
        #: The MjModel and MjData last written and views of their ctrl and force ranges
        #: (which never move).
        self._views: tuple | None = None

    def configure(self, spec: mujoco.MjSpec) -> None:
        """Turn the description's torque motors into current-limited position servos."""
        if len(spec.actuators) != N_JOINTS:
            raise ConfigError(f"expected {N_JOINTS} actuators, found {len(spec.actuators)}")
        for i, act in enumerate(spec.actuators):
            act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            gain = np.zeros(10)
            gain[0] = self.kp[i]
            bias = np.zeros(10)
            bias[1] = -self.kp[i]
            act.gainprm, act.biasprm = gain, bias
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-self.tau_max[i], self.tau_max[i]]
        joints = [spec.joint(act.target) for act in spec.actuators]
        for i, j in enumerate(joints):
            j.damping = [float(self.kv[i]), 0.0, 0.0]
            j.armature = self.params.armature

    def torque_limit(self, current_limit: np.ndarray) -> np.ndarray:
        """Largest torque [N m] each servo applies under its current limit [A]."""
        return np.minimum(np.maximum(current_limit, 0.0) / self.current_per_torque, self.tau_max)

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, cmd: JointCommand) -> None:
        """Write goal positions, feed-forward torques and current limits into the actuators
        (in one compiled call: :meth:`apply_plain`'s numbers)."""
        p, t, c = cmd.position, cmd.torque, cmd.current_limit
        if not (type(p) is type(t) is type(c) is np.ndarray
                and p.shape == t.shape == c.shape == (N_JOINTS,)
                and p.dtype == t.dtype == c.dtype == np.float64):
            self.apply_plain(model, data, cmd)
            return
        views = self._views
        if views is None or views[0] is not model or views[1] is not data:
            views = self._views = (model, data, data.ctrl, model.actuator_forcerange)
        bad = write_command(p, t, c, self.kp, self.current_per_torque, self.tau_max,
                            views[2], views[3])
        if bad >= 0:
            names = ("position", "torque", "current_limit")
            raise ConfigError(f"command {names[bad]} must be {N_JOINTS} finite numbers")

    def apply_plain(self, model: mujoco.MjModel, data: mujoco.MjData,
                    cmd: JointCommand) -> None:
        """:meth:`apply` in NumPy, for commands of any array-like type (its reference)."""
        buf = self._cmd
        names = ("position", "torque", "current_limit")
        for k, a in enumerate((cmd.position, cmd.torque, cmd.current_limit)):
            if (a.shape if type(a) is np.ndarray else np.shape(a)) != (N_JOINTS,):
                raise ConfigError(f"command {names[k]} must be {N_JOINTS} finite numbers")
            buf[k] = a
        # A finite sum proves every entry finite (the element test only when it is not).
        if not math.isfinite(_sum(buf, axis=None)):
            finite = np.isfinite(buf)
            if not finite.all():
                bad = names[int(np.flatnonzero(~finite.all(axis=1))[0])]
                raise ConfigError(f"command {bad} must be {N_JOINTS} finite numbers")
        position, torque, current = buf
        views = self._views
        if views is None or views[0] is not model or views[1] is not data:
            views = self._views = (model, data, data.ctrl, model.actuator_forcerange)
        ctrl, forcerange = views[2], views[3]
        work = np.divide(torque, self.kp, out=self._work)
        np.add(position, work, out=ctrl)
        lim = np.maximum(current, 0.0, out=self._work)
        lim /= self.current_per_torque
        np.minimum(lim, self.tau_max, out=lim)
        forcerange[:, 1] = lim
        np.negative(lim, out=forcerange[:, 0])

    def current(self, torque: np.ndarray) -> np.ndarray:
        """Current [A] each servo draws when applying ``torque`` [N m]."""
        return np.abs(torque) * self.current_per_torque + self.params.idle_current

    def power(self, torque: np.ndarray) -> float:
        """Electrical power of all servos [W] at joint torques ``torque`` [N m] (a float
        vector of the 20 in one compiled call: :meth:`power_plain`'s number)."""
        if type(torque) is np.ndarray and torque.shape == (N_JOINTS,) \
                and torque.dtype == np.float64:
            return bus_power(torque, self.current_per_torque, self.params.idle_current,
                             self.params.voltage)
        return self.power_plain(torque)

    def power_plain(self, torque: np.ndarray) -> float:
        """:meth:`power` in NumPy (its reference)."""
        if type(torque) is not np.ndarray or torque.shape != (N_JOINTS,):
            return float(self.params.voltage * self.current(torque).sum())
        current = np.abs(torque, out=self._current)
        current *= self.current_per_torque
        current += self.params.idle_current
        return float(self.params.voltage * _sum(current))
