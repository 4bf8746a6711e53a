"""The error-state EKF's steps, compiled: strapdown prediction, Kalman correction, leg kinematics.

Both filters (:mod:`.estimator`, :mod:`.contact_ekf`) share the body's error state
``[dp, dv, dtheta, db_a, db_g]`` (15; the attitude perturbed on the right,
``R = R_hat exp(dtheta)``), which the anchor filter extends by one 3-D anchor per foot. The
filters run at the control rate on 15 x 15 and 27 x 27 covariances, where NumPy spends
more time dispatching its calls than computing; each step here is one compiled call (numba,
cached on disk), written as the linear algebra it is.
"""

from __future__ import annotations

import math

import numpy as np

from clamber.compiled import kernel

#: The error state's blocks: body position [m], velocity [m/s], attitude [rad] and the
#: accelerometer [m/s^2] and gyro [rad/s] biases; the anchor filter's feet follow.
POSITION = slice(0, 3)
VELOCITY = slice(3, 6)
ATTITUDE = slice(6, 9)
ACCEL_BIAS = slice(9, 12)
GYRO_BIAS = slice(12, 15)
BIASES = slice(9, 15)
N_BODY = 15
#: World gravity along z [m/s^2].
GRAVITY_Z = -9.81


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
    """Rotation matrix ``exp([phi]x) = cos t I + sin t / t [phi]x + (1 - cos t) / t^2 phi
    phi^T`` with ``t = |phi|`` (Rodrigues; Taylor series below 1e-4 rad)."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if t2 < 1e-8:
        c, a, b = 1.0 - t2 / 2.0, 1.0 - t2 / 6.0, 0.5 - t2 / 24.0
    else:
        t = math.sqrt(t2)
        c, a, b = math.cos(t), math.sin(t) / t, (1.0 - math.cos(t)) / t2
    return _so3_series(phi, c, a, b)


@kernel
def right_jacobian(phi: np.ndarray) -> np.ndarray:
    """SO(3)'s right Jacobian, ``exp(phi + d) = exp(phi) exp(J_r(phi) d)`` to first order:
    ``J_r = sin t / t I - (1 - cos t) / t^2 [phi]x + (t - sin t) / t^3 phi phi^T``."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if t2 < 1e-8:
        c, a, b = 1.0 - t2 / 6.0, 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        t = math.sqrt(t2)
        c, a, b = math.sin(t) / t, (1.0 - math.cos(t)) / t2, (t - math.sin(t)) / (t2 * t)
    return _so3_series(phi, c, -a, b)


@kernel
def transition(R: np.ndarray, f: np.ndarray, w: np.ndarray, dt: float, n: int) -> np.ndarray:
    """The error-state transition (n, n) of :func:`predict` over ``dt`` [s], at attitude
    ``R`` with the bias-corrected specific force ``f`` [m/s^2] and rate ``w`` [rad/s]:
    the Jacobian of the discrete step, exact to first order in the errors. States past the
    body's (anchors) stay put."""
    F = np.eye(n)
    dv_dtheta = -(R @ skew(f)) * dt
    dv_dba = -R * dt
    F[POSITION, VELOCITY] = np.eye(3) * dt
    F[POSITION, ATTITUDE] = 0.5 * dt * dv_dtheta
    F[POSITION, ACCEL_BIAS] = 0.5 * dt * dv_dba
    F[VELOCITY, ATTITUDE] = dv_dtheta
    F[VELOCITY, ACCEL_BIAS] = dv_dba
    F[ATTITUDE, ATTITUDE] = exp3(w * dt).T
    F[ATTITUDE, GYRO_BIAS] = -right_jacobian(w * dt) * dt
    return F


