"""Gait timing: the trot's duty factor, step length and speed; the climbing gait's phases."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.gaits import (
    TROT_OFFSETS,
    ClimbGait,
    ClimbGaitSettings,
    ClimbPhase,
    TrotGait,
    TrotGaitSettings,
    cubic,
)
from clamber.quadruped.model.robot import LEG_NAMES


def test_trot_duty_step_and_speed():
    """Over whole cycles each foot is in stance 60 % of the time, advances 150 mm per
    cycle and the body moves at 0.15 / 0.7 = 0.214 m/s; diagonal feet share phases."""
    p = TrotGaitSettings()
    gait = TrotGait(p)
    dt = 0.001
    t = p.start_time + np.arange(0, 4 * p.period, dt)
    for leg in LEG_NAMES:
        stance = np.array([gait.phase(tk, leg)[0] for tk in t])
        assert abs(stance.mean() - p.duty) < 0.01
        x = np.array([gait.foot(tk, leg)[0] for tk in t[stance]])
        steps = np.diff(np.unique(np.round(x, 9)))
        assert np.allclose(steps[1:], p.step, atol=1e-9)
    for a, b in (("LF", "RR"), ("RF", "LR")):
        assert TROT_OFFSETS[a] == TROT_OFFSETS[b]
    assert abs(p.speed - 0.2143) < 1e-3
    assert np.isclose(gait.body_x(p.start_time + p.period) - gait.body_x(p.start_time), p.step)
    z = np.array([gait.foot(tk, "LF")[2] for tk in t])
    assert np.isclose(z.max(), p.height, atol=1e-3)
    with pytest.raises(ConfigError):
        TrotGaitSettings(duty=0.4)


def _run_gait(gait: ClimbGait, contact_after: float = 1.0, dt: float = 0.02,
              seat_depth: float = 0.002):
    """Drive the climbing gait with feet where it asks them and joint 4 touching
    ``contact_after`` seconds into each descent, and once a re-seated foot is pressed
    ``seat_depth`` [m] below where its re-seat began; returns the phases, loads and events."""
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    log, t = [], 0.0
    descend_start, seat = None, {}
    while not gait.done and t < 400:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            descend_start = t if descend_start is None else descend_start
            if t - descend_start >= contact_after:
                tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        else:
            descend_start = None
        if gait.phase is ClimbPhase.RESEAT:
            leg = gait.reseating[0]
            start = seat.setdefault(gait.bands[-1][0], feet[leg].translation.copy())
            depth = (start - feet[leg].translation) @ gait.normals[leg][gait.index[leg]]
            tau4[LEG_NAMES.index(leg)] = float(depth >= seat_depth - 1e-12)
        ref, events = gait.reference(t, lambda: feet, tau4)
        for leg, target in ref.foot_targets.items():
            feet[leg] = target
        log.append((t, gait.phase, dict(ref.load), ref.body_pose.translation.copy(), events))
        t += dt
    return log


def test_climbing_gait_one_leg_at_a_time():
    """Exactly one leg is unloaded at any time (>= 3 carry load), legs swing in order, the
    descent ends when joint 4's torque departs by the threshold, and the body advances by
    the stride per cycle in four cubic steps to the footholds' centre."""
    holds = {leg: [np.array([x, y, 0.0]), np.array([x + 0.22, y, 0.0])]
             for leg, (x, y) in zip(LEG_NAMES, [(0.2, 0.25), (-0.2, 0.25), (0.2, -0.25),
                                                 (-0.2, -0.25)], strict=True)}
    normals = {leg: [np.array([0, 0, 1.0])] * 2 for leg in LEG_NAMES}
    p = ClimbGaitSettings()
    gait = ClimbGait(holds, normals, np.eye(3), p)
    log = _run_gait(gait)
    assert gait.done
    assert all(len(load) >= 3 for _, _, load, _, _ in log)
    events = [e for *_, evs in log for e in evs]
    assert [e.leg for e in events if e.action == "release"] == list(p.order)
    assert [e.leg for e in events if e.action == "grasp"] == list(p.order)
    descents = [b - a for a, b, name, _ in gait.bands if name == "descend"]
    assert np.allclose(descents, 1.0, atol=0.041)  # within two control cycles
    body = np.array([b for *_, b, _ in log])
    assert np.isclose(body[-1][0] - body[0][0], p.stride, atol=1e-9)
    assert np.isclose(body[-1][2], p.standoff)
    expected = p.settle_time + p.nominal_cycle_time - 4 * (p.lift_height / p.descend_speed - 1.0)
    assert abs(log[-1][0] - expected) < 0.5
    s, ds, dds = cubic(0.5)
    assert np.isclose(s, 0.5) and np.isclose(ds, 1.5) and np.isclose(dds, 0.0)


def test_climbing_gait_loads_ramp_the_swing_leg_only():
    """Every reference's load factors are 1 for the legs not swinging; the swing leg's ramps
    down (unload), is absent while the gripper is open (swing), and ramps up again
    (reload), monotonically within each ramp; the stance legs are those of positive factor."""
    from clamber.quadruped.gaits.climb import _loads

    holds = {leg: [np.array([x, y, 0.0]), np.array([x + 0.22, y, 0.0])]
             for leg, (x, y) in zip(LEG_NAMES, [(0.2, 0.25), (-0.2, 0.25), (0.2, -0.25),
                                                 (-0.2, -0.25)], strict=True)}
    normals = {leg: [np.array([0, 0, 1.0])] * 2 for leg in LEG_NAMES}
    log = _run_gait(ClimbGait(holds, normals, np.eye(3), ClimbGaitSettings()))
    ramps: dict[tuple[str, str], list[float]] = {}
    for _, phase, load, _, _ in log:
        partial = [leg for leg, x in load.items() if x != 1.0]
        assert len(partial) <= 1 and all(0.0 < x <= 1.0 for x in load.values())
        if phase.value in ("unload", "reload") and partial:
            ramps.setdefault((phase.value, partial[0]), []).append(load[partial[0]])
        if phase.value in ("release", "lift", "transfer", "descend", "grasp"):
            assert len(load) == 3
    assert len(ramps) == 8 and all(len(r) > 10 for r in ramps.values())
    for (phase, _), r in ramps.items():
        assert np.all(np.diff(r) <= 0) if phase == "unload" else np.all(np.diff(r) >= 0)
    assert _loads("LF", None) == dict.fromkeys(LEG_NAMES, 1.0)
    assert _loads("LF", 0.0) == {leg: 1.0 for leg in LEG_NAMES if leg != "LF"}
    assert _loads("RR", 0.4)["RR"] == 0.4


