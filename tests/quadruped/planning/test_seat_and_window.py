"""The hold map fitted in a band of the wall, and the footpad seat check of the planner."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.planning.depth_map import DepthNoise, observe_wall
from clamber.quadruped.planning.holds import (
    PAD_HALF_WIDTH,
    SEAT_MARGIN,
    HoldMap,
    build_hold_map,
    seat_rise,
)
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.rock.holding import GripperSurfaceModel
from clamber.quadruped.rock.wall import RockWallSpec, generate_wall
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import (
    CONTACT_FORCE,
    SEAT_RISE,
    RockClimbSettings,
    RockClimbTrial,
)


def _key(c):
    return (c.i, c.j, c.u, c.y, c.top.tobytes(), c.normal.tobytes(), c.factor.tobytes())


@pytest.mark.parametrize("window", [(0.30, 0.62), (0.0, 0.15), (1.25, 1.6), (0.71, 0.71)])
def test_a_windowed_map_has_exactly_the_whole_maps_candidates_in_its_band(window):
    """Fitting only the band (plus the rows the fits and the suppression read) gives, bit
    for bit, the whole map's candidates whose cells lie in the band, in the same order,
    also at the wall's ends and for a band one row wide; the map's heights are the whole
    map's."""
    wall = generate_wall(90, 3, RockWallSpec(length=1.6, width=0.8))
    model = GripperSurfaceModel()
    z = observe_wall(wall, DepthNoise(), np.random.default_rng(2))
    whole = build_hold_map(wall, z, model)
    band = build_hold_map(wall, z, model, window=window)
    inside = [c for c in whole.candidates if window[0] <= c.u <= window[1]]
    assert [_key(c) for c in band.candidates] == [_key(c) for c in inside]
    assert band.z is z and np.array_equal(band.uy, whole.uy[[
        k for k, c in enumerate(whole.candidates) if window[0] <= c.u <= window[1]]])


@pytest.fixture(scope="module")
def flat_map():
    wall = generate_wall(90, 0, RockWallSpec(length=0.6, width=0.6))
    return HoldMap(wall, np.zeros_like(wall.z), (), np.zeros((0, 2)))


def _top(hold_map, i, j):
    w = hold_map.wall
    return w.to_world(w.u[i], w.y[j], hold_map.z[i, j])


def test_seat_rise_is_the_highest_rock_under_the_pad_above_the_sole_plane(flat_map):
    """On flat rock a sole along the wall normal seats (rise 0); a 15 mm bump 2 cm from the
    hold inside the pad's square is a 15 mm rise, one 5 cm away (outside the 3.5 cm
    half-width) is not under the pad; a sole tilted by 0.1 rad over flat rock meets the rock
    under its lower edge at 0.03 m x sin(0.1) (the last grid row inside the pad)."""
    w, (i, j) = flat_map.wall, (30, 30)
    top = _top(flat_map, i, j)
    assert seat_rise(flat_map, (i, j), top, w.rotation) == pytest.approx(0.0, abs=1e-12)
    z = flat_map.z.copy()
    z[i + 5, j] = 0.015
    far = HoldMap(w, z, (), flat_map.uy)
    assert seat_rise(far, (i, j), top, w.rotation) == pytest.approx(0.0, abs=1e-12)
    z[i + 2, j] = 0.015
    near = HoldMap(w, z, (), flat_map.uy)
    assert seat_rise(near, (i, j), top, w.rotation) == pytest.approx(0.015, abs=1e-12)
    tilted = w.rotation @ pin.exp3(np.array([0.0, 0.1, 0.0]))
    assert seat_rise(flat_map, (i, j), top, tilted) == pytest.approx(0.03 * np.sin(0.1),
                                                                     rel=1e-9)
    assert PAD_HALF_WIDTH == pytest.approx(0.035)


#: The band [m] around the pad the margin tests read (``--seat-margin 10``).
BAND = 0.01


