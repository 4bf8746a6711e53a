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
    """:func:`instability` of one ``MjData``, called every control cycle: a fatal warning
    counted, or a sum of the positions and velocities that is not finite (a non-finite
    entry makes it so), asks :func:`instability` for its message. The arrays are read
    through views made once (MjData's buffers never move)."""

    def __init__(self, data: mujoco.MjData) -> None:
        self.data = data
        self._warnings, self._qpos, self._qvel = data.warning.number, data.qpos, data.qvel

    def __call__(self) -> str | None:
        """What :func:`instability` says of the data now."""
        if (self._warnings.take(_FATAL).any()
                or not math.isfinite(_sum(self._qpos) + _sum(self._qvel))):
            return instability(self.data)
        return None


def check_stable(data: mujoco.MjData, what: str, t: float) -> None:
    """Raise :class:`UnstableSimulation` naming ``what`` and the caller's time ``t`` [s] if
    ``data`` went unstable (``data.time`` restarts from zero at MuJoCo's reset)."""
    problem = instability(data)
    if problem is not None:
        raise UnstableSimulation(f"the {what} went unstable by t = {t:.3f} s ({problem}; "
                                 "check the time step, gripper radius, masses and lengths)")
