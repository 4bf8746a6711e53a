"""Pinocchio's SE(3) products and ``log6``, compiled, with Pinocchio's floating-point operations.

A control cycle composes, inverts and takes the logarithm of a dozen rigid transforms (the
CLIK's pose errors); through Pinocchio's bindings each is a Python call that builds an
object, and the calls cost far more than the arithmetic. These functions (numba, cached on
disk) do the same arithmetic in the order Pinocchio's compiled Eigen code does it, so the
numbers are Pinocchio's bit for bit (checked against it in the tests):

* a 3-term inner product over a contiguous row or column (``R^T v``, ``R^T R2``, a vector's
  squared norm or dot product) is summed ``(x0 + x1) + x2`` (two terms in one SIMD packet,
  then the third);
* ``R v`` and ``R R2`` (rows strided) are summed ``(x0 + x1) + x2`` in rows 0 and 1 (one
  packet) and ``x0 + (x1 + x2)`` in row 2 (the scalar remainder), and a trace likewise
  ``x0 + (x1 + x2)``;
* ``log3`` and ``log6`` follow ``pinocchio/src/spatial/log.hxx`` branch for branch.

Rotations are (3, 3) arrays of either memory order, translations (3,).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel

_EPS = float(np.finfo(float).eps)
#: Pinocchio's ``TaylorSeriesExpansion<double>::precision<2>()`` and ``<3>()``.
_PREC2 = _EPS ** (1.0 / 3.0)
_PREC3 = _EPS ** (1.0 / 4.0)


@kernel
def _packet3(a: float, b: float, c: float) -> float:
    """A 3-term sum as a SIMD packet of two and a remainder."""
    return (a + b) + c


@kernel
def _scalar3(a: float, b: float, c: float) -> float:
    """A 3-term sum unrolled as Eigen's scalar reduction does (halves, the right one first)."""
    return a + (b + c)


@kernel
def compose(R1: np.ndarray, p1: np.ndarray, R2: np.ndarray, p2: np.ndarray,
            R: np.ndarray, p: np.ndarray) -> None:
    """``M1 * M2`` into ``R``, ``p`` (``R1 R2``, ``p1 + R1 p2``)."""
    for i in range(3):
        for j in range(3):
            if i < 2:
                R[i, j] = _packet3(R1[i, 0] * R2[0, j], R1[i, 1] * R2[1, j],
                                   R1[i, 2] * R2[2, j])
            else:
                R[i, j] = _scalar3(R1[i, 0] * R2[0, j], R1[i, 1] * R2[1, j],
                                   R1[i, 2] * R2[2, j])
    for i in range(3):
        if i < 2:
            v = _packet3(R1[i, 0] * p2[0], R1[i, 1] * p2[1], R1[i, 2] * p2[2])
        else:
            v = _scalar3(R1[i, 0] * p2[0], R1[i, 1] * p2[1], R1[i, 2] * p2[2])
        p[i] = p1[i] + v


@kernel
def act_inv(R1: np.ndarray, p1: np.ndarray, R2: np.ndarray, p2: np.ndarray,
            R: np.ndarray, p: np.ndarray) -> None:
    """``M1.actInv(M2)`` into ``R``, ``p`` (``R1^T R2``, ``R1^T (p2 - p1)``)."""
    for i in range(3):
        for j in range(3):
            R[i, j] = _packet3(R1[0, i] * R2[0, j], R1[1, i] * R2[1, j], R1[2, i] * R2[2, j])
    d0, d1, d2 = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    for i in range(3):
        p[i] = _packet3(R1[0, i] * d0, R1[1, i] * d1, R1[2, i] * d2)


@kernel
def inverse(R1: np.ndarray, p1: np.ndarray, R: np.ndarray, p: np.ndarray) -> None:
    """``M1.inverse()`` into ``R``, ``p`` (``R1^T``, ``-R1^T p1``)."""
    for i in range(3):
        for j in range(3):
            R[i, j] = R1[j, i]
    for i in range(3):
        p[i] = -_packet3(R1[0, i] * p1[0], R1[1, i] * p1[1], R1[2, i] * p1[2])


