"""Comparison scenarios, disturbances, controller variants and cell statistics."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import binomtest

from clamber.exceptions import ConfigError
from clamber.experiments.quadruped_comparison import summarize_cell
from clamber.experiments.quadruped_scenarios import SCENARIOS, scenario, scenario_settings
from clamber.quadruped.control.variants import CONTROLLER_NAMES, gain_values, make_controller
from clamber.quadruped.sim.disturbance import PUSH_DIRECTIONS, Disturbance, DisturbanceDriver
from clamber.quadruped.sim.world import wall_layout, wall_rotation
from clamber.quadruped.trials.result import TrialResult


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
    from clamber.quadruped.model.robot_model import RobotModel

    rm = RobotModel()
    ctrls = {n: make_controller(n, rm, ()) for n in CONTROLLER_NAMES}
    q = ctrls["qwbc"]
    assert q.ramp and q.qp.builder.torque_rows
    assert not ctrls["qwbc-noramp"].ramp
    assert not ctrls["qwbc-notorque"].qp.builder.torque_rows
    assert ctrls["qwbc-nolimits"].qp.builder.boxes[0][1][0] > 1e4
    np.testing.assert_array_equal(ctrls["qwbc-noweights"].qp.builder.weights.w2, np.ones(6))
    assert ctrls["clik-plain"].integral.gain_dt == 0 and not ctrls["clik-plain"].feedforward
    assert ctrls["clik"].integral.gain_dt > 0 and ctrls["clik"].feedforward
    assert q.integral.gain_dt == 0 and ctrls["vmc"].integral.gain_dt == 0
    assert make_controller("qwbc", rm, (), 0.02, attitude_integral=2.0).integral.gain_dt > 0
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
                   planned_load=0.4, failure_cycle=0 if success else 3,
                   failure_distance_m=math.nan if success else 0.51,
                   failure_time_s=math.nan if success else 230.04,
                   failure_detail="" if success else "RF gauge 1.03, wrench [1. 2. 3. 0. 0. 0.]")


def test_cell_statistics():
    """Wilson interval equals scipy's; errors and powers come from completed climbs only;
    failures are counted by reason and phase."""
    rs = [_trial(True, 4.0), _trial(True, 6.0), _trial(False, 30.0, 1.1, "gripper RF broke off")]
    s = summarize_cell(rs)
    ci = binomtest(2, 3).proportion_ci(method="wilson")
    assert s["success_interval"] == pytest.approx([ci.low, ci.high])
    assert s["max_tracking_error_mm"] == pytest.approx(5.0)
    assert s["worst_tracking_error_mm"] == pytest.approx(6.0)
    assert s["peak_gripper_load_max"] == pytest.approx(1.1)
    assert s["failures"] == {"gripper RF broke off (release LR)": 1}
    assert s["failed_trials"] == [{"seed": 0, "cycle": 3, "phase": "release LR",
                                   "height_m": 0.51, "time_s": 230.04,
                                   "reason": "gripper RF broke off",
                                   "detail": "RF gauge 1.03, wrench [1. 2. 3. 0. 0. 0.]"}]
    none = summarize_cell([_trial(False, reason="x")])
    assert none["max_tracking_error_mm"] is None and none["mean_power_w"] is None


def test_failure_table_lists_each_failed_trial_where_and_why():
    """The comparison's failure table has one row per failed trial with its gait cycle
    (0 reads "placement"), phase, height, time and reason with what was measured; no
    failed trial, no table."""
    from clamber.report.quadruped_comparison import failure_table

    placed = replace(_trial(False, reason="body strayed 60 mm from its reference"),
                     failure_cycle=0, failure_phase="placement", failure_detail="")
    cells = {"qwbc@wall90": summarize_cell([_trial(True), _trial(False, reason="gripper RF "
                                                                 "broke off"), placed])}
    rows = failure_table(cells, ["qwbc"], ["wall90"]).splitlines()
    assert rows[2] == ("| wall90 | qwbc | 0 | 3 | release LR | 0.510 | 230.0 | gripper RF "
                       "broke off (RF gauge 1.03, wrench [1. 2. 3. 0. 0. 0.]) |")
    assert rows[3].startswith("| wall90 | qwbc | 0 | placement | placement | 0.510 |")
    assert len(rows) == 4
    assert failure_table({"qwbc@wall90": summarize_cell([_trial(True)])}, ["qwbc"],
                         ["wall90"]) == ""


def test_trial_result_reads_back_from_its_record():
    """A trial result written as a study record's metrics (failure by name, NaN as None)
    reads back equal, field for field; a trial that left no metrics reads as a failure whose
    metrics are all unmeasured."""
    import json

    from clamber.experiments.quadruped_comparison import trial_result
    from clamber.experiments.record import StudyTrial, TrialOutcome
    from clamber.failures import FailureReason
    from clamber.storage.runs import TrialState

    for r in (_trial(True), _trial(False, reason="gripper RF broke off")):
        back = TrialResult.from_dict(json.loads(json.dumps(r.to_dict())))
        assert back.to_dict() == r.to_dict() and back.failure is r.failure
    lost = StudyTrial(0, 0, 7, TrialState.LOST,
                      TrialOutcome(False, FailureReason.WORKER_LOST, "worker died"))
    r = trial_result(lost)
    assert not r.success and r.failure is FailureReason.WORKER_LOST and r.seed == 7
    assert math.isnan(r.peak_gripper_load) and math.isnan(r.sim_time_s)


def test_longer_walls_start_with_the_rocks_of_the_one_stride_wall():
    """A wall of five strides has, for every leg, the same first two holds (position,
    shape, capacity) as the one-stride wall of the same seed, and the planner knows them
    with the same errors; the later holds differ from seed to seed."""
    from clamber.quadruped.sim.world import ModelMismatch

    stance = {"LF": (0.2, 0.25), "LR": (-0.2, 0.25), "RF": (0.2, -0.25), "RR": (-0.2, -0.25)}
    one, five = wall_layout(90.0, stance, n_steps=1, seed=4), wall_layout(90.0, stance,
                                                                          n_steps=5, seed=4)
    known1, known5 = (ModelMismatch().known_holds(w, 4) for w in (one, five))
    for leg in stance:
        assert len(five.holds[leg]) == 6
        for a, b in zip(one.holds[leg], five.holds[leg][:2], strict=True):
            assert np.array_equal(a.top, b.top) and np.array_equal(a.vertices, b.vertices)
            assert np.array_equal(a.capacity_factor, b.capacity_factor)
        assert np.array_equal(np.array(known1[leg]), np.array(known5[leg][:2]))
    other = wall_layout(90.0, stance, n_steps=5, seed=5)
    assert not np.array_equal(other.holds["LF"][3].top, five.holds["LF"][3].top)


def test_a_rear_foot_steps_onto_the_rock_its_front_foot_left():
    """On a wall of five strides with the gait's stance, no two rocks stand closer than a
    rock radius (they would interpenetrate): each rear leg's hold k + 2 is its front leg's
    hold k (the same rock, built once in the scene and known once by the planner)."""
    from clamber.quadruped.gaits import ClimbGaitSettings
    from clamber.quadruped.sim.world import ModelMismatch, RockSpec
    from clamber.quadruped.trials.stance import NOMINAL_FEET

    gp = ClimbGaitSettings()
    wall = wall_layout(70.0, gp.stance_offsets(NOMINAL_FEET), gp.stride, 5, seed=0)
    rocks = wall.all_holds()
    assert len(rocks) == 4 * 6 - 2 * 4
    gaps = [np.linalg.norm(a.base - b.base) for i, a in enumerate(rocks) for b in rocks[i + 1:]]
    assert min(gaps) > RockSpec().radius
    known = ModelMismatch().known_holds(wall, 0)
    for rear, front in (("LR", "LF"), ("RR", "RF")):
        for k in range(2, 6):
            assert wall.holds[rear][k] is wall.holds[front][k - 2]
            assert np.array_equal(known[rear][k], known[front][k - 2])

