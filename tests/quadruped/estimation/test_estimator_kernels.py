"""The compiled filter's shortcuts give the numbers of the plain code they replace, bit for
bit: the sparse predict and update those of the dense kernels they replaced (kept below as
the reference), the compiled foot kinematics Pinocchio's, the IMU's block draws the
generator's one sample at a time, and one fused call per cycle the calls in turn."""

import math

import numpy as np
import pinocchio as pin
import pytest
from numba import njit

from clamber.quadruped.estimation import ekf_kernels as kernels
from clamber.quadruped.estimation.ekf_kernels import exp3
from clamber.quadruped.estimation.estimator import LegOdometryEkf, SimulatedImu, leg_chains
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.sim.world import ModelMismatch

_G_Z = -9.81

# ---- the dense kernels the sparse ones replaced (every product over all 15 columns) -------


@njit
def _dense_matmul(a, b):
    n, k = a.shape
    m = b.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for p in range(k):
            aip = a[i, p]
            for j in range(m):
                out[i, j] += aip * b[p, j]
    return out


@njit
def _dense_sandwich(a, p):
    """``a @ p @ a.T``."""
    ap = _dense_matmul(a, p)
    n, k = ap.shape
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for q in range(k):
                s += ap[i, q] * a[j, q]
            out[i, j] = s
    return out


