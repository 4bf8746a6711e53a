"""The statics' and the CLIK's per-cycle arithmetic on Pinocchio's data, one compiled call each.

After Pinocchio's Jacobians, placements and gravity torques, a cycle needs the grippers'
LOCAL Jacobians split into the base block ``A`` and the legs' blocks, the joint torques of
the gripper wrenches, and the CLIK's pose errors with one damped least-squares step per leg:
some forty binding calls, here one compiled call each (numba, cached on disk). The systems
solved are symmetric positive definite, so they are factored by Cholesky (:func:`spd_solve`).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel
from clamber.quadruped.model.se3_kernels import act_inv, compose, inverse, log6

_LEGS, _JOINTS, _BASE = 4, 5, 6
#: :func:`clik_goal`'s target modes: hold the leg's angles, keep the foot where it is, move
#: it to a given pose.
HOLD, STAY, TARGET = -1, 0, 2


@kernel
def spd_solve(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``M^-1 b`` for a symmetric positive definite ``M`` (n, n) (its lower triangle is
    read and overwritten by its Cholesky factor); NaN entries if ``M`` is not positive
    definite."""
    n = b.shape[0]
    for j in range(n):
        acc = M[j, j]
        for m in range(j):
            acc -= M[j, m] * M[j, m]
        d = math.sqrt(acc) if acc > 0.0 else math.nan
        M[j, j] = d
        for r in range(j + 1, n):
            acc = M[r, j]
            for m in range(j):
                acc -= M[r, m] * M[j, m]
            M[r, j] = acc / d
    y = np.empty(n)
    for r in range(n):  # L y = b, then L^T x = y
        acc = b[r]
        for m in range(r):
            acc -= M[r, m] * y[m]
        y[r] = acc / M[r, r]
    for r in range(n - 1, -1, -1):
        acc = y[r]
        for m in range(r + 1, n):
            acc -= M[m, r] * y[m]
        y[r] = acc / M[r, r]
    return y


@kernel
def dls_steps(J: np.ndarray, e: np.ndarray, w: np.ndarray, damping2: float) -> np.ndarray:
    """Joint steps (n, 5) ``(W J_i)^T ((W J_i)(W J_i)^T + d^2 I)^-1 e_i`` of the legs with
    LOCAL Jacobians ``J`` (n, 6, 5), weighted errors ``e`` (n, 6), row weights ``w`` (6,)
    and squared damping ``damping2``."""
    n = J.shape[0]
    out = np.zeros((n, 5))
    Jw = np.empty((6, 5))
    M = np.empty((6, 6))
    for i in range(n):
        for r in range(6):
            for c in range(5):
                Jw[r, c] = w[r] * J[i, r, c]
        for r in range(6):
            for s in range(r + 1):
                acc = 0.0
                for c in range(5):
                    acc += Jw[r, c] * Jw[s, c]
                M[r, s] = acc
            M[r, r] += damping2
        y = spd_solve(M, e[i])
        for c in range(5):
            acc = 0.0
            for r in range(6):
                acc += Jw[r, c] * y[r]
            out[i, c] = acc
    return out


@kernel
def joint_torques(tau_bias: np.ndarray, leg_jacobians: np.ndarray,
                  F: np.ndarray) -> np.ndarray:
    """``tau_bias - J_i^T F_i`` per leg (20,) [N m] from the LOCAL leg Jacobians (4, 6, 5)
    and gripper wrenches ``F`` (24,)."""
    out = np.empty(20)
    for i in range(4):
        for c in range(5):
            acc = 0.0
            for r in range(6):
                acc += leg_jacobians[i, r, c] * F[6 * i + r]
            out[5 * i + c] = tau_bias[5 * i + c] - acc
    return out


