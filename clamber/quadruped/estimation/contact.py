"""Foot contact from what the servos report: current readings, a foot-force estimate, hysteresis.

The servos report their present current (Dynamixel X: units of 2.69 mA) each cycle, with
noise. Quasi-statically a leg's joint torques balance gravity and its foot force ``f``, so
``f`` is the least-squares solution of ``J^T f = g(q, R) + k_v qdot - tau_measured`` over
its five joints (``k_v qdot``: the back-EMF damping the current does not carry; swing
inertia and body acceleration neglected). :class:`ContactDetector` thresholds that force
with hysteresis and reports a foot only after ``settle`` cycles, once its load has built
up: no gait schedule, no ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_JOINTS
from clamber.quadruped.model.robot_model import NV_BASE, RobotModel

#: One unit of a Dynamixel X present-current reading [A].
CURRENT_UNIT_A = 2.69e-3


@dataclass(frozen=True)
class CurrentSensorSettings:
    """Present-current readings: white noise ``noise`` [A] (standard deviation per reading)
    and quantisation ``unit`` [A] (the Dynamixel X's 2.69 mA)."""

    noise: float = 0.01
    unit: float = CURRENT_UNIT_A

    def __post_init__(self) -> None:
        check.numeric_fields(self, "current sensor", names=("noise",))
        check.numeric_fields(self, "current sensor", strict=True, names=("unit",))


class ServoCurrentSensor:
    """Seeded noisy, quantised current readings of the 20 servos, returned as torques [N m]."""

    def __init__(self, current_per_torque: np.ndarray,
                 settings: CurrentSensorSettings | None = None, seed: int = 0) -> None:
        self.settings = settings or CurrentSensorSettings()
        self.current_per_torque = np.asarray(current_per_torque, dtype=float)
        self.rng = np.random.default_rng(seed)

    def read(self, motor_torque: np.ndarray) -> np.ndarray:
        """Torque [N m] each servo reports for the true ``motor_torque`` [N m]."""
        s = self.settings
        current = motor_torque * self.current_per_torque
        current = current + self.rng.normal(0.0, s.noise, current.shape)
        return np.round(current / s.unit) * s.unit / self.current_per_torque


class FootForceEstimator:
    """World-frame foot forces [N] from joint angles, speeds, servo torques and the attitude."""

    def __init__(self, rm: RobotModel, damping: np.ndarray | None = None) -> None:
        self.rm = rm
        self.damping = np.zeros(N_JOINTS) if damping is None else np.asarray(damping, float)
        self._q = np.zeros(rm.model.nq)
        self._q[6] = 1.0

    def forces(self, q_joints: np.ndarray, dq_joints: np.ndarray, torque: np.ndarray,
               rotation: np.ndarray) -> np.ndarray:
        """Forces (4, 3) [N] the ground applies at the feet, in a frame with the body's
        origin and the world's axes (``rotation``: the body's attitude)."""
        m, d, q = self.rm.model, self.rm.data, self._q
        q[3:7] = pin.Quaternion(np.asarray(rotation)).coeffs()
        q[7:] = q_joints
        g = pin.computeGeneralizedGravity(m, d, q)[NV_BASE:]
        pin.computeJointJacobians(m, d, q)
        pin.updateFramePlacements(m, d)
        rhs = g + self.damping * dq_joints - torque
        out = np.empty((4, 3))
        for i, f in enumerate(self.rm.foot_ids):
            s = slice(i * JOINTS_PER_LEG, (i + 1) * JOINTS_PER_LEG)
            J = pin.getFrameJacobian(m, d, f, pin.LOCAL_WORLD_ALIGNED)[:3, NV_BASE + s.start:
                                                                        NV_BASE + s.stop]
            out[i] = np.linalg.lstsq(J.T, rhs[s], rcond=None)[0]
        return out


@dataclass(frozen=True)
class ContactSettings:
    """Hysteresis thresholds on the vertical foot force [N]: contact from above ``on``,
    none from below ``off``; ``settle`` cycles above ``on`` before a contact is reported."""

    on: float = 8.0
    off: float = 4.0
    settle: int = 2

    def __post_init__(self) -> None:
        check.numeric_fields(self, "contact", names=("on", "off"))
        check.integer("contact", "settle", self.settle, low=0)
        if self.off > self.on:
            raise ConfigError(f"contact off ({self.off} N) must not exceed on ({self.on} N)")


class ContactDetector:
    """Per-foot contact state from the estimated vertical force, with hysteresis."""

    def __init__(self, settings: ContactSettings | None = None) -> None:
        self.settings = settings or ContactSettings()
        self.loaded = dict.fromkeys(LEG_NAMES, False)
        self.count = dict.fromkeys(LEG_NAMES, 0)

    def update(self, vertical_force: np.ndarray) -> tuple[str, ...]:
        """The legs in contact after this cycle's vertical forces (4,) [N], up positive."""
        s = self.settings
        for leg, fz in zip(LEG_NAMES, vertical_force, strict=True):
            self.loaded[leg] = fz > (s.off if self.loaded[leg] else s.on)
            self.count[leg] = self.count[leg] + 1 if self.loaded[leg] else 0
        return tuple(leg for leg in LEG_NAMES if self.count[leg] > s.settle)


def contact_scores(detected: list[tuple[str, ...]], truth: list[tuple[str, ...]]
                   ) -> dict[str, float]:
    """Precision and recall of per-cycle, per-foot contact decisions against the truth."""
    tp = fp = fn = 0
    for d, t in zip(detected, truth, strict=True):
        ds, ts = set(d), set(t)
        tp += len(ds & ts)
        fp += len(ds - ts)
        fn += len(ts - ds)
    return {"precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan")}
