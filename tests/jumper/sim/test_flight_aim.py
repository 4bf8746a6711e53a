"""The flight re-aim: its rollout, its derivative, the offset it asks for, its settings."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.calibration import calibrated_config
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.control import EventTriggeredSettings
from clamber.jumper.sim.flight_aim import (
    FlightAimSettings,
    design_flight_aim,
    flight_rollout,
    take_off_state,
)
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.sim.reference import build_reference
from clamber.jumper.sim.simulate import JumpTrial, nominal_stance
from clamber.jumper.sim.stance_feedback import solution_key
from clamber.jumper.solution import TrajectorySolution

DESIGN = Path(__file__).resolve().parents[3] / "docs" / "data" / "long_climb" / "solution.npz"


@pytest.fixture(scope="module")
def design() -> TrajectorySolution:
    return TrajectorySolution.load(DESIGN)


@pytest.fixture(scope="module")
def config():
    et = EventTriggeredSettings(flight_feedback="aim")
    return calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar(),
                             event_triggered=et)


@pytest.fixture(scope="module")
def aim(design, config):
    ref = build_reference(design, config.motor)
    release = int(np.ceil(design.phase_times[2] * ref.rate_hz - 1e-9))
    nominal = nominal_stance(design, config, release + 1)[release]
    et = config.event_triggered
    return design_flight_aim(design, ref.theta, ref.voltage, ref.rate_hz, config.motor,
                             config.gains, et.push_kp_scale, et.push_kd_scale,
                             design.settings.foot_radius, et.flight_aim, nominal,
                             solution_key(design)), nominal


def _numpy_flight(x0, d, theta, profile, volt, p, esc, h):
    """The same flight written independently with NumPy on the model's numeric forward
    dynamics (RK4 per board period, the packets' difference as speed target)."""
    m = jumper_model("com")
    kp, kd, a, c, vs = (esc[3 * i:3 * i + 3] for i in range(5))
    targets = theta + np.outer(d, profile)
    x, fronts = np.array(x0, float), []
    for k in range(theta.shape[1]):
        th_ref = targets[:, k]
        w_ref = (targets[:, k] - targets[:, max(k - 1, 0)]) / h

        def f(xx, th_ref=th_ref, w_ref=w_ref, k=k):
            q, qd = xx[:6], xx[6:]
            v = np.clip(kp * (th_ref - q[3:6]) + kd * (w_ref - qd[3:6]) + volt[:, k], -vs, vs)
            return np.r_[qd, m.forward_dynamics(q, qd, a * v - c * qd[3:6], p)]

        k1 = f(x)
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        fronts.append(np.array(m.points(x[:6], p))[:, 0])
    return np.array(fronts).T


def test_the_rollout_is_the_models_flight_with_the_escs_closed(aim):
    """CasADi's rollout against an independent NumPy integration of the model's forward
    dynamics, with and without an offset: within 1e-9 m over the whole flight."""
    a, nominal = aim
    x0 = take_off_state(nominal, a.parameters, a.wall_x)
    h = 1.0 / a.rate_hz
    for d in (np.zeros(3), np.array([0.05, -0.2, 0.3])):
        front = flight_rollout(a.theta.shape[1])(x0, d, a.theta, a.profile, a.volt,
                                                    a.parameters, a.esc, h)
        oracle = _numpy_flight(x0, d, a.theta, a.profile.ravel(), a.volt, a.parameters,
                               a.esc, h)
        np.testing.assert_allclose(np.array(front), oracle, atol=1e-9)


def test_the_take_off_puts_the_rear_gripper_at_rest_on_the_wall(aim):
    a, nominal = aim
    x0 = take_off_state(nominal, a.parameters, a.wall_x)
    q, qd = jumper_model("com").to_rear_foot(x0[:6], x0[6:], a.parameters)
    np.testing.assert_allclose(np.array(q).ravel()[:2], [a.wall_x, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.array(qd).ravel()[:2], 0.0, atol=1e-12)


def test_the_derivative_matches_finite_differences(aim):
    a, nominal = aim
    x0 = take_off_state(nominal, a.parameters, a.wall_x)
    d = np.array([0.02, 0.1, -0.1])
    g = a._jacobian(x0, d)[a.catch - 1]
    fd = np.array([(a._distance(x0, d + e) - a._distance(x0, d - e)) / 2e-6
                   for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-7)
    assert abs(g[2]) > 0.03  # the shoulder moves the front gripper [m/rad]


def test_the_nominal_take_off_is_left_as_planned(aim):
    a, nominal = aim
    assert not a.offset(nominal).any()


def test_a_take_off_headed_away_from_the_wall_is_re_aimed(aim):
    """Spine and shoulder 6 rad/s off at the release: the foot is predicted far off the
    wall at the catch; the offset, inside its limits, brings the predicted approach over
    the matching window to within a fifth of its error, and the catch within 5 mm."""
    a, nominal = aim
    late = nominal.copy()
    late[6:8] += (-6.0, 6.0)
    x0 = take_off_state(late, a.parameters, a.wall_x)
    assert a._distance(x0, np.zeros(3)) - a.planned > a.settings.deadband
    d = a.offset(late)
    assert np.abs(d).max() <= a.settings.max_offset + 1e-12
    window = slice(a.catch - 1 - a.settings.window, a.catch)
    goal = a.path[window] - a.settings.aim_depth

    def rms(dd):
        return float(np.sqrt(np.mean((a._path(x0, dd)[window] - goal) ** 2)))

    assert rms(d) < 0.2 * rms(np.zeros(3))
    assert abs(a._distance(x0, d) - goal[-1]) < 0.005


def test_a_nominal_robot_with_the_aim_plays_as_without(design, config):
    with_aim = JumpTrial(design, 2, config, record=False)
    res = with_aim.run()
    without = JumpTrial(design, 2, replace(config, event_triggered=replace(
        config.event_triggered, flight_feedback="none")), record=False).run()
    assert len(with_aim.aim_offsets) == 2 and not np.any(with_aim.aim_offsets)
    assert [j.ready for j in res.jumps] == [j.ready for j in without.jumps] == [True, True]


@pytest.mark.parametrize("kwargs", [{"weights": (1.0, -1.0, 1.0)}, {"weights": (0, 0, 0)},
                                    {"max_offset": 0.0}, {"ramp_in": -0.1},
                                    {"deadband": float("nan")}])
def test_bad_aim_settings_are_refused(kwargs):
    with pytest.raises(ConfigError, match="flight_aim"):
        FlightAimSettings(**kwargs)


def test_an_unknown_flight_feedback_is_refused():
    with pytest.raises(ConfigError, match="allowed"):
        EventTriggeredSettings(flight_feedback="lqr")