def test_climbing_gait_moves_the_body_where_the_plan_puts_it():
    """A body position planned for a swing (``bodies[k]``) replaces the footholds' centre
    as the target of that swing's body move; swings without one keep the centre. A swing
    given a higher lift (``lifts[k]``) carries its foot that high above the holds (on the
    plane, along the normal), and the others the gait's own lift."""
    holds = {leg: [np.array([x, y, 0.0]), np.array([x + 0.22, y, 0.0])]
             for leg, (x, y) in zip(LEG_NAMES, [(0.2, 0.25), (-0.2, 0.25), (0.2, -0.25),
                                                 (-0.2, -0.25)], strict=True)}
    normals = {leg: [np.array([0, 0, 1.0])] * 2 for leg in LEG_NAMES}
    p = ClimbGaitSettings()
    gait = ClimbGait(holds, normals, np.eye(3), p, steps=2)
    planned = np.array([0.1, 0.03, 0.14])
    gait.bodies[0] = planned
    gait.lifts[1] = 0.08
    heights = {leg: 0.0 for leg in LEG_NAMES}
    reference = gait.reference

    def spy(t, feet, tau4):
        ref, events = reference(t, feet, tau4)
        for leg, target in ref.foot_targets.items():
            heights[leg] = max(heights[leg], float(target.translation[2]))
        return ref, events

    gait.reference = spy
    log = _run_gait(gait)
    assert gait.done
    assert heights["LR"] == pytest.approx(p.lift_height)
    assert heights["LF"] == pytest.approx(0.08)
    starts = [b for (_, prev, *_), (_, phase, _, b, _) in zip(log, log[1:], strict=False)
              if phase is ClimbPhase.UNLOAD and prev is not ClimbPhase.UNLOAD]
    assert len(starts) == 2
    np.testing.assert_allclose(starts[1], planned, atol=1e-12)
    centre = np.mean([holds[leg][1 if leg in ("LR", "LF") else 0] for leg in LEG_NAMES],
                     axis=0) + p.standoff * np.array([0, 0, 1.0])
    np.testing.assert_allclose(log[-1][3], centre, atol=1e-12)


def test_a_descent_on_the_force_rule_ends_when_the_foot_is_pressed_not_on_joint_4():
    """With ``contact_force`` and the feet's forces given, a descent ignores joint 4's torque
    (which swings by 1 N m here) and ends in the first cycle in which the force pressing the
    foot along the hold's normal exceeds its value at the end of the transfer (2 N of
    lateral load on the foot, not along the normal, then) by ``contact_force``."""
    holds = {leg: [np.zeros(3), np.array([0.05, 0.0, 0.0])] for leg in LEG_NAMES}
    normals = {leg: [np.array([0.0, 0.0, 1.0])] * 2 for leg in LEG_NAMES}
    p = ClimbGaitSettings(contact_force=1.5)
    gait = ClimbGait(holds, normals, np.eye(3), p, steps=1)
    feet = {leg: pin.SE3(np.eye(3), holds[leg][0]) for leg in LEG_NAMES}
    press = {"t": None}

    def forces():
        f = np.zeros((4, 3))
        f[:, 0] = 2.0  # lateral load: not along the normal
        if press["t"] is not None:
            f[:, 2] = 1.0 * (t - press["t"])  # 1 N/s along the normal
        return f

    dt, t, grasp_at = 0.02, 0.0, None
    while t < 40.0 and grasp_at is None:
        tau4 = np.full(4, np.sin(7.0 * t))
        _, events = gait.reference(t, lambda: feet, tau4, forces)
        if gait.phase is ClimbPhase.DESCEND and press["t"] is None:
            press["t"] = t
        grasp_at = next((t for e in events if e.action == "grasp"), None)
        t += dt
    assert grasp_at is not None
    pressed = 1.0 * (grasp_at - press["t"])
    assert 1.5 < pressed <= 1.5 + dt + 1e-9


def _three_holds() -> tuple[dict, dict]:
    holds = {leg: [np.array([x + k * 0.22, y, 0.0]) for k in range(3)]
             for leg, (x, y) in zip(LEG_NAMES, [(0.2, 0.25), (-0.2, 0.25), (0.2, -0.25),
                                                 (-0.2, -0.25)], strict=True)}
    return holds, {leg: [np.array([0, 0, 1.0])] * 3 for leg in LEG_NAMES}


