"""A climbing trial's per-cycle metrics, compiled: rotation angles, a metric row, load ratios.

Each control cycle samples two attitude errors (the angle of ``R_a^T R_b``), the estimate's
position error and the planned gripper load ratio; in NumPy and Pinocchio these are a dozen
calls on 3-vectors per cycle, here one compiled call each (numba, cached on disk). The angle
is ``atan2(|vee(M - M^T)| / 2, (tr M - 1) / 2)`` with ``M = R_a^T R_b``, accurate at every
angle.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel


@kernel
def rotation_angle(Ra: np.ndarray, Rb: np.ndarray) -> float:
    """Angle [rad] of the rotation ``Ra^T Rb`` (both 3 x 3 rotation matrices)."""
    M = Ra.T @ Rb
    x, y, z = M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]
    return math.atan2(0.5 * math.sqrt(x * x + y * y + z * z),
                      0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - 1.0))


@kernel
def sample_row(row: np.ndarray, err: float, power: float, R_ref: np.ndarray,
               R_est: np.ndarray, R_true: np.ndarray, p_est: np.ndarray,
               p_true: np.ndarray) -> None:
    """Write one metric sample into ``row`` (``error_m, power_w, attitude_rad,
    est_position_m, est_attitude_rad``): the tracking error [m] and power [W] as given,
    the true attitude's angle from the reference, the estimate's position error [m] and
    its attitude's angle from the truth [rad]."""
    row[0] = err
    row[1] = power
    row[2] = rotation_angle(R_ref, R_true)
    row[3] = np.sqrt(((p_est - p_true) ** 2).sum())
    row[4] = rotation_angle(R_est, R_true)


@kernel
def load_ratio(w: np.ndarray, half_widths: np.ndarray) -> float:
    """Largest ``|w_k| / half_widths_k``: the planned wrenches over the box (per axis)."""
    return (np.abs(w) / half_widths).max()
