"""The servos' command written into MuJoCo in one compiled call (numba, cached on disk).

Every control cycle the 20 servos get their goal (position plus feed-forward over the
gain) and their torque limit (current limit over the torque constant, at most the stall
torque). In NumPy that is a copy of each command vector, a finiteness test and seven
ufunc calls on 20-vectors, each mostly dispatch; the kernel does the same arithmetic
element by element, each operation the IEEE operation NumPy performs (``np.maximum`` and
``np.minimum`` as ``a > b ? a : b`` and ``a < b ? a : b``: of two equal numbers NumPy's
vector loops return the second, so a current limit of ``-0.0`` gives a limit of ``+0.0``
there too), so the numbers are the same bit for bit
(:meth:`~clamber.quadruped.sim.servos.ServoBank.apply_plain` stays as the reference).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel


@kernel
def _finite(a: np.ndarray) -> bool:
    for i in range(a.shape[0]):
        if not math.isfinite(a[i]):
            return False
    return True


@kernel
def write_command(position: np.ndarray, torque: np.ndarray, current: np.ndarray,
                  kp: np.ndarray, current_per_torque: np.ndarray, tau_max: np.ndarray,
                  ctrl: np.ndarray, forcerange: np.ndarray) -> int:
    """Goals ``position + torque / kp`` into ``ctrl`` and limits ``+-min(max(current, 0) /
    current_per_torque, tau_max)`` into ``forcerange`` (n, 2); all (n,). Returns -1 when
    written, else the index (0, 1, 2: position, torque, current) of the first vector with
    a non-finite entry, having written nothing."""
    n = position.shape[0]
    if not _finite(position):
        return 0
    if not _finite(torque):
        return 1
    if not _finite(current):
        return 2
    for i in range(n):
        ctrl[i] = position[i] + torque[i] / kp[i]
        c = current[i]
        lim = c if c > 0.0 else 0.0
        lim = lim / current_per_torque[i]
        t = tau_max[i]
        lim = lim if lim < t else t
        forcerange[i, 1] = lim
        forcerange[i, 0] = -lim
    return -1


#: Most values :func:`bus_power` sums as NumPy does (its pairwise sum's block size).
PAIRWISE_BLOCK = 128


@kernel
def bus_power(torque: np.ndarray, current_per_torque: np.ndarray, idle_current: float,
              voltage: float) -> float:
    """``voltage * sum(|torque| current_per_torque + idle_current)`` [W] for 8 to
    :data:`PAIRWISE_BLOCK` servos, the sum in the order of NumPy's pairwise summation of
    such a vector (eight running sums over blocks of eight, combined as a tree, then the
    remainder in order), so the number is ``np.add.reduce``'s bit for bit."""
    n = torque.shape[0]
    r = np.empty(8)
    for j in range(8):
        r[j] = abs(torque[j]) * current_per_torque[j] + idle_current
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += abs(torque[i + j]) * current_per_torque[i + j] + idle_current
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += abs(torque[i]) * current_per_torque[i] + idle_current
        i += 1
    return voltage * total
