"""A climb's holds planned ahead from noisy maps, for the dynamic simulation to execute.

Before a dynamic climb the robot plans its holds one swing at a time, in the gait's leg
order, as :func:`clamber.quadruped.planning.rollout.plan_climb` does, but without looking
at the true wall: before each swing a fresh depth map is taken, the rule chooses from its
candidates, and the stance it leads to (body pose and joint angles) becomes the start of
the next choice. The chosen holds are the map's estimates (top, normal, capacity); whether
a grasp engages and whether the holds carry the robot is left to the simulation. Only the
start stance (where the robot is placed) is on true hold tops.

Planning stops when the body has risen ``distance`` [m] along the wall, or when the rule
finds no hold (then the climb is planned only as far as that).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber.quadruped.model import RobotModel
from clamber.quadruped.planning.depth_map import observe_wall
from clamber.quadruped.planning.holds import build_hold_map
from clamber.quadruped.planning.rollout import (
    RULES,
    PlanClimbSettings,
    StopReason,
    _start,
    _Truth,
)
from clamber.quadruped.planning.selection import ChoiceStatus, Foothold, StepContext
from clamber.quadruped.rock.holding import GripperSurfaceModel
from clamber.quadruped.rock.wall import RockWall

#: Most swings one plan may hold (a guard; 2 m takes about 40).
MAX_STEPS = 200


@dataclass(frozen=True)
class PlannedStep:
    """One swing: the leg, the hold as the map shows it, and the wrench [N, N m] the plan
    expects on it."""

    leg: str
    hold: Foothold
    expected_wrench: np.ndarray


@dataclass(frozen=True)
class HoldSequence:
    """A planned climb: the start holds (true tops), the swings, why planning stopped and
    what the rule said then, the body's planned rise [m] along the wall."""

    start: dict[str, Foothold]
    steps: tuple[PlannedStep, ...]
    stop: StopReason
    detail: str
    planned_distance: float


def plan_sequence(wall: RockWall, settings: PlanClimbSettings, seed: int,
                  rm: RobotModel | None = None, model: GripperSurfaceModel | None = None,
                  truth: _Truth | None = None) -> HoldSequence:
    """The holds for climbing ``settings.distance`` on ``wall`` with ``settings.rule``; maps
    seeded from ``seed``. The truth is used only to place the start stance."""
    rm = rm or RobotModel()
    model = model or GripperSurfaceModel()
    truth = truth or _Truth(wall, model)
    rng = np.random.default_rng(seed + 7_000_003)
    rule = RULES[settings.rule](rm)
    order = settings.order
    hold_map = build_hold_map(wall, observe_wall(wall, settings.noise, rng), model)
    start = _start(rm, truth, hold_map, settings)
    if start is None:
        return HoldSequence({}, (), StopReason.START, "no start stance within reach", 0.0)
    holds, body, q = start
    first = dict(holds)
    u0 = wall.to_wall(body.translation)[0]
    steps: list[PlannedStep] = []
    while True:
        climbed = float(wall.to_wall(body.translation)[0] - u0)
        if climbed >= settings.distance:
            return HoldSequence(first, tuple(steps), StopReason.DISTANCE, "", climbed)
        if len(steps) >= MAX_STEPS:
            return HoldSequence(first, tuple(steps), StopReason.NO_HOLD,
                                f"gave up after {MAX_STEPS} swings", climbed)
        k = len(steps)
        leg, next_leg = order[k % 4], order[(k + 1) % 4]
        hold_map = build_hold_map(wall, observe_wall(wall, settings.noise, rng), model)
        choice = rule.choose(StepContext(hold_map, holds, body, q, leg, next_leg,
                                         settings.standoff), set())
        if choice.status is not ChoiceStatus.CHOSEN:
            why = ", ".join(f"{name} {n}" for name, n in choice.rejected if n)
            detail = f"{leg} at swing {k + 1}: {choice.status.value}" + \
                (f" (rejected: {why})" if why else "")
            return HoldSequence(first, tuple(steps), StopReason.NO_HOLD, detail, climbed)
        c = choice.hold
        hold = Foothold((c.i, c.j), c.top, c.normal, c.factor)
        steps.append(PlannedStep(leg, hold, choice.expected_wrench))
        holds = {**holds, leg: hold}
        body, q = choice.body, choice.q
