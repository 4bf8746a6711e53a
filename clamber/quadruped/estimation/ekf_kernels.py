"""The error-state EKF's steps, compiled: strapdown prediction, Kalman correction, leg kinematics.

Both filters share the body's error state ``[dp, dv, dtheta, db_a, db_g]`` (15; attitude
perturbed on the right, ``R = R_hat exp(dtheta)``); the anchor filter adds one 3-D anchor per
foot. On 15 x 15 and 27 x 27 covariances NumPy spends its time in dispatch, so each step is
one compiled call (numba, cached on disk).
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel
from clamber.quadruped.model.robot import GRAVITY
from clamber.quadruped.model.se3_kernels import compose

#: The error state's blocks: body position [m], velocity [m/s], attitude [rad] and the
#: accelerometer [m/s^2] and gyro [rad/s] biases; the anchor filter's feet follow.
POSITION = slice(0, 3)
VELOCITY = slice(3, 6)
ATTITUDE = slice(6, 9)
ACCEL_BIAS = slice(9, 12)
GYRO_BIAS = slice(12, 15)
BIASES = slice(9, 15)
#: Position, velocity and attitude: the blocks the leg odometry measures.
MOTION = slice(POSITION.start, ATTITUDE.stop)
N_BODY = 15


def foot_block(leg: int) -> slice:
    """The anchor filter's error-state block of foot ``leg`` (0-3, ``LEG_NAMES`` order)."""
    return slice(N_BODY + 3 * leg, N_BODY + 3 * leg + 3)


@kernel
def skew(x: np.ndarray) -> np.ndarray:
    """The cross-product matrix ``[x]x`` of a 3-vector (``[x]x y = x cross y``)."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


@kernel
def _so3_series(phi: np.ndarray, c: float, a: float, b: float) -> np.ndarray:
    """``c I + a [phi]x + b phi phi^T`` (3 x 3), the form of SO(3)'s exponential and
    Jacobians, written entry by entry (no temporaries)."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = b * phi[i] * phi[j]
        out[i, i] += c
    out[0, 1] -= a * phi[2]
    out[0, 2] += a * phi[1]
    out[1, 0] += a * phi[2]
    out[1, 2] -= a * phi[0]
    out[2, 0] -= a * phi[1]
    out[2, 1] += a * phi[0]
    return out


@kernel
def exp3(phi: np.ndarray) -> np.ndarray:
    """Rodrigues' ``exp([phi]x)`` (Taylor series below 1e-4 rad)."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if t2 < 1e-8:
        c, a, b = 1.0 - t2 / 2.0, 1.0 - t2 / 6.0, 0.5 - t2 / 24.0
    else:
        t = math.sqrt(t2)
        c, a, b = math.cos(t), math.sin(t) / t, (1.0 - math.cos(t)) / t2
    return _so3_series(phi, c, a, b)


@kernel
def right_jacobian(phi: np.ndarray) -> np.ndarray:
    """SO(3)'s right Jacobian: ``exp(phi + d) = exp(phi) exp(J_r(phi) d)`` to first order."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if t2 < 1e-8:
        c, a, b = 1.0 - t2 / 6.0, 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        t = math.sqrt(t2)
        c, a, b = math.sin(t) / t, (1.0 - math.cos(t)) / t2, (t - math.sin(t)) / (t2 * t)
    return _so3_series(phi, c, -a, b)


