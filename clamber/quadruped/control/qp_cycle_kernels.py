"""One control cycle of the hard box wrench QP around DAQP in two compiled calls.

:meth:`~clamber.quadruped.control.qwbc.WrenchQP.solve` spends more time in Python glue around the
solver than in it: checking the load factors, comparing them with the last cycle's, filling
the problem through a kernel of twenty-two arguments, testing the solution for finite
entries, zeroing the swing grippers' wrenches, copying the smoothing anchor and, once the
cycle is over, testing for an active gripper limit. For the common case (body-dynamics
equalities, every gripper's limits a box) :func:`fill_hard_box` does the first three and
:func:`finish_hard_box` the rest, each in one call on a few packed arrays. Every entry is
computed with the same operations on the same operands in the same order as
:func:`~clamber.quadruped.control.wbc_kernels.fill_box_problem` and
:func:`~clamber.quadruped.control.wbc_kernels.limit_active`, so the numbers are theirs bit for bit
(checked in the tests against the plain NumPy code).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel

_LEGS, _JOINTS, _N = 4, 5, 24
#: Rows of the hard box problem: 6 body-dynamics equalities and 20 joint-torque rows.
BOX_ROWS = 6 + _LEGS * _JOINTS
#: Offsets of the hard box problem's arrays in its one buffer (:func:`buffer_views`).
_H, _F = 0, _N * _N
_C = _F + _N
_LOWER = _C + BOX_ROWS * _N
_UPPER = _LOWER + _N + BOX_ROWS
BOX_BUFFER_SIZE = _UPPER + _N + BOX_ROWS
#: Offsets of the packed parameters (:func:`parameter_views`).
_LEG_WEIGHTS, _W3, _BOX_LOWER, _BOX_UPPER, _TAU_MAX = 0, 24, 48, 72, 96
PARAMETER_SIZE = _TAU_MAX + _LEGS * _JOINTS
#: Relative tolerance of the active-limit test (of ``|ub| + 1``).
LIMIT_RTOL = 1e-6
#: Smallest load factor used to scale a weight or a limit during a ramp (avoids 1/0).
MIN_LOAD = 0.05
#: DAQP's infinity.
INF = 1e30
#: :func:`fill_hard_box`'s code for load factors outside [0, 1] (or NaN).
BAD_LOAD = -1
#: The bit of :func:`fill_hard_box`'s code that says the load factors changed.
LOAD_CHANGED = 16


def buffer_views(buf: np.ndarray, rows: int) -> dict[str, np.ndarray]:
    """``H`` (24, 24), ``f`` (24,), ``C`` (rows, 24) and the stacked bounds ``lower`` and
    ``upper`` (24 + rows,) as views into one flat buffer of at least their total size."""
    n = _N
    c_end = _C + rows * n
    lower = buf[c_end:c_end + n + rows]
    upper = buf[c_end + n + rows:c_end + 2 * (n + rows)]
    return {"H": buf[_H:_F].reshape(n, n), "f": buf[_F:_C],
            "C": buf[_C:c_end].reshape(rows, n), "lower": lower, "upper": upper}


def parameter_views(params: np.ndarray) -> dict[str, np.ndarray]:
    """The per-gripper ``w2`` multipliers (4, 6), ``w3`` (24,), the stacked box bounds
    (24,) each and the torque limits (20,) as views into one packed array."""
    return {"leg_weights": params[_LEG_WEIGHTS:_W3].reshape(_LEGS, 6),
            "w3": params[_W3:_BOX_LOWER], "box_lower": params[_BOX_LOWER:_BOX_UPPER],
            "box_upper": params[_BOX_UPPER:_TAU_MAX], "tau_max": params[_TAU_MAX:]}


@kernel
def fill_hard_box(buf: np.ndarray, A: np.ndarray, B: np.ndarray, leg_jacobians: np.ndarray,
                  tau_bias: np.ndarray, load: np.ndarray, last_load: np.ndarray,
                  F_prev: np.ndarray, params: np.ndarray, w2: np.ndarray,
                  torque_rows: bool) -> int:
    """Check the load factors (4,) lie in [0, 1] and fill the hard box problem into ``buf``
    (:func:`buffer_views` with :data:`BOX_ROWS` rows) from the body statics ``A`` (6, 24),
    ``B`` (6,), the legs' LOCAL Jacobians (4, 6, 5) and gravity torques (20,), the last
    solution (24,), the packed parameters (:func:`parameter_views`) and ``w2`` (6,).

    Returns :data:`BAD_LOAD` (nothing written) if a factor is NaN or out of range, else the
    swing grippers' bits (bit ``i``: gripper ``i`` has load 0) plus :data:`LOAD_CHANGED` if
    a factor differs from ``last_load``'s."""
    code = 0
    for i in range(_LEGS):
        x = load[i]
        if not (0.0 <= x <= 1.0):
            return BAD_LOAD
        if x != last_load[i]:
            code = LOAD_CHANGED
    for i in range(_LEGS):
        lam = max(load[i], MIN_LOAD)
        lam2 = lam ** 2
        swing = load[i] <= 0.0
        if swing:
            code |= 1 << i
        for c in range(6):
            k = 6 * i + c
            buf[_H + k * _N + k] = 2.0 * (w2[c] * params[_LEG_WEIGHTS + k] / lam2
                                          + params[_W3 + k])
            buf[_F + k] = -2.0 * params[_W3 + k] * F_prev[k]
            if swing:
                buf[_LOWER + k] = 0.0
                buf[_UPPER + k] = 0.0
            else:
                buf[_LOWER + k] = params[_BOX_LOWER + k] * load[i]
                buf[_UPPER + k] = params[_BOX_UPPER + k] * load[i]
        free = swing or not torque_rows
        for j in range(_JOINTS):
            row = 6 + _JOINTS * i + j
            for c in range(6):
                buf[_C + row * _N + 6 * i + c] = leg_jacobians[i, c, j]
            t = _JOINTS * i + j
            if free:
                buf[_LOWER + _N + row] = -INF
                buf[_UPPER + _N + row] = INF
            else:
                buf[_LOWER + _N + row] = tau_bias[t] - params[_TAU_MAX + t]
                buf[_UPPER + _N + row] = tau_bias[t] + params[_TAU_MAX + t]
    for r in range(6):
        for k in range(_N):
            buf[_C + r * _N + k] = A[r, k]
        buf[_LOWER + _N + r] = B[r]
        buf[_UPPER + _N + r] = B[r]
    return code


@kernel
def finish_hard_box(x: np.ndarray, F_prev: np.ndarray, buf: np.ndarray, swing: int) -> int:
    """Accept the solver's wrenches ``x`` (24,) of the hard box problem in ``buf``: if an
    entry is not finite return -1 and write nothing; else zero the wrenches of the swing
    grippers (bits of ``swing``), copy ``x`` into ``F_prev`` and return 1 if a stance
    gripper's wrench lies on a bound of its box (within ``LIMIT_RTOL * (|ub| + 1)``), else 0.
    """
    for k in range(_N):
        if not math.isfinite(x[k]):
            return -1
    if swing:
        for i in range(_LEGS):
            if swing & (1 << i):
                for c in range(6):
                    x[6 * i + c] = 0.0
    for k in range(_N):
        F_prev[k] = x[k]
    for k in range(_N):
        if swing & (1 << (k // 6)):
            continue
        ub = buf[_UPPER + k]
        tol = LIMIT_RTOL * (abs(ub) + 1.0)
        if x[k] >= ub - tol or x[k] <= buf[_LOWER + k] + tol:
            return 1
    return 0
