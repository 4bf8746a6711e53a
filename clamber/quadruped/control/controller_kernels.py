"""The controllers' per-cycle arithmetic around the body PD law and the servo commands, compiled:
each function is one call (numba, cached on disk) instead of five to ten Pinocchio and NumPy
calls on 6- and 20-vectors spent mostly in dispatch."""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel
from clamber.quadruped.model.se3_kernels import (
    act_inv,
    action_matrix,
    compose,
    exp6,
    log6,
)
from clamber.quadruped.model.statics_kernels import joint_torques, spd_solve

_LEGS, _JOINTS = 4, 5
_FLOAT_MAX = float(np.finfo(float).max)


@kernel
def pose_error(body_rotation: np.ndarray, body_translation: np.ndarray,
               ref_rotation: np.ndarray, ref_translation: np.ndarray,
               action: np.ndarray, e: np.ndarray) -> None:
    """The pose error ``log6(T^-1 T_ref)`` into ``e`` (6,) of the body pose ``T`` and its
    target ``T_ref``, and the action matrix of ``T^-1 T_ref`` into ``action`` (6, 6)."""
    R, p = np.empty((3, 3)), np.empty(3)
    act_inv(body_rotation, body_translation, ref_rotation, ref_translation, R, p)
    action_matrix(R, p, action)
    log6(R, p, e)


@kernel
def pd_acceleration(a_ref: np.ndarray, kp: np.ndarray, pose: np.ndarray, kd: np.ndarray,
                    twist_ref: np.ndarray, twist: np.ndarray, lo: np.ndarray,
                    hi: np.ndarray, a: np.ndarray) -> None:
    """``a_ref + kp * pose + kd * (twist_ref - twist)`` clipped to ``[lo, hi]`` into ``a``
    (6,)."""
    for k in range(6):
        x = a_ref[k] + kp[k] * pose[k] + kd[k] * (twist_ref[k] - twist[k])
        if x < lo[k]:  # a NaN stays NaN
            x = lo[k]
        if x > hi[k]:
            x = hi[k]
        a[k] = x


@kernel
def _clipped(t: float, limit: float) -> float:
    """``t`` clipped to ``[-limit, limit]`` (a NaN stays NaN)."""
    if t < -limit:
        t = -limit
    if t > limit:
        t = limit
    return t


@kernel
def servo_command(tau_bias: np.ndarray, leg_jacobians: np.ndarray, F: np.ndarray,
                  tau_max: np.ndarray, current_per_torque: np.ndarray, margin: float,
                  current_max: np.ndarray, tau: np.ndarray, current: np.ndarray) -> None:
    """Feed-forward torques ``tau_bias - J_i^T F_i`` into ``tau`` (20,) with NaN made 0 and
    infinities the largest float, clipped to ``+-tau_max``, and the current limits
    ``|tau| * current_per_torque + margin * current_max``, at most ``current_max``, into
    ``current`` (20,)."""
    raw = joint_torques(tau_bias, leg_jacobians, F)
    for k in range(raw.shape[0]):
        t = raw[k]
        if math.isnan(t):
            t = 0.0
        elif math.isinf(t):
            t = _FLOAT_MAX if t > 0 else -_FLOAT_MAX
        t = _clipped(t, tau_max[k])
        tau[k] = t
        current[k] = min(abs(t) * current_per_torque[k] + margin * current_max[k],
                         current_max[k])


@kernel
def weighted_distribution(A: np.ndarray, B: np.ndarray, axis_weights: np.ndarray,
                          load: np.ndarray, min_load: float) -> np.ndarray:
    """Gripper wrenches (24,) minimizing ``sum_i F_i^T diag(w) F_i / l_i^2`` with
    ``A F = B``: ``F = W^-1 A^T (A W^-1 A^T)^-1 B`` with ``W^-1`` entries
    ``max(l_i, min_load)^2 / w_c`` for a holding gripper (``l_i > 0``), 0 for a swinging
    one. NaN entries if the holding grippers cannot carry every body wrench."""
    n = A.shape[1]
    inv_w = np.empty(n)
    for i in range(_LEGS):
        x = max(load[i], min_load) if load[i] > 0 else 0.0
        for c in range(6):
            inv_w[6 * i + c] = x * x / axis_weights[c]
    M = np.empty((6, 6))
    for r in range(6):
        for s in range(r + 1):
            acc = 0.0
            for k in range(n):
                acc += A[r, k] * inv_w[k] * A[s, k]
            M[r, s] = acc
    y = spd_solve(M, B)
    F = np.empty(n)
    for k in range(n):
        acc = 0.0
        for r in range(6):
            acc += A[r, k] * y[r]
        F[k] = inv_w[k] * acc
    return F


@kernel
def integral_target(integral: np.ndarray, error: np.ndarray, gain_dt: float,
                    limit: np.ndarray, ref_rotation: np.ndarray, ref_translation: np.ndarray,
                    rotation: np.ndarray, translation: np.ndarray, out: np.ndarray) -> None:
    """The CLIK's integral of the body pose error, ``clip(integral + gain_dt * error,
    -limit, limit)``, into ``out`` (6,), and the corrected body target
    ``T_ref * exp6(integral)`` into ``rotation``, ``translation``."""
    for k in range(6):
        x = integral[k] + gain_dt * error[k]
        out[k] = _clipped(x, limit[k])
    R, p = np.empty((3, 3)), np.empty(3)
    exp6(out, R, p)
    compose(ref_rotation, ref_translation, R, p, rotation, translation)


@kernel
def clipped_torques(tau_bias: np.ndarray, leg_jacobians: np.ndarray, F: np.ndarray,
                    tau_max: np.ndarray, tau: np.ndarray) -> None:
    """``clip(tau_bias - J_i^T F_i, -tau_max, tau_max)`` into ``tau`` (20,) (a NaN stays
    NaN)."""
    raw = joint_torques(tau_bias, leg_jacobians, F)
    for k in range(raw.shape[0]):
        tau[k] = _clipped(raw[k], tau_max[k])
