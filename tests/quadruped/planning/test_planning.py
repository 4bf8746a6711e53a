"""Hold selection: the depth map's noise, candidates, the sole IK, the stance checks, the
rules and the planned climb."""

import json

import numpy as np
import pytest

from clamber.cli import main
from clamber.experiments.rock import hold_selection_study, summarize_holds
from clamber.experiments.study import run_study
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.planning.depth_map import DepthNoise, observe_wall
from clamber.quadruped.planning.holds import build_hold_map
from clamber.quadruped.planning.rollout import (
    PlanClimbSettings,
    _start,
    _Truth,
    plan_climb,
)
from clamber.quadruped.planning.selection import (
    ChoiceStatus,
    HoldPlanner,
    NearestHoldRule,
    StepContext,
    nominal_foothold,
)
from clamber.quadruped.planning.stance import body_over, sole_ik, support
from clamber.quadruped.rock.holding import GripperSurfaceModel, hold_limits
from clamber.quadruped.rock.wall import RockWallSpec, generate_wall


@pytest.fixture(scope="module")
def rm():
    return RobotModel()


def test_depth_noise_follows_the_range_model():
    """Without dropout the map's error has zero mean and the standard deviation
    sigma_0 + k d^2 at the camera's range."""
    wall = generate_wall(90, 1, RockWallSpec(length=1.0, width=0.8))
    noise = DepthNoise(dropout=0.0)
    err = observe_wall(wall, noise, np.random.default_rng(0)) - wall.z
    expected = noise.sigma(noise.standoff - wall.z)
    assert abs(err.mean()) < 0.05 * expected.mean()
    assert np.std(err / expected) == pytest.approx(1.0, abs=0.03)


def test_dropped_cells_are_filled_from_neighbours_only_on_steep_faces():
    """Dropout touches only steep cells; filled cells take their neighbours' measured
    values, so the map is finite and, on a steep flank, off by about a cell's rise."""
    wall = generate_wall(90, 1, RockWallSpec(length=1.0, width=0.8))
    noise = DepthNoise(dropout=1.0, sigma_0=0.0, k=0.0)
    z = observe_wall(wall, noise, np.random.default_rng(0))
    gu, gy = np.gradient(wall.z, wall.spacing)
    flat = np.hypot(gu, gy) <= noise.steep
    assert np.array_equal(z[flat], wall.z[flat]) and not flat.all()
    assert np.all(np.isfinite(z))
    assert np.median(np.abs(z - wall.z)[~flat]) < 2 * wall.spacing


def test_map_capacity_tracks_the_truth():
    """Capacity estimated on the noisy map correlates with the true capacity at the
    candidates (r > 0.6) and is unbiased within 0.1."""
    wall = generate_wall(90, 2)
    model = GripperSurfaceModel()
    hm = build_hold_map(wall, observe_wall(wall, DepthNoise(), np.random.default_rng(1)), model)
    est = np.array([c.factor[2] for c in hm.candidates])
    truth = _Truth(wall, model)
    true = np.array([truth.factor((c.i, c.j))[2] for c in hm.candidates])
    assert np.corrcoef(est, true)[0, 1] > 0.6
    assert abs(np.mean(est - true)) < 0.1


def test_sole_ik_reaches_poses_made_by_forward_kinematics(rm):
    """For sole poses from random joint angles within the limits, the IK (started from the
    default stance) puts the sole at the position within 1e-6 m and along the normal within
    1e-3 rad, inside the joint limits."""
    rng = np.random.default_rng(3)
    q0 = rm.robot.default_joint_angles()
    for leg in LEG_NAMES:
        for _ in range(3):
            q = q0 + rng.uniform(-0.25, 0.25, q0.size)
            q = rm.clip_joints(q)
            M = foot_poses(rm, body_configuration(q))[LEG_NAMES.index(leg)]
            qs, err, tilt = sole_ik(rm, leg, M.translation, M.rotation[:, 2], q0)
            assert err < 1e-6 and tilt < 1e-3
            assert np.all(qs >= rm.q_min - 1e-12) and np.all(qs <= rm.q_max + 1e-12)


def test_support_balances_the_body_or_reports_it_cannot(rm):
    """On a flat vertical wall the stance QP is stable and its wrenches balance the body
    (A F = B); with every hold at 5 % of the paper's box it reports instability."""
    from clamber.quadruped.model.statics import StaticsEvaluator
    from clamber.quadruped.planning.stance import reach

    wall = generate_wall(90, 0, RockWallSpec(knob_density=0.0))
    flat = {"LF": (0.62, 0.25), "LR": (0.28, 0.25), "RF": (0.62, -0.25), "RR": (0.28, -0.25)}
    tops = {leg: wall.to_world(u, y, 0.0) for leg, (u, y) in flat.items()}
    normals = {leg: wall.rotation[:, 2] for leg in LEG_NAMES}
    body = body_over(tops, wall.rotation, 0.16)
    r = reach(rm, body, tops, normals, rm.robot.default_joint_angles())
    assert r.reachable
    ev = StaticsEvaluator(rm)
    ok = support(rm, ev, body, r.q, [hold_limits(np.ones(6))] * 4)
    assert ok.stable and ok.gauges.max() <= 1 + 1e-9
    from clamber.quadruped.model.robot_model import RobotState

    st = ev.evaluate(RobotState(body.translation, body.rotation, r.q).q())
    assert np.abs(st.A @ ok.wrenches.reshape(-1) - st.B).max() < 1e-6
    assert not support(rm, ev, body, r.q, [hold_limits(np.full(6, 0.05))] * 4).stable


