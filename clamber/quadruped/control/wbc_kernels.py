"""The wrench QP's per-cycle arithmetic, compiled: the problem's fill, the solution's acceptance
and the active-limit test.

Both run once per control cycle on arrays of 24 to 50 entries; in NumPy the fill is some
twenty calls, each spent mostly in dispatch, so one compiled call (numba, cached on disk)
pays. Each is the only implementation of its operation: the tests check the filled problem
against the formulas of :mod:`~clamber.quadruped.control.wbc_problem` written in NumPy and the
solutions against their KKT conditions.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel

_LEGS, _JOINTS, _N = 4, 5, 24
#: Rows of ``per_variable`` (:func:`fill_problem`): the ``w2`` weights (times the grippers'
#: multipliers), the ``w3`` weights, the box's lower and upper bounds and whether the
#: variable's gripper has a box (1.0) or polytope rows (0.0).
W2, W3, BOX_LOWER, BOX_UPPER, IS_BOX = range(5)
#: Smallest load factor used to scale a weight during a ramp (avoids 1/0).
MIN_LOAD = 0.05
#: DAQP's infinity.
INF = 1e30


def buffer_size(rows: int) -> int:
    """Entries of the buffer of a problem of ``rows`` rows: ``H`` (24, 24), ``f`` (24,),
    ``C`` (rows, 24), ``lower`` and ``upper`` (24 + rows,), one after the other."""
    return _N * _N + _N + rows * _N + 2 * (_N + rows)


@kernel
def fill_problem(buf: np.ndarray, rows: int, hard: bool, torque_rows: bool, A: np.ndarray,
                 B: np.ndarray, leg_jacobians: np.ndarray, tau_bias: np.ndarray,
                 load: np.ndarray, F_prev: np.ndarray, per_variable: np.ndarray,
                 per_row: np.ndarray, poly: np.ndarray) -> None:
    """Write one cycle's wrench QP into the zeroed ``buf`` (:func:`buffer_size` of ``rows``):
    ``H``, ``f``, ``C`` and the stacked bounds ``lower``, ``upper`` (variables, then rows).

    Inputs: the body statics ``A`` (6, 24), ``B`` (6,), the legs' LOCAL Jacobians (4, 6, 5)
    and gravity torques (20,); load factors (4,) (0: swing); the last wrench (24,); the
    weights and boxes ``per_variable`` (5, 24) (rows :data:`W2` ... :data:`IS_BOX`);
    ``per_row`` (26,): the ``w1`` weights (6) and the servo torque limits (20); the non-box
    grippers' rows ``poly`` (p, 26): ``H`` row (24), bound ``h``, gripper. Rows of ``C``: the
    body dynamics (6, only if ``hard``), the polytope rows, the joint-torque rows (20)."""
    H = buf[:_N * _N].reshape((_N, _N))
    f = buf[_N * _N:_N * _N + _N]
    c0 = _N * _N + _N
    C = buf[c0:c0 + rows * _N].reshape((rows, _N))
    lower = buf[c0 + rows * _N:c0 + rows * _N + _N + rows]
    upper = buf[c0 + rows * _N + _N + rows:]
    r0 = 6 if hard else 0
    for i in range(_LEGS):
        lam = max(load[i], MIN_LOAD)
        swing = load[i] <= 0.0
        for c in range(6):
            k = 6 * i + c
            w3 = per_variable[W3, k]
            H[k, k] = 2.0 * (per_variable[W2, k] / (lam * lam) + w3)
            f[k] = -2.0 * w3 * F_prev[k]
            if swing:
                lower[k] = 0.0
                upper[k] = 0.0
            elif per_variable[IS_BOX, k] > 0.0:
                lower[k] = per_variable[BOX_LOWER, k] * load[i]
                upper[k] = per_variable[BOX_UPPER, k] * load[i]
            else:
                lower[k] = -INF
                upper[k] = INF
    if hard:  # A F = B as 6 equality rows
        for r in range(6):
            for k in range(_N):
                C[r, k] = A[r, k]
            lower[_N + r] = B[r]
            upper[_N + r] = B[r]
    else:  # the residual's W1 term: H += 2 A^T W1 A, f -= 2 A^T W1 B
        for k in range(_N):
            for m in range(_N):
                acc = 0.0
                for r in range(6):
                    acc += A[r, k] * per_row[r] * A[r, m]
                H[k, m] += 2.0 * acc
            acc = 0.0
            for r in range(6):
                acc += A[r, k] * per_row[r] * B[r]
            f[k] -= 2.0 * acc
    for p in range(poly.shape[0]):
        row = r0 + p
        for k in range(_N):
            C[row, k] = poly[p, k]
        i = int(poly[p, _N + 1])
        lower[_N + row] = -INF
        upper[_N + row] = poly[p, _N] * (1.0 if load[i] <= 0.0 else load[i])
    r1 = r0 + poly.shape[0]
    for i in range(_LEGS):
        free = load[i] <= 0.0 or not torque_rows
        for j in range(_JOINTS):
            row = r1 + _JOINTS * i + j
            for c in range(6):
                C[row, 6 * i + c] = leg_jacobians[i, c, j]
            t = _JOINTS * i + j
            if free:
                lower[_N + row] = -INF
                upper[_N + row] = INF
            else:
                lower[_N + row] = tau_bias[t] - per_row[6 + t]
                upper[_N + row] = tau_bias[t] + per_row[6 + t]


@kernel
def limit_active(F: np.ndarray, lower: np.ndarray, upper: np.ndarray, swing: np.ndarray,
                 rtol: float) -> bool:
    """Whether a stance gripper's wrench ``F`` (24,) lies on one of its variable bounds
    ``lower``, ``upper`` (24,) within ``rtol * (|upper| + 1)``; the grippers ``swing`` (4,)
    are left out."""
    for k in range(_N):
        if swing[k // 6]:
            continue
        tol = rtol * (abs(upper[k]) + 1.0)
        if F[k] >= upper[k] - tol or F[k] <= lower[k] + tol:
            return True
    return False


@kernel
def accept(x: np.ndarray, swing: np.ndarray, F_prev: np.ndarray) -> bool:
    """Take the solver's wrenches ``x`` (24,): False (nothing written) if an entry is not
    finite; else the swing grippers' (``swing`` (4,)) set to exact zeros (not the solver's
    round-off), ``x`` copied into the smoothing anchor ``F_prev`` (24,), and True."""
    for k in range(_N):
        if not math.isfinite(x[k]):
            return False
    for k in range(_N):
        if swing[k // 6]:
            x[k] = 0.0
        F_prev[k] = x[k]
    return True
