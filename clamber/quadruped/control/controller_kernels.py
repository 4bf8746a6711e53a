"""The controllers' per-cycle arithmetic around the body PD law and the servo commands, compiled.

Each function does in one call (numba, cached on disk) what the controllers did in five to
ten Pinocchio and NumPy calls on 6- and 20-vectors, with the same floating-point operations
in the same order, so the numbers are the same bit for bit (checked in the tests). The
matrix-vector products with the action matrix stay NumPy's (their BLAS kernel's summation
order is not ours to copy).
"""

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
    xyz_quaternion,
)

_LEGS, _JOINTS = 4, 5
_FLOAT_MAX = float(np.finfo(float).max)


@kernel
def pose_error(body_rotation: np.ndarray, body_translation: np.ndarray,
               ref_rotation: np.ndarray, ref_translation: np.ndarray,
               action: np.ndarray, e: np.ndarray) -> None:
    """``log6(T^-1 T_ref).vector`` into ``e`` (6,) of the body pose ``T`` and its target
    ``T_ref``, and ``(T^-1 T_ref).toActionMatrix()`` into ``action`` (6, 6)."""
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
        if x < lo[k]:  # np.maximum, then np.minimum (a NaN stays NaN)
            x = lo[k]
        if x > hi[k]:
            x = hi[k]
        a[k] = x


@kernel
def configuration(rotation: np.ndarray, translation: np.ndarray, joints: np.ndarray,
                  out: np.ndarray) -> None:
    """Pinocchio's configuration (27,) of a body pose and joint angles into ``out``:
    :func:`clamber.quadruped.model.robot_model.configuration` of ``SE3(rotation, translation)``."""
    xyz_quaternion(rotation, translation, out)
    for k in range(joints.shape[0]):
        out[7 + k] = joints[k]


@kernel
def _feedforward(tau_bias: np.ndarray, leg_jacobians: np.ndarray, F: np.ndarray, i: int,
                 c: int) -> float:
    """Joint ``c`` of leg ``i`` of ``tau_bias - J_i^T F_i``, the sum in row order."""
    acc = 0.0
    for r in range(6):
        acc += leg_jacobians[i, r, c] * F[6 * i + r]
    return tau_bias[_JOINTS * i + c] - acc


@kernel
def _clipped(t: float, limit: float) -> float:
    """``np.clip(t, -limit, limit)``: the lower bound, then the upper (a NaN stays NaN)."""
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
    infinities the largest float (``np.nan_to_num``), clipped to ``+-tau_max``, and the
    current limits ``|tau| * current_per_torque + margin * current_max``, at most
    ``current_max``, into ``current`` (20,)."""
    for i in range(_LEGS):
        for c in range(_JOINTS):
            k = _JOINTS * i + c
            t = _feedforward(tau_bias, leg_jacobians, F, i, c)
            if math.isnan(t):
                t = 0.0
            elif math.isinf(t):
                t = _FLOAT_MAX if t > 0 else -_FLOAT_MAX
            t = _clipped(t, tau_max[k])
            tau[k] = t
            x = abs(t) * current_per_torque[k] + margin * current_max[k]
            if x > current_max[k]:
                x = current_max[k]
            current[k] = x


@kernel
def distribution_weights(A: np.ndarray, load: np.ndarray, axis_weights: np.ndarray,
                         min_load: float, inv_w: np.ndarray, AW: np.ndarray) -> None:
    """The inverse weights of the weighted distribution into ``inv_w`` (24,),
    ``max(l_i, min_load)^2 / w_c`` for a holding gripper (``l_i > 0``) and 0 for a
    swinging one, and ``A`` (6, 24) with its columns scaled by them into ``AW``."""
    for i in range(_LEGS):
        if load[i] > 0:
            x = load[i] if load[i] >= min_load else min_load
            x2 = x * x
            for c in range(6):
                inv_w[6 * i + c] = x2 / axis_weights[c]
        else:
            for c in range(6):
                inv_w[6 * i + c] = 0.0
    for r in range(A.shape[0]):
        for k in range(6 * _LEGS):
            AW[r, k] = A[r, k] * inv_w[k]


@kernel
def integral_target(integral: np.ndarray, error: np.ndarray, gain_dt: float,
                    limit: np.ndarray, ref_rotation: np.ndarray, ref_translation: np.ndarray,
                    rotation: np.ndarray, translation: np.ndarray, out: np.ndarray) -> None:
    """The CLIK's integral of the body pose error, ``clip(integral + gain_dt * error,
    -limit, limit)``, into ``out`` (6,), and the corrected body target
    ``T_ref * exp6(integral)`` into ``rotation``, ``translation``."""
    for k in range(6):
        x = integral[k] + gain_dt * error[k]
        lo = -limit[k]
        if x < lo:  # np.clip: the lower bound, then the upper one (a NaN stays NaN)
            x = lo
        if x > limit[k]:
            x = limit[k]
        out[k] = x
    R, p = np.empty((3, 3)), np.empty(3)
    exp6(out, R, p)
    compose(ref_rotation, ref_translation, R, p, rotation, translation)


@kernel
def clipped_torques(tau_bias: np.ndarray, leg_jacobians: np.ndarray, F: np.ndarray,
                    tau_max: np.ndarray, tau: np.ndarray) -> None:
    """``clip(tau_bias - J_i^T F_i, -tau_max, tau_max)`` into ``tau`` (20,) (a NaN stays
    NaN, as ``np.clip`` keeps it)."""
    for i in range(_LEGS):
        for c in range(_JOINTS):
            k = _JOINTS * i + c
            tau[k] = _clipped(_feedforward(tau_bias, leg_jacobians, F, i, c), tau_max[k])


@kernel
def virtual_wrench(B: np.ndarray, k: np.ndarray, e: np.ndarray, d: np.ndarray,
                   twist_ref: np.ndarray, twist: np.ndarray, wrench: np.ndarray) -> None:
    """The VMC's body wrench ``B + k * e + d * (twist_ref - twist)`` into ``wrench`` (6,)."""
    for j in range(6):
        wrench[j] = B[j] + k[j] * e[j] + d[j] * (twist_ref[j] - twist[j])