@kernel
def _log3_singular(Rn: np.ndarray, tr: float, w: np.ndarray) -> float:
    """``log3``'s branch near a half turn (``cos(theta)`` within ``prec`` of -1): the axis
    from the largest diagonal entry, as ``internal::compute_theta_axis``."""
    eps = _EPS
    val = np.empty(3)
    for k in range(3):
        val[k] = 2.0 * Rn[k, k] - tr + 1.0
    thetas = np.empty(3)
    axes = np.empty((3, 3))
    for i0 in range(3):
        i1, i2 = (i0 + 1) % 3, (i0 + 2) % 3
        sign = 1.0 if Rn[i2, i1] >= Rn[i1, i2] else -1.0
        s = math.sqrt(val[i0] + eps + eps * eps) * sign
        ax = axes[i0]
        ax[i0] = s / 2.0
        ax[i1] = 1.0 / (2.0 * s) * (Rn[i1, i0] + Rn[i0, i1])
        ax[i2] = 1.0 / (2.0 * s) * (Rn[i2, i0] + Rn[i0, i2])
        ww = 1.0 / (2.0 * s) * (Rn[i2, i1] - Rn[i1, i2])
        an = math.sqrt(_packet3(ax[0] * ax[0], ax[1] * ax[1], ax[2] * ax[2]))
        thetas[i0] = 2.0 * math.atan2(an, ww)
        for k in range(3):
            ax[k] = ax[k] / an
    if val[0] >= val[1]:
        pick = 0 if val[0] >= val[2] else 2
    else:
        pick = 1 if val[1] >= val[2] else 2
    theta = thetas[pick]
    for k in range(3):
        w[k] = theta * axes[pick, k]
    return theta


@kernel
def log3(R: np.ndarray, w: np.ndarray) -> float:
    """``pin.log3(R)`` into ``w`` (3,); returns the angle ``theta``. Pinocchio evaluates
    both branches and selects one; the branch not selected is left out here (it has no
    effect on the result)."""
    eps = _EPS
    prec = _PREC2
    # renormalize_rotation_matrix: columns a, b normalized, c = a x b, a = b x c
    n0 = math.sqrt(_packet3(R[0, 0] * R[0, 0], R[1, 0] * R[1, 0], R[2, 0] * R[2, 0]))
    n1 = math.sqrt(_packet3(R[0, 1] * R[0, 1], R[1, 1] * R[1, 1], R[2, 1] * R[2, 1]))
    a0, a1, a2 = R[0, 0] / n0, R[1, 0] / n0, R[2, 0] / n0
    b0, b1, b2 = R[0, 1] / n1, R[1, 1] / n1, R[2, 1] / n1
    c0, c1, c2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    a0, a1, a2 = b1 * c2 - b2 * c1, b2 * c0 - b0 * c2, b0 * c1 - b1 * c0
    tr = _scalar3(a0, b1, c2)
    cos_value = (tr - 1.0) / 2.0
    if not cos_value >= -1.0 + prec:
        Rn = np.empty((3, 3))
        Rn[0, 0], Rn[1, 0], Rn[2, 0] = a0, a1, a2
        Rn[0, 1], Rn[1, 1], Rn[2, 1] = b0, b1, b2
        Rn[0, 2], Rn[1, 2], Rn[2, 2] = c0, c1, c2
        return _log3_singular(Rn, tr, w)
    acos_expansion = math.sqrt(2.0 * (1.0 - cos_value) + eps * eps)
    if tr <= 3.0 - prec:
        theta_nominal = math.acos(cos_value) if tr >= -1.0 + prec \
            else math.pi - acos_expansion
    else:
        theta_nominal = acos_expansion
    # unSkew of the renormalized matrix
    s0 = 0.5 * (b2 - c1)
    s1 = 0.5 * (c0 - a2)
    s2 = 0.5 * (a1 - b0)
    n2 = _packet3(s0 * s0, s1 * s1, s2 * s2)
    if theta_nominal >= prec:
        t = theta_nominal / math.sin(theta_nominal)
    else:
        t = 1.0 + n2 / 6.0 + n2 * n2 * 3.0 / 40.0
    w[0], w[1], w[2] = t * s0, t * s1, t * s2
    return theta_nominal