def test_a_long_climb_re_seats_every_gripper_on_its_own_hold_after_each_body_move():
    """Two cycles, re-seating on by default: after every body move but the last, each gripper
    (the next to swing first) is unloaded, opened, pressed back along its hold's normal until
    contact, closed on the hold it holds and reloaded, one at a time (at most one leg below
    full load, never fewer than three attached); the gait takes its nominal time plus the
    presses."""
    holds, normals = _three_holds()
    p = ClimbGaitSettings(cycles=2)
    assert p.reseat_every == 1 and ClimbGaitSettings().reseat_every == 0
    gait = ClimbGait(holds, normals, np.eye(3), p)
    log = _run_gait(gait)
    assert gait.done
    events = [(phase, e) for _, phase, _, _, evs in log for e in evs]
    reseats = [e for phase, e in events if phase is ClimbPhase.RESEAT]
    assert all(e.reseat == (phase is ClimbPhase.RESEAT) for phase, e in events)
    released = [e for e in reseats if e.action == "release"]
    grasped = [e for e in reseats if e.action == "grasp"]
    assert len(released) == len(grasped) == 7 * 4  # 8 body moves, the last ends the climb
    assert [leg for *_, name, leg in gait.bands if name == "reseat"] == [e.leg for e in released]
    swings = [e.leg for phase, e in events if e.action == "release"
              and phase is not ClimbPhase.RESEAT]
    # The next swing leg is re-seated first, after each body move.
    assert [e.leg for e in released[::4]] == (list(p.order) * 2)[1:]
    # Open for reseat_time, then pressed 2 mm at the descent's speed (one step to see it).
    press = 0.002 / p.descend_speed
    for r, g in zip(released, grasped, strict=True):
        assert r.leg == g.leg
        assert g.t - r.t == pytest.approx(p.reseat_time + press, abs=2.1 * 0.02)
    # Each re-grasp closes on the hold the gripper already holds (its swings' holds count up).
    held = dict.fromkeys(LEG_NAMES, 0)
    for phase, e in events:
        if e.action == "grasp":
            assert e.hold == held[e.leg] + (phase is not ClimbPhase.RESEAT)
            held[e.leg] = e.hold
    assert swings == list(p.order) * 2
    for _, _, load, _, _ in log:
        assert len(load) >= 3 and sum(x < 1.0 for x in load.values()) + 4 - len(load) <= 1
    # The nominal time counts four re-seats after every body move, the last one's too; each
    # re-seat's stages end on the 20 ms step after their time (at most three steps late).
    expected = (p.settle_time + p.nominal_cycle_time * 2
                - 8 * (p.lift_height / p.descend_speed - 1.0) - 4 * 4 * p.reseat_time
                + 28 * press)
    assert abs(log[-1][0] - expected) < 1.0 + 28 * 3 * 0.02
    fewer = ClimbGait(holds, normals, np.eye(3), ClimbGaitSettings(cycles=2, reseat_every=2))
    assert 0 < sum(ph is ClimbPhase.RESEAT and e.action == "grasp"
                   for _, ph, _, _, evs in _run_gait(fewer) for e in evs) < 28
    with pytest.raises(ConfigError):
        ClimbGaitSettings(reseat_every=-1)


def test_a_body_move_predicted_to_wind_a_gripper_past_the_limit_is_made_in_parts():
    """A move whose predicted hinge moment on LF is 0.9 N m (limit 0.4) goes in three
    equal parts, LF alone re-seated after each of the first two; the body passes through
    the parts' ends and ends where the plan puts it. Moves predicted under the limit are
    made whole."""
    holds, normals = _three_holds()
    p = ClimbGaitSettings(cycles=1, reseat_every=1, move_moment=0.4)
    assert ClimbGaitSettings(cycles=2).move_moment == 0.0  # plane walls: never split
    gait = ClimbGait(holds, normals, np.eye(3), p)
    asked = []

    def moments(d):
        asked.append(np.array(d, dtype=float))
        return np.array([0.9, 0.1, 0.1, 0.1]) if len(asked) == 1 else np.full(4, 0.3)

    gait.move_moments = moments
    log = _run_gait(gait)
    assert gait.done and gait.moves_split == 1 and len(asked) == 4
    bands = [(name, leg) for _, _, name, leg in gait.bands]
    first = bands.index(("body", "LR"))
    assert bands[first:first + 5] == [("body", "LR"), ("reseat", "LF"), ("body", "LR"),
                                      ("reseat", "LF"), ("body", "LR")]
    starts = [t0 for t0, _, name, _ in gait.bands if name == "body"][:3]
    ends = [t1 for _, t1, name, _ in gait.bands if name == "body"][:3]
    body = {round(t, 6): b for t, _, _, b, _ in log}
    d = asked[0]
    origin = body[round(starts[0], 6)]
    for k, t1 in enumerate(ends, start=1):
        # The part's end, one 20 ms step later at most.
        assert np.allclose(body[round(t1, 6)], origin + k / 3 * d, atol=1e-3)
    for t0, t1 in zip(starts, ends, strict=True):
        assert t1 - t0 == pytest.approx(0.5 * p.body_time, abs=0.021)
    whole = [t1 - t0 for t0, t1, name, _ in gait.bands if name == "body"][3:]
    assert all(w == pytest.approx(p.body_time, abs=0.021) for w in whole)
    with pytest.raises(ConfigError):
        ClimbGaitSettings(move_moment=-0.1)


def test_a_re_seat_the_other_holds_cannot_carry_is_skipped():
    """``may_reseat`` refusing RR: RR is never re-seated, the others are, and each refusal
    is counted."""
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3), ClimbGaitSettings(cycles=1, reseat_every=1))
    gait.may_reseat = lambda leg: leg != "RR"
    _run_gait(gait)
    reseated = [leg for _, _, name, leg in gait.bands if name == "reseat"]
    assert gait.done and "RR" not in reseated and set(reseated) == {"LF", "LR", "RF"}
    assert gait.reseats_skipped == 3  # three body moves before the last, RR due after each


