"""Comparison scenarios, disturbances, controller variants and cell statistics."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import binomtest

from clamber.exceptions import ConfigError
from clamber.experiments.quadruped_comparison import summarize_cell
from clamber.quadruped.comparison import scenario_settings
from clamber.quadruped.scenarios import (
    PUSH_DIRECTIONS,
    SCENARIOS,
    Disturbance,
    DisturbanceDriver,
    scenario,
)
from clamber.quadruped.sim.world import wall_layout, wall_rotation
from clamber.quadruped.trials.result import TrialResult
from clamber.quadruped.variants import CONTROLLER_NAMES, gain_values, make_controller


def test_every_scenario_makes_settings():
    """Each scenario gives climb settings with its incline, heading and disturbance; an
    unknown scenario is a ConfigError."""
    for name, sc in SCENARIOS.items():
        s = scenario_settings(name, controller="vmc")
        assert (s.incline_deg, s.heading_deg, s.disturbance, s.scenario) == (
            sc.incline_deg, sc.heading_deg, sc.disturbance, name)
    assert any(sc.incline_deg > 90 for sc in SCENARIOS.values())
    with pytest.raises(ConfigError):
        scenario("ceiling")


def test_heading_turns_the_layout_about_the_wall_normal():
    """A diagonal climb keeps the wall normal and turns the climbing direction by the
    heading within the wall plane."""
    stance = {leg: np.array([0.1, 0.2]) for leg in ("LF", "LR", "RF", "RR")}
    lay = wall_layout(90.0, stance, heading_deg=30.0)
    R0 = wall_rotation(90.0)
    np.testing.assert_allclose(lay.rotation[:, 2], R0[:, 2], atol=1e-12)
    assert lay.rotation[:, 0] @ R0[:, 0] == pytest.approx(math.cos(math.radians(30)))
    with pytest.raises(ConfigError):
        wall_layout(90.0, stance, heading_deg=120.0)


class _Model:
    def __init__(self):
        self.body_mass = np.array([0.0, 4.0])


class _Data:
    def __init__(self):
        self.xfrc_applied = np.zeros((2, 6))


def test_push_acts_for_its_duration_and_payload_once():
    """A push applies its force along the wall-frame direction only from ``delay`` to
    ``delay + duration`` after the first release; a payload adds its mass once and keeps it."""
    R = wall_rotation(90.0)
    m, d = _Model(), _Data()
    push = DisturbanceDriver(Disturbance("push", 30.0, delay=1.0, duration=0.5), m, d, 1)
    for t, on in ((None, False), (0.5, False), (1.2, True), (1.6, False)):
        push.update(t, R)
        expected = R @ PUSH_DIRECTIONS["out"] * 30.0 if on else np.zeros(3)
        np.testing.assert_allclose(d.xfrc_applied[1, :3], expected)
    load = DisturbanceDriver(Disturbance("payload", 2.0, delay=0.0), m, d, 1)
    for t in (0.1, 0.2, 5.0):
        load.update(t, R)
    assert m.body_mass[1] == pytest.approx(6.0)
    with pytest.raises(ConfigError):
        Disturbance("kick", 1.0)


def test_controller_variants_switch_one_ingredient_each():
    """Every named variant builds; the ablations switch off exactly their ingredient and
    keep their parent's gains."""
    from clamber.quadruped.model import RobotModel

    rm = RobotModel()
    ctrls = {n: make_controller(n, rm, ()) for n in CONTROLLER_NAMES}
    q = ctrls["qwbc"]
    assert q.ramp and q.qp.builder.torque_rows
    assert not ctrls["qwbc-noramp"].ramp
    assert not ctrls["qwbc-notorque"].qp.builder.torque_rows
    assert ctrls["qwbc-nolimits"].qp.builder.boxes[0][1][0] > 1e4
    np.testing.assert_array_equal(ctrls["qwbc-noweights"].qp.builder.weights.w2, np.ones(6))
    assert ctrls["clik-plain"].ki == 0 and not ctrls["clik-plain"].feedforward
    assert ctrls["clik"].ki > 0 and ctrls["clik"].feedforward
    assert not ctrls["vmc-plain"].unload and np.all(ctrls["vmc-plain"].axis_weights == 1)
    assert gain_values("qwbc-noramp", (("body_kp", 2.0),))["body_kp"] == 80.0
    g = make_controller("vmc", rm, (("stiffness", 2.0),))
    assert g.k[0] == pytest.approx(800.0)
    with pytest.raises(ConfigError):
        make_controller("vmc", rm, (("body_kp", 2.0),))


def _trial(success, err=3.0, load=0.5, reason=""):
    from clamber.failures import FailureReason

    r = TrialResult("climb", "qwbc", "wall90", 0, success, reason,
                    None if success else FailureReason.GRIPPER_BROKE, 90.0, 4.0, 0.2, err,
                    80.0, 100.0, 7000.0, 700.0, 1.0, 2.0, 0.1, 0.5, 1.0, load, 0.1)
    return replace(r, failure_phase="" if success else "release LR", limit_active_fraction=0.1,
                   planned_load=0.4)


def test_cell_statistics():
    """Wilson interval equals scipy's; errors and powers come from completed climbs only;
    failures are counted by reason and phase."""
    rs = [_trial(True, 4.0), _trial(True, 6.0), _trial(False, 30.0, 1.1, "gripper RF broke off")]
    s = summarize_cell(rs)
    ci = binomtest(2, 3).proportion_ci(method="wilson")
    assert s["success_ci95"] == pytest.approx([ci.low, ci.high])
    assert s["max_tracking_error_mm"] == pytest.approx(5.0)
    assert s["worst_tracking_error_mm"] == pytest.approx(6.0)
    assert s["peak_gripper_load_max"] == pytest.approx(1.1)
    assert s["failures"] == {"gripper RF broke off (release LR)": 1}
    none = summarize_cell([_trial(False, reason="x")])
    assert none["max_tracking_error_mm"] is None and none["mean_power_w"] is None
