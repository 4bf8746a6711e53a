"""The CLIK's damped least-squares step and the statics' torque map, compiled.

Per control cycle the CLIK solves one 6 x 6 damped system per leg and the statics map the
gripper wrenches to joint torques; in NumPy each is a handful of calls on 4 x 6 x 5 arrays
spent mostly in dispatch. These kernels (numba, cached on disk) do the same algebra in one
call each; the damped matrix ``J W^2 J^T + d^2 I`` is symmetric positive definite, so it is
factored by Cholesky instead of LU, and the results agree with NumPy's to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel


@kernel
def dls_steps(J: np.ndarray, legs: np.ndarray, e: np.ndarray, w: np.ndarray,
              damping2: float) -> np.ndarray:
    """Joint steps (n, 5) ``(W J_i)^T ((W J_i)(W J_i)^T + d^2 I)^-1 e_i`` of the legs
    ``legs`` (n,) with LOCAL Jacobians ``J`` (4, 6, 5), weighted errors ``e`` (n, 6),
    row weights ``w`` (6,) and squared damping ``damping2``."""
    n = legs.shape[0]
    out = np.zeros((n, 5))
    Jw = np.empty((6, 5))
    A = np.empty((6, 6))
    y = np.empty(6)
    for k in range(n):
        i = legs[k]
        for r in range(6):
            for c in range(5):
                Jw[r, c] = w[r] * J[i, r, c]
        for r in range(6):
            for s in range(r + 1):
                acc = 0.0
                for c in range(5):
                    acc += Jw[r, c] * Jw[s, c]
                A[r, s] = acc
            A[r, r] += damping2
        for j in range(6):  # Cholesky, lower triangle in place
            acc = A[j, j]
            for m in range(j):
                acc -= A[j, m] * A[j, m]
            d = math.sqrt(acc)
            A[j, j] = d
            for r in range(j + 1, 6):
                acc = A[r, j]
                for m in range(j):
                    acc -= A[r, m] * A[j, m]
                A[r, j] = acc / d
        for r in range(6):
            acc = e[k, r]
            for m in range(r):
                acc -= A[r, m] * y[m]
            y[r] = acc / A[r, r]
        for r in range(5, -1, -1):
            acc = y[r]
            for m in range(r + 1, 6):
                acc -= A[m, r] * y[m]
            y[r] = acc / A[r, r]
        for c in range(5):
            acc = 0.0
            for r in range(6):
                acc += Jw[r, c] * y[r]
            out[k, c] = acc
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