def test_the_seat_margin_reads_the_rock_around_the_pad(flat_map):
    """A 15 mm bump 4 cm from the hold lies outside the pad's 3.5 cm half-width but inside
    the 1 cm margin around it: the pad alone does not see it, the margin does; one 6 cm away
    lies outside both."""
    w, (i, j) = flat_map.wall, (30, 30)
    top = _top(flat_map, i, j)
    z = flat_map.z.copy()
    z[i, j + 4] = 0.015
    band = HoldMap(w, z, (), flat_map.uy)
    assert seat_rise(band, (i, j), top, w.rotation) == pytest.approx(0.0, abs=1e-12)
    assert seat_rise(band, (i, j), top, w.rotation, PAD_HALF_WIDTH + BAND) \
        == pytest.approx(0.015, abs=1e-12)
    z[i, j + 4], z[i + 6, j] = 0.0, 0.015
    beyond = HoldMap(w, z, (), flat_map.uy)
    assert seat_rise(beyond, (i, j), top, w.rotation, PAD_HALF_WIDTH + BAND) \
        == pytest.approx(0.0, abs=1e-12)


def test_with_the_margin_no_planned_sole_lands_its_corner_on_rock():
    """On wall 3 at 110 deg the fourth swing planned with the pad's square alone lands where
    true rock stands more than 20 mm above the sole's plane within 1 cm around the pad (in
    the dynamic climb that descent stopped 22 mm above the hold, on rock at the gripper's
    corner, and the grasp missed); with the margin every one of the first four holds has at
    most the bound there, within the map's noise and the landing attitude's turn."""
    rm = RobotModel()
    settings = replace(RockClimbSettings(climb=ClimbSettings(incline_deg=110.0)).plan,
                       distance=0.3)
    wall = generate_wall(110.0, 3, settings.wall)
    truth_map = HoldMap(wall, wall.z, (), np.zeros((0, 2)))

    def rises(margin):
        planner = SequencePlanner(wall, settings, 3, rm, reorder=True, landing_cone=0.1,
                                  seat_rise=SEAT_RISE, seat_margin=margin)
        out = []
        for _ in range(4):
            step = planner.next()
            assert step is not None
            out.append(seat_rise(truth_map, step.hold.cell, step.hold.top, step.sole_rotation,
                                 PAD_HALF_WIDTH + BAND))
        return out

    assert max(rises(SEAT_MARGIN)) > 0.02  # the default reads under the pad only
    assert max(rises(BAND)) <= SEAT_RISE + 0.005


def test_the_planner_chooses_only_holds_its_pad_seats_on():
    """On wall 2 at 90 deg the planner without the seat check chooses, for one of the first
    two swings, a hold with more than 15 mm of true rock under the pad above the landing
    sole's plane (the grasp that missed in the dynamic climb); with the check every hold it
    chooses has at most the bound on its map, and within the map's noise (about 1 mm) and
    the landing attitude's turn (0.1 rad over the pad's 3.5 cm) of it on the true rock."""
    rm = RobotModel()
    settings = replace(RockClimbSettings().plan, distance=0.3)
    wall = generate_wall(90.0, 2, settings.wall)
    truth_map = HoldMap(wall, wall.z, (), np.zeros((0, 2)))

    def rises(seat):
        planner = SequencePlanner(wall, settings, 2, rm, reorder=True, landing_cone=0.1,
                                  seat_rise=seat)
        seen = []
        if seat is not None:
            checked = planner.rule._seats

            def spy(ctx, c, q):
                ok = checked(ctx, c, q)
                seen.append(((c.i, c.j), ok))
                return ok
            planner.rule._seats = spy
        out = []
        for _ in range(3):
            step = planner.next()
            if step is None:
                break
            out.append(seat_rise(truth_map, step.hold.cell, step.hold.top, step.sole_rotation))
            if seat is not None:
                assert (step.hold.cell, True) in seen
        return out

    unchecked = rises(None)
    assert len(unchecked) >= 2 and max(unchecked[:2]) > 0.015
    checked = rises(SEAT_RISE)
    assert len(checked) >= 2
    assert max(checked) <= SEAT_RISE + 0.005


