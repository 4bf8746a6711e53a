"""A whole control cycle of the simulator in one compiled call: the servos' command written,
the period's physics steps (:func:`.period_kernel.advance`), the grippers' check of the
period (:func:`.failure_kernels.settle_recorded`), the stability pre-check
(:func:`clamber.sim_stability._suspect`) and the servos' power
(:func:`.servo_kernels.bus_power`).

Stepped as five calls from Python, a cycle also pays some 50 attribute look-ups, method
calls and argument tuples around them, and one dispatch per kernel. This kernel calls the
same compiled functions on the same arrays in the same order, so every number is theirs;
:meth:`~clamber.quadruped.sim.simulator.QuadrupedSim.step_plain` keeps the calls one by
one as the reference, and the tests compare the two bit for bit. Whatever is rare (a
command that is not finite, a period the grippers' check does not certify, a suspect
state) returns to Python, which finishes the cycle as the plain step does.

numba caches a kernel by its own file's stamp only; the kernels this one calls live in
other files, so the cache is keyed to their stamps too (:func:`_depends_on`): an edit of
any of them recompiles this one.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from clamber import sim_stability
from clamber.compiled import kernel
from clamber.quadruped.sim import failure_kernels, period_kernel, servo_kernels

#: :func:`step`'s verdicts besides a command vector's index (0, 1, 2: not finite).
DONE, UNSETTLED, SUSPECT = -1, -2, -3


@kernel
def step(model: int, data: int, steps: int, kp: np.ndarray, current_per_torque: np.ndarray,
         tau_max: np.ndarray, ctrl: np.ndarray, forcerange: np.ndarray, qvel: np.ndarray,
         prev_velocity: np.ndarray, force: np.ndarray, forces: np.ndarray,
         torque: np.ndarray, sources: tuple, saved: np.ndarray, sig: int,
         warnings: np.ndarray, fatal: np.ndarray, qpos: np.ndarray, safe: float,
         idle_current: float, voltage: float, power: np.ndarray,
         position: np.ndarray, torque_ff: np.ndarray, current: np.ndarray, record: bool,
         cycle: tuple, save: bool, index: np.ndarray, compliant: bool, factor: np.ndarray,
         w: np.ndarray, inner_t: np.ndarray, cuts_t: np.ndarray, certified: float,
         lower_margin: float, clock: tuple, gauges: np.ndarray) -> int:
    """One control cycle; returns its verdict. The arguments up to ``power`` are the
    simulator's own, fixed while it lives; the rest change with the command and with the
    grippers that hold.

    The command (``position``, ``torque_ff``, ``current``) goes into ``ctrl`` and
    ``forcerange`` (:func:`.servo_kernels.write_command`; a vector not finite returns its
    index, 0 to 2, with nothing done), ``qvel[:3]`` into ``prev_velocity``, then the
    period's steps (:func:`.period_kernel.advance`'s arguments, ``record`` while a gripper
    holds). While one holds, the recorded steps are checked
    (:func:`.failure_kernels.settle_recorded` with the grippers' ``index`` rows: bodies,
    grippers, sites, roots, clock rows; ``clock``: the failure clock's reference wrenches
    and gauges, peaks, lower-bound references, slides and speeds): :data:`UNSETTLED` if not
    certified (the sole wrenches in ``w``, the clocks untouched). Then
    :data:`SUSPECT` if the stability pre-check suspects the state, else the servos' power
    into ``power[0]`` and :data:`DONE`.
    """
    bad = servo_kernels.write_command(position, torque_ff, current, kp, current_per_torque,
                                      tau_max, ctrl, forcerange)
    if bad >= 0:
        return bad
    for c in range(3):
        prev_velocity[c] = qvel[c]
    period_kernel.advance(model, data, steps, force, forces, torque, record, sources, cycle,
                          save, saved, sig)
    if record:
        settled = failure_kernels.settle_recorded(
            cycle[0], cycle[1], cycle[2], cycle[3], index[0], index[1], index[2], index[3],
            compliant, factor, w, index[4], inner_t, cuts_t, certified, lower_margin,
            clock[0], clock[1], clock[2], clock[3], clock[4], clock[5], clock[6], clock[7],
            gauges)
        if not settled:
            return UNSETTLED
    if sim_stability._suspect(warnings, fatal, qpos, qvel, safe):
        return SUSPECT
    power[0] = servo_kernels.bus_power(torque, current_per_torque, idle_current, voltage)
    return DONE


def _stamp(path: str) -> tuple[float, int]:
    st = os.stat(path)
    return st.st_mtime, st.st_size


def _depends_on(dispatcher: object, *modules: object) -> None:
    """Key ``dispatcher``'s disk cache to the files of ``modules`` besides its own (numba
    keeps a cached kernel while its own file's stamp is unchanged)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_source_stamp"):
        return  # compiled in memory: nothing cached to go stale
    cache_file._source_stamp = (cache_file._source_stamp,
                                *(_stamp(m.__file__) for m in modules))


_depends_on(step, failure_kernels, period_kernel, servo_kernels, sim_stability,
            sys.modules[kernel.__module__])
