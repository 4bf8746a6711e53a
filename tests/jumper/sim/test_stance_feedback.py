"""The push-off TVLQR: its Riccati recursion, its linearisation, what it does in the sim."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

from clamber.exceptions import ConfigError
from clamber.experiments.calibration import calibrated_config
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.control import EventTriggeredSettings
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.sim.motor import EscGains, MotorParameters
from clamber.jumper.sim.reference import build_reference
from clamber.jumper.sim.settings import Realization
from clamber.jumper.sim.simulate import JumpTrial, nominal_stance
from clamber.jumper.sim.stance_feedback import (
    NX,
    StanceLQRSettings,
    linearize,
    stance_plan,
    tvlqr_gains,
)
from clamber.jumper.solution import TrajectorySolution

DESIGN = Path(__file__).resolve().parents[3] / "docs" / "data" / "long_climb" / "solution.npz"


@pytest.fixture(scope="module")
def design() -> TrajectorySolution:
    return TrajectorySolution.load(DESIGN)


def test_the_riccati_recursion_reaches_scipys_stationary_solution():
    """On a long time-invariant horizon the backward recursion's first cost-to-go and gain
    equal SciPy's solution of the discrete algebraic Riccati equation; on a short one they
    do not (so the comparison can fail). Tolerance: 1e-6 relative."""
    rng = np.random.default_rng(3)
    n, m, N = 4, 2, 400
    A = np.eye(n) + 0.05 * rng.normal(size=(n, n))  # mildly unstable
    B = 0.1 * rng.normal(size=(n, m))
    Q, R = np.diag([1.0, 2.0, 0.5, 1.0]), np.diag([0.3, 0.7])
    K, P = tvlqr_gains(np.tile(A, (N, 1, 1)), np.tile(B, (N, 1, 1)), Q, R, np.zeros((n, n)))
    P_are = scipy.linalg.solve_discrete_are(A, B, Q, R)
    K_are = np.linalg.solve(R + B.T @ P_are @ B, B.T @ P_are @ A)
    np.testing.assert_allclose(P[0], P_are, rtol=1e-6)  # SciPy's own accuracy: ~1e-7
    np.testing.assert_allclose(K[0], K_are, rtol=1e-6, atol=1e-9)
    K5, _ = tvlqr_gains(np.tile(A, (5, 1, 1)), np.tile(B, (5, 1, 1)), Q, R, np.zeros((n, n)))
    assert np.abs(K5[0] - K_are).max() > 1e-3


def _numpy_step(x, u, ref, p, esc, h, pinned_front, substeps=2):
    """The same stance step written independently with NumPy on the model's numeric
    functions: rear gripper a fixed pin, front a second pin in phase 1, RK4."""
    m = jumper_model("rear_foot")
    kp, kd, a, c = esc[0:3], esc[3:6], esc[6:9], esc[9:12]

    def f(xx):
        z, zd = xx[:4], xx[4:]
        q, qd = np.r_[0.0, 0.0, z], np.r_[0.0, 0.0, zd]
        volt = kp * (ref[0:3] - z[1:]) + kd * (ref[3:6] - zd[1:]) + ref[6:9] + u
        tau = a * volt - c * zd[1:]
        M = np.array(m.mass_matrix(q, p))[2:, 2:]
        rhs = np.r_[0.0, tau] - np.array(m.bias(q, qd, p)).ravel()[2:]
        if pinned_front:
            J = np.array(m.jacobian_front(q, p))[:, 2:]
            jd = np.array(m.jdot_qd_front(q, qd, p)).ravel()
            kkt = np.block([[M, J.T], [J, np.zeros((2, 2))]])
            zdd = np.linalg.solve(kkt, np.r_[rhs, -jd])[:4]
        else:
            zdd = np.linalg.solve(M, rhs)
        return np.r_[zd, zdd]

    hs = h / substeps
    for _ in range(substeps):
        k1 = f(x)
        k2 = f(x + 0.5 * hs * k1)
        k3 = f(x + 0.5 * hs * k2)
        k4 = f(x + hs * k3)
        x = x + hs / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return x


@pytest.mark.parametrize("k", [10, 40, 55, 66])  # phase 1 (both grippers), phase 2 (rear)
def test_the_linearisation_matches_finite_differences_of_the_model(design, k):
    """A_k and B_k from CasADi's jacobians equal central differences (step 1e-6) of the
    stance step written independently on the model's mass matrix, bias and front-gripper
    Jacobian, to 1e-5 of their largest entry."""
    motor, gains = MotorParameters(), EscGains(kd=0.3)
    ref = build_reference(design, motor)
    plan = stance_plan(design, ref.rate_hz)
    A, B = linearize(design, plan, ref.theta, ref.omega, ref.voltage, ref.rate_hz, motor,
                     gains, 3.0, 3.0)
    p = design.morphology.parameters()
    esc = np.r_[[gains.kp * 3] * 3, [gains.kd * 3] * 3, [motor.gain] * 3, [motor.damping] * 3]
    r = np.r_[ref.theta[k], ref.omega[k], ref.voltage[k]]
    pinned = k / ref.rate_hz < design.phase_times[1]
    x0, u0, eps = plan[k], np.zeros(3), 1e-6

    def step(x, u):
        return _numpy_step(x, u, r, p, esc, 1 / ref.rate_hz, pinned)

    A_fd = np.column_stack([(step(x0 + eps * e, u0) - step(x0 - eps * e, u0)) / (2 * eps)
                            for e in np.eye(NX)])
    B_fd = np.column_stack([(step(x0, u0 + eps * e) - step(x0, u0 - eps * e)) / (2 * eps)
                            for e in np.eye(3)])
    np.testing.assert_allclose(A[k], A_fd, atol=1e-5 * np.abs(A_fd).max())
    np.testing.assert_allclose(B[k], B_fd, atol=1e-5 * np.abs(B_fd).max())


def _config(feedback: str, **lqr) -> object:
    et = EventTriggeredSettings(stance_feedback=feedback,
                                stance_lqr=StanceLQRSettings(imu_angle_noise=0.0,
                                                             imu_rate_noise=0.0, **lqr))
    return calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar(),
                             event_triggered=et)


def _stance_estimates(design, config, real) -> np.ndarray:
    """The board's noise-free estimates at packets 1..n-1 of the first push-off."""
    trial = JumpTrial(design, 1, config, real, record=False)
    trial.estimates = {}
    n = len(stance_plan(design, trial.ref.rate_hz))
    while n - 1 not in trial.estimates:
        trial.step()
    return np.array([trial.estimates[k] for k in range(1, n)])