@kernel
def transition_blocks(R: np.ndarray, f: np.ndarray, w: np.ndarray, dt: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The blocks where :func:`predict`'s transition over ``dt`` [s] differs from the
    identity (first order, at attitude ``R``, bias-corrected specific force ``f`` [m/s^2]
    and rate ``w`` [rad/s]): velocity <- attitude ``-R [f]x dt``, velocity <- accelerometer
    bias ``-R dt``, attitude <- attitude ``exp(w dt)^T``, attitude <- gyro bias
    ``-J_r(w dt) dt``; position follows the step's mean velocity."""
    velocity_attitude = -(R @ skew(f)) * dt
    velocity_accel_bias = -R * dt
    attitude_attitude = np.ascontiguousarray(exp3(w * dt).T)
    attitude_gyro_bias = -right_jacobian(w * dt) * dt
    return velocity_attitude, velocity_accel_bias, attitude_attitude, attitude_gyro_bias


@kernel
def _add_product(out: np.ndarray, A: np.ndarray, X: np.ndarray) -> None:
    """``out += A X`` for a 3 x 3 ``A`` and block rows ``X`` (3, k) of a covariance."""
    for i in range(3):
        for c in range(X.shape[1]):
            out[i, c] += A[i, 0] * X[0, c] + A[i, 1] * X[1, c] + A[i, 2] * X[2, c]


@kernel
def transition_times(X: np.ndarray, dt: float,
                     blocks: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                     out: np.ndarray) -> None:
    """``out = F X`` (n, k) for the transition of :func:`transition_blocks`; ``out`` must
    not overlap ``X``."""
    velocity_attitude, velocity_accel_bias, attitude_attitude, attitude_gyro_bias = blocks
    out[:] = X
    _add_product(out[VELOCITY], velocity_attitude, X[ATTITUDE])
    _add_product(out[VELOCITY], velocity_accel_bias, X[ACCEL_BIAS])
    out[ATTITUDE] = 0.0
    _add_product(out[ATTITUDE], attitude_attitude, X[ATTITUDE])
    _add_product(out[ATTITUDE], attitude_gyro_bias, X[GYRO_BIAS])
    position, before, after = out[POSITION], X[VELOCITY], out[VELOCITY]
    for i in range(3):  # dp += (dv before + dv after) dt / 2
        for c in range(X.shape[1]):
            position[i, c] += 0.5 * dt * (before[i, c] + after[i, c])


@kernel
def _symmetrise(P: np.ndarray) -> None:
    """``P = (P + P^T) / 2`` in place."""
    for i in range(P.shape[0]):
        for j in range(i + 1, P.shape[0]):
            P[i, j] = P[j, i] = 0.5 * (P[i, j] + P[j, i])


@kernel
def predict(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
            b_g: np.ndarray, rate: np.ndarray, specific_force: np.ndarray,
            imu_rate: np.ndarray, dt: float, process_noise: np.ndarray,
            work: np.ndarray) -> None:
    """One strapdown step in place over ``dt`` [s] from the IMU's ``specific_force``
    [m/s^2] and ``imu_rate`` [rad/s] in {B}: ``a = R (f - b_a) + g``, ``p += v dt + a dt^2
    / 2``, ``v += a dt``, ``R = R exp((w - b_g) dt)``, ``P = F P F^T + diag(process_noise)``;
    ``rate`` gets the bias-corrected rate; ``work`` (n, n) is scratch."""
    f = specific_force - b_a
    w = imu_rate - b_g
    blocks = transition_blocks(R, f, w, dt)
    a = R @ f
    a[2] -= GRAVITY
    p += v * dt + 0.5 * dt * dt * a
    v += a * dt
    transition_times(P, dt, blocks, work)  # F P
    transition_times(work.T, dt, blocks, P)  # F (F P)^T = F P F^T
    for i in range(P.shape[0]):
        P[i, i] += process_noise[i]
    _symmetrise(P)
    R[:] = R @ np.ascontiguousarray(blocks[2].T)  # R exp(w dt)
    rate[:] = w


@kernel
def _forward_substitute(L: np.ndarray, B: np.ndarray) -> None:
    """``B = L^-1 B`` in place for a lower triangular ``L`` (m, m) and ``B`` (m, k)."""
    m, k = B.shape
    for i in range(m):
        for j in range(i):
            for c in range(k):
                B[i, c] -= L[i, j] * B[j, c]
        for c in range(k):
            B[i, c] /= L[i, i]


@kernel
def correct(P: np.ndarray, H: np.ndarray, r: np.ndarray, noise: np.ndarray, p: np.ndarray,
            v: np.ndarray, R: np.ndarray, b_a: np.ndarray, b_g: np.ndarray
            ) -> tuple[np.ndarray, float]:
    """The Kalman correction, in place, for the innovation ``r`` (m,) of rows ``H`` (m, k)
    over the first k error states (zero beyond) with noise variances ``noise`` (m,).

    With ``S = H P H^T + diag(noise) = L L^T``, ``W = L^-1 H P`` and ``w = L^-1 r``:
    ``P -= W^T W`` (symmetric by construction) and the state moves by ``dx = W^T w``.
    Returns ``dx`` (n,) and the normalised innovation squared ``w^T w``; raises
    :class:`numpy.linalg.LinAlgError` (nothing changed) if ``S`` is not positive definite.
    """
    n = P.shape[0]
    m, k = H.shape
    W = np.empty((m, n + 1))  # [H P | r], then [W | w]
    for a in range(m):
        for c in range(n):
            s = 0.0
            for j in range(k):
                s += H[a, j] * P[j, c]
            W[a, c] = s
        W[a, n] = r[a]
    S = np.empty((m, m))
    for a in range(m):
        for b in range(a + 1):
            s = 0.0
            for j in range(k):
                s += W[a, j] * H[b, j]
            S[a, b] = S[b, a] = s
        S[a, a] += noise[a]
    _forward_substitute(np.linalg.cholesky(S), W)
    dx = np.zeros(n)
    nis = 0.0
    for a in range(m):
        nis += W[a, n] * W[a, n]
        for i in range(n):
            dx[i] += W[a, i] * W[a, n]
    for i in range(n):  # the upper triangle, mirrored
        for j in range(i, n):
            s = 0.0
            for a in range(m):
                s += W[a, i] * W[a, j]
            P[i, j] -= s
            P[j, i] = P[i, j]
    p += dx[POSITION]
    v += dx[VELOCITY]
    b_a += dx[ACCEL_BIAS]
    b_g += dx[GYRO_BIAS]
    R[:] = R @ exp3(dx[ATTITUDE])
    return dx, nis


@kernel
def odometry_rows(p: np.ndarray, v: np.ndarray, R: np.ndarray, rate: np.ndarray,
                  feet: np.ndarray, prev: np.ndarray, legs: np.ndarray, anchors: np.ndarray,
                  use_v: bool, dt: float, foot_var: float, velocity_var: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leg odometry's rows ``H`` (m, 9) over :data:`MOTION`, innovation ``r`` (m,) and
    noise variances (m,): three rows per anchored leg in ``legs`` (kinematic ``feet`` (4, 3)
    in {B} against the world ``anchors`` (4, 3) [m]; ``foot_var`` [m^2]); if ``use_v``,
    three of the body velocity from the feet's mean motion since ``prev`` (4, 3), ``dt`` [s]
    ago (``velocity_var / n`` [m^2/s^2]).
    """
    n = legs.shape[0]
    m = 3 * n + 3 if use_v else 3 * n
    H = np.zeros((m, MOTION.stop))
    r = np.empty(m)
    noise = np.full(m, foot_var)
    d = np.empty(3)
    for k in range(n):
        leg, row = legs[k], 3 * k
        for i in range(3):  # the anchor in {B}, R^T (a - p): where the foot should be
            d[i] = (R[0, i] * (anchors[leg, 0] - p[0]) + R[1, i] * (anchors[leg, 1] - p[1])
                    + R[2, i] * (anchors[leg, 2] - p[2]))
        for i in range(3):
            for j in range(3):
                H[row + i, POSITION.start + j] = -R[j, i]
            r[row + i] = feet[leg, i] - d[i]
        H[row:row + 3, ATTITUDE] = skew(d)
    if use_v:
        z = np.zeros(3)  # the feet's mean position and velocity in {B}
        dz = np.zeros(3)
        for k in range(n):
            for i in range(3):
                z[i] += feet[legs[k], i] / n
                dz[i] += (feet[legs[k], i] - prev[legs[k], i]) / (n * dt)
        u = dz + np.cross(rate, z)
        row = 3 * n
        for i in range(3):
            H[row + i, VELOCITY.start + i] = 1.0
            r[row + i] = -(R[i, 0] * u[0] + R[i, 1] * u[1] + R[i, 2] * u[2]) - v[i]
            noise[row + i] = velocity_var / n
    return H, r, noise


@kernel
def odometry_update(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray,
                    b_a: np.ndarray, b_g: np.ndarray, rate: np.ndarray, feet: np.ndarray,
                    prev: np.ndarray, anchors: np.ndarray, anchored: np.ndarray,
                    contact: np.ndarray, use_v: bool, dt: float, foot_var: float,
                    velocity_var: float) -> bool:
    """One leg-odometry update in place: feet newly in ``contact`` (4,) are anchored at the
    estimate, those ``anchored`` before correct the state. Returns whether one did."""
    for i in np.flatnonzero(contact & ~anchored):
        anchors[i] = p + R @ feet[i]
    legs = np.flatnonzero(contact & anchored)
    if legs.shape[0] == 0:
        return False
    H, r, noise = odometry_rows(p, v, R, rate, feet, prev, legs, anchors, use_v, dt,
                                foot_var, velocity_var)
    correct(P, H, r, noise, p, v, R, b_a, b_g)
    return True


@kernel
def odometry_cycle(P: np.ndarray, work: np.ndarray, p: np.ndarray, v: np.ndarray,
                   R: np.ndarray, b_a: np.ndarray, b_g: np.ndarray, rate: np.ndarray,
                   predicting: bool, specific_force: np.ndarray, imu_rate: np.ndarray,
                   dt: float, process_noise: np.ndarray, q_joints: np.ndarray,
                   rotations: np.ndarray, translations: np.ndarray, axes: np.ndarray,
                   prev: np.ndarray, anchors: np.ndarray, anchored: np.ndarray,
                   contact: np.ndarray, use_v: bool, foot_var: float, velocity_var: float
                   ) -> tuple[np.ndarray, bool]:
    """:func:`predict` (if ``predicting``), :func:`foot_positions` and
    :func:`odometry_update` in one call (one dispatch instead of three); returns the feet
    and whether a correction was made."""
    if predicting:
        predict(P, p, v, R, b_a, b_g, rate, specific_force, imu_rate, dt, process_noise,
                work)
    feet = foot_positions(q_joints, rotations, translations, axes)
    corrected = odometry_update(P, p, v, R, b_a, b_g, rate, feet, prev if use_v else feet,
                                anchors, anchored, contact, use_v, dt, foot_var,
                                velocity_var)
    return feet, corrected


@kernel
def foot_positions(q_joints: np.ndarray, rotations: np.ndarray, translations: np.ndarray,
                   axes: np.ndarray) -> np.ndarray:
    """Foot positions (4, 3) [m] in {B} at the joint angles ``q_joints`` (leg-major) [rad].

    Per leg, ``rotations`` (4, k + 2, 3, 3) and ``translations`` (4, k + 2, 3) hold the body
    joint's placement, its k joints' placements in their parents and the foot frame's in the
    last joint; ``axes`` (4, k) each joint's axis (0, 1, 2: x, y, z).
    """
    n_legs, n_joints = axes.shape
    out = np.empty((n_legs, 3))
    R, t = np.empty((3, 3)), np.empty(3)  # the chain's pose so far
    R_next, t_next = np.empty((3, 3)), np.empty(3)
    M = np.empty((3, 3))  # a joint's placement rotation times its own rotation
    for leg in range(n_legs):
        R[:], t[:] = rotations[leg, 0], translations[leg, 0]
        for k in range(n_joints):
            angle = q_joints[n_joints * leg + k]
            c, s = math.cos(angle), math.sin(angle)
            X = rotations[leg, 1 + k]
            a = axes[leg, k]
            b, e = (a + 1) % 3, (a + 2) % 3  # the rotation turns column b towards e
            for i in range(3):
                M[i, a] = X[i, a]
                M[i, b] = c * X[i, b] + s * X[i, e]
                M[i, e] = c * X[i, e] - s * X[i, b]
            compose(R, t, M, translations[leg, 1 + k], R_next, t_next)
            R[:], t[:] = R_next, t_next
        compose(R, t, rotations[leg, 1 + n_joints], translations[leg, 1 + n_joints], R_next,
                out[leg])
    return out