@njit
def dense_predict(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
            b_g: np.ndarray, specific_force: np.ndarray, rate: np.ndarray, dt: float,
            q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The strapdown step and ``F P F^T + diag(q)`` with a dense ``F``."""
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
    R_new = _dense_matmul(R, Rw)
    P_new = _dense_sandwich(F, P)
    for i in range(15):
        P_new[i, i] += q[i]
    return P_new, R_new, w


@njit
def dense_update(P: np.ndarray, p: np.ndarray, v: np.ndarray, R: np.ndarray, b_a: np.ndarray,
           b_g: np.ndarray, rate: np.ndarray, feet: np.ndarray, prev: np.ndarray,
           idx: np.ndarray, anchors: np.ndarray, use_v: bool, dt: float, foot_var: float,
           velocity_var: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """The leg-odometry correction with a dense ``H``."""
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
    R_new = _dense_matmul(R, exp3(dx[6:9]))
    KH = _dense_matmul(K, H)
    for i in range(15):
        KH[i, i] -= 1.0
    P_new = _dense_sandwich(KH, P)
    for i in range(15):
        for j in range(15):
            s_ = 0.0
            for k in range(m):
                s_ += K[i, k] * noise[k] * K[j, k]
            P_new[i, j] += s_
    return P_new, R_new, True


# ---- random inputs -------------------------------------------------------------------------


def _covariance(rng, scale):
    """A random covariance (15, 15), now and then off symmetric at round-off (as the
    filter's is)."""
    A = rng.standard_normal((15, 15)) * scale * rng.uniform(0.1, 10.0, 15)
    P = A @ A.T + np.eye(15) * scale**2 * 1e-3
    return P + rng.standard_normal((15, 15)) * scale**2 * 1e-13 if rng.uniform() < 0.3 else P


def _rotation(rng):
    R = pin.exp3(rng.standard_normal(3) * rng.choice([1e-9, 1e-3, 1.0, 3.0]))
    return R + rng.standard_normal((3, 3)) * 1e-12 if rng.uniform() < 0.3 else R


def _filter_state(rng):
    """Covariance, position, velocity, attitude and biases of a random filter."""
    return [_covariance(rng, 10.0 ** rng.uniform(-4, 0)), rng.standard_normal(3),
            rng.standard_normal(3) * 0.1, _rotation(rng), rng.standard_normal(3) * 0.05,
            rng.standard_normal(3) * 0.005]


def _same(a, b):
    """Equal bit for bit (signs of zeros included)."""
    return np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


# ---- the sparse products -------------------------------------------------------------------


def test_sparse_predict_equals_the_dense_one_bit_for_bit():
    """On random covariances, attitudes, biases, IMU readings and steps the predict that
    skips the transition's structural zeros gives the dense kernel's covariance, attitude,
    rate, position and velocity exactly."""
    rng = np.random.default_rng(20)
    for _ in range(400):
        state = _filter_state(rng)
        f = rng.standard_normal(3) * rng.uniform(0, 20) + [0.0, 0.0, 9.81]
        w = rng.standard_normal(3) * rng.choice([0.0, 1e-4, 0.1, 3.0])
        dt = float(rng.choice([0.004, 0.02, 0.1]))
        q = rng.uniform(0, 1e-6, 15)
        fast, dense = ([x.copy() for x in state] for _ in range(2))
        got = kernels.predict(*fast, f, w, dt, q)
        want = dense_predict(*dense, f, w, dt, q)
        assert all(_same(a, b) for a, b in zip([*got, *fast], [*want, *dense], strict=True))


@pytest.mark.parametrize("use_v", [True, False])
def test_sparse_update_equals_the_dense_one_bit_for_bit(use_v):
    """On random filters, one to four anchored feet (any of them), foot positions and
    anchors, with and without the velocity rows, the update that skips the measurement
    rows' structural zeros and solves for every gain column at once gives the dense
    kernel's covariance, attitude, position, velocity and biases exactly."""
    rng = np.random.default_rng(21 + use_v)
    for _ in range(400):
        state = _filter_state(rng)
        n = int(rng.integers(1, 5))
        idx = np.sort(rng.choice(4, n, replace=False))
        feet = rng.standard_normal((4, 3)) * 0.2
        prev = feet + rng.standard_normal((4, 3)) * rng.choice([0.0, 1e-4, 1e-2])
        anchors = state[1] + rng.standard_normal((n, 3)) * 0.2
        rate = rng.standard_normal(3) * 0.1
        noise = (float(rng.choice([1e-8, 1.6e-5, 1e-2])), float(rng.choice([1e-4, 2.5e-3])))
        fast, dense = ([x.copy() for x in state] for _ in range(2))
        P, R, ok = kernels.update(*fast, rate, feet, prev, idx, anchors, use_v, 0.02, *noise)
        P_d, R_d, ok_d = dense_update(*dense, rate, feet, prev, idx, anchors, use_v, 0.02,
                                      *noise)
        assert ok and ok_d
        assert all(_same(a, b) for a, b in zip([P, R, *fast], [P_d, R_d, *dense], strict=True))


def test_update_refuses_an_indefinite_innovation_as_the_dense_one_does():
    """A covariance that makes the innovation covariance indefinite is refused by both
    kernels, which leave the filter as it was."""
    rng = np.random.default_rng(23)
    state = _filter_state(rng)
    state[0] = -np.eye(15)
    args = (np.zeros(3), np.zeros((4, 3)), np.zeros((4, 3)), np.arange(4), np.ones((4, 3)),
            True, 0.02, 1e-6, 1e-4)
    kept = [x.copy() for x in state]
    assert not kernels.update(*state, *args)[2] and not dense_update(*state, *args)[2]
    assert all(_same(a, b) for a, b in zip(state, kept, strict=True))


# ---- foot kinematics -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", [None, 0, 7])
def test_compiled_foot_positions_equal_pinocchio_bit_for_bit(seed):
    """For the nominal robot and perturbed ones (other link lengths and masses), at random
    joint angles (small, large, beyond a turn), the compiled chains give the foot positions
    of Pinocchio's ``framesForwardKinematics`` exactly."""
    robot = Marcbot() if seed is None else ModelMismatch(length=0.05).perturb(Marcbot(), seed)
    rm = RobotModel(robot)
    ekf = LegOdometryEkf(rm, np.zeros(3), np.eye(3))
    assert ekf._chains is not None
    rng = np.random.default_rng(24)
    for k in range(1500):
        q = rng.uniform(-4.0, 4.0, 20) * 10.0 ** rng.uniform(-8, 0, 20) if k % 2 else \
            rm.robot.default_joint_angles() + rng.normal(0, 0.3, 20)
        assert _same(ekf._foot_positions(q), ekf._pinocchio_foot_positions(q))


def test_compiled_foot_positions_equal_pinocchio_on_any_placements():
    """With every joint and foot frame placed at a random rotation and offset (no zero
    terms left in the products, so every sum's order shows), the compiled chains still
    give Pinocchio's foot positions exactly."""
    rm = RobotModel()
    rng = np.random.default_rng(27)
    model = rm.model
    for j in range(2, model.njoints):
        model.jointPlacements[j] = pin.SE3(pin.exp3(rng.standard_normal(3)),
                                           rng.standard_normal(3) * 0.1)
    for foot in rm.foot_ids:
        frame = model.frames[foot]
        frame.placement = pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3))
        model.frames[foot] = frame
    rm.data = model.createData()
    ekf = LegOdometryEkf(rm, np.zeros(3), np.eye(3))
    assert ekf._chains is not None
    for _ in range(1500):
        q = rng.uniform(-4.0, 4.0, 20)
        assert _same(ekf._foot_positions(q), ekf._pinocchio_foot_positions(q))


