"""NumPy's LAPACK solve without its per-call Python wrapping: the same kernel, the same numbers.

``np.linalg.solve`` spends most of its time on a 6 x 6 or 12 x 12 system in argument checks,
type promotion and an error-state context; a control loop solving a few such systems per
cycle pays that overhead thousands of times per simulated minute. :func:`solve` calls the
generalized ufunc ``np.linalg.solve`` itself calls (``numpy.linalg._umath_linalg.solve``,
LAPACK ``gesv``) with the same signature, so the solution is bit for bit the one
``np.linalg.solve`` returns (checked in the tests).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.linalg import LinAlgError

try:  # a private NumPy module: a NumPy without it gets the public (slower) path
    from numpy.linalg import _umath_linalg

    _SOLVE = _umath_linalg.solve
    _SOLVE1 = _umath_linalg.solve1
except (ImportError, AttributeError):  # pragma: no cover - depends on the NumPy build
    _umath_linalg = None
_SUM = np.add.reduce


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(a, b)`` for float64 ``a`` (..., n, n) and ``b`` (..., n, k) (a stack
    of matrix right-hand sides, as many dimensions as ``a``). Raises ``LinAlgError`` if a
    system is singular (the solution is then not finite)."""
    if _umath_linalg is None:  # pragma: no cover
        return np.linalg.solve(a, b)
    x = _SOLVE(a, b, signature="dd->d")
    if not math.isfinite(_SUM(x, axis=None)):
        raise LinAlgError("Singular matrix")
    return x


def solve_vector(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(a, b)`` for a float64 matrix ``a`` (n, n) and vector ``b`` (n,)."""
    if _umath_linalg is None:  # pragma: no cover
        return np.linalg.solve(a, b)
    x = _SOLVE1(a, b, signature="dd->d")
    if not math.isfinite(_SUM(x, axis=None)):
        raise LinAlgError("Singular matrix")
    return x