def test_a_missed_re_seat_lifts_and_presses_again_a_bounded_number_of_times():
    """A re-seat's grasp that did not take: the gripper is lifted 10 mm, held a stage and
    pressed back onto the hold (touching 2 mm below its top), with a new grasp event; after
    two retries the gait gives up."""
    from clamber.quadruped.gaits.climb import RESEAT_LIFT, RESEAT_RETRIES

    holds, normals = _three_holds()
    p = ClimbGaitSettings(cycles=1, reseat_every=1, swing_retries=0)
    gait = ClimbGait(holds, normals, np.eye(3), p)
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, grasps, answers, heights = 0.0, [], [], []
    with pytest.raises(ConfigError):
        gait.reseat_again(0.0)
    while not gait.done and t < 400 and len(answers) <= RESEAT_RETRIES:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        if gait.phase is ClimbPhase.RESEAT:
            leg = gait.reseating[0]
            tau4[LEG_NAMES.index(leg)] = float(feet[leg].translation[2] <= -0.002 + 1e-12)
            if grasps:
                heights.append(feet[leg].translation[2])
        ref, events = gait.reference(t, lambda: feet, tau4)
        for leg, target in ref.foot_targets.items():
            feet[leg] = target
        for e in events:
            if e.reseat and e.action == "grasp":
                grasps.append((t, e.leg, feet[e.leg].translation[2]))
                answers.append(gait.reseat_again(t))
        t += 0.02
    assert answers == [True] * RESEAT_RETRIES + [False]
    assert len({leg for _, leg, _ in grasps}) == 1
    assert all(z == pytest.approx(-0.002, abs=0.0005) for _, _, z in grasps)
    assert max(heights) == pytest.approx(grasps[0][2] + RESEAT_LIFT, abs=1e-9)
    gaps = np.diff([g[0] for g in grasps])
    assert all(p.reseat_time < gap < p.reseat_time + 0.6 for gap in gaps)


def test_a_split_move_given_up_between_its_parts_counts_its_swing_as_done():
    """Between the parts of a split move (LF re-seating), :meth:`ClimbGait.end_move` leaves
    the body where the part ended and counts the move's swing as made: the next scheduled
    swing is due, every gripper has held through one more move, and no part is left."""
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3),
                     ClimbGaitSettings(cycles=1, reseat_every=1, move_moment=0.4))
    gait.move_moments = lambda d: np.array([0.9, 0.1, 0.1, 0.1])
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t = 0.0
    while not (gait.phase is ClimbPhase.RESEAT and gait.splitting):
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        ref, _ = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        t += 0.02
        assert t < 100.0
    step, moves, part_end = gait.step_no, dict(gait.moves), gait.body_from.copy()
    assert part_end[0] < gait._move.end[0]
    gait.end_move()
    assert not gait.splitting and gait.step_no == step + 1
    assert gait.swing_leg == gait.schedule[step + 1]
    assert gait.moves == {g: moves[g] + 1 for g in LEG_NAMES}
    np.testing.assert_array_equal(gait.body_from, part_end)
    gait.end_move()  # no move under way: nothing changes
    assert gait.step_no == step + 1


def test_a_missed_swing_grasp_flies_the_swing_again_to_the_same_hold():
    """A swing whose grasp did not take: the foot lifts along the hold's normal, transfers
    back over the same hold and descends onto it, with a grasp event for the same hold; one
    retry per swing on a gait that re-seats, none on the paper's one-cycle gait; the next
    swing has its own retry."""
    from clamber.quadruped.gaits.climb import SWING_RETRIES

    assert ClimbGaitSettings(cycles=2).swing_retries == SWING_RETRIES == 1
    assert ClimbGaitSettings(cycles=1).swing_retries == 0
    with pytest.raises(ConfigError):
        ClimbGaitSettings(swing_retries=-1)
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3), ClimbGaitSettings(cycles=1, reseat_every=1,
                                                                  swing_retries=1))
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, grasps, answers, heights = 0.0, [], [], []
    while not gait.done and t < 400 and len(answers) < 5:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            leg = gait.swing_leg
            tau4[LEG_NAMES.index(leg)] = float(feet[leg].translation[2] <= 1e-12)
        ref, events = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        if grasps and len(answers) == 1:
            heights.append(feet[grasps[0][1]].translation.copy())
        for e in events:
            if e.action == "grasp" and not e.reseat:
                grasps.append((t, e.leg, e.hold, feet[e.leg].translation.copy()))
                # The first swing (LR) misses twice, the second (LF) takes, the third (RR)
                # misses once.
                answers.append(gait.retry_swing(t) if len(answers) in (0, 1, 3) else None)
        t += 0.02
    assert answers == [True, False, None, True, None]
    assert gait.swings_retried == 2
    (_, leg0, hold0, at0), (_, leg1, hold1, at1) = grasps[:2]
    assert (leg0, hold0) == (leg1, hold1) == ("LR", 1)
    # Touching within one 20 ms step of the hold's top (descending at 20 mm/s).
    assert np.allclose(at0, holds["LR"][1], atol=5e-4) and np.allclose(at1, at0, atol=1e-9)
    path = np.array(heights)
    assert path[:, 2].max() == pytest.approx(holds["LR"][1][2] + gait.p.lift_height, abs=1e-9)
    assert np.abs(path[:, :2] - holds["LR"][1][:2]).max() < 1e-9  # straight up and down
    assert [g[1] for g in grasps] == ["LR", "LR", "LF", "RR", "RR"]


def test_re_seats_follow_the_sensed_wind_up_when_asked():
    """``reseat_order="wound"`` with a sensed wind-up: after each body move the most wound
    gripper is re-seated first, then the others by their moments; without a sensor, or in
    ``swing`` order, the next swing's gripper comes first."""
    holds, normals = _three_holds()
    wound = {"LF": 0.2, "RF": 0.9, "LR": 0.1, "RR": 0.5}
    orders = {}
    for order, sensed in (("wound", True), ("wound", False), ("swing", True)):
        gait = ClimbGait(holds, normals, np.eye(3),
                         ClimbGaitSettings(cycles=1, reseat_every=1, reseat_order=order,
                                           wound_limit=0.0))
        if sensed and order == "wound":
            gait.wound = lambda: wound
        firsts = []
        feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
        t = 0.0
        while not gait.done and t < 400:
            tau4 = np.zeros(4)
            if gait.phase is ClimbPhase.DESCEND:
                tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
            if gait.phase is ClimbPhase.RESEAT:
                tau4[LEG_NAMES.index(gait.reseating[0])] = 1.0
                if not firsts or firsts[-1][0] != gait.step_no:
                    firsts.append((gait.step_no, list(gait.reseating), gait.swing_leg))
            ref, _ = gait.reference(t, lambda feet=feet: feet, tau4)
            feet.update(ref.foot_targets)
            t += 0.02
        assert gait.done and len(firsts) == 3
        orders[order, sensed] = firsts
    for _, queue, _ in orders["wound", True]:
        assert queue == ["RF", "RR", "LF", "LR"]
    for key in (("wound", False), ("swing", True)):
        for _, queue, swing in orders[key]:
            assert queue[0] == swing and sorted(queue) == sorted(LEG_NAMES)


