"""Compiled kernels of the simulation loops: numba's ``njit``, cached on disk where it can be.

numba writes a compiled kernel next to its source (``__pycache__``), or to a per-user cache
directory (``NUMBA_CACHE_DIR`` sets it) when the package is installed read-only; where
neither is writable, numba refuses ``cache=True`` at import, so a kernel is then compiled in
memory in each process instead (a few seconds for all of them), never an import error.
"""

from __future__ import annotations

from collections.abc import Callable

from numba import njit


def kernel(fn: Callable) -> Callable:
    """``fn`` compiled in nopython mode, its machine code cached on disk where possible."""
    try:
        return njit(cache=True)(fn)
    except RuntimeError:  # no writable cache location: compile per process
        return njit(fn)