class _TouchProbe(RockClimbTrial):
    """A rock trial recording, at each grasp, the rock's force [N] on the swing leg's pad."""

    def _start_winch(self, ev, t):
        if ev.action == "grasp":
            self.touch.append(float(np.linalg.norm(self.sim.grippers.wrenches((ev.leg,))[0, :3])))
            self.finished = True  # the first grasp is all this test needs
            return
        super()._start_winch(ev, t)


@pytest.mark.parametrize("force", [CONTACT_FORCE, None])
def test_a_descent_ends_on_contact_before_the_pad_pushes_hard(force):
    """On wall 0 at 90 deg the first swing's descent ends, with the rock climb's rule, when
    the force estimated from the swing leg's servo torques presses the foot 1.5 N more along
    the hold's normal: the rock then presses on the gripper with under 5 N (1.9 N measured;
    truth from the simulation). With the plane gait's joint-4 torque rule (0.25 N m) it has
    pushed with more than 8 N, a push the stance grippers must take up."""
    quick = ClimbGaitSettings(settle_time=0.5, unload_time=1.0)
    settings = RockClimbSettings(climb=ClimbSettings(gait=quick), distance=0.05,
                                 contact_force=force)
    trial = _TouchProbe.__new__(_TouchProbe)
    trial.touch = []
    _TouchProbe.__init__(trial, settings, 0, time_limit=30.0)
    trial.run()
    assert len(trial.touch) == 1
    if force is not None:
        assert 0.1 < trial.touch[0] < 5.0
    else:
        assert trial.touch[0] > 8.0


@pytest.mark.parametrize("field, value", [("seat_rise", 0.0), ("seat_rise", float("nan")),
                                          ("contact_force", -0.1), ("seat_margin", -0.001),
                                          ("seat_margin", 0.06)])
def test_rock_climb_settings_reject_bad_seat_and_contact_bounds(field, value):
    """A seat bound or contact force that is not a positive number, or a seat margin
    outside 0-50 mm, is a ConfigError."""
    with pytest.raises(ConfigError, match=field):
        RockClimbSettings(**{field: value})


@pytest.mark.parametrize("argv, expected", [([], SEAT_RISE), (["--seat-tolerance", "7.5"], 0.0075),
                                            (["--seat-tolerance", "5", "--seat-check", "off"],
                                             None)])
def test_the_seat_tolerance_option_sets_the_planners_bound_in_metres(argv, expected):
    """``--seat-tolerance MM`` sets the rock climb's seat bound in metres (the default is
    ``SEAT_RISE``); ``--seat-check off`` turns the check off whatever the tolerance."""
    from clamber.cli.main import build_parser
    from clamber.cli.quadruped import _climb_settings

    args = build_parser().parse_args(["quadruped", "climb", "--wall", "rock", *argv])
    seat = _climb_settings(args, 90.0).seat_rise
    if expected is None:
        assert seat is None
    else:
        assert seat == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("argv, expected", [([], SEAT_MARGIN), (["--seat-margin", "10"], 0.01),
                                            (["--seat-margin", "25"], 0.025)])
def test_the_seat_margin_option_sets_the_planners_band_in_metres(argv, expected):
    """``--seat-margin MM`` sets the band around the footpad in metres (default
    ``SEAT_MARGIN``); outside 0-50 mm it is refused, named."""
    from clamber.cli.main import build_parser
    from clamber.cli.quadruped import _climb_settings

    args = build_parser().parse_args(["quadruped", "climb", "--wall", "rock", *argv])
    assert _climb_settings(args, 90.0).seat_margin == pytest.approx(expected, rel=1e-12)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["quadruped", "climb", "--wall", "rock", "--seat-margin",
                                   "51"])