def test_leg_chains_describe_the_model_joint_by_joint():
    """Each leg's chain starts at the body joint and ends at its foot frame, with axes z, y,
    y, y, z (the MARCBot leg)."""
    rotations, translations, axes = leg_chains(RobotModel())
    assert rotations.shape == (4, 7, 3, 3) and translations.shape == (4, 7, 3)
    assert axes.tolist() == [[2, 1, 1, 1, 2]] * 4
    assert np.array_equal(rotations[:, 0], np.tile(np.eye(3), (4, 1, 1)))
    assert np.allclose(translations[:, 6], [0.0, 0.0, -0.06])


# ---- IMU and the fused cycle ---------------------------------------------------------------


def _plain_measure(imu, scales, specific_force, rate):
    """The IMU sample in NumPy, one call to the generator per sample."""
    e = imu.rng.standard_normal(12)
    e *= scales
    imu.b_a += e[0:3]
    imu.b_g += e[3:6]
    f = specific_force + imu.b_a
    f += e[6:9]
    w = rate + imu.b_g
    w += e[9:12]
    return f, w


def test_imu_block_draws_give_the_one_sample_at_a_time_readings():
    """Over 300 samples (several blocks) the IMU's readings and biases equal those of the
    NumPy sample drawing 12 numbers per call, and at a block's end the generators agree."""
    rng = np.random.default_rng(25)
    imu, plain = SimulatedImu(seed=9), SimulatedImu(seed=9)
    scales = imu.draws(0.02)[1]
    imu._row -= 1  # that draw, again
    for k in range(300):
        f, w = rng.standard_normal(3) * 10, rng.standard_normal(3)
        got = imu.measure(f, w, 0.02)
        want = _plain_measure(plain, scales, f, w)
        assert all(_same(a, b) for a, b in zip(
            [*got, imu.b_a, imu.b_g], [*want, plain.b_a, plain.b_g], strict=True)), k
        if imu._row == len(imu._block):
            assert imu.rng.bit_generator.state == plain.rng.bit_generator.state


@pytest.mark.parametrize("chains", [True, False])
def test_fused_cycle_equals_predict_and_update_in_turn(chains):
    """Two filters and IMUs run 900 cycles of the same readings, joint angles and changing
    contacts (touchdowns, lift-offs, all feet, none, a list of them; now and then a cycle
    without prediction and velocity rows): one by ``step``, one by
    ``predict(*imu.measure())`` and ``update`` - the filters' states, anchors, last feet and
    IMU biases are equal bit for bit after every cycle, also with the foot positions from
    Pinocchio."""
    rm = RobotModel()
    rng = np.random.default_rng(26)
    q0 = rm.robot.default_joint_angles()
    R0 = pin.utils.rpyToMatrix(0.1, -0.2, 0.3)
    fused, plain = (LegOdometryEkf(rm, np.array([0.1, 0.2, 0.3]), R0) for _ in range(2))
    if not chains:
        fused._chains = None
    imu_f, imu_p = SimulatedImu(seed=4), SimulatedImu(seed=4)
    schedule = [LEG_NAMES, LEG_NAMES[1:], list(LEG_NAMES[1:]), (), LEG_NAMES[:2], LEG_NAMES]
    fast = 0
    for k in range(900):
        contacts = schedule[(k // 37) % len(schedule)]
        q = q0 + 0.02 * np.sin(0.05 * k + np.arange(20))
        f = np.array([0.0, 0.0, 9.81]) + rng.normal(0, 0.1, 3)
        w = rng.normal(0, 0.01, 3)
        dt = 0.0 if k % 50 == 7 else 0.02
        predicting = k > 0 and dt > 0
        fast += contacts == fused._contacts and fused._stacked is not None
        fused.step(imu_f if predicting else None, f, w, dt, q, contacts)
        if predicting:
            plain.predict(*imu_p.measure(f, w, dt), dt)
        plain.update(q, contacts, dt)
        for name in ("p", "v", "R", "b_a", "b_g", "P", "rate", "_prev_feet"):
            assert _same(getattr(fused, name), getattr(plain, name)), (k, name)
        assert _same(imu_f.b_a, imu_p.b_a) and _same(imu_f.b_g, imu_p.b_g)
        assert fused.anchors.keys() == plain.anchors.keys()
        assert all(_same(fused.anchors[g], plain.anchors[g]) for g in fused.anchors)
    assert fast > 500 and fused._updates == plain._updates > 500