@kernel
def log6(R: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """``pin.log6(SE3(R, p)).vector`` into ``out`` (6,): ``[v, w]``."""
    s0 = 0.5 * (R[2, 1] - R[1, 2])
    s1 = 0.5 * (R[0, 2] - R[2, 0])
    s2 = 0.5 * (R[1, 0] - R[0, 1])
    t2 = _packet3(s0 * s0, s1 * s1, s2 * s2)
    tr = _scalar3(R[0, 0], R[1, 1], R[2, 2])
    w = out[3:]
    theta = log3(R, w)
    st, ct = math.sin(theta), math.cos(theta)
    if tr >= 3.0 - _PREC2:
        alpha = 1.0 - t2 / 12.0 - t2 * t2 / 720.0
        beta = 1.0 / 12.0 + t2 / 720.0
    else:
        alpha = theta * st / (2.0 * (1.0 - ct))
        beta = 1.0 / (theta * theta) - st / (2.0 * theta * (1.0 - ct))
    w0, w1, w2 = w[0], w[1], w[2]
    c0, c1, c2 = w1 * p[2] - w2 * p[1], w2 * p[0] - w0 * p[2], w0 * p[1] - w1 * p[0]
    bd = beta * _packet3(w0 * p[0], w1 * p[1], w2 * p[2])
    out[0] = alpha * p[0] - 0.5 * c0 + bd * w0
    out[1] = alpha * p[1] - 0.5 * c1 + bd * w1
    out[2] = alpha * p[2] - 0.5 * c2 + bd * w2



@kernel
def action_matrix(R: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """``SE3(R, p).toActionMatrix()`` into ``out`` (6, 6): ``[[R, [p]x R], [0, R]]``, the
    upper right block a cross product per column."""
    for i in range(3):
        for j in range(3):
            out[i, j] = R[i, j]
            out[3 + i, 3 + j] = R[i, j]
            out[3 + i, j] = 0.0
    for j in range(3):
        out[0, 3 + j] = p[1] * R[2, j] - p[2] * R[1, j]
        out[1, 3 + j] = p[2] * R[0, j] - p[0] * R[2, j]
        out[2, 3 + j] = p[0] * R[1, j] - p[1] * R[0, j]


@kernel
def xyz_quaternion(R: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """``pin.SE3ToXYZQUAT(SE3(R, p))`` into ``out[:7]``: the position and the unit
    quaternion ``(x, y, z, w)`` of ``R`` (Eigen's conversion from a rotation matrix)."""
    out[0], out[1], out[2] = p[0], p[1], p[2]
    t = _scalar3(R[0, 0], R[1, 1], R[2, 2])
    if t > 0.0:
        t = math.sqrt(t + 1.0)
        out[6] = 0.5 * t
        t = 0.5 / t
        out[3] = (R[2, 1] - R[1, 2]) * t
        out[4] = (R[0, 2] - R[2, 0]) * t
        out[5] = (R[1, 0] - R[0, 1]) * t
        return
    i = 0
    if R[1, 1] > R[0, 0]:
        i = 1
    if R[2, 2] > R[i, i]:
        i = 2
    j = (i + 1) % 3
    k = (j + 1) % 3
    t = math.sqrt(R[i, i] - R[j, j] - R[k, k] + 1.0)
    out[3 + i] = 0.5 * t
    t = 0.5 / t
    out[6] = (R[k, j] - R[j, k]) * t
    out[3 + j] = (R[j, i] + R[i, j]) * t
    out[3 + k] = (R[k, i] + R[i, k]) * t


@kernel
def exp6(nu: np.ndarray, R: np.ndarray, p: np.ndarray) -> None:
    """``pin.exp6(pin.Motion(nu))`` (``nu = [v, w]``, (6,)) into ``R``, ``p``."""
    v0, v1, v2, w0, w1, w2 = nu[0], nu[1], nu[2], nu[3], nu[4], nu[5]
    t2 = _packet3(w0 * w0, w1 * w1, w2 * w2) + _EPS * _EPS
    t = math.sqrt(t2)
    st, ct = math.sin(t), math.cos(t)
    inv_t2 = 1.0 / t2
    if t < _PREC3:
        alpha_wxv = 1.0 / 2.0 - t2 / 24
        alpha_v = 1.0 - t2 / 6
        alpha_w = 1.0 / 6.0 - t2 / 120
        diagonal = 1.0 - t2 / 2
    else:
        alpha_wxv = (1.0 - ct) * inv_t2
        alpha_v = st / t
        alpha_w = (1.0 - alpha_v) * inv_t2
        diagonal = ct
    dot = alpha_w * _packet3(w0 * v0, w1 * v1, w2 * v2)
    c0, c1, c2 = w1 * v2 - w2 * v1, w2 * v0 - w0 * v2, w0 * v1 - w1 * v0
    p[0] = alpha_v * v0 + dot * w0 + alpha_wxv * c0
    p[1] = alpha_v * v1 + dot * w1 + alpha_wxv * c1
    p[2] = alpha_v * v2 + dot * w2 + alpha_wxv * c2
    a0, a1, a2 = alpha_wxv * w0, alpha_wxv * w1, alpha_wxv * w2
    R[0, 0], R[0, 1], R[0, 2] = a0 * w0, a0 * w1, a0 * w2
    R[1, 0], R[1, 1], R[1, 2] = a1 * w0, a1 * w1, a1 * w2
    R[2, 0], R[2, 1], R[2, 2] = a2 * w0, a2 * w1, a2 * w2
    R[0, 1] -= alpha_v * w2
    R[1, 0] += alpha_v * w2
    R[0, 2] += alpha_v * w1
    R[2, 0] -= alpha_v * w1
    R[1, 2] -= alpha_v * w0
    R[2, 1] += alpha_v * w0
    R[0, 0] += diagonal
    R[1, 1] += diagonal
    R[2, 2] += diagonal
