"""The dynamic climb on a generated rock wall: holds planned from noisy maps, the winch in the
loop (its durations, a non-engaging grasp detected and retried), the new summary keys."""

import json
from dataclasses import replace

import numpy as np
import pytest
from winch_steps import step_until_winch

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.cli import main
from clamber.exceptions import ConfigError
from clamber.failures import FailureReason
from clamber.quadruped.control.grasping import GraspStatus
from clamber.quadruped.gaits import ClimbGait, ClimbGaitSettings
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.planning.rollout import StopReason
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.trials.climb import PLACEMENT_TIME, ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    MIN_FACTOR,
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)

#: A quicker gait (shorter load and body phases than the paper's; the swing as fast).
QUICK = ClimbGaitSettings(settle_time=0.5, unload_time=1.0, reload_time=1.0, body_time=2.0)
SETTINGS = RockClimbSettings(climb=ClimbSettings(gait=QUICK), distance=0.05)
SEED = 0


@pytest.fixture(scope="module")
def wall_truth():
    wall, truth, _ = plan_rock_climb(SETTINGS, SEED)
    return wall, truth


def _plan(wall_truth):
    """A fresh planner (a trial plans on it as it climbs)."""
    wall, truth = wall_truth
    return wall, truth, SequencePlanner(wall, SETTINGS.plan, SEED, truth=truth)


def test_gait_swings_only_the_planned_steps():
    """``steps`` cuts the cycle's schedule; each leg needs one hold more than it swings."""
    holds = {leg: [np.zeros(3), np.ones(3)] for leg in LEG_NAMES}
    normals = {leg: [np.array([0, 0, 1.0])] * 2 for leg in LEG_NAMES}
    gait = ClimbGait(holds, normals, np.eye(3), ClimbGaitSettings(), steps=2)
    assert gait.schedule == ["LR", "LF"]
    short = {**holds, "LR": holds["LR"][:1]}
    with pytest.raises(ConfigError):
        ClimbGait(short, normals, np.eye(3), ClimbGaitSettings(), steps=2)
    ClimbGait({**holds, "RF": holds["RF"][:1]}, normals, np.eye(3), ClimbGaitSettings(),
              steps=3)
    with pytest.raises(ConfigError):
        ClimbGait(holds, normals, np.eye(3), ClimbGaitSettings(), steps=5)


def test_planned_holds_come_from_the_map_and_the_start_from_the_wall(wall_truth):
    """The start stance is on true hold tops; the planned holds are the map's estimates of
    their cells (within the map's noise of the truth, not equal to it), each ahead of the
    leg's previous hold; planning reaches the distance."""
    wall, truth = wall_truth
    seq = SequencePlanner(wall, SETTINGS.plan, SEED, truth=truth)
    steps = []
    while (st := seq.next()) is not None:
        steps.append(st)
    assert steps and seq.stop is StopReason.DISTANCE
    for leg in LEG_NAMES:
        true = truth.foothold(seq.start[leg].cell, seq.start[leg].factor)
        np.testing.assert_allclose(seq.start[leg].top, true.top)
    last = {leg: wall.to_wall(seq.start[leg].top)[0] for leg in LEG_NAMES}
    for st in steps:
        true = truth.foothold(st.hold.cell, st.hold.factor).top
        off = np.linalg.norm(st.hold.top - true)
        assert 0 < off < 0.01
        u = wall.to_wall(st.hold.top)[0]
        assert u > last[st.leg]
        last[st.leg] = u


