"""The leg-odometry EKF's predict and update, each compiled into one call per control cycle.

:class:`~clamber.quadruped.estimator.LegOdometryEkf` runs at 50 Hz on 15 x 15 covariances and
at most 15 measurement rows. In NumPy one predict and one update are some 40 library calls,
each spending microseconds in dispatch and array creation on a few hundred flops; these
kernels do the same algebra in one compiled call each (numba, cached on disk). The formulas
are those of :func:`~clamber.quadruped.estimator.strapdown_step` and of the NumPy update
(kept in the tests as the reference): the same operations, summed in another order, so the
results agree to round-off (about 1e-15 relative), not bit for bit. The innovation
covariance is factored by Cholesky (it is symmetric positive definite: ``H P H^T`` plus
positive noise) instead of LU.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel

_G_Z = -9.81  # world gravity along z [m/s^2] (the estimator's GRAVITY_VECTOR)


@kernel
def exp3(v: np.ndarray) -> np.ndarray:
    """Rotation matrix ``exp(skew(v))`` (Rodrigues; Taylor series below 1e-4 rad)."""
    t2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    if t2 < 1e-8:
        c = 1.0 - t2 / 2.0 + t2 * t2 / 24.0
        a = 1.0 - t2 / 6.0 + t2 * t2 / 120.0
        b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
    else:
        t = math.sqrt(t2)
        c = math.cos(t)
        a = math.sin(t) / t
        b = (1.0 - c) / t2
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = b * v[i] * v[j]
        out[i, i] += c
    out[0, 1] -= a * v[2]
    out[0, 2] += a * v[1]
    out[1, 0] += a * v[2]
    out[1, 2] -= a * v[0]
    out[2, 0] -= a * v[1]
    out[2, 1] += a * v[0]
    return out


@kernel
def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n, k = a.shape
    m = b.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for p in range(k):
            aip = a[i, p]
            for j in range(m):
                out[i, j] += aip * b[p, j]
    return out


@kernel
def _sandwich(a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``a @ p @ a.T``."""
    ap = _matmul(a, p)
    n, k = ap.shape
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for q in range(k):
                s += ap[i, q] * a[j, q]
            out[i, j] = s
    return out


