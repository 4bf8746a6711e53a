"""Dynamixel-style servos in "current-based position" mode, as MuJoCo actuators, with power.

``tau = clip(kp (q_goal - q) + tau_ff, -tau_lim, tau_lim)``, ``tau_lim = min(I_lim / (A per
N m), tau_max)``, plus back-EMF damping ``-kv qdot`` and the rotor's armature: a ``general``
actuator with ``ctrl = q_goal + tau_ff / kp``, joint damping ``kv`` and ``forcerange``
rewritten every cycle, so the servo loop runs inside MuJoCo's step. ``kp`` is the X-series
default P gain (6.25 units of 2.69 mA per 0.088 deg tick, 10.95 A/rad) over A per N m;
``kv = tau_max / omega_max``; the armature (0.01 kg m^2) is a coreless rotor through a
1:270 gear. Power is ``V sum(|tau| (A per N m) + I_idle)`` [W], as the paper computes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np

from clamber import _validate as check
from clamber.compiled import kernel
from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.model.robot import N_JOINTS, Marcbot

#: Current per position error of the Dynamixel position loop at default gains [A/rad].
POSITION_GAIN_A_PER_RAD = 6.25 * 2.69e-3 / np.deg2rad(0.088)


@kernel
def write_command(position: np.ndarray, torque: np.ndarray, current: np.ndarray,
                  kp: np.ndarray, current_per_torque: np.ndarray, tau_max: np.ndarray,
                  ctrl: np.ndarray, forcerange: np.ndarray) -> int:
    """Goals ``position + torque / kp`` into ``ctrl`` and limits ``+-min(max(current, 0) /
    current_per_torque, tau_max)`` into ``forcerange`` (n, 2); all (n,). Returns -1 when
    written, else the index (0, 1, 2: position, torque, current) of the first vector with
    a non-finite entry, having written nothing."""
    for k, v in enumerate((position, torque, current)):
        for x in v:
            if not math.isfinite(x):
                return k
    for i in range(position.shape[0]):
        ctrl[i] = position[i] + torque[i] / kp[i]
        lim = min(max(current[i], 0.0) / current_per_torque[i], tau_max[i])
        forcerange[i, 0] = -lim
        forcerange[i, 1] = lim
    return -1



@kernel
def period_power(forces: np.ndarray, current_per_torque: np.ndarray, idle_current: float,
                 voltage: float, torque: np.ndarray) -> float:
    """Mean ``|forces|`` (steps, n) [N m] over the steps into ``torque`` (n,), and the bus
    power ``voltage * sum(|torque| current_per_torque + idle_current)`` [W] at it."""
    steps = forces.shape[0]
    total = 0.0
    for i in range(forces.shape[1]):
        s = 0.0
        for j in range(steps):
            s += abs(forces[j, i])
        torque[i] = s / steps
        total += torque[i] * current_per_torque[i] + idle_current
    return voltage * total


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

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, cmd: JointCommand) -> None:
        """Write goal positions, feed-forward torques and current limits into the actuators
        (:func:`write_command`); a command that is not 20 finite numbers per
        vector is refused."""
        p = np.asarray(cmd.position, dtype=float)
        t = np.asarray(cmd.torque, dtype=float)
        c = np.asarray(cmd.current_limit, dtype=float)
        shape = (N_JOINTS,)
        bad = 0 if p.shape != shape else 1 if t.shape != shape else 2 if c.shape != shape else (
            write_command(p, t, c, self.kp, self.current_per_torque, self.tau_max, data.ctrl,
                          model.actuator_forcerange))
        if bad >= 0:
            names = ("position", "torque", "current_limit")
            raise ConfigError(f"command {names[bad]} must be {N_JOINTS} finite numbers")

    def period(self, forces: np.ndarray, torque: np.ndarray) -> float:
        """The mean ``|force|`` (20,) [N m] per servo over a period's physics steps
        ``forces`` (steps, 20) into ``torque``; returns the power [W] at those torques."""
        return period_power(forces, self.current_per_torque, self.params.idle_current,
                            self.params.voltage, torque)

    def power(self, torque: np.ndarray) -> float:
        """Electrical power of all servos [W] at joint torques ``torque`` (20,) [N m]:
        ``V sum(|tau| (A per N m) + I_idle)``."""
        tau = np.asarray(torque, dtype=float)
        if tau.shape != (N_JOINTS,):
            raise ConfigError(f"torque must be {N_JOINTS} numbers, got shape {tau.shape}")
        return self.period(tau[None], np.empty(N_JOINTS))