def _perturbed(design, config) -> Realization:
    """The nominal robot started 0.05 rad and 2 rad/s off in every joint."""
    return replace(Realization.nominal(design, config),
                   q0_offset=np.r_[0, 0, 0.0, 0.05, -0.05, 0.05],
                   qd0_offset=np.r_[0, 0, 0, 2.0, -2.0, 2.0])


def test_the_feedback_pulls_a_perturbed_push_off_toward_its_target(design):
    """A robot started 0.05 rad and 2 rad/s off in every joint, played with and without the
    TVLQR: with it, the board's estimate stays closer to the target it holds (the nominal
    robot's), weighted as the LQR weighs it, over the push-off and at its last packet."""
    off = _config("none")
    robot = _perturbed(design, off)
    target = nominal_stance(design, off)[1:]
    s = StanceLQRSettings()
    w = np.r_[[1 / s.angle_scale**2] * 4, [1 / s.rate_scale**2] * 4]

    def cost(x):
        return np.sum(w * (x - target) ** 2, axis=1)

    without = cost(_stance_estimates(design, off, robot))
    with_fb = cost(_stance_estimates(design, _config("tvlqr"), robot))
    assert with_fb.sum() < 0.9 * without.sum()  # measured 0.78; 1.5 with the sign flipped
    assert with_fb[-1] < 0.1 * without[-1]  # measured 0.001


def test_the_feedback_voltage_goes_through_the_supply_clip(design):
    """On a 7.4 V supply the push-off feedback changes the commanded voltages of a
    perturbed robot during the push-off, and no applied voltage exceeds the supply."""
    def run(feedback):
        cfg = replace(_config(feedback), motor=MotorParameters(supply_voltage=7.4))
        real = _perturbed(design, cfg)  # its motors on the 7.4 V supply
        return JumpTrial(design, 1, cfg, real, record=True).run()

    on, off = run("tvlqr"), run("none")
    cols = ("v_hip", "v_spine", "v_shoulder")
    volts = np.column_stack([on.column(c) for c in cols])
    assert np.abs(volts).max() <= 7.4 + 1e-12
    assert np.isclose(np.abs(volts).max(), 7.4)  # the clip is reached
    stance = on.column("t") < design.phase_times[2]
    n = int(stance.sum())
    v_off = np.column_stack([off.column(c) for c in cols])[:n]
    assert np.abs(volts[:n] - v_off).max() > 0.1


def test_the_settings_are_checked():
    with pytest.raises(ConfigError, match="stance feedback"):
        EventTriggeredSettings(stance_feedback="lqr")
    with pytest.raises(ConfigError, match="angle_scale"):
        StanceLQRSettings(angle_scale=0.0)
    with pytest.raises(ConfigError, match="target"):
        StanceLQRSettings(target="optimum")
    with pytest.raises(ConfigError, match="stance_lqr"):
        EventTriggeredSettings(stance_lqr={"angle_scale": 0.1})


def test_the_command_line_refuses_the_feedback_without_the_closed_loop(tmp_path, capsys):
    from clamber.cli import main

    assert main(["jumper", "robustness", str(DESIGN), "--stance-feedback", "tvlqr",
                 "--trials", "1", "--out", str(tmp_path / "a")]) == 2
    assert "--controller closed-loop" in capsys.readouterr().err
    assert main(["jumper", "robustness", str(DESIGN), "--controller", "closed-loop",
                 "--stance-feedback", "lqr", "--out", str(tmp_path / "b")]) == 2
    assert "invalid choice: 'lqr'" in capsys.readouterr().err
