"""The leg-odometry EKF's control cycle compiled: IMU sample, predict, foot kinematics, update.

:class:`~clamber.quadruped.estimation.estimator.LegOdometryEkf` runs at 50 Hz on 15 x 15
covariances and at most 15 measurement rows. In NumPy one predict and one update are some 40
library calls, each spending microseconds in dispatch and array creation on a few hundred flops;
these kernels do the same algebra in one compiled call each, and :func:`cycle` a whole control
cycle in one. The formulas are those of
:func:`~clamber.quadruped.estimation.estimator.strapdown_step` and of the NumPy update (kept in
the tests as the reference): the same operations, summed in another order, so the results agree
with NumPy's to round-off (about 1e-15 relative), not bit for bit. The innovation covariance is
factored by Cholesky (it is symmetric positive definite: ``H P H^T`` plus positive noise)
instead of LU.

Sparsity, bit for bit. The transition ``F`` holds 45 nonzeros of 225 and each foot row of
``H`` five of 15, so the products skip the structural zeros: every sum still starts at
``+0.0`` and adds its nonzero terms in the dense product's order, and adding a product
``0 * x`` (``+-0`` for finite ``x``) to such a sum never changes it, so the results are
those of the dense products bit for bit (the tests keep the dense kernels as the
reference). The long sums (the triangular solves, ``K diag(noise) K^T``) run over all
their outputs at once, each output's terms in its own order, which the processor overlaps.

Foot kinematics, bit for bit. :func:`foot_positions` composes each leg's chain as
Pinocchio's forward kinematics does (``oMi = oMi[parent] * (placement * joint)``, the
revolute joint's product written as Pinocchio's ``TransformRevolute`` writes it, then the
foot frame), with the same sums in the same order (:func:`_se3_product`), so its positions
equal ``framesForwardKinematics``'s ``oMf`` translations bit for bit; a test holds this on
the robot and on random placements, where no zero term hides a sum's order.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel
from clamber.quadruped.blas_order import gemv_t3

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
def _transposed(a: np.ndarray) -> np.ndarray:
    """``a.T`` as a new C-contiguous array."""
    n, m = a.shape
    out = np.empty((m, n))
    for i in range(n):
        for j in range(m):
            out[j, i] = a[i, j]
    return out


@kernel
def imu_sample(draws: np.ndarray, scales: np.ndarray, b_a: np.ndarray, b_g: np.ndarray,
               specific_force: np.ndarray, rate: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """One IMU sample: the standard normal ``draws`` (12,) times their ``scales`` walk the
    biases ``b_a``, ``b_g`` (in place; first six draws) and add white noise (last six) to
    the true ``specific_force`` and ``rate``; returns the readings ``(f, w)``."""
    f = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        b_a[i] += draws[i] * scales[i]
        b_g[i] += draws[3 + i] * scales[3 + i]
        f[i] = (specific_force[i] + b_a[i]) + draws[6 + i] * scales[6 + i]
        w[i] = (rate[i] + b_g[i]) + draws[9 + i] * scales[9 + i]
    return f, w


@kernel
def _transition_rows(X: np.ndarray, A: np.ndarray, B: np.ndarray, Rw: np.ndarray, dt: float
                     ) -> np.ndarray:
    """``F X`` for the strapdown transition ``F`` (identity but for ``I dt`` at
    position-velocity, ``A`` and ``B`` at velocity-attitude and velocity-accelerometer bias,
    ``Rw^T`` and ``-I dt`` at attitude-attitude and attitude-gyro bias), each entry summed
    from ``+0.0`` over ``F``'s nonzeros in column order, as the dense product does."""
    n = X.shape[1]
    out = np.empty((15, n))
    for i in range(3):
        for j in range(n):
            out[i, j] = (0.0 + X[i, j]) + dt * X[3 + i, j]
        for j in range(n):
            s = 0.0 + X[3 + i, j]
            s += A[i, 0] * X[6, j]
            s += A[i, 1] * X[7, j]
            s += A[i, 2] * X[8, j]
            s += B[i, 0] * X[9, j]
            s += B[i, 1] * X[10, j]
            out[3 + i, j] = s + B[i, 2] * X[11, j]
        for j in range(n):
            out[6 + i, j] = (((0.0 + Rw[0, i] * X[6, j]) + Rw[1, i] * X[7, j])
                             + Rw[2, i] * X[8, j]) + (-dt) * X[12 + i, j]
    for i in range(9, 15):
        for j in range(n):
            out[i, j] = 0.0 + X[i, j]
    return out


