"""NumPy's smallest BLAS products compiled in the BLAS's own order: ``x . y`` and ``A^T x``
of 3-vectors.

NumPy hands ``x.dot(y)`` and ``A.T @ x`` (``A`` C-ordered) to its BLAS (``ddot``,
``dgemv``) even for three elements; in a control cycle, between the physics and the QP,
such a call costs microseconds for three multiply-adds. The OpenBLAS that NumPy ships
sums these on x86-64 as one chain of fused multiply-adds from ``+0.0`` in index order;
:func:`dot3` and :func:`gemv_t3` do the same with the processor's fused multiply-add, so
their results are the BLAS's bit for bit where the BLAS sums so. Whether it does here is
checked once, against NumPy, on probe vectors of every scale (:func:`same_as_numpy`);
callers use these kernels only then and NumPy otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import intrinsic

from clamber.compiled import kernel


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``fma``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@kernel
def dot3(x: np.ndarray, y: np.ndarray) -> float:
    """``x . y`` of two 3-vectors as a fused multiply-add chain from ``+0.0``."""
    s = 0.0
    for k in range(3):
        s = _fma(x[k], y[k], s)
    return s


@kernel
def gemv_t3(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = A^T x`` (``A`` 3 x 3): each entry a fused multiply-add chain from ``+0.0``
    over ``A``'s column (NumPy's ``A.T @ x`` for a C-ordered ``A``; for another order NumPy
    calls the BLAS otherwise)."""
    for i in range(3):
        s = 0.0
        for k in range(3):
            s = _fma(A[k, i], x[k], s)
        out[i] = s


#: Probes (each three sums of ``A.T @ x`` and two dot products); a BLAS that rounds each
#: product apart, or sums in another order, differs on about a fifth of such sums.
_N_PROBES = 96


def _probes() -> tuple[np.ndarray, np.ndarray]:
    """Matrices (n, 3, 3) and vectors (n, 3) of every scale, with zeros of both signs among
    the vectors."""
    rng = np.random.default_rng(20261202)
    A = rng.standard_normal((_N_PROBES, 3, 3)) * 10.0 ** rng.uniform(-8, 8, (_N_PROBES, 3, 3))
    x = rng.standard_normal((_N_PROBES, 3)) * 10.0 ** rng.uniform(-8, 8, (_N_PROBES, 3))
    x[::5, 0] = 0.0
    x[1::7, 1] = -0.0
    x[2::11] = 0.0
    return A, x


def _same(a: float, b: float) -> bool:
    """Equal, zeros of the same sign (no probe gives a NaN)."""
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


_checked: bool | None = None


def same_as_numpy() -> bool:
    """Whether :func:`dot3` and :func:`gemv_t3` give NumPy's ``x.dot(y)`` and ``A.T @ x``
    here, bit for bit, on every probe (checked on the first call)."""
    global _checked
    if _checked is None:
        out = np.empty(3)
        ok = True
        for A, x in zip(*_probes(), strict=True):
            gemv_t3(A, x, out)
            want = A.T @ x
            ok = ok and all(_same(out[i], want[i]) for i in range(3)) \
                and _same(dot3(x, A[0]), float(x.dot(A[0]))) \
                and _same(dot3(x, x), float(x.dot(x)))
        _checked = ok
    return _checked
