"""SE(3) products, ``log6`` and ``exp6`` on (rotation, translation) arrays, compiled.

A control cycle composes, inverts and takes the logarithm of a dozen rigid transforms (the
body PD law's pose error, the CLIK's per-leg errors); through Pinocchio's bindings each is a
Python call that builds an object and costs far more than its arithmetic, so these
functions (numba, cached on disk) do it inside the compiled per-cycle kernels. They follow
the textbook formulas (Lynch and Park, *Modern Robotics*, 2017, Sec. 3.2-3.3; the same
closed forms Pinocchio uses) and agree with Pinocchio's ``SE3`` algebra to round-off
(checked in the tests). Rotations are (3, 3) arrays, translations (3,).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel

#: Angle [rad] below which the closed forms' coefficients are taken from their Taylor series
#: (the closed forms cancel there; the series' first omitted terms are below 1e-15).
_SMALL = 1e-2


@kernel
def compose(R1: np.ndarray, p1: np.ndarray, R2: np.ndarray, p2: np.ndarray,
            R: np.ndarray, p: np.ndarray) -> None:
    """``M1 * M2`` into ``R``, ``p``: ``R1 R2`` and ``p1 + R1 p2``."""
    for i in range(3):
        for j in range(3):
            R[i, j] = R1[i, 0] * R2[0, j] + R1[i, 1] * R2[1, j] + R1[i, 2] * R2[2, j]
        p[i] = p1[i] + R1[i, 0] * p2[0] + R1[i, 1] * p2[1] + R1[i, 2] * p2[2]


@kernel
def act_inv(R1: np.ndarray, p1: np.ndarray, R2: np.ndarray, p2: np.ndarray,
            R: np.ndarray, p: np.ndarray) -> None:
    """``M1^-1 * M2`` into ``R``, ``p``: ``R1^T R2`` and ``R1^T (p2 - p1)``."""
    d0, d1, d2 = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    for i in range(3):
        for j in range(3):
            R[i, j] = R1[0, i] * R2[0, j] + R1[1, i] * R2[1, j] + R1[2, i] * R2[2, j]
        p[i] = R1[0, i] * d0 + R1[1, i] * d1 + R1[2, i] * d2


@kernel
def inverse(R1: np.ndarray, p1: np.ndarray, R: np.ndarray, p: np.ndarray) -> None:
    """``M1^-1`` into ``R``, ``p``: ``R1^T`` and ``-R1^T p1``."""
    for i in range(3):
        for j in range(3):
            R[i, j] = R1[j, i]
        p[i] = -(R1[0, i] * p1[0] + R1[1, i] * p1[1] + R1[2, i] * p1[2])


@kernel
def log3(R: np.ndarray, w: np.ndarray) -> float:
    """The rotation vector ``w`` (3,) with ``exp3(w) = R``, ``|w|`` in [0, pi]; returns the
    angle. The angle is ``atan2`` of the skew part's norm and ``(tr R - 1) / 2`` (accurate at
    every angle); the axis comes from the skew part up to a quarter turn and from the
    symmetric part beyond (where the skew part vanishes near a half turn)."""
    s0 = 0.5 * (R[2, 1] - R[1, 2])
    s1 = 0.5 * (R[0, 2] - R[2, 0])
    s2 = 0.5 * (R[1, 0] - R[0, 1])
    sin_t = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    cos_t = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    theta = math.atan2(sin_t, cos_t)
    if cos_t >= 0.0:
        k = theta / sin_t if sin_t > 0.0 else 1.0
        w[0], w[1], w[2] = k * s0, k * s1, k * s2
        return theta
    # (R + R^T) / 2 - cos I = (1 - cos) a a^T: the axis from its largest diagonal entry.
    one_c = 1.0 - cos_t
    m = 0
    for i in range(1, 3):
        if R[i, i] > R[m, m]:
            m = i
    a = np.empty(3)
    a[m] = math.sqrt(max(0.0, (R[m, m] - cos_t) / one_c))
    for i in range(3):
        if i != m:
            a[i] = 0.5 * (R[i, m] + R[m, i]) / (one_c * a[m])
    sign = 1.0 if a[0] * s0 + a[1] * s1 + a[2] * s2 >= 0.0 else -1.0
    for i in range(3):
        w[i] = sign * theta * a[i]
    return theta


@kernel
def log6(R: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """``log6(SE3(R, p))`` into ``out`` (6,) as ``[v, w]``: ``w = log3(R)`` and
    ``v = V(w)^-1 p = alpha p - w x p / 2 + beta (w . p) w``."""
    w = out[3:]
    theta = log3(R, w)
    if theta < _SMALL:
        t2 = theta * theta
        alpha = 1.0 - t2 / 12.0 - t2 * t2 / 720.0
        beta = 1.0 / 12.0 + t2 / 720.0
    else:
        st, ct = math.sin(theta), math.cos(theta)
        alpha = theta * st / (2.0 * (1.0 - ct))
        beta = 1.0 / (theta * theta) - st / (2.0 * theta * (1.0 - ct))
    w0, w1, w2 = w[0], w[1], w[2]
    bd = beta * (w0 * p[0] + w1 * p[1] + w2 * p[2])
    out[0] = alpha * p[0] - 0.5 * (w1 * p[2] - w2 * p[1]) + bd * w0
    out[1] = alpha * p[1] - 0.5 * (w2 * p[0] - w0 * p[2]) + bd * w1
    out[2] = alpha * p[2] - 0.5 * (w0 * p[1] - w1 * p[0]) + bd * w2


@kernel
def exp6(nu: np.ndarray, R: np.ndarray, p: np.ndarray) -> None:
    """``exp6(nu)`` of a twist ``nu = [v, w]`` (6,) into ``R``, ``p`` (Rodrigues' formula,
    ``p = V(w) v``)."""
    v0, v1, v2, w0, w1, w2 = nu[0], nu[1], nu[2], nu[3], nu[4], nu[5]
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    theta = math.sqrt(t2)
    if theta < _SMALL:
        sinc = 1.0 - t2 / 6.0 + t2 * t2 / 120.0  # sin(t) / t
        cosc = 0.5 - t2 / 24.0 + t2 * t2 / 720.0  # (1 - cos(t)) / t^2
        sinc3 = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0  # (1 - sin(t) / t) / t^2
        cos_t = 1.0 - t2 / 2.0 + t2 * t2 / 24.0
    else:
        sinc = math.sin(theta) / theta
        cos_t = math.cos(theta)
        cosc = (1.0 - cos_t) / t2
        sinc3 = (1.0 - sinc) / t2
    wv = w0 * v0 + w1 * v1 + w2 * v2
    p[0] = sinc * v0 + sinc3 * wv * w0 + cosc * (w1 * v2 - w2 * v1)
    p[1] = sinc * v1 + sinc3 * wv * w1 + cosc * (w2 * v0 - w0 * v2)
    p[2] = sinc * v2 + sinc3 * wv * w2 + cosc * (w0 * v1 - w1 * v0)
    w = (w0, w1, w2)
    for i in range(3):
        for j in range(3):
            R[i, j] = cosc * w[i] * w[j]
        R[i, i] += cos_t
    R[0, 1] -= sinc * w2
    R[1, 0] += sinc * w2
    R[0, 2] += sinc * w1
    R[2, 0] -= sinc * w1
    R[1, 2] -= sinc * w0
    R[2, 1] += sinc * w0


@kernel
def action_matrix(R: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """The action matrix of ``SE3(R, p)`` on twists ``[v, w]`` into ``out`` (6, 6):
    ``[[R, [p]x R], [0, R]]``."""
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
    """Pinocchio's free-flyer configuration of ``SE3(R, p)`` into ``out[:7]``: the position
    and the unit quaternion ``(x, y, z, w)`` of ``R`` (Shepperd's method: from the largest
    of the trace and the diagonal entries, so no square root is of a small number)."""
    out[0], out[1], out[2] = p[0], p[1], p[2]
    t = R[0, 0] + R[1, 1] + R[2, 2]
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
def rotation_defect(R: np.ndarray) -> float:
    """How far ``R`` (3, 3) is from a rotation: the largest entry of ``|R^T R - I|``, or
    infinity if ``R`` has a non-finite entry or is a reflection (``det R < 0``)."""
    worst = 0.0
    for i in range(3):
        for j in range(3):
            x = R[0, i] * R[0, j] + R[1, i] * R[1, j] + R[2, i] * R[2, j] - (i == j)
            if not math.isfinite(x):
                return math.inf
            worst = max(worst, abs(x))
    det = (R[0, 0] * (R[1, 1] * R[2, 2] - R[1, 2] * R[2, 1])
           - R[0, 1] * (R[1, 0] * R[2, 2] - R[1, 2] * R[2, 0])
           + R[0, 2] * (R[1, 0] * R[2, 1] - R[1, 1] * R[2, 0]))
    return worst if det > 0.0 else math.inf


@kernel
def configuration(rotation: np.ndarray, translation: np.ndarray, joints: np.ndarray,
                  out: np.ndarray) -> None:
    """Pinocchio's configuration of a free-flying body and its joints into ``out``: the
    position, the quaternion ``(x, y, z, w)`` (:func:`xyz_quaternion`), the joint angles."""
    xyz_quaternion(rotation, translation, out)
    for k in range(joints.shape[0]):
        out[7 + k] = joints[k]