@kernel
def fill_statics(J: np.ndarray, feet: tuple, g: np.ndarray, A: np.ndarray,
                 leg_jacobians: np.ndarray, B: np.ndarray, tau_bias: np.ndarray,
                 foot_rotations: np.ndarray, foot_translations: np.ndarray) -> None:
    """``A`` (6, 24), the leg Jacobians (4, 6, 5), ``B`` = base gravity (6,), ``tau_bias`` =
    joint gravity (20,) and the grippers' placements (4, 3, 3), (4, 3), from the world joint
    Jacobians ``J`` (6, nv), the grippers' world placements ``feet`` (four homogeneous
    (4, 4) matrices) and the gravity torques ``g`` (nv,). A gripper's LOCAL Jacobian column
    is the world column seen from the gripper frame: ``R^T (v - p x w), R^T w``."""
    for i in range(_LEGS):
        M = feet[i]
        R = foot_rotations[i]
        p = foot_translations[i]
        for r in range(3):
            for c in range(3):
                R[r, c] = M[r, c]
            p[r] = M[r, 3]
        for k in range(_BASE + _JOINTS):
            col = k if k < _BASE else _BASE + _JOINTS * i + (k - _BASE)
            w0, w1, w2 = J[3, col], J[4, col], J[5, col]
            l0 = J[0, col] - (p[1] * w2 - p[2] * w1)
            l1 = J[1, col] - (p[2] * w0 - p[0] * w2)
            l2 = J[2, col] - (p[0] * w1 - p[1] * w0)
            for r in range(3):
                lin = R[0, r] * l0 + R[1, r] * l1 + R[2, r] * l2
                ang = R[0, r] * w0 + R[1, r] * w1 + R[2, r] * w2
                if k < _BASE:
                    A[k, 6 * i + r] = lin
                    A[k, 6 * i + 3 + r] = ang
                else:
                    leg_jacobians[i, r, k - _BASE] = lin
                    leg_jacobians[i, 3 + r, k - _BASE] = ang
    for k in range(_BASE):
        B[k] = g[k]
    for k in range(tau_bias.shape[0]):
        tau_bias[k] = g[_BASE + k]


@kernel
def clik_goal(foot_rotations: np.ndarray, foot_translations: np.ndarray,
              body_rotation: np.ndarray, body_translation: np.ndarray,
              ref_rotation: np.ndarray, ref_translation: np.ndarray,
              target_rotations: np.ndarray, target_translations: np.ndarray,
              modes: np.ndarray, q_joints: np.ndarray, leg_jacobians: np.ndarray,
              gain: float, w: np.ndarray, damping2: float,
              q_min: np.ndarray, q_max: np.ndarray, out: np.ndarray) -> None:
    """The CLIK's goal positions into ``out`` (20,): per leg the pose error
    ``log6((T_B^-1 T_foot)^-1 (T_ref^-1 T_target))`` in {B}, scaled by ``gain * w``, one
    damped least-squares step per leg added to ``q_joints`` and
    clipped to ``[q_min, q_max]``. ``T_B`` is the measured body pose, ``T_ref`` the body
    target, ``T_foot`` the foot's world placement; the target of leg ``i`` is by
    ``modes[i]``: :data:`STAY` its foot, :data:`TARGET` ``target_rotations[i]``,
    ``target_translations[i]`` (a swing target); :data:`HOLD` keeps the leg's angles."""
    Rb, pb = np.empty((3, 3)), np.empty(3)
    Rr, pr = np.empty((3, 3)), np.empty(3)
    inverse(body_rotation, body_translation, Rb, pb)
    inverse(ref_rotation, ref_translation, Rr, pr)
    Rx, px = np.empty((3, 3)), np.empty(3)
    Ry, py = np.empty((3, 3)), np.empty(3)
    Rz, pz = np.empty((3, 3)), np.empty(3)
    e = np.empty((_LEGS, 6))
    for i in range(_LEGS):
        mode = modes[i]
        if mode == HOLD:
            e[i, :] = 0.0
            continue
        Rf, pf = foot_rotations[i], foot_translations[i]
        compose(Rb, pb, Rf, pf, Rx, px)
        if mode == STAY:
            compose(Rr, pr, Rf, pf, Ry, py)
        else:
            compose(Rr, pr, target_rotations[i], target_translations[i], Ry, py)
        act_inv(Rx, px, Ry, py, Rz, pz)
        log6(Rz, pz, e[i])
        for r in range(6):
            e[i, r] *= gain * w[r]
    dq = dls_steps(leg_jacobians, e, w, damping2)
    for i in range(_LEGS):
        for c in range(_JOINTS):
            k = _JOINTS * i + c
            x = q_joints[k] + dq[i, c]
            if x < q_min[k]:  # a NaN stays NaN
                x = q_min[k]
            if x > q_max[k]:
                x = q_max[k]
            out[k] = x
