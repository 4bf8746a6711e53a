"""The EKF's steps against independent oracles: the strapdown equations integrated by SciPy,
finite differences of the prediction and of the measurements, the information form of the
Kalman update, Pinocchio's forward kinematics, and the IMU's noise statistics."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp

from clamber.exceptions import ConfigError
from clamber.quadruped.estimation import ekf_kernels as kernels
from clamber.quadruped.estimation.contact_ekf import N_ERROR, AnchorEkf
from clamber.quadruped.estimation.ekf_kernels import (
    ACCEL_BIAS,
    ATTITUDE,
    GYRO_BIAS,
    MOTION,
    POSITION,
    VELOCITY,
    foot_block,
)
from clamber.quadruped.estimation.estimator import (
    EkfSettings,
    ImuParameters,
    LegKinematics,
    LegOdometryEkf,
    SimulatedImu,
)
from clamber.quadruped.model.kinematics import body_configuration
from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.sim.world import ModelMismatch

G = np.array([0.0, 0.0, -9.81])


def _state(rng):
    """A random body state: position, velocity, attitude and biases."""
    return dict(p=rng.normal(0, 1, 3), v=rng.normal(0, 0.5, 3),
                R=pin.exp3(rng.normal(0, 1, 3)), b_a=rng.normal(0, 0.05, 3),
                b_g=rng.normal(0, 0.01, 3))


def _predict(x, f, w, dt, P=None, q=None):
    """The compiled prediction on copies of state ``x`` and covariance ``P`` (identity if
    None) with process noise ``q`` (zero if None); the new state and covariance."""
    y = {k: np.array(a, dtype=float) for k, a in x.items()}
    P = np.eye(15) if P is None else P.copy()
    q = np.zeros(P.shape[0]) if q is None else q
    kernels.predict(P, y["p"], y["v"], y["R"], y["b_a"], y["b_g"], np.zeros(3), f, w, dt, q,
                    np.empty_like(P))
    return y, P


def _plus(x, dx):
    """State ``x`` moved by the error state ``dx`` (15,), attitude on the right."""
    return dict(p=x["p"] + dx[POSITION], v=x["v"] + dx[VELOCITY],
                R=x["R"] @ pin.exp3(dx[ATTITUDE]), b_a=x["b_a"] + dx[ACCEL_BIAS],
                b_g=x["b_g"] + dx[GYRO_BIAS])


def _minus(y, x):
    """The error state (15,) that takes ``x`` to ``y``."""
    return np.concatenate([y["p"] - x["p"], y["v"] - x["v"], pin.log3(x["R"].T @ y["R"]),
                           y["b_a"] - x["b_a"], y["b_g"] - x["b_g"]])


def _strapdown_ode(f, w):
    """The continuous strapdown equations with the body-frame specific force ``f`` and rate
    ``w`` held: ``p' = v``, ``v' = R f + g``, ``R' = R [w]x`` (R flattened row-major)."""
    W = pin.skew(w)

    def rhs(_t, y):
        R = y[6:].reshape(3, 3)
        return np.concatenate([y[3:6], R @ f + G, (R @ W).ravel()])

    return rhs