@kernel
def predict(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
            b_g: np.ndarray, specific_force: np.ndarray, rate: np.ndarray, dt: float,
            q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Strapdown step over ``dt`` [s] and covariance propagation ``F P F^T + diag(q)``.

    Updates ``p`` and ``v`` in place; returns the new covariance, attitude and the
    bias-corrected rate [rad/s].
    """
    f = np.empty(3)
    w = np.empty(3)
    wdt = np.empty(3)
    for i in range(3):
        f[i] = specific_force[i] - b_a[i]
        w[i] = rate[i] - b_g[i]
        wdt[i] = w[i] * dt
    a = np.empty(3)
    for i in range(3):
        a[i] = R[i, 0] * f[0] + R[i, 1] * f[1] + R[i, 2] * f[2]
    a[2] += _G_Z
    for i in range(3):
        p[i] += v[i] * dt + 0.5 * a[i] * dt * dt
        v[i] += a[i] * dt
    Rw = exp3(wdt)
    # -R skew(f) dt and -R dt (velocity rows); the rest of F is in _transition_rows.
    S = np.zeros((3, 3))
    S[0, 1], S[0, 2], S[1, 2] = -f[2], f[1], -f[0]
    S[1, 0], S[2, 0], S[2, 1] = f[2], -f[1], f[0]
    A = np.empty((3, 3))
    B = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            A[i, j] = -(R[i, 0] * S[0, j] + R[i, 1] * S[1, j] + R[i, 2] * S[2, j]) * dt
            B[i, j] = -R[i, j] * dt
    R_new = _matmul(R, Rw)
    # F P F^T: its rows F (F P); its entry (i, j) sums (F P)[i, k] F[j, k] over k, which is
    # row j of F applied to row i of F P: the transpose of F (F P)^T.
    FP = _transition_rows(P, A, B, Rw, dt)
    P_new = _transposed(_transition_rows(_transposed(FP), A, B, Rw, dt))
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
    N = P.shape[0]  # 15 (a bound the compiler does not unroll)
    m = 3 * n + 3 if use_v else 3 * n
    # H's nonzeros by row, in column order: cols[j, :count[j]], vals[j, :count[j]].
    cols = np.zeros((m, 5), dtype=np.int64)
    vals = np.zeros((m, 5))
    count = np.empty(m, dtype=np.int64)
    r = np.empty(m)
    noise = np.empty(m)
    for i in range(m):
        noise[i] = foot_var
    d = np.empty(3)
    for i in range(n):
        for c in range(3):
            d[c] = ((anchors[i, 0] - p[0]) * R[0, c] + (anchors[i, 1] - p[1]) * R[1, c]
                    + (anchors[i, 2] - p[2]) * R[2, c])
        row = 3 * i
        for a in range(3):
            for c in range(3):
                cols[row + a, c] = c
                vals[row + a, c] = -R[c, a]
            count[row + a] = 5
            r[row + a] = feet[idx[i], a] - d[a]
        cols[row, 3], vals[row, 3], cols[row, 4], vals[row, 4] = 7, -d[2], 8, d[1]
        cols[row + 1, 3], vals[row + 1, 3], cols[row + 1, 4], vals[row + 1, 4] = 6, d[2], 8, -d[0]
        cols[row + 2, 3], vals[row + 2, 3], cols[row + 2, 4], vals[row + 2, 4] = 6, -d[1], 7, d[0]
    if use_v:
        zm = np.zeros(3)
        pm = np.zeros(3)
        for i in range(n):
            for c in range(3):
                zm[c] += feet[idx[i], c]
                pm[c] += prev[idx[i], c]
        s = np.empty(3)
        for c in range(3):
            zm[c] /= n
            pm[c] /= n
        for c in range(3):
            s[c] = (zm[c] - pm[c]) / dt
        s[0] += rate[1] * zm[2] - rate[2] * zm[1]
        s[1] += rate[2] * zm[0] - rate[0] * zm[2]
        s[2] += rate[0] * zm[1] - rate[1] * zm[0]
        for c in range(3):
            row = 3 * n + c
            cols[row, 0], vals[row, 0], count[row] = 3 + c, 1.0, 1
            noise[row] = velocity_var / n
            r[row] = -(s[0] * R[c, 0] + s[1] * R[c, 1] + s[2] * R[c, 2]) - v[c]
    # HPt = (P H^T)^T (m, N): row j sums P[:, k] H[j, k] over row j's nonzeros.
    Pt = _transposed(P)
    HPt = np.zeros((m, N))
    for j in range(m):
        for e in range(count[j]):
            h = vals[j, e]
            Pk = Pt[cols[j, e]]
            for i in range(N):
                HPt[j, i] += Pk[i] * h
    # Innovation covariance S = H P H^T + diag(noise), lower triangle.
    L = np.empty((m, m))
    for i in range(m):
        for j in range(i + 1):
            s_ = 0.0
            for e in range(count[i]):
                s_ += vals[i, e] * HPt[j, cols[i, e]]
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
    # K^T = S^-1 (P H^T)^T, every column of K at once (Kt[i, c] = K[c, i]).
    Kt = HPt  # solved in place
    for i in range(m):
        for k in range(i):
            lik = L[i, k]
            for c in range(N):
                Kt[i, c] -= lik * Kt[k, c]
        lii = L[i, i]
        for c in range(N):
            Kt[i, c] /= lii
    for i in range(m - 1, -1, -1):
        for k in range(i + 1, m):
            lki = L[k, i]
            for c in range(N):
                Kt[i, c] -= lki * Kt[k, c]
        lii = L[i, i]
        for c in range(N):
            Kt[i, c] /= lii
    dx = np.zeros(N)
    for j in range(m):
        rj = r[j]
        for i in range(N):
            dx[i] += Kt[j, i] * rj
    for c in range(3):
        p[c] += dx[c]
        v[c] += dx[3 + c]
        b_a[c] += dx[9 + c]
        b_g[c] += dx[12 + c]
    R_new = _matmul(R, exp3(np.array([dx[6], dx[7], dx[8]])))
    # KH = K H - I: H has no nonzeros in columns 9-14, so there KH is -I.
    KH = np.zeros((N, N))
    for j in range(m):
        for e in range(count[j]):
            c = cols[j, e]
            h = vals[j, e]
            for i in range(N):
                KH[i, c] += Kt[j, i] * h
    for i in range(N):
        KH[i, i] -= 1.0
    # KH P KH^T: (KH P)[i] sums KH[i, k] P[k] over k in 0-8 and k = i from 9 on; entry
    # (i, j) of the sandwich sums (KH P)[i, k] KH[j, k] over the same k for row j.
    KHP = np.zeros((N, N))
    for i in range(N):
        for k in range(9):
            h = KH[i, k]
            for j in range(N):
                KHP[i, j] += h * P[k, j]
        if i >= 9:
            for j in range(N):
                KHP[i, j] += KH[i, i] * P[i, j]
    KHPt = _transposed(KHP)
    Pn = np.zeros((N, N))  # transposed sandwich: Pn[j, i]
    for j in range(N):
        for k in range(9):
            h = KH[j, k]
            for i in range(N):
                Pn[j, i] += KHPt[k, i] * h
        if j >= 9:
            for i in range(N):
                Pn[j, i] += KHPt[j, i] * KH[j, j]
    P_new = _transposed(Pn)
    # + K diag(noise) K^T, entry (i, j) summed over the rows in order.
    acc = np.empty(N)
    for i in range(N):
        for j in range(N):
            acc[j] = 0.0
        for k in range(m):
            kn = Kt[k, i] * noise[k]
            for j in range(N):
                acc[j] += kn * Kt[k, j]
        for j in range(N):
            P_new[i, j] += acc[j]
    return P_new, R_new, True


@kernel
def _se3_product(Ra: np.ndarray, ta: np.ndarray, Rb: np.ndarray, tb: np.ndarray,
                 Ro: np.ndarray, to: np.ndarray) -> None:
    """``(Ro, to) = (Ra, ta) * (Rb, tb)``, summed as Pinocchio's ``SE3 * SE3`` sums: rows 0
    and 1 of each product in column order, row 2 its last two terms first (Eigen's
    vectorized 3 x 3 products; the tests hold Pinocchio to this on random placements)."""
    for i in range(2):
        for j in range(3):
            Ro[i, j] = Ra[i, 0] * Rb[0, j] + Ra[i, 1] * Rb[1, j] + Ra[i, 2] * Rb[2, j]
        to[i] = ta[i] + (Ra[i, 0] * tb[0] + Ra[i, 1] * tb[1] + Ra[i, 2] * tb[2])
    for j in range(3):
        Ro[2, j] = (Ra[2, 1] * Rb[1, j] + Ra[2, 2] * Rb[2, j]) + Ra[2, 0] * Rb[0, j]
    to[2] = ta[2] + ((Ra[2, 1] * tb[1] + Ra[2, 2] * tb[2]) + Ra[2, 0] * tb[0])


@kernel
def _copy_pose(R: np.ndarray, t: np.ndarray, R_to: np.ndarray, t_to: np.ndarray) -> None:
    for i in range(3):
        for j in range(3):
            R_to[i, j] = R[i, j]
        t_to[i] = t[i]


@kernel
def foot_positions(q_joints: np.ndarray, rotations: np.ndarray, translations: np.ndarray,
                   axes: np.ndarray) -> np.ndarray:
    """Foot positions (4, 3) [m] of the legs' revolute chains at the joint angles
    ``q_joints`` (leg-major) [rad].

    ``rotations`` (4, 7, 3, 3) and ``translations`` (4, 7, 3): per leg the placement of the
    body joint in the world, its joints' placements in their parents and the foot frame's
    in the last joint; ``axes`` (4, 5): each joint's axis (0, 1, 2: x, y, z). A joint's
    transform is its placement times the rotation about its axis, written column by column
    as Pinocchio's ``TransformRevolute`` writes it (one column rotated, one kept, the third
    their cross product).
    """
    n_legs, n_joints = axes.shape
    out = np.empty((n_legs, 3))
    R = np.empty((3, 3))
    t = np.empty(3)
    M = np.empty((3, 3))
    Rn = np.empty((3, 3))
    for leg in range(n_legs):
        _copy_pose(rotations[leg, 0], translations[leg, 0], R, t)
        for k in range(n_joints):
            angle = q_joints[n_joints * leg + k]
            s = math.sin(angle)
            c = math.cos(angle)
            X = rotations[leg, 1 + k]
            axis = axes[leg, k]
            a, b = (axis + 1) % 3, (axis + 2) % 3  # the rotated columns: a to b
            for i in range(3):
                M[i, a] = c * X[i, a] + s * X[i, b]
                M[i, axis] = X[i, axis]
            # The third column is the cross product of the other two, in cyclic order.
            M[0, b] = M[1, axis] * M[2, a] - M[2, axis] * M[1, a]
            M[1, b] = M[2, axis] * M[0, a] - M[0, axis] * M[2, a]
            M[2, b] = M[0, axis] * M[1, a] - M[1, axis] * M[0, a]
            _se3_product(R, t, M, translations[leg, 1 + k], Rn, out[leg])
            _copy_pose(Rn, out[leg], R, t)
        _se3_product(R, t, rotations[leg, 1 + n_joints], translations[leg, 1 + n_joints], Rn,
                     out[leg])
    return out


@kernel
def cycle(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
          b_g: np.ndarray, rate: np.ndarray, process_noise: np.ndarray, dt: float,
          predicting: bool, draws: np.ndarray, scales: np.ndarray, imu_b_a: np.ndarray,
          imu_b_g: np.ndarray, specific_force: np.ndarray, true_rate: np.ndarray,
          q_joints: np.ndarray, rotations: np.ndarray, translations: np.ndarray,
          axes: np.ndarray, prev: np.ndarray,
          idx: np.ndarray, anchors: np.ndarray, use_v: bool, foot_var: float,
          velocity_var: float
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """One control cycle of the filter in one call: if ``predicting``, an IMU sample
    (:func:`imu_sample`) and :func:`predict` over ``dt``; then the foot positions
    (:func:`foot_positions`) and :func:`update` with the anchored legs ``idx`` (velocity
    rows from ``prev`` if ``use_v``), none if ``idx`` is empty. Returns the covariance,
    attitude, rate, foot positions and whether the update was made or skipped (if not, the
    covariance and attitude are the prediction's)."""
    if predicting:
        f, w = imu_sample(draws, scales, imu_b_a, imu_b_g, specific_force, true_rate)
        P, R, rate = predict(P, p, v, R, b_a, b_g, f, w, dt, process_noise)
    feet = foot_positions(q_joints, rotations, translations, axes)
    if idx.shape[0] == 0:
        return P, R, rate, feet, True
    P_new, R_new, ok = update(P, p, v, R, b_a, b_g, rate, feet, prev if use_v else feet, idx,
                              anchors, use_v, dt, foot_var, velocity_var)
    if not ok:
        return P, R, rate, feet, False
    return P_new, R_new, rate, feet, True


@kernel
def read_out(p: np.ndarray, R: np.ndarray, v: np.ndarray, rate: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The estimate's arrays for a state in one call: copies of ``p`` and ``R`` (C-ordered,
    as NumPy's ``copy``) and the twist ``(R^T v, rate)``, ``R^T v`` summed as NumPy's BLAS
    sums ``R.T @ v`` for a C-ordered ``R`` (:func:`~clamber.quadruped.blas_order.gemv_t3`;
    use it only there and where :func:`~clamber.quadruped.blas_order.same_as_numpy`)."""
    p_out = np.empty(3)
    R_out = np.empty((3, 3))
    twist = np.empty(6)
    for i in range(3):
        p_out[i] = p[i]
        twist[3 + i] = rate[i]
        for j in range(3):
            R_out[i, j] = R[i, j]
    gemv_t3(R, v, twist[:3])
    return p_out, R_out, twist
