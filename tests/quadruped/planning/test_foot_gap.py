"""Planned holds keep each gripper clear of the others: on overhanging walls a rear foot's
best-ranked hold can lie beside, or on, the front foot's gripper, where the sole lands on
that gripper instead of rock and the grasp misses."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.model.description import mjcf_string
from clamber.quadruped.model.robot import Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.planning.rollout import PlanClimbSettings
from clamber.quadruped.planning.selection import FOOT_MARGIN, PlannerSettings, default_foot_gap
from clamber.quadruped.planning.sequence import SequencePlanner
from clamber.quadruped.rock.wall import generate_wall
from clamber.quadruped.trials.rock_climb import SEAT_RISE, RockClimbSettings

#: Walls at 110 deg (seed) whose first eight greedy swings, planned without the gap, put a
#: rear foot's hold within 71 mm of the front foot's on wall 12 (swing 4) and within 67 mm,
#: then on it (0 mm), on wall 14 (swings 5 and 6): seed and the first crowded swing.
WALLS = ((12, 4), (14, 5))


@pytest.fixture(scope="module")
def rm():
    return RobotModel()


def _gripper_width() -> float:
    """The gripper's collision box width [m], read from the MuJoCo model the simulator uses."""
    model = mujoco.MjModel.from_xml_string(mjcf_string(Marcbot()))
    return float(2.0 * model.geom("LF_gripper_geom").size[0])


def _plan(rm: RobotModel, seed: int, gap: float | None) -> tuple[list[float], list[dict]]:
    """Eight greedy swings at 110 deg: each planned hold's distance [m] in the wall's plane to
    the nearest other foot's hold, and each choice's rejection tally."""
    settings = PlanClimbSettings(incline_deg=110.0, distance=0.6)
    wall = generate_wall(110.0, seed, settings.wall)
    planner = SequencePlanner(wall, settings, seed, rm, seat_rise=SEAT_RISE, reorder=True,
                              foot_gap=gap)
    tallies, choose = [], planner.rule.choose

    def tallied(ctx, exclude):
        choice = choose(ctx, exclude)
        tallies.append(dict(choice.rejected))
        return choice

    planner.rule.choose = tallied
    gaps = []
    for _ in range(8):
        step = planner.next()
        if step is None:
            break
        u = wall.to_wall(step.hold.top)[:2]
        gaps.append(min(float(np.linalg.norm(u - wall.to_wall(h.top)[:2]))
                        for leg, h in planner.holds.items() if leg != step.leg))
    return gaps, tallies


def test_the_default_gap_is_the_grippers_collision_width_plus_the_margin(rm):
    """The planner's default keeps the width of the gripper box the simulator collides with,
    plus the tracking margin, between two feet's holds; 0 turns the check off, and a gap
    outside 0-0.3 m is refused, named."""
    width = _gripper_width()
    assert width == pytest.approx(0.07)
    assert default_foot_gap(Marcbot()) == pytest.approx(width + FOOT_MARGIN)
    settings = PlanClimbSettings(incline_deg=110.0, distance=0.6)
    wall = generate_wall(110.0, 0, settings.wall)
    assert SequencePlanner(wall, settings, 0, rm).rule.foot_gap == pytest.approx(
        width + FOOT_MARGIN)
    assert SequencePlanner(wall, settings, 0, rm, foot_gap=0.0).rule.foot_gap == 0.0
    for bad in (-0.01, 0.5):
        with pytest.raises(ConfigError, match="foot_gap"):
            PlannerSettings(foot_gap=bad)
        with pytest.raises(ConfigError, match="foot_gap"):
            RockClimbSettings(foot_gap=bad)


@pytest.mark.parametrize("seed, crowded", WALLS)
def test_no_planned_hold_lies_within_the_gap_of_another_foot(rm, seed, crowded):
    """Without the gap, the wall puts a rear foot beside or on the front foot's gripper
    (within the box's width plus the margin). With it, the plan goes past that swing on
    another hold, and every hold it plans (it may stop sooner: greedily, a crowded hold is
    sometimes the only one) lies at least the gripper's width plus the margin from every
    other foot's hold; the choices' tallies show the crowded candidates passed over."""
    loose, _ = _plan(rm, seed, 0.0)
    assert len(loose) == 8 and loose[crowded] < default_foot_gap(Marcbot())
    assert min(loose[:crowded]) >= default_foot_gap(Marcbot())
    gaps, tallies = _plan(rm, seed, None)
    assert len(gaps) > crowded
    assert min(gaps) >= default_foot_gap(Marcbot()) - 1e-9
    assert sum(t.get("foot gap", 0) for t in tallies) > 0
