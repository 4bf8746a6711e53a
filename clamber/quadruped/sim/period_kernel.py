"""A control period's physics steps in one compiled call: MuJoCo's own C ``mj_step`` called
from a numba kernel, the servo forces and the grippers' raw data copied out after each step
(and the state saved first, ``mj_getState``, where a gripper can break).

A control period is five physics steps. Stepped from Python, every step costs a binding call
(MuJoCo's error interception, the GIL released and taken back), a copy of the servo forces
and, while grippers hold, a binding call of ``mj_rnePostConstraint`` and four array copies:
about 25 us a period beside some 140 us of physics. The kernel calls the same C functions of
the same MuJoCo library (the one the bindings load, found beside them and checked by its
version) on the same ``mjModel`` and ``mjData`` (the bindings' ``_address``), and copies
the same memory, so the physics and every number copied are exactly the Python loop's
(:meth:`~clamber.quadruped.sim.simulator.QuadrupedSim.step` keeps that loop, and the tests
compare the two bit for bit). The functions are linked by name, so the kernel is cached on
disk like the others.

Where the library cannot be found or linked (another layout of the package, another
MuJoCo), :data:`AVAILABLE` is False and the simulator steps from Python. One difference
remains: a MuJoCo *error* inside the kernel (an internal failure such as an exhausted
arena, never a physics warning, which MuJoCo counts in ``mjData.warning`` either way) ends
the process through MuJoCo's default handler instead of raising ``mujoco.FatalError``.
"""

from __future__ import annotations

import ctypes
import glob
import os

import mujoco
import numpy as np
from llvmlite import binding as llvm
from numba import types

from clamber.compiled import kernel

#: File names of the MuJoCo library the Python bindings ship beside themselves.
_PATTERNS = ("libmujoco.so*", "libmujoco*.dylib", "mujoco.dll")
#: ``void f(const mjModel*, mjData*)``, the pointers passed as addresses.
_SIGNATURE = types.void(types.uintp, types.uintp)
_mj_step = types.ExternalFunction("mj_step", _SIGNATURE)
_mj_rne_post_constraint = types.ExternalFunction("mj_rnePostConstraint", _SIGNATURE)
#: ``void mj_getState(const mjModel*, const mjData*, mjtNum* state, int sig)``.
_mj_get_state = types.ExternalFunction(
    "mj_getState", types.void(types.uintp, types.uintp, types.uintp, types.int32))


def _link() -> bool:
    """Make the bindings' MuJoCo library's functions callable from kernels; False where it
    is not found, not loadable or not the version the bindings run."""
    here = os.path.dirname(mujoco.__file__)
    found = [path for pattern in _PATTERNS for path in sorted(glob.glob(os.path.join(here,
                                                                                    pattern)))]
    if len(found) != 1:
        return False
    try:
        if ctypes.CDLL(found[0]).mj_version() != mujoco.mj_version():
            return False
        llvm.load_library_permanently(found[0])
    except (OSError, AttributeError, RuntimeError):
        return False
    return True


#: Whether :func:`advance` can be called (MuJoCo's library linked).
AVAILABLE = _link()


@kernel
def advance(model: int, data: int, steps: int, force: np.ndarray, forces: np.ndarray,
            torque: np.ndarray, record: bool, sources: tuple, cycle: tuple, save: bool,
            saved: np.ndarray, sig: int) -> None:
    """``steps`` physics steps of the model and data at addresses ``model`` and ``data``.

    If ``save``, ``mj_getState`` first copies the state components ``sig`` into ``saved``
    (a float array of ``mj_stateSize``). After each step ``j`` the servo forces ``force``
    (a view of ``actuator_force``) go to ``forces[j]`` and, if ``record``,
    ``mj_rnePostConstraint`` runs and the four arrays of ``sources`` (views of
    ``cfrc_ext``, ``subtree_com``, ``site_xpos``, ``site_xmat``) go to ``cycle[k][j]``.
    ``torque`` gets the mean of ``|forces|`` over the steps: their sum
    in step order times ``1 / steps``, as the simulator's NumPy form computes it.
    """
    n = force.shape[0]
    if save:
        _mj_get_state(model, data, saved.ctypes.data, sig)
    for j in range(steps):
        _mj_step(model, data)
        for c in range(n):
            forces[j, c] = force[c]
        if record:
            _mj_rne_post_constraint(model, data)
            cycle[0][j] = sources[0]
            cycle[1][j] = sources[1]
            cycle[2][j] = sources[2]
            cycle[3][j] = sources[3]
    scale = 1.0 / steps
    for c in range(n):
        total = 0.0
        for j in range(steps):
            total += abs(forces[j, c])
        torque[c] = total * scale