@pytest.fixture(scope="module")
def first_step(rm):
    """The context of the first swing on wall 3 (vertical), from the shared start."""
    settings = PlanClimbSettings()
    model = GripperSurfaceModel()
    wall = generate_wall(90, 3)
    hm = build_hold_map(wall, observe_wall(wall, settings.noise, np.random.default_rng(5)),
                        model)
    holds, body, q = _start(rm, _Truth(wall, model), hm, settings)
    return StepContext(hm, holds, body, q, "LR", "LF", settings.standoff)


def test_planner_choice_passes_its_own_checks(rm, first_step):
    """The planner's hold is ahead of the foot, the swing leg and the new stance reach it,
    and its expected wrench lies within the hold's estimated limits times the margin."""
    from clamber.quadruped.planning.stance import reach

    ctx = first_step
    planner = HoldPlanner(rm)
    ch = planner.choose(ctx, set())
    assert ch.status is ChoiceStatus.CHOSEN
    foot_u = ctx.hold_map.wall.to_wall(ctx.holds["LR"].top)[0]
    assert ch.hold.u - foot_u >= planner.settings.min_advance
    tops = {leg: (ch.hold.top if leg == "LR" else ctx.holds[leg].top) for leg in LEG_NAMES}
    normals = {leg: (ch.hold.normal if leg == "LR" else ctx.holds[leg].normal)
               for leg in LEG_NAMES}
    assert reach(rm, ctx.body, tops, normals, ctx.q, legs=("LR",)).reachable
    lim = hold_limits(ch.hold.factor * planner.settings.capacity_margin)
    assert lim.contains(ch.expected_wrench, tol=1e-6)
    again = planner.choose(ctx, {(ch.hold.i, ch.hold.j)})
    assert again.hold is None or (again.hold.i, again.hold.j) != (ch.hold.i, ch.hold.j)


def test_nearest_rule_takes_the_nearest_candidate(rm, first_step):
    """The naive rule's hold is the candidate nearest to the nominal foothold."""
    ctx = first_step
    rule = NearestHoldRule(rm)
    ch = rule.choose(ctx, set())
    u, y = nominal_foothold(ctx.body, ctx.hold_map, "LR", rule.settings.lead)
    d = np.hypot(ctx.hold_map.uy[:, 0] - u, ctx.hold_map.uy[:, 1] - y)
    assert np.hypot(ch.hold.u - u, ch.hold.y - y) == pytest.approx(d.min())


def test_planned_climb_is_deterministic_and_counts_add_up():
    """Same seed, same climb; engaged grasps never exceed attempts, and each completed
    step engaged exactly one grasp."""
    s = PlanClimbSettings(distance=0.04)
    a, b = plan_climb(s, 3), plan_climb(s, 3)
    assert a == b
    assert a.engaged <= a.attempts and a.engaged == a.steps
    assert a.success and a.distance_m >= 0.04


def test_hold_study_records_and_summarizes(tmp_path):
    """The study layer runs both rules on the same wall and the summary pools grasps."""
    conds = [PlanClimbSettings(rule=r, distance=0.03) for r in ("planner", "nearest")]
    trials = run_study(hold_selection_study(conds, [3]), run_dir=tmp_path / "run")
    assert len(trials) == 2
    s = summarize_holds(trials[:1])
    assert s["grasp_attempts"] == trials[0].metrics["grasp_attempts"]
    lo, hi = s["success_interval"]
    assert lo <= s["success_rate"] <= hi


def test_holds_command_writes_its_table(tmp_path, capsys):
    """`clamber quadruped holds` prints a JSON summary and writes holds.md/holds.json."""
    rc = main(["quadruped", "holds", "--inclines", "90", "--rules", "planner", "--trials",
               "1", "--seed", "3", "--distance", "0.03", "--workers", "0", "--no-progress",
               "--out", str(tmp_path / "h"), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["conditions"][0]["rule"] == "planner"
    assert (tmp_path / "h" / "holds.md").is_file()


def test_shifted_body_reaches_a_hold_inside_a_legs_reach(rm):
    """RF's hold 16 cm inward of the others' on a flat vertical wall is out of its reach
    from the body over the holds' centroid (a 5-DOF leg reaches little inward); the shifted
    body moves away from that side in the wall's plane (the hold then lies farther out),
    by no more than its allowance, and from there every leg reaches its hold within the
    tolerances (checked by an independent IK call). With no allowance none is found."""
    from clamber.quadruped.planning.stance import reach, shifted_body

    wall = generate_wall(90, 0, RockWallSpec(knob_density=0.0))
    flat = {"LF": (0.62, 0.33), "LR": (0.28, 0.33), "RF": (0.62, -0.17), "RR": (0.28, -0.33)}
    tops = {leg: wall.to_world(u, y, 0.0) for leg, (u, y) in flat.items()}
    normals = {leg: wall.rotation[:, 2] for leg in LEG_NAMES}
    centre = body_over(tops, wall.rotation, 0.16)
    q0 = rm.robot.default_joint_angles()
    assert not reach(rm, centre, tops, normals, q0).reachable
    body, r = shifted_body(rm, centre, tops, normals, q0, max_shift=0.04)
    d = wall.rotation.T @ (body.translation - centre.translation)
    assert d[1] > 1e-3 and abs(d[2]) < 1e-12 and np.hypot(d[0], d[1]) <= 0.04 + 1e-12
    again = reach(rm, body, tops, normals, q0)
    assert max(again.errors.values()) <= 3e-3 and max(again.tilts.values()) <= 0.25
    assert shifted_body(rm, centre, tops, normals, q0, max_shift=0.0) is None
