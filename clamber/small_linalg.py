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
    _SVD = _umath_linalg.svd_s
except (ImportError, AttributeError):  # pragma: no cover - depends on the NumPy build
    _umath_linalg = None
_SUM = np.add.reduce
try:  # the ufunc ``np.clip`` calls for float bounds, without its dispatch
    from numpy._core.umath import clip as _CLIP
except (ImportError, AttributeError):  # pragma: no cover - depends on the NumPy version
    _CLIP = np.clip


def clip(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``np.clip(a, lo, hi)`` of a float array between float array bounds (the same
    numbers)."""
    return _CLIP(a, lo, hi)


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


def pinv(a: np.ndarray, rcond: float) -> np.ndarray:
    """``np.linalg.pinv(a, rcond)`` of a real matrix: its SVD kernel and steps, without its
    per-call wrapping (the same numbers)."""
    if _umath_linalg is None:  # pragma: no cover
        return np.linalg.pinv(a, rcond=rcond)
    u, s, vt = _SVD(a, signature="d->ddd")
    if not math.isfinite(_SUM(s)):
        raise LinAlgError("SVD did not converge")
    large = s > rcond * s.max()
    s = np.divide(1, s, where=large, out=s)
    s[~large] = 0
    return vt.T @ (s[:, None] * u.T)
