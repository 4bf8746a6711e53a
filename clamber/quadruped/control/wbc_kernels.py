"""The wrench QP's data for one control cycle, filled in one compiled call.

:meth:`~clamber.quadruped.control.wbc_problem.WrenchProblemBuilder.build` writes the hard problem
(body-dynamics equalities, every gripper's limits a box) some twenty NumPy calls at a time
on arrays of 24 to 50 entries; :func:`fill_box_problem` writes the same entries with the
same arithmetic in one call (numba, cached on disk). Every entry is one or two
floating-point operations on the same operands in the same order, so the numbers equal the
NumPy build's bit for bit (checked in the tests).
"""

from __future__ import annotations

import numpy as np

from clamber.compiled import kernel

_LEGS, _JOINTS = 4, 5


@kernel
def fill_box_problem(H: np.ndarray, f: np.ndarray, lb: np.ndarray, ub: np.ndarray,
                     C: np.ndarray, lo: np.ndarray, up: np.ndarray, A: np.ndarray,
                     B: np.ndarray, leg_jacobians: np.ndarray, tau_bias: np.ndarray,
                     load: np.ndarray, F_prev: np.ndarray, w2: np.ndarray,
                     leg_weights: np.ndarray, w3: np.ndarray, box_lower: np.ndarray,
                     box_upper: np.ndarray, tau_max: np.ndarray, min_load: float,
                     torque_rows: bool, inf: float) -> None:
    """The hard box problem's ``H`` (diagonal; 24 x 24), ``f``, bounds ``lb``, ``ub``
    (24,) and rows ``C`` (6 + 20, 24), ``lo``, ``up``: the body statics ``A`` (6, 24),
    ``B`` (6,); the legs' LOCAL Jacobians (4, 6, 5) and gravity torques (20,); load factors
    (4,) (0: swing); the last solution (24,); weights ``w2`` (6,) times ``leg_weights``
    (4, 6) over the squared load (at least ``min_load``), ``w3`` (24,); the stacked boxes
    (24,) and torque limits (20,)."""
    for i in range(_LEGS):
        lam = max(load[i], min_load)
        lam2 = lam ** 2
        swing = load[i] <= 0.0
        for c in range(6):
            k = 6 * i + c
            H[k, k] = 2.0 * (w2[c] * leg_weights[i, c] / lam2 + w3[k])
            f[k] = -2.0 * w3[k] * F_prev[k]
            if swing:
                lb[k] = 0.0
                ub[k] = 0.0
            else:
                lb[k] = box_lower[k] * load[i]
                ub[k] = box_upper[k] * load[i]
        free = swing or not torque_rows
        for j in range(_JOINTS):
            row = 6 + _JOINTS * i + j
            for c in range(6):
                C[row, 6 * i + c] = leg_jacobians[i, c, j]
            t = _JOINTS * i + j
            if free:
                lo[row] = -inf
                up[row] = inf
            else:
                lo[row] = tau_bias[t] - tau_max[t]
                up[row] = tau_bias[t] + tau_max[t]
    for r in range(6):
        for k in range(_LEGS * 6):
            C[r, k] = A[r, k]
        lo[r] = B[r]
        up[r] = B[r]


@kernel
def limit_active(F: np.ndarray, lb: np.ndarray, ub: np.ndarray, swing: np.ndarray,
                 rtol: float) -> bool:
    """Whether a stance gripper's wrench ``F`` (24,) lies on a bound of its box (within
    ``rtol * (|ub| + 1)``), grippers ``swing`` (4,) left out: the test
    :func:`~clamber.quadruped.control.variants.limits_active` makes, the same comparisons of the
    same numbers."""
    for k in range(F.shape[0]):
        if swing[k // 6]:
            continue
        tol = rtol * (abs(ub[k]) + 1.0)
        if F[k] >= ub[k] - tol or F[k] <= lb[k] + tol:
            return True
    return False
