"""The CLIK's damped least-squares step and the statics' torque map, compiled.

Per control cycle the CLIK solves one 6 x 6 damped system per leg and the statics map the
gripper wrenches to joint torques; in NumPy each is a handful of calls on 4 x 6 x 5 arrays
spent mostly in dispatch, so one compiled call each (numba, cached on disk) pays. The
systems solved are symmetric positive definite (a damped ``J W^2 J^T + d^2 I``, a weighted
``A W^-1 A^T``), so they are factored by Cholesky (:func:`spd_solve`).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel


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