@kernel
def predict(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
            b_g: np.ndarray, specific_force: np.ndarray, rate: np.ndarray, dt: float,
            process_noise: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One strapdown step over ``dt`` [s] from the IMU's ``specific_force`` [m/s^2] and
    ``rate`` [rad/s] in {B}, held over the step: ``p += v dt + a dt^2 / 2``, ``v += a dt``
    with ``a = R (f - b_a) + g``, ``R = R exp((w - b_g) dt)``; and the covariance
    ``F P F^T + diag(process_noise)``.

    Updates ``p`` and ``v`` in place; returns the covariance, the attitude and the
    bias-corrected rate [rad/s].
    """
    f = specific_force - b_a
    w = rate - b_g
    a = R @ f
    a[2] += GRAVITY_Z
    p += v * dt + 0.5 * dt * dt * a
    v += a * dt
    F = transition(R, f, w, dt, P.shape[0])
    P_new = F @ P @ F.T
    for i in range(P_new.shape[0]):
        P_new[i, i] += process_noise[i]
    step_rotation = np.ascontiguousarray(F[ATTITUDE, ATTITUDE].T)  # exp((w - b_g) dt)
    return P_new, R @ step_rotation, w


@kernel
def cholesky_solve(S: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``S^-1 B`` for a symmetric positive definite ``S`` (m, m) and ``B`` (m, k), by
    Cholesky's factor ``S = L L^T`` and two triangular substitutions. Raises
    :class:`numpy.linalg.LinAlgError` if ``S`` is not positive definite."""
    L = np.linalg.cholesky(S)
    m, k = B.shape
    X = B.copy()
    for i in range(m):  # L Y = B, top down
        for j in range(i):
            for c in range(k):
                X[i, c] -= L[i, j] * X[j, c]
        for c in range(k):
            X[i, c] /= L[i, i]
    for i in range(m - 1, -1, -1):  # L^T X = Y, bottom up
        for j in range(i + 1, m):
            for c in range(k):
                X[i, c] -= L[j, i] * X[j, c]
        for c in range(k):
            X[i, c] /= L[i, i]
    return X


@kernel
def correct(P: np.ndarray, H: np.ndarray, r: np.ndarray, noise: np.ndarray, p: np.ndarray,
            v: np.ndarray, R: np.ndarray, b_a: np.ndarray, b_g: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The Kalman correction for the innovation ``r`` (m,) of rows ``H`` (m, n) with white
    noise of variances ``noise`` (m,), applied to the body.

    Adds the error-state estimate ``dx`` to ``p``, ``v``, ``b_a`` and ``b_g`` in place and
    returns ``dx`` (n,) (the anchor filter applies its feet's blocks), the covariance in
    Joseph's form, ``(I - K H) P (I - K H)^T + K diag(noise) K^T`` (symmetric and positive
    semidefinite whatever the round-off), the attitude ``R exp(dx_attitude)`` and the
    normalised innovation squared ``r^T S^-1 r``. Raises
    :class:`numpy.linalg.LinAlgError` if the innovation covariance ``S`` is not positive
    definite (then nothing changed).
    """
    HP = H @ P
    S = HP @ H.T
    for i in range(S.shape[0]):
        S[i, i] += noise[i]
    # K^T = S^-1 H P (P and S symmetric), the innovation solved in the same call.
    rhs = np.empty((S.shape[0], P.shape[0] + 1))
    rhs[:, :-1] = HP
    rhs[:, -1] = r
    sol = cholesky_solve(S, rhs)
    K = np.ascontiguousarray(sol[:, :-1].T)
    dx = K @ r
    I_KH = np.eye(P.shape[0]) - K @ H
    P_new = I_KH @ P @ I_KH.T + (K * noise) @ K.T
    p += dx[POSITION]
    v += dx[VELOCITY]
    b_a += dx[ACCEL_BIAS]
    b_g += dx[GYRO_BIAS]
    return dx, P_new, R @ exp3(dx[ATTITUDE]), (r * sol[:, -1]).sum()


@kernel
def odometry_rows(p: np.ndarray, v: np.ndarray, R: np.ndarray, rate: np.ndarray,
                  feet: np.ndarray, prev: np.ndarray, legs: np.ndarray, anchors: np.ndarray,
                  use_v: bool, dt: float, foot_var: float, velocity_var: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leg odometry's measurement (:class:`.estimator.LegOdometryEkf`): rows ``H``
    (m, 15), innovation ``r`` (m,) and noise variances (m,).

    Three rows per anchored leg (``legs`` (n,), rows of ``feet`` (4, 3) [m], the kinematic
    foot positions in {B}, and of the world ``anchors`` (4, 3) [m]), variance ``foot_var``
    [m^2]; if ``use_v``, three rows of the body velocity from the feet's mean motion since
    ``prev`` (4, 3) [m], ``dt`` [s] ago, variance ``velocity_var / n`` [m^2/s^2].
    """
    n = legs.shape[0]
    m = 3 * n + 3 if use_v else 3 * n
    H = np.zeros((m, N_BODY))
    r = np.empty(m)
    noise = np.full(m, foot_var)
    Rt = np.ascontiguousarray(R.T)
    for k in range(n):
        rows = slice(3 * k, 3 * k + 3)
        d = Rt @ (anchors[legs[k]] - p)  # the anchor in {B}: where the foot should be
        H[rows, POSITION] = -Rt
        H[rows, ATTITUDE] = skew(d)
        r[rows] = feet[legs[k]] - d
    if use_v:
        z = np.zeros(3)
        dz = np.zeros(3)
        for k in range(n):
            z += feet[legs[k]] / n
            dz += (feet[legs[k]] - prev[legs[k]]) / (n * dt)
        rows = slice(3 * n, 3 * n + 3)
        H[rows, VELOCITY] = np.eye(3)
        r[rows] = -(R @ (dz + skew(rate) @ z)) - v
        noise[rows] = velocity_var / n
    return H, r, noise


@kernel
def odometry_update(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray,
                    b_a: np.ndarray, b_g: np.ndarray, rate: np.ndarray, feet: np.ndarray,
                    prev: np.ndarray, anchors: np.ndarray, anchored: np.ndarray,
                    contact: np.ndarray, use_v: bool, dt: float, foot_var: float,
                    velocity_var: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """One leg-odometry update: the feet in ``contact`` (4,) but not ``anchored`` (4,) get
    their world ``anchors`` (4, 3) [m] at the estimate (in place), and the feet anchored
    before correct the state (:func:`odometry_rows`, :func:`correct`). Returns the
    covariance, the attitude and whether a correction was made."""
    for i in np.flatnonzero(contact & ~anchored):
        anchors[i] = p + R @ feet[i]
    legs = np.flatnonzero(contact & anchored)
    if legs.shape[0] == 0:
        return P, R, False
    H, r, noise = odometry_rows(p, v, R, rate, feet, prev, legs, anchors, use_v, dt,
                                foot_var, velocity_var)
    _, P_new, R_new, _ = correct(P, H, r, noise, p, v, R, b_a, b_g)
    return P_new, R_new, True


@kernel
def odometry_cycle(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray,
                   b_a: np.ndarray, b_g: np.ndarray, rate: np.ndarray, predicting: bool,
                   specific_force: np.ndarray, imu_rate: np.ndarray, dt: float,
                   process_noise: np.ndarray, q_joints: np.ndarray, rotations: np.ndarray,
                   translations: np.ndarray, axes: np.ndarray, prev: np.ndarray,
                   anchors: np.ndarray, anchored: np.ndarray, contact: np.ndarray,
                   use_v: bool, foot_var: float, velocity_var: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """One control cycle of the leg odometry in one call: :func:`predict` (if
    ``predicting``), the feet (:func:`foot_positions`) and :func:`odometry_update`.
    Returns the covariance, attitude, bias-corrected rate, the feet and whether a
    correction was made."""
    if predicting:
        P, R, rate = predict(P, p, v, R, b_a, b_g, specific_force, imu_rate, dt,
                             process_noise)
    feet = foot_positions(q_joints, rotations, translations, axes)
    P, R, corrected = odometry_update(P, p, v, R, b_a, b_g, rate, feet,
                                      prev if use_v else feet, anchors, anchored, contact,
                                      use_v, dt, foot_var, velocity_var)
    return P, R, rate, feet, corrected


@kernel
def _compose(R: np.ndarray, t: np.ndarray, Rb: np.ndarray, tb: np.ndarray,
             R_out: np.ndarray, t_out: np.ndarray) -> None:
    """``(R_out, t_out) = (R, t) * (Rb, tb)``: ``R Rb`` and ``t + R tb`` (3 x 3 and 3)."""
    for i in range(3):
        t_out[i] = t[i] + R[i, 0] * tb[0] + R[i, 1] * tb[1] + R[i, 2] * tb[2]
        for j in range(3):
            R_out[i, j] = R[i, 0] * Rb[0, j] + R[i, 1] * Rb[1, j] + R[i, 2] * Rb[2, j]


@kernel
def foot_positions(q_joints: np.ndarray, rotations: np.ndarray, translations: np.ndarray,
                   axes: np.ndarray) -> np.ndarray:
    """Foot positions (4, 3) [m] in {B} of the legs' revolute chains at the joint angles
    ``q_joints`` (leg-major) [rad].

    ``rotations`` (4, k + 2, 3, 3) and ``translations`` (4, k + 2, 3): per leg the body
    joint's placement, each of its k joints' placements in their parents and the foot
    frame's in the last joint; ``axes`` (4, k): each joint's axis (0, 1, 2: x, y, z). Each
    joint's transform is its placement times the rotation about its axis, whose rotation
    matrix turns the placement's other two columns and keeps the axis's.
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
            _compose(R, t, M, translations[leg, 1 + k], R_next, t_next)
            R[:], t[:] = R_next, t_next
        _compose(R, t, rotations[leg, 1 + n_joints], translations[leg, 1 + n_joints], R_next,
                 out[leg])
    return out