def test_predict_converges_to_the_integrated_strapdown_equations():
    """Over one step the prediction's attitude is exact and its velocity and position
    errors against SciPy's integration of the strapdown equations (rtol 1e-12) shrink as
    dt^2 and dt^3 (ratios 4 and 8 when dt halves, within 10 %): the reading held at the
    step's start, a second-order velocity step, no systematic error beyond it."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = _state(rng)
        f_m = np.array([0.0, 0.0, 9.81]) + rng.normal(0, 2, 3)
        w_m = rng.normal(0, 1.0, 3)
        f, w = f_m - x["b_a"], w_m - x["b_g"]
        errors = []
        for dt in (0.02, 0.01, 0.005):
            y, _ = _predict(x, f_m, w_m, dt)
            sol = solve_ivp(_strapdown_ode(f, w), (0.0, dt),
                            np.concatenate([x["p"], x["v"], x["R"].ravel()]), rtol=1e-12,
                            atol=1e-14, method="DOP853")
            exact = sol.y[:, -1]
            assert np.abs(y["R"] - exact[6:].reshape(3, 3)).max() < 1e-11
            errors.append((np.linalg.norm(y["p"] - exact[:3]),
                           np.linalg.norm(y["v"] - exact[3:6])))
        for coarse, fine in zip(errors, errors[1:], strict=False):
            assert coarse[1] / fine[1] == pytest.approx(4.0, rel=0.1)
            assert coarse[0] / fine[0] == pytest.approx(8.0, rel=0.1)


def test_predicted_covariance_is_f_p_ft_with_the_finite_difference_jacobian():
    """The prediction's covariance equals ``F P F^T + diag(q)`` within 1e-7 of its largest
    entry, with ``F`` the central difference (step 1e-6) of the prediction along each of the
    15 body error-state directions and the identity on the anchor filter's 12 anchor
    states (random states, readings, covariances and steps up to 0.05 s); it is symmetric."""
    rng = np.random.default_rng(2)
    for n in (15, N_ERROR):
        for _ in range(4):
            x = _state(rng)
            f_m, w_m = rng.normal(0, 5, 3), rng.normal(0, 2, 3)
            dt = rng.uniform(0.005, 0.05)
            y0, _ = _predict(x, f_m, w_m, dt)
            eps = 1e-6
            F = np.eye(n)
            for j in range(15):
                d = np.zeros(15)
                d[j] = eps
                F[:15, j] = (_minus(_predict(_plus(x, d), f_m, w_m, dt)[0], y0)
                             - _minus(_predict(_plus(x, -d), f_m, w_m, dt)[0], y0)) / (2 * eps)
            A = rng.normal(0, 0.1, (n, n))
            P, q = A @ A.T, rng.uniform(0, 1e-3, n)
            _, got = _predict(x, f_m, w_m, dt, P, q)
            want = F @ P @ F.T + np.diag(q)
            assert np.abs(got - want).max() < 1e-7 * np.abs(want).max()
            assert np.array_equal(got, got.T)
            assert np.array_equal(got[15:, 15:], P[15:, 15:] + np.diag(q[15:]))


def test_odometry_rows_are_the_jacobian_of_the_measurement():
    """The leg odometry's foot rows are minus the central difference of their innovation
    ``z - R^T (a - p)`` along each error-state direction (within 1e-7), and its velocity
    rows that of ``v_measured - v`` but for the attitude, whose coupling through
    ``v_measured = -R (dz/dt + w x z)`` the filter neglects (those columns are zero)."""
    rng = np.random.default_rng(4)
    feet, prev = rng.normal(0, 0.2, (4, 3)), rng.normal(0, 0.2, (4, 3))
    anchors = rng.normal(0, 0.5, (4, 3))
    legs = np.array([0, 2, 3])
    rate = rng.normal(0, 0.5, 3)
    x = _state(rng)

    def rows(s):
        return kernels.odometry_rows(s["p"], s["v"], s["R"], rate, feet, prev, legs, anchors,
                                     True, 0.02, 1e-5, 2e-3)

    H_motion, r0, noise = rows(x)
    assert H_motion.shape == (12, 9) and np.allclose(noise, [1e-5] * 9 + [2e-3 / 3] * 3)
    H = np.zeros((12, 15))  # the biases are not measured
    H[:, MOTION] = H_motion
    eps = 1e-6
    for j in range(15):
        d = np.zeros(15)
        d[j] = eps
        fd = (rows(_plus(x, d))[1] - rows(_plus(x, -d))[1]) / (2 * eps)
        checked = slice(0, 9) if j in range(6, 9) else slice(0, 12)
        assert np.abs(-fd[checked] - H[checked, j]).max() < 1e-7, j
    assert not H[9:, ATTITUDE].any()
    # The velocity rows' innovation: the feet's mean velocity in {S} minus v.
    z, z_prev = feet[legs].mean(axis=0), prev[legs].mean(axis=0)
    v_meas = -x["R"] @ ((z - z_prev) / 0.02 + np.cross(rate, z))
    assert np.allclose(r0[9:], v_meas - x["v"], atol=1e-12)


def test_anchor_filter_rows_are_the_jacobian_of_the_measurement():
    """The anchor filter's rows of foot ``i`` are the central difference of ``R^T (a_i -
    p)`` along each of its 27 error-state directions (within 1e-7), the anchors' included."""
    rng = np.random.default_rng(5)
    ekf = AnchorEkf(RobotModel(), rng.normal(0, 1, 3), pin.exp3(rng.normal(0, 1, 3)))
    ekf.anchors = rng.normal(0, 0.5, (4, 3))
    p, R, anchors = ekf.p.copy(), ekf.R.copy(), ekf.anchors.copy()

    def predicted(i, d):
        """Foot ``i``'s predicted position with the filter's state moved by ``d``."""
        ekf.p, ekf.R = p + d[POSITION], R @ pin.exp3(d[ATTITUDE])
        ekf.anchors = anchors + d[15:].reshape(4, 3)
        return ekf.measurement(i)[0]

    eps = 1e-6
    for i in range(4):
        predicted(i, np.zeros(N_ERROR))  # back at the unperturbed state
        H = ekf.measurement(i)[1]
        for j in range(N_ERROR):
            d = np.zeros(N_ERROR)
            d[j] = eps
            fd = (predicted(i, d) - predicted(i, -d)) / (2 * eps)
            assert np.abs(fd - H[:, j]).max() < 1e-7, (i, j)
        assert not H[:, foot_block((i + 1) % 4)].any()