def test_a_re_seat_still_missing_after_its_presses_flies_back_over_the_known_hold_top():
    """A re-seating foot 30 mm off its hold's known top misses on both presses; with a
    retry left it lifts straight off along the hold's normal, moves over the hold's known
    top and descends onto it (a grasp event there), then the gait gives up."""
    from clamber.quadruped.gaits.climb import RESEAT_RETRIES

    holds, normals = _three_holds()
    p = ClimbGaitSettings(cycles=1, reseat_every=1, swing_retries=1)
    gait = ClimbGait(holds, normals, np.eye(3), p)
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, grasps, answers, path, leg = 0.0, [], [], [], None
    while not gait.done and t < 400 and len(answers) <= RESEAT_RETRIES + 1:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        if gait.phase is ClimbPhase.RESEAT:
            if leg is None:  # the foot has walked off its hold
                leg = gait.reseating[0]
                feet[leg] = pin.SE3(np.eye(3), feet[leg].translation + [0.0, 0.03, 0.0])
            tau4[LEG_NAMES.index(leg)] = float(feet[leg].translation[2] <= -0.002 + 1e-12)
            if len(answers) == RESEAT_RETRIES + 1:
                path.append(feet[leg].translation.copy())
        ref, events = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        for e in events:
            if e.reseat and e.action == "grasp":
                grasps.append(feet[e.leg].translation.copy())
                answers.append(gait.reseat_again(t))
        t += 0.02
    assert answers == [True] * (RESEAT_RETRIES + 1) + [False]
    top = holds[leg][gait.index[leg]]
    off = [g[:2] - top[:2] for g in grasps]
    assert all(np.allclose(o, [0.0, 0.03], atol=1e-9) for o in off[:RESEAT_RETRIES + 1])
    assert np.allclose(off[-1], 0.0, atol=1e-9) and grasps[-1][2] == pytest.approx(-0.002, abs=5e-4)
    path = np.array(path)
    rising = path[:, 2] > grasps[RESEAT_RETRIES][2] + 1e-9
    first = path[rising][: int(p.lift_time / 0.02) - 1]
    assert np.allclose(first[:, :2], top[:2] + [0.0, 0.03], atol=1e-9)  # straight off first
    assert path[:, 2].max() == pytest.approx(top[2] + p.lift_height, abs=1e-3)
    assert gait.swings_retried == 1


def test_a_body_move_pauses_to_re_seat_a_sole_wound_past_the_limit():
    """RR's sensed moment passes ``wound_limit`` 1 s into the first body move: the body
    stops where its reference was, RR alone is re-seated, and the rest of the move ends
    where the whole move would have; the moment is sensed afresh after the re-seat, so the
    move pauses once, and the re-seats after the move follow."""
    holds, normals = _three_holds()
    assert ClimbGaitSettings(cycles=2).wound_limit == 0.0
    p = ClimbGaitSettings(cycles=1, reseat_every=1, wound_limit=0.6)
    with pytest.raises(ConfigError):
        ClimbGaitSettings(wound_limit=-0.1)
    gait = ClimbGait(holds, normals, np.eye(3), p)
    state = {"RR": 0.0}

    def wound():
        if gait.phase is ClimbPhase.BODY and gait.step_no == 0 \
                and gait.bands[-1][0] > 0 and t - gait.t0 > 1.0 and not gait.moves_paused:
            state["RR"] = 0.8
        return {g: state.get(g, 0.1) for g in LEG_NAMES}

    gait.wound = wound
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, bodies, paused_at = 0.0, [], None
    while not gait.done and t < 400:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        if gait.phase is ClimbPhase.RESEAT:
            leg = gait.reseating[0]
            tau4[LEG_NAMES.index(leg)] = 1.0
            if leg == "RR":
                state["RR"] = 0.0
        ref, _ = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        if gait.step_no == 0 and gait.moves_paused and paused_at is None:
            paused_at = ref.body_pose.translation.copy()
        bodies.append((t, gait.phase, ref.body_pose.translation.copy()))
        t += 0.02
    assert gait.done and gait.moves_paused == 1
    bands = [(name, leg) for _, _, name, leg in gait.bands]
    first = bands.index(("body", "LR"))
    assert bands[first:first + 3] == [("body", "LR"), ("reseat", "RR"), ("body", "LR")]
    assert bands[first + 3][0] == "reseat"  # the move's own re-seats follow
    # The first move ends over the footholds' centre after LR's swing, as without a pause.
    start = bodies[0][2]
    end = np.mean([holds[g][1 if g == "LR" else 0] for g in LEG_NAMES], axis=0) \
        + p.standoff * np.array([0, 0, 1.0])
    during = [b for _, ph, b in bodies if ph is ClimbPhase.RESEAT]
    assert np.allclose(during[0], paused_at, atol=1e-12)  # held where it paused
    d = end - start
    u = (paused_at - start) @ d / (d @ d)
    assert 0.0 < u < 1.0 and np.allclose(paused_at, start + u * d, atol=1e-12)
    second_body_end = gait.bands[first + 2][1]
    at_end = [b for tt, _, b in bodies if abs(tt - second_body_end) < 0.011]
    assert np.allclose(at_end[0], end, atol=1e-9)