@kernel
def predict(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
            b_g: np.ndarray, specific_force: np.ndarray, rate: np.ndarray, dt: float,
            q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strapdown step over ``dt`` [s] and covariance propagation ``F P F^T + diag(q)``.

    Updates ``p`` and ``v`` in place; returns the new covariance, attitude and the
    bias-corrected rate [rad/s].
    """
    f = specific_force - b_a
    w = rate - b_g
    a = np.empty(3)
    for i in range(3):
        a[i] = R[i, 0] * f[0] + R[i, 1] * f[1] + R[i, 2] * f[2]
    a[2] += _G_Z
    for i in range(3):
        p[i] += v[i] * dt + 0.5 * a[i] * dt * dt
        v[i] += a[i] * dt
    Rw = exp3(w * dt)
    F = np.eye(15)
    # -R skew(f) dt and -R dt (velocity rows), I dt (position), Rw^T and -I dt (attitude).
    S = np.zeros((3, 3))
    S[0, 1], S[0, 2], S[1, 2] = -f[2], f[1], -f[0]
    S[1, 0], S[2, 0], S[2, 1] = f[2], -f[1], f[0]
    for i in range(3):
        F[i, 3 + i] = dt
        F[6 + i, 12 + i] = -dt
        for j in range(3):
            F[3 + i, 6 + j] = -(R[i, 0] * S[0, j] + R[i, 1] * S[1, j] + R[i, 2] * S[2, j]) * dt
            F[3 + i, 9 + j] = -R[i, j] * dt
            F[6 + i, 6 + j] = Rw[j, i]
    R_new = _matmul(R, Rw)
    P_new = _sandwich(F, P)
    for i in range(15):
        P_new[i, i] += q[i]
    return P_new, R_new, w


@kernel
def update(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
           b_g: np.ndarray, rate: np.ndarray, feet: np.ndarray, prev: np.ndarray,
           idx: np.ndarray, anchors: np.ndarray, use_v: bool, dt: float, foot_var: float,
           velocity_var: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """One leg-odometry correction (see the estimator's module docstring).

    ``feet`` and ``prev`` (4, 3) [m]: kinematic foot positions in {B} now and at the last
    update; ``idx`` (n,) the anchored legs' rows, ``anchors`` (n, 3) [m] their world
    anchors; velocity rows when ``use_v`` (noise variance ``velocity_var / n``). Updates
    ``p``, ``v``, ``b_a`` and ``b_g`` in place; returns the new covariance, attitude and
    whether the innovation covariance was positive definite (if not, nothing changed).
    """
    n = idx.shape[0]
    m = 3 * n + 3 if use_v else 3 * n
    H = np.zeros((m, 15))
    r = np.empty(m)
    noise = np.full(m, foot_var)
    for i in range(n):
        d = np.empty(3)
        for c in range(3):
            d[c] = ((anchors[i, 0] - p[0]) * R[0, c] + (anchors[i, 1] - p[1]) * R[1, c]
                    + (anchors[i, 2] - p[2]) * R[2, c])
        row = 3 * i
        for a in range(3):
            for c in range(3):
                H[row + a, c] = -R[c, a]
            r[row + a] = feet[idx[i], a] - d[a]
        H[row, 7], H[row, 8] = -d[2], d[1]
        H[row + 1, 6], H[row + 1, 8] = d[2], -d[0]
        H[row + 2, 6], H[row + 2, 7] = -d[1], d[0]
    if use_v:
        zm = np.zeros(3)
        pm = np.zeros(3)
        for i in range(n):
            for c in range(3):
                zm[c] += feet[idx[i], c]
                pm[c] += prev[idx[i], c]
        zm /= n
        pm /= n
        s = np.empty(3)
        for c in range(3):
            s[c] = (zm[c] - pm[c]) / dt
        s[0] += rate[1] * zm[2] - rate[2] * zm[1]
        s[1] += rate[2] * zm[0] - rate[0] * zm[2]
        s[2] += rate[0] * zm[1] - rate[1] * zm[0]
        for c in range(3):
            row = 3 * n + c
            H[row, 3 + c] = 1.0
            noise[row] = velocity_var / n
            r[row] = -(s[0] * R[c, 0] + s[1] * R[c, 1] + s[2] * R[c, 2]) - v[c]
    # PHt (15, m), innovation covariance S = H P H^T + diag(noise) (m, m).
    PHt = np.empty((15, m))
    for i in range(15):
        for j in range(m):
            s_ = 0.0
            for k in range(15):
                s_ += P[i, k] * H[j, k]
            PHt[i, j] = s_
    L = np.empty((m, m))
    for i in range(m):
        for j in range(i + 1):
            s_ = 0.0
            for k in range(15):
                s_ += H[i, k] * PHt[k, j]
            L[i, j] = s_
        L[i, i] += noise[i]
    # Cholesky in place (lower triangle).
    for j in range(m):
        s_ = L[j, j]
        for k in range(j):
            s_ -= L[j, k] * L[j, k]
        if not s_ > 0.0:
            return P, R, False
        ljj = math.sqrt(s_)
        L[j, j] = ljj
        for i in range(j + 1, m):
            s_ = L[i, j]
            for k in range(j):
                s_ -= L[i, k] * L[j, k]
            L[i, j] = s_ / ljj
    # K^T = S^-1 PHt^T, column by column of PHt^T (rows of PHt).
    K = np.empty((15, m))
    y = np.empty(m)
    for c in range(15):
        for i in range(m):
            s_ = PHt[c, i]
            for k in range(i):
                s_ -= L[i, k] * y[k]
            y[i] = s_ / L[i, i]
        for i in range(m - 1, -1, -1):
            s_ = y[i]
            for k in range(i + 1, m):
                s_ -= L[k, i] * K[c, k]
            K[c, i] = s_ / L[i, i]
    dx = np.zeros(15)
    for i in range(15):
        for j in range(m):
            dx[i] += K[i, j] * r[j]
    for c in range(3):
        p[c] += dx[c]
        v[c] += dx[3 + c]
        b_a[c] += dx[9 + c]
        b_g[c] += dx[12 + c]
    R_new = _matmul(R, exp3(dx[6:9]))
    KH = _matmul(K, H)
    for i in range(15):
        KH[i, i] -= 1.0
    P_new = _sandwich(KH, P)
    for i in range(15):
        for j in range(15):
            s_ = 0.0
            for k in range(m):
                s_ += K[i, k] * noise[k] * K[j, k]
            P_new[i, j] += s_
    return P_new, R_new, True