def test_winch_release_and_grasp_take_the_plants_time_and_retry(wall_truth):
    """In the trial a release keeps the weld and the gait waits (its clock stopped, the swing
    leg's phase unchanged) for the release's duration from the plant, then the weld opens;
    a grasp whose first try does not catch is detected (the controller faults), retried and
    held on the second try, and the weld closes only when the winch holds, after the
    plant's whole duration (more than the engage timeout). The Q-WBC limits each gripper
    to the capacity the planner estimated for its hold, the start holds' from the start and
    the new hold's once it holds, and weighs it by that capacity."""
    trial = RockClimbTrial(SETTINGS, SEED, plan=_plan(wall_truth))
    qp = trial.ctrl.qp.builder
    for i, leg in enumerate(LEG_NAMES):
        f = np.maximum(trial.planner.start[leg].factor, MIN_FACTOR)
        np.testing.assert_allclose(qp.boxes[i][1], PAPER_BOX_HALF_WIDTHS * f)
        np.testing.assert_allclose(qp.leg_weights[i], 1 / f**2)
    leg, _, _, report = step_until_winch(trial, "release")
    t0, clock = (trial.k - 1) * trial.dt, trial.gait_clock
    assert report.status is GraspStatus.OPENED and 1.0 < report.duration < 3.0
    assert trial.busy_until == pytest.approx(t0 + report.duration)
    while trial.k * trial.dt + 1e-9 < trial.busy_until:
        assert leg in trial.sim.grippers.attached and trial.gait.phase.value == "release"
        assert trial.gait_clock == clock
        assert trial.step()
    trial.step()
    assert leg not in trial.sim.grippers.attached
    # The first try does not catch, the second does.
    draws = iter([1.0, 0.0])
    trial.rng = type("Draws", (), {"random": lambda self: next(draws)})()
    leg, _, _, report = step_until_winch(trial, "grasp")
    t1 = trial.k * trial.dt
    assert report.status is GraspStatus.HELD and report.tries == 2
    assert report.duration > trial.rock.winch.engage_timeout
    while trial.k * trial.dt + 1e-9 < trial.busy_until:
        assert leg not in trial.sim.grippers.attached
        assert trial.step()
    i = LEG_NAMES.index(leg)
    np.testing.assert_allclose(qp.boxes[i][1], PAPER_BOX_HALF_WIDTHS
                               * np.maximum(trial.planner.start[leg].factor, MIN_FACTOR))
    trial.step()
    assert leg in trial.sim.grippers.attached
    f = np.maximum(trial.planner.steps[0].hold.factor, MIN_FACTOR)
    assert trial.planner.steps[0].leg == leg
    np.testing.assert_allclose(qp.boxes[i][1], PAPER_BOX_HALF_WIDTHS * f)
    assert trial.k * trial.dt >= t1 + report.duration
    assert trial.tries == 2 and trial.engaged == 1 and trial.grasps == 1


@pytest.mark.parametrize("regrasps", [1, 2])
def test_grasp_that_never_engages_fails_the_trial_after_its_retries(wall_truth, regrasps):
    """With no try catching and no re-placement, the grasp is retried ``regrasps`` times,
    then the trial fails as a missed grasp that says how many tries did not engage; it
    counts as a grasp that did not engage."""
    trial = RockClimbTrial(replace(SETTINGS, replacements=0, regrasps=regrasps), SEED,
                           plan=_plan(wall_truth))
    trial.truth = type("NoCatch", (), {"catch_probability": lambda self, cell: 0.0})()
    _, _, _, report = step_until_winch(trial, "grasp")
    assert report.status is GraspStatus.NOT_ENGAGED and report.tries == regrasps + 1
    while trial.step():
        pass
    r = trial.result()
    assert r.failure is FailureReason.GRASP_MISSED
    assert f"{regrasps + 1} tries did not engage" in r.reason
    assert "spines did not catch (chance 0.00" in r.reason
    assert r.grasps == 1 and r.grasps_engaged == 0 and r.grasp_success_rate == 0.0
    assert r.winch_tries == regrasps + 1
    assert r.grasp_time_s > (regrasps + 1) * trial.rock.winch.engage_timeout
    assert r.sim_time_s > PLACEMENT_TIME