def test_a_pause_whose_grippers_may_not_let_go_leaves_the_move_going():
    """RR's sensed moment passes ``wound_limit`` in the first body move, but the re-seat
    check (``may_reseat``) lets no gripper go: the body reference goes on along the move
    without a jump, no pause is counted, and the tries stop at :data:`MAX_PAUSES`."""
    from clamber.quadruped.gaits.climb import MAX_PAUSES

    holds, normals = _three_holds()
    p = ClimbGaitSettings(cycles=1, reseat_every=1, wound_limit=0.6)
    gait = ClimbGait(holds, normals, np.eye(3), p)
    asked = []
    gait.wound = lambda: {g: 0.8 if g == "RR" else 0.1 for g in LEG_NAMES}

    def may_reseat(leg):
        asked.append((gait.phase, leg))
        return gait.phase is not ClimbPhase.BODY

    gait.may_reseat = may_reseat
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, moving = 0.0, []
    while gait.step_no == 0 and t < 400:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        ref, _ = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        if gait.phase is ClimbPhase.BODY:
            moving.append(ref.body_pose.translation.copy())
        t += 0.02
    assert gait.moves_paused == 0 and moving
    steps = np.linalg.norm(np.diff(np.array(moving), axis=0), axis=1)
    assert steps.max() < 1e-3  # 20 ms of a cubic move, no jump to its end
    # RR asked once per try, then every gripper once for the re-seats after the move.
    assert sum(ph is ClimbPhase.BODY for ph, _ in asked) == MAX_PAUSES + len(LEG_NAMES)


def _turning_log(body_tilt: float, goals: list[np.ndarray]):
    """Drive a one-cycle gait whose body moves ask ``move_tilt`` for ``goals`` in turn;
    returns the gait, what it asked, and per step the time, phase and body reference."""
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3),
                     ClimbGaitSettings(cycles=1, reseat_every=1, body_tilt=body_tilt))
    asked = []

    def move_tilt(d, tilt):
        asked.append((np.array(d), np.array(tilt)))
        return goals[min(len(asked), len(goals)) - 1]

    gait.move_tilt = move_tilt
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, log = 0.0, []
    while not gait.done and t < 400:
        tau4 = np.zeros(4)
        leg = gait.reseating[0] if gait.phase is ClimbPhase.RESEAT else gait.swing_leg
        if gait.phase in (ClimbPhase.DESCEND, ClimbPhase.RESEAT):
            tau4[LEG_NAMES.index(leg)] = 1.0
        ref, _ = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        log.append((t, gait.phase, ref))
        t += 0.02
    return gait, asked, log


def test_a_body_move_turns_the_body_to_the_attitude_asked_within_the_limit():
    """With ``body_tilt`` each body move asks for the attitude it should end at, given the
    move and the attitude it starts from: the body turns there as it goes along the move
    (the twist's angular part is the attitude's rate), a goal past the limit is scaled onto
    it, and the attitude holds until the next move turns it again. Without, nothing is
    asked and the body keeps the wall's attitude."""
    assert ClimbGaitSettings(cycles=2).body_tilt == 0.0
    for bad in (-0.01, 0.2, float("nan")):
        with pytest.raises(ConfigError):
            ClimbGaitSettings(body_tilt=bad)
    far, back = np.array([0.0, 0.06, 0.08]), np.array([0.01, 0.0, 0.0])
    gait, asked, log = _turning_log(0.05, [far, back])
    assert gait.done and len(asked) == 4
    limited = far * 0.05 / 0.1
    assert np.allclose(asked[0][1], 0.0) and np.allclose(asked[1][1], limited)
    assert np.allclose(asked[2][1], back) and np.allclose(asked[3][1], back)
    moves = [(t0, t1) for t0, t1, name, _ in gait.bands if name == "body"]
    tilt = {round(t, 6): pin.log3(ref.body_pose.rotation) for t, _, ref in log}
    assert np.allclose(tilt[round(moves[0][0], 6)], 0.0, atol=1e-12)
    assert np.allclose(tilt[round(moves[0][1], 6)], limited, atol=1e-6)
    assert np.allclose(tilt[round(moves[1][0], 6)], limited, atol=1e-6)  # held between
    assert np.allclose(log[-1][2].body_pose.rotation, pin.exp3(back), atol=1e-9)
    # Mid-move the reference's angular rate is its attitude's: compare differences.
    t0, t1 = moves[0]
    inside = [(t, ref) for t, ph, ref in log if t0 + 0.5 < t < t1 - 0.5]
    assert max(np.linalg.norm(ref.body_twist[3:]) for _, ref in inside) > 0.01
    for (_, a), (_, b) in zip(inside[:-1], inside[1:], strict=True):
        rate = pin.log3(a.body_pose.rotation.T @ b.body_pose.rotation) / 0.02
        mid = 0.5 * (a.body_twist[3:] + b.body_twist[3:])
        assert np.linalg.norm(rate - mid) < 1e-3 + 0.02 * np.linalg.norm(mid)
    still, none_asked, plain = _turning_log(0.0, [far])
    assert still.done and not none_asked
    assert all(np.allclose(ref.body_pose.rotation, np.eye(3)) for _, _, ref in plain)


