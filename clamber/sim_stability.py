"""MuJoCo instability detected from the simulation's own data: an unstable run is no result.

When accelerations, positions or velocities blow up (``mjWARN_BADQACC``, ``BADQPOS``,
``BADQVEL``), MuJoCo resets the state to the model's rest pose and carries on, so a run with
absurd inputs (a 1 km gripper, a huge time step) would otherwise end as an ordinary outcome.
Each warning increments a counter in ``MjData.warning`` that the reset keeps; reading those
counters (instead of MuJoCo's process-wide warning hook) is safe with several simulations
running in threads of one worker.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from clamber.compiled import kernel
from clamber.exceptions import ClamberError

#: Warnings that mean the physics cannot be trusted: diverging accelerations, positions,
#: velocities or controls, and contacts or constraints dropped because their buffers filled.
FATAL_WARNINGS = tuple(int(w) for w in (
    mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADQPOS,
    mujoco.mjtWarning.mjWARN_BADQVEL, mujoco.mjtWarning.mjWARN_BADCTRL,
    mujoco.mjtWarning.mjWARN_CONTACTFULL, mujoco.mjtWarning.mjWARN_CNSTRFULL))
_FATAL = np.array(FATAL_WARNINGS)
_sum = np.add.reduce


class UnstableSimulation(ClamberError):
    """The physics went unstable (a MuJoCo instability warning or a non-finite state)."""


def instability(data: mujoco.MjData) -> str | None:
    """Why the simulation in ``data`` cannot be trusted, or None while it can."""
    counts = data.warning.number.take(_FATAL)
    if np.count_nonzero(counts):
        return "MuJoCo warned " + ", ".join(
            f"{mujoco.mjtWarning(w).name.removeprefix('mjWARN_')} x{n}"
            for w, n in zip(FATAL_WARNINGS, counts, strict=True) if n)
    if not (math.isfinite(_sum(data.qpos)) and math.isfinite(_sum(data.qvel))):
        return "non-finite state"
    return None


class StabilityWatch:
    """:func:`instability` of one ``MjData``, called every control cycle: one compiled
    pre-check (:func:`_suspect`, a sixth of NumPy's cost on these small arrays) passes a
    state with no fatal warning counted and every position and velocity at most 1e300 in
    magnitude, in which :func:`instability` finds nothing; any other state gets
    :func:`instability`'s verdict. The arrays are read through views made once (MjData's
    buffers never move)."""

    def __init__(self, data: mujoco.MjData) -> None:
        self.data = data
        self._warnings, self._qpos, self._qvel = data.warning.number, data.qpos, data.qvel

    def __call__(self) -> str | None:
        """What :func:`instability` says of the data now."""
        if _suspect(self._warnings, _FATAL, self._qpos, self._qvel, _SAFE):
            return instability(self.data)
        return None


#: Largest magnitude of a position or velocity the pre-check passes: fewer than 1e7 such
#: numbers sum to a finite number, so :func:`instability`'s sums are finite.
_SAFE = 1e300


@kernel
def _suspect(warnings: np.ndarray, fatal: np.ndarray, qpos: np.ndarray, qvel: np.ndarray,
             safe: float) -> bool:
    """Whether a fatal warning was counted or a position or velocity is not finite or above
    ``safe`` in magnitude."""
    for w in fatal:
        if warnings[w] != 0:
            return True
    for x in qpos:
        if not abs(x) <= safe:
            return True
    for x in qvel:
        if not abs(x) <= safe:
            return True
    return False


def check_stable(data: mujoco.MjData, what: str, t: float) -> None:
    """Raise :class:`UnstableSimulation` naming ``what`` and the caller's time ``t`` [s] if
    ``data`` went unstable (``data.time`` restarts from zero at MuJoCo's reset)."""
    problem = instability(data)
    if problem is not None:
        raise UnstableSimulation(f"the {what} went unstable by t = {t:.3f} s ({problem}; "
                                 "check the time step, gripper radius, masses and lengths)")
