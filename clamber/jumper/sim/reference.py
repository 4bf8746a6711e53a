"""The robot's view of an optimized jump: 500 Hz joint reference, feed-forward, gripper schedule."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber.jumper.sim.motor import REFERENCE_RATE_HZ, MotorParameters
from clamber.jumper.solution import TrajectorySolution

#: Columns of the actuated joints in clamber's q (th4, th3, th2 = hip, spine, shoulder).
JOINT_SLICE = slice(3, 6)


def unique_nodes(sol: TrajectorySolution) -> np.ndarray:
    """Indices of the solution's nodes with duplicated boundary nodes dropped.

    Of two nodes at the same time the later (post-impact) one is kept.
    """
    return np.flatnonzero(np.r_[np.diff(sol.t) > 0, True])


@dataclass(frozen=True)
class Reference:
    """One jump sampled at the reference rate (arrays (n, 3) in hip, spine, shoulder order).

    ``theta`` [rad], ``omega`` [rad/s] and ``torque`` [N m] are the optimized motion
    interpolated linearly between nodes; ``voltage`` [V] is the motor model's
    feed-forward for that torque at that speed.
    """

    rate_hz: float
    t: np.ndarray
    theta: np.ndarray
    omega: np.ndarray
    torque: np.ndarray
    voltage: np.ndarray
    period: float
    phase_times: np.ndarray
    front_closed: np.ndarray
    rear_closed: np.ndarray

    @property
    def dt(self) -> float:
        """[s]"""
        return 1.0 / self.rate_hz


def optimized_angles(sol: TrajectorySolution, t: np.ndarray) -> np.ndarray:
    """Optimized joint angles [rad] at times ``t`` [s] within one jump, shape (len(t), 3)."""
    keep = unique_nodes(sol)
    return np.column_stack([np.interp(t, sol.t[keep], sol.q[keep, 3 + j]) for j in range(3)])


def build_reference(sol: TrajectorySolution, motor: MotorParameters,
                    rate_hz: float = REFERENCE_RATE_HZ) -> Reference:
    """Resample one optimized jump at ``rate_hz``; samples cover ``[0, period)``.

    The gripper columns say whether each gripper is commanded closed (1) at each sample:
    the front opens during phases 2-3, the rear during phases 3-4.
    """
    keep = unique_nodes(sol)
    n = int(np.floor(sol.period * rate_hz + 1e-9))
    t = np.arange(n) / rate_hz

    def sample(arr: np.ndarray) -> np.ndarray:
        return np.column_stack([np.interp(t, sol.t[keep], arr[keep, j])
                                for j in range(arr.shape[1])])

    theta = sample(sol.q[:, JOINT_SLICE])
    omega = sample(sol.qd[:, JOINT_SLICE])
    torque = sample(sol.tau)
    pt = sol.phase_times
    front_closed = ~((t >= pt[1]) & (t < pt[3]))
    rear_closed = ~((t >= pt[2]) & (t < pt[4]))
    return Reference(rate_hz=float(rate_hz), t=t, theta=theta, omega=omega, torque=torque,
                     voltage=motor.voltage(torque, omega), period=sol.period,
                     phase_times=pt.copy(), front_closed=front_closed,
                     rear_closed=rear_closed)