@pytest.mark.parametrize("tilt, landing, expected", [
    (0.05, "body", 0.0),    # within the 0.1 rad cone: lands along the wall's normal
    (0.25, "body", 0.15),   # past it: turned by the cone toward the wall's normal
    (0.05, "hold", 0.05),   # along the hold's normal
])
def test_a_swing_lands_its_sole_within_the_cone_nearest_the_wall_normal(tilt, landing,
                                                                         expected):
    """A swing turns its sole, during the transfer, the least way that puts the sole's
    normal within the cone of its new hold's normal nearest the wall's (``body``, the default
    on a gait that re-seats; ``hold``: a cone of 0); it lands and holds that attitude. With
    ``keep`` (the default on the paper's one-cycle gait) the sole keeps its lift-off
    attitude."""
    holds, normals = _three_holds()
    n = np.array([np.sin(tilt), 0.0, np.cos(tilt)])
    normals = {leg: [np.array([0, 0, 1.0]), n, n] for leg in LEG_NAMES}
    assert ClimbGaitSettings(cycles=1).landing == "keep"
    assert ClimbGaitSettings(cycles=2).landing == "body"
    assert ClimbGaitSettings(cycles=2, reseat_every=0).landing == "keep"
    with pytest.raises(ConfigError):
        ClimbGaitSettings(landing="wall")
    cone = ClimbGaitSettings(landing=landing).landing_cone
    for setting in (landing, "keep"):
        gait = ClimbGait(holds, normals, np.eye(3),
                         ClimbGaitSettings(cycles=1, landing=setting))
        yawed = pin.SE3(pin.exp3(np.array([0, 0, 0.3])), np.zeros(3))
        feet = {leg: pin.SE3(yawed.rotation, gait.holds[leg][0]) for leg in LEG_NAMES}
        landed = {}
        t = 0.0
        while not gait.done and t < 400:
            tau4 = np.zeros(4)
            if gait.phase is ClimbPhase.DESCEND:
                tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
                landed[gait.swing_leg] = None
            ref, _ = gait.reference(t, lambda feet=feet: feet, tau4)
            feet.update(ref.foot_targets)
            for leg in list(landed):
                if leg in ref.foot_targets:
                    landed[leg] = ref.foot_targets[leg].rotation.copy()
            t += 0.02
        assert gait.done and len(landed) == 4
        for rot in landed.values():
            if setting == "keep":
                assert np.allclose(rot, yawed.rotation, atol=1e-9)
                continue
            z = rot[:, 2]
            assert np.arccos(np.clip(z @ n, -1, 1)) <= cone + 1e-9
            assert np.arccos(np.clip(z[2], -1, 1)) == pytest.approx(expected, abs=1e-9)
            # The least turn: about an axis square to the lift-off normal (world z here).
            assert abs(pin.log3(rot @ yawed.rotation.T)[2]) < 1e-9


def _stalled_swing(stall_raises: int):
    """One cycle whose first swing's foot is held where it is 1.5 s into its first transfer
    (rock the map did not show) until the gait lifts it again or the swing ends; returns
    the gait and, per step, the phase, the swing leg, its foot and its reference."""
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3),
                     ClimbGaitSettings(cycles=1, stall_raises=stall_raises))
    first = gait.p.order[0]
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    t, log, held = 0.0, [], None
    while not gait.done and t < 400:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        ref, _ = gait.reference(t, lambda: feet, tau4)
        if gait.phase is ClimbPhase.TRANSFER and gait.swing_leg == first and held is None \
                and not gait.swings_raised and t - gait.t0 >= 1.5:
            held = feet[first]  # stuck from here until the gait lifts it again
        if gait.phase is ClimbPhase.LIFT or gait.swing_leg != first:
            held = None if gait.swings_raised or gait.swing_leg != first else held
        for leg, target in ref.foot_targets.items():
            feet[leg] = held if held is not None and leg == first else target
        log.append((t, gait.phase, gait.swing_leg, feet[first].translation.copy(),
                    ref.foot_targets.get(first)))
        t += 0.02
    return gait, log


def test_a_transfer_that_rock_holds_back_lifts_again_from_where_it_stalled():
    """With ``stall_raises`` a swing whose foot falls 3 cm behind its transfer reference
    goes back to a lift from where it stopped, along the body's normal and 3 cm higher
    than before, then on to its hold; without it the transfer runs out its time and the
    foot descends wherever it was held."""
    gait, log = _stalled_swing(1)
    first = gait.p.order[0]
    assert gait.done and gait.swings_raised == 1
    phases = [name for _, _, name, leg in gait.bands if leg == first and name != "settle"]
    assert phases[:6] == ["unload", "release", "lift", "transfer", "lift", "transfer"]
    raised = [(p, f, r) for _, p, leg, f, r in log if leg == first]
    k = next(i for i in range(1, len(raised))
             if raised[i][0] is ClimbPhase.LIFT and raised[i - 1][0] is ClimbPhase.TRANSFER)
    stalled = raised[k - 1][1]
    lift_end = max(r.translation[2] for p, _, r in raised[k:] if p is ClimbPhase.LIFT)
    assert lift_end == pytest.approx(stalled[2] + gait.p.lift_height + 0.03, abs=1e-6)
    lands = [f for p, f, _ in raised if p is ClimbPhase.GRASP]
    assert np.allclose(lands[0][:2], gait.holds[first][1][:2], atol=1e-9)

    off, log = _stalled_swing(0)
    assert off.done and off.swings_raised == 0
    grasp = [f for _, p, leg, f, _ in log if leg == first and p is ClimbPhase.GRASP]
    assert np.linalg.norm(grasp[0][:2] - off.holds[first][1][:2]) > 0.05
    with pytest.raises(ConfigError, match="stall_raises"):
        ClimbGaitSettings(stall_raises=-1)


def _drive_reseats(gait: ClimbGait, feet: dict, watch) -> list:
    """Run ``gait`` to its end over ideal feet that go where they are told: a swing's
    descent touches at once, a re-seating foot 2 mm below its hold's top. ``watch(leg,
    grasps)`` sees each re-seat step before the foot is tested. Returns the re-seats' grasps
    as (leg, foot pose, the hold's top as known) at the grasp."""
    t, grasps = 0.0, []
    while not gait.done and t < 400:
        tau4 = np.zeros(4)
        if gait.phase is ClimbPhase.DESCEND:
            tau4[LEG_NAMES.index(gait.swing_leg)] = 1.0
        if gait.phase is ClimbPhase.RESEAT:
            g = gait.reseating[0]
            watch(g, grasps)
            k = gait.index[g]
            tau4[LEG_NAMES.index(g)] = float(feet[g].translation[2]
                                             <= gait.holds[g][k][2] - 0.002 + 1e-12)
        ref, events = gait.reference(t, lambda: feet, tau4)
        feet.update(ref.foot_targets)
        grasps += [(e.leg, feet[e.leg].copy(), gait.holds[e.leg][gait.index[e.leg]].copy())
                   for e in events if e.reseat and e.action == "grasp"]
        t += 0.02
    return grasps


