"""A climbing trial's per-cycle metrics in compiled calls: rotation angles and load ratios.

Each control cycle samples two attitude errors (the angle of ``R_a^T R_b``, which
``|log3(R_a^T R_b)|`` gives through Pinocchio and a product in NumPy) and the planned
gripper load ratio; these kernels (numba, cached on disk) compute them in one call each
(both attitude errors in one: :func:`attitude_errors`; with the estimate's position error:
:func:`sample_errors`, written into the recorder's row: :func:`sample_row`).
The angle is ``atan2(|vee(M - M^T)| / 2, (tr M - 1) / 2)``, accurate at every angle; it
agrees with Pinocchio's to round-off.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel
from clamber.quadruped.blas_order import dot3


@kernel
def rotation_angle(Ra: np.ndarray, Rb: np.ndarray) -> float:
    """Angle [rad] of the rotation ``Ra^T Rb`` (both 3 x 3 rotation matrices)."""
    M = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            M[i, j] = Ra[0, i] * Rb[0, j] + Ra[1, i] * Rb[1, j] + Ra[2, i] * Rb[2, j]
    x, y, z = M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]
    return math.atan2(0.5 * math.sqrt(x * x + y * y + z * z),
                      0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - 1.0))


@kernel
def attitude_errors(R_ref: np.ndarray, R_est: np.ndarray, R_true: np.ndarray
                    ) -> tuple[float, float]:
    """The angles [rad] of ``R_ref^T R_true`` and ``R_est^T R_true`` in one call: the
    reference's and the estimate's attitude errors (each :func:`rotation_angle`'s number)."""
    return rotation_angle(R_ref, R_true), rotation_angle(R_est, R_true)


@kernel
def distance(a: np.ndarray, b: np.ndarray) -> float:
    """``|a - b|`` of 3-vectors as ``sqrt(d.dot(d))`` with ``d = a - b`` in NumPy sums it
    (:func:`~clamber.quadruped.blas_order.dot3`; use it only where
    :func:`~clamber.quadruped.blas_order.same_as_numpy`)."""
    d = np.empty(3)
    for k in range(3):
        d[k] = a[k] - b[k]
    return math.sqrt(dot3(d, d))


@kernel
def sample_errors(R_ref: np.ndarray, R_est: np.ndarray, R_true: np.ndarray, p_est: np.ndarray,
                  p_true: np.ndarray) -> tuple[float, float, float]:
    """A metric sample's errors in one call: the attitude's from the reference, the
    estimate's position error (:func:`distance`) and its attitude error
    (:func:`rotation_angle` each)."""
    return (rotation_angle(R_ref, R_true), distance(p_est, p_true),
            rotation_angle(R_est, R_true))


@kernel
def sample_row(row: np.ndarray, err: float, power: float, R_ref: np.ndarray,
               R_est: np.ndarray, R_true: np.ndarray, p_est: np.ndarray,
               p_true: np.ndarray) -> None:
    """Write one metric sample into ``row``: the tracking error and power as given, then
    :func:`sample_errors` (the row of ``error_m, power_w, attitude_rad, est_position_m,
    est_attitude_rad``)."""
    attitude, est_error, est_attitude = sample_errors(R_ref, R_est, R_true, p_est, p_true)
    row[0] = err
    row[1] = power
    row[2] = attitude
    row[3] = est_error
    row[4] = est_attitude


@kernel
def load_ratio(w: np.ndarray, half_widths: np.ndarray) -> float:
    """Largest ``|w_k| / half_widths_k`` (the planned wrenches over the box; same numbers
    as NumPy's ``(abs(w) / half_widths).max()``)."""
    best = -np.inf
    for k in range(w.shape[0]):
        r = abs(w[k]) / half_widths[k]
        if r > best:
            best = r
    return best