def test_correct_is_the_information_form_update():
    """The correction's covariance and estimate equal the information form's,
    ``(P^-1 + H^T N^-1 H)^-1`` and ``P+ H^T N^-1 r``, and its normalised innovation squared
    ``r^T (H P H^T + N)^-1 r``, to 1e-9 relative, on random filters and rows (over all
    error states or, zero beyond, the first k); the covariance stays symmetric and the
    body's state moves by the estimate."""
    rng = np.random.default_rng(6)
    for n, m, k in ((15, 9, 15), (15, 12, 9), (27, 6, 27), (27, 6, 15)):
        A = rng.normal(0, 0.05, (n, n))
        P = A @ A.T + 1e-4 * np.eye(n)
        H = np.zeros((m, n))
        H[:, :k] = rng.normal(0, 1, (m, k))
        r, noise = rng.normal(0, 0.01, m), rng.uniform(1e-6, 1e-4, m)
        x = _state(rng)
        y = {key: a.copy() for key, a in x.items()}
        P_new = P.copy()
        dx, nis = kernels.correct(P_new, np.ascontiguousarray(H[:, :k]), r, noise, y["p"],
                                  y["v"], y["R"], y["b_a"], y["b_g"])
        info = np.linalg.inv(np.linalg.inv(P) + H.T @ np.diag(1 / noise) @ H)
        assert np.allclose(P_new, info, rtol=1e-9, atol=1e-9 * np.abs(info).max())
        assert np.array_equal(P_new, P_new.T)
        want = info @ H.T @ (r / noise)
        assert np.allclose(dx, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
        S = H @ P @ H.T + np.diag(noise)
        assert nis == pytest.approx(r @ np.linalg.solve(S, r), rel=1e-9)
        assert np.allclose(_minus(y, x), dx[:15], atol=1e-12)


def test_correct_refuses_an_indefinite_innovation_covariance():
    """An innovation covariance that is not positive definite raises LinAlgError and leaves
    the covariance and state as they were."""
    P = np.diag(np.r_[-np.ones(3), np.ones(12)])
    H = np.zeros((3, 15))
    H[:, POSITION] = np.eye(3)
    x = _state(np.random.default_rng(7))
    y = {key: a.copy() for key, a in x.items()}
    P_new = P.copy()
    with pytest.raises(np.linalg.LinAlgError):
        kernels.correct(P_new, H, np.ones(3), np.full(3, 1e-6), y["p"], y["v"], y["R"],
                        y["b_a"], y["b_g"])
    assert np.array_equal(P_new, P) and all(np.array_equal(x[key], y[key]) for key in x)


@pytest.mark.parametrize("seed", [None, 0, 7])
def test_foot_positions_are_pinocchios(seed):
    """The compiled chains give Pinocchio's foot frame positions (body at the origin) to
    1e-12 m, for the nominal robot and perturbed ones (other link lengths), at random joint
    angles."""
    robot = Marcbot() if seed is None else ModelMismatch().perturb(Marcbot(), seed)
    rm = RobotModel(robot)
    kin = LegKinematics(rm)
    rng = np.random.default_rng(8)
    for _ in range(50):
        q = rng.uniform(-1.5, 1.5, 20)
        pin.framesForwardKinematics(rm.model, rm.data, body_configuration(q))
        want = np.array([rm.data.oMf[f].translation for f in rm.foot_ids])
        assert np.abs(kin(q) - want).max() < 1e-12


def test_imu_noise_and_bias_walk_have_the_set_statistics():
    """Over 20000 samples the readings' white noise has the set standard deviations
    (within 3 %) and the bias steps have variance ``walk^2 dt`` (within 3 %)."""
    spec = ImuParameters()
    imu = SimulatedImu(spec, seed=9)
    dt, n = 0.02, 20000
    f_true, w_true = np.array([0.1, -0.2, 9.8]), np.array([0.01, 0.02, -0.03])
    out = np.empty((n, 12))
    for k in range(n):
        f, w = imu.measure(f_true, w_true, dt)
        out[k] = np.concatenate([f - f_true - imu.b_a, w - w_true - imu.b_g, imu.b_a,
                                 imu.b_g])
    assert np.allclose(out[:, 0:3].std(axis=0), spec.accel_noise, rtol=0.03)
    assert np.allclose(out[:, 3:6].std(axis=0), spec.gyro_noise, rtol=0.03)
    steps = np.diff(out[:, 6:], axis=0)
    assert np.allclose(steps[:, :3].std(axis=0), spec.accel_walk * np.sqrt(dt), rtol=0.03)
    assert np.allclose(steps[:, 3:].std(axis=0), spec.gyro_walk * np.sqrt(dt), rtol=0.03)


def test_bad_steps_and_settings_are_refused():
    """A prediction over a non-positive step and non-positive noise settings raise
    ConfigError."""
    ekf = LegOdometryEkf(RobotModel(), np.zeros(3), np.eye(3))
    with pytest.raises(ConfigError, match="dt must be > 0"):
        ekf.predict(np.array([0.0, 0.0, 9.81]), np.zeros(3), 0.0)
    with pytest.raises(ConfigError):
        EkfSettings(foot_noise=0.0)


def test_odometry_update_anchors_new_feet_and_corrects_with_the_others():
    """A leg-odometry update anchors the feet newly in contact at ``p + R z`` (their
    kinematic positions carried into the world by the estimate before the correction) and
    corrects with the feet anchored before as ``correct`` does with ``odometry_rows``'s
    rows; with no foot anchored before it changes nothing but anchors."""
    rng = np.random.default_rng(10)
    x = _state(rng)
    A = rng.normal(0, 0.05, (15, 15))
    P = A @ A.T + 1e-4 * np.eye(15)
    feet, prev = rng.normal(0, 0.2, (4, 3)), rng.normal(0, 0.2, (4, 3))
    anchors = rng.normal(0, 0.5, (4, 3))
    anchored = np.array([True, True, False, False])
    contact = np.array([False, True, True, False])
    y = {k: a.copy() for k, a in x.items()}
    got_anchors, P_new = anchors.copy(), P.copy()
    assert kernels.odometry_update(
        P_new, y["p"], y["v"], y["R"], y["b_a"], y["b_g"], np.zeros(3), feet, prev,
        got_anchors, anchored, contact, True, 0.02, 1e-5, 2e-3)
    assert np.allclose(got_anchors[2], x["p"] + x["R"] @ feet[2], atol=1e-15)
    assert np.array_equal(got_anchors[[0, 1, 3]], anchors[[0, 1, 3]])
    z = {k: a.copy() for k, a in x.items()}
    rows = kernels.odometry_rows(z["p"], z["v"], z["R"], np.zeros(3), feet, prev,
                                 np.array([1]), anchors, True, 0.02, 1e-5, 2e-3)
    P_want = P.copy()
    kernels.correct(P_want, *rows, z["p"], z["v"], z["R"], z["b_a"], z["b_g"])
    assert np.allclose(P_new, P_want, rtol=0, atol=1e-15)
    assert all(np.allclose(y[k], z[k], rtol=0, atol=1e-15) for k in x)
    P_same, before = P.copy(), {k: a.copy() for k, a in y.items()}
    assert not kernels.odometry_update(
        P_same, y["p"], y["v"], y["R"], y["b_a"], y["b_g"], np.zeros(3), feet, prev,
        got_anchors, np.zeros(4, dtype=bool), contact, True, 0.02, 1e-5, 2e-3)
    assert np.array_equal(P_same, P) and all(np.array_equal(y[k], before[k]) for k in y)


def test_a_cycle_is_a_prediction_then_an_update():
    """Over 300 cycles of random readings, joint angles and contacts that change (grasps,
    releases, none, all), now and then without an IMU sample or velocity rows, ``step``
    holds the state, covariance and anchors of ``predict`` then ``update`` to 1e-12
    (relative)."""
    rm = RobotModel()
    rng = np.random.default_rng(11)
    q0 = rm.robot.default_joint_angles()
    R0 = pin.exp3(np.array([0.2, -0.1, 0.4]))
    one, two = (LegOdometryEkf(rm, np.array([0.3, -0.2, 0.5]), R0) for _ in range(2))
    contacts = ("LF", "LR", "RF", "RR")
    for k in range(300):
        if rng.uniform() < 0.15:
            contacts = tuple(leg for leg in ("LF", "LR", "RF", "RR") if rng.uniform() < 0.7)
        q = q0 + 0.03 * np.sin(0.07 * k + np.arange(20))
        f, w = np.array([0.0, 0.0, 9.81]) + rng.normal(0, 0.2, 3), rng.normal(0, 0.02, 3)
        dt = 0.0 if k % 41 == 13 else 0.02
        reading = (f, w) if k > 0 and dt > 0 and k % 29 != 5 else None
        one.step(reading, dt, q, contacts)
        if reading is not None:
            two.predict(f, w, dt)
        two.update(q, contacts, dt)
        for name in ("p", "v", "R", "b_a", "b_g", "P", "rate", "anchors", "active"):
            a, b = getattr(one, name), getattr(two, name)
            assert np.allclose(a, b, rtol=0, atol=1e-12 * max(np.abs(b).max(), 1e-300)), name