def _creeping_reseat(centre: bool, seen: np.ndarray):
    """The first re-seating foot has crept 20 mm off its hold (the others sit on theirs);
    the robot sees each hold ``seen`` [m] from where it was mapped. Returns the gait, that
    leg, its hold's mapped top, the re-seat grasps (leg, position, the hold's mapped top)
    and that foot's path through its first re-seat."""
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3),
                     ClimbGaitSettings(cycles=1, reseat_every=1, reseat_centre=centre))
    gait.sight = lambda leg, k: gait.holds[leg][k] + seen
    feet = {leg: pin.SE3(np.eye(3), gait.holds[leg][0]) for leg in LEG_NAMES}
    first: dict = {}
    path = []

    def watch(g: str, grasps: list) -> None:
        if not first:
            first.update(leg=g, top=gait.holds[g][gait.index[g]].copy())
            feet[g] = pin.SE3(np.eye(3), feet[g].translation + [0.0, 0.02, 0.0])
        if g == first["leg"] and not grasps:
            path.append(feet[g].translation.copy())

    grasps = [(leg, pose.translation, top)
              for leg, pose, top in _drive_reseats(gait, feet, watch)]
    return gait, first["leg"], first["top"], grasps, np.array(path)


def test_a_re_seat_moves_a_crept_foot_back_over_its_hold_as_seen_now():
    """``reseat_centre``: the open foot, 20 mm off its hold, rises by ``RESEAT_LIFT`` as it
    moves over the hold's top where the robot sees it now (4 mm from where it was mapped),
    then presses on there; a foot within ``RECENTRE_MIN`` of its hold is not moved. Without
    it the foot presses on where it opened."""
    from clamber.quadruped.gaits.climb import RECENTRE_MIN, RESEAT_LIFT

    seen = np.array([0.004, 0.0, 0.0])
    assert np.linalg.norm(seen) <= RECENTRE_MIN
    gait, leg, top, grasps, path = _creeping_reseat(True, seen)
    assert gait.done and gait.reseats_centred == 1
    (first, at, _), rest = grasps[0], grasps[1:]
    assert first == leg and np.allclose(at[:2], (top + seen)[:2], atol=1e-9)
    assert at[2] == pytest.approx(top[2] - 0.002, abs=5e-4)
    # Across the rock lifted: every point between where it opened and the top is higher.
    start = top + [0.0, 0.02, 0.0]
    between = [x for x in path if 1e-6 < np.linalg.norm(x[:2] - start[:2])
               and np.linalg.norm(x[:2] - (top + seen)[:2]) > 1e-6]
    assert between and all(x[2] > top[2] for x in between)
    assert path[:, 2].max() == pytest.approx(top[2] + RESEAT_LIFT, abs=1e-9)
    assert rest and all(np.allclose(x[:2], mapped[:2], atol=1e-9) for _, x, mapped in rest)
    gait, leg, top, grasps, _ = _creeping_reseat(False, seen)
    assert gait.reseats_centred == 0
    assert np.allclose(grasps[0][1][:2], (top + [0.0, 0.02, 0.0])[:2], atol=1e-9)


def _tilted_reseats(turn_back: bool, tilt: float = 0.3):
    """Every sole has tilted ``tilt`` [rad] about x from the attitude it landed with (the
    identity) before the first re-seats; returns each re-seat's grasp attitude (leg, rotation)
    and the first re-seating foot's attitudes through its re-seat."""
    holds, normals = _three_holds()
    gait = ClimbGait(holds, normals, np.eye(3),
                     ClimbGaitSettings(cycles=1, reseat_every=1, landing="keep",
                                       reseat_landing=turn_back))
    for leg in LEG_NAMES:
        gait.landing[leg] = [np.eye(3)] * 2
    tilted = pin.exp3(np.array([tilt, 0.0, 0.0]))
    feet = {leg: pin.SE3(tilted, gait.holds[leg][0]) for leg in LEG_NAMES}
    first: list[str] = []
    path = []

    def watch(g: str, grasps: list) -> None:
        if not first:
            first.append(g)
        if g == first[0] and not grasps:
            path.append(feet[g].rotation.copy())

    grasps = [(leg, pose.rotation) for leg, pose, _ in _drive_reseats(gait, feet, watch)]
    return gait, grasps, path


def test_a_re_seat_turns_its_open_sole_back_to_its_landing_attitude_when_asked():
    """``reseat_landing``: a sole tilted 0.3 rad from the attitude it landed with is turned
    back to it while its gripper is open, smoothly (no step larger than a stage's share),
    and pressed on and closed there; the position still presses onto the hold. Without it
    the re-seat welds the sole at the tilt it has."""
    tilt = 0.3
    gait, grasps, path = _tilted_reseats(True, tilt)
    assert gait.done and grasps
    for _, rotation in grasps:
        assert np.linalg.norm(pin.log3(rotation)) < 1e-9
    angles = [float(np.linalg.norm(pin.log3(r))) for r in path]
    assert angles[0] == pytest.approx(tilt) and angles[-1] < 1e-9
    assert float(np.max(np.abs(np.diff(angles)))) < 0.1 * tilt
    gait, grasps, _ = _tilted_reseats(False, tilt)
    assert gait.done and grasps
    first = grasps[0][1]
    assert float(np.linalg.norm(pin.log3(first))) == pytest.approx(tilt)
