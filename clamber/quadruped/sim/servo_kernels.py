"""The servos' per-cycle arithmetic compiled (numba, cached on disk): on 20-vectors NumPy's
ufunc calls are mostly dispatch, and these two run every control cycle."""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel


@kernel
def write_command(position: np.ndarray, torque: np.ndarray, current: np.ndarray,
                  kp: np.ndarray, current_per_torque: np.ndarray, tau_max: np.ndarray,
                  ctrl: np.ndarray, forcerange: np.ndarray) -> int:
    """Goals ``position + torque / kp`` into ``ctrl`` and limits ``+-min(max(current, 0) /
    current_per_torque, tau_max)`` into ``forcerange`` (n, 2); all (n,). Returns -1 when
    written, else the index (0, 1, 2: position, torque, current) of the first vector with
    a non-finite entry, having written nothing."""
    for k, v in enumerate((position, torque, current)):
        for x in v:
            if not math.isfinite(x):
                return k
    for i in range(position.shape[0]):
        ctrl[i] = position[i] + torque[i] / kp[i]
        lim = min(max(current[i], 0.0) / current_per_torque[i], tau_max[i])
        forcerange[i, 0] = -lim
        forcerange[i, 1] = lim
    return -1


@kernel
def period_power(forces: np.ndarray, current_per_torque: np.ndarray, idle_current: float,
                 voltage: float, torque: np.ndarray) -> float:
    """Mean ``|forces|`` (steps, n) [N m] over the steps into ``torque`` (n,), and the bus
    power ``voltage * sum(|torque| current_per_torque + idle_current)`` [W] at it."""
    steps = forces.shape[0]
    total = 0.0
    for i in range(forces.shape[1]):
        s = 0.0
        for j in range(steps):
            s += abs(forces[j, i])
        torque[i] = s / steps
        total += torque[i] * current_per_torque[i] + idle_current
    return voltage * total