def test_rock_climb_command_reports_distance_and_grasps(tmp_path, capsys):
    """`quadruped climb --wall rock` runs the planned climb in the simulation and reports
    the plane climb's keys plus the distance reached and the share of grasps engaged; with
    ``--grasp fixed`` (the plane trial's 3 s phases) the winch is never stepped."""
    rc = main(["quadruped", "climb", "--wall", "rock", "--incline", "90", "--distance",
               "0.05", "--grasp", "fixed", "--trials", "1", "--seed", str(SEED),
               "--workers", "0", "--capacity-margin", "0.9", "--stall-raises", "1",
               "--no-figures", "--no-progress", "--out", str(tmp_path / "c"), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("success_rate", "success_interval", "mean_power_w", "cost_of_transport",
                "failures", "distance_m", "grasp_success_rate", "speed_m_s", "swings_raised"):
        assert key in out
    assert out["capacity_margin"] == 0.9 and out["stall_raises"] == 1
    assert out["wall"] == "rock" and out["grasp"] == "fixed" and out["winch_tries"] == 0
    assert out["grasps"] >= out["grasps_engaged"] >= 1
    assert out["distance_m"] > 0.0
    if not out["successes"]:
        assert out["failure_details"][0]["detail"]
    # The finished run resumes from its record (the start's shift, a pair, included) and
    # climbs nothing again.
    rc = main(["quadruped", "climb", "--resume", str(tmp_path / "c"), "--workers", "0",
               "--no-figures", "--no-progress", "--json"])
    assert rc == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["distance_m"] == out["distance_m"] and again["grasps"] == out["grasps"]


def test_rock_settings_reject_bad_input():
    """Unknown grasp models, a climb longer than the wall it is given, a wall incline the
    generator does not make and an attitude integral gain outside [0, 50] 1/s are
    configuration errors."""
    from clamber.quadruped.rock.wall import RockWallSpec

    with pytest.raises(ConfigError):
        RockClimbSettings(grasp="magnet")
    with pytest.raises(ConfigError):
        RockClimbSettings(distance=5.0, wall=RockWallSpec(length=3.1))
    with pytest.raises(ConfigError):
        RockClimbSettings(climb=ClimbSettings(incline_deg=150.0))
    for gain in (-0.1, 60.0, float("nan")):
        with pytest.raises(ConfigError, match="attitude_integral"):
            ClimbSettings(attitude_integral=gain)


def test_rock_climb_figure_plots_one_dot_per_climb():
    """The study figure has one marker per trial on its incline's row, and one legend entry
    per way a climb ended."""
    from clamber.report.rock import plot_rock_climbs

    climbs = [{"incline_deg": 90, "distance_m": 0.3, "failure": "no_hold"},
              {"incline_deg": 90, "distance_m": 2.0, "failure": None},
              {"incline_deg": 70, "distance_m": 0.1, "failure": "gripper_broke"}]
    fig = plot_rock_climbs(climbs, 2.0)
    ax = fig.axes[0]
    dots = [ln for ln in ax.lines if len(ln.get_xdata()) == 1]
    assert len(dots) == 3
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == \
        ["completed", "gripper broke", "no hold"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["70 deg", "90 deg"]


def test_a_drifting_estimate_is_not_a_body_that_strays():
    """With maps placed at the estimated body the references live in the estimate's frame:
    an estimate 60 mm off the true body (leg odometry's drift over a few metres) that the
    body follows is no stray, while the same body 60 mm off its reference in that frame
    is. With world-frame maps the true body is measured against the reference."""
    from types import SimpleNamespace

    body = RockClimbTrial(SETTINGS, 0)
    world = RockClimbTrial(replace(SETTINGS, map_frame="world"), 0)
    ref = SimpleNamespace(body_pose=SimpleNamespace(translation=np.array([0.3, 0.1, 0.2])))
    drift = np.array([0.06, 0.0, 0.0])
    p_true = ref.body_pose.translation - drift
    follows = SimpleNamespace(body_position=ref.body_pose.translation + [0.002, 0.0, 0.0])
    strays = SimpleNamespace(body_position=ref.body_pose.translation + drift)
    assert body._body_error(p_true, follows, ref) == pytest.approx(0.002)
    assert body._body_error(p_true, strays, ref) > body.settings.fall_error
    assert world._body_error(p_true, follows, ref) > world.settings.fall_error
