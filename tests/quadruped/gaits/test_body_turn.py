"""The body turn against sole wind-up: it lowers the wind-up it predicts, stays in its
limits, follows the grippers that hold, and a climb with it repeats exactly."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.gaits.body_turn import BodyTurn
from clamber.quadruped.model.kinematics import Clik
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.windup import windup
from clamber.quadruped.trials.climb import ClimbSettings, run_climb

TILTS = np.array([[0.03, -0.05], [-0.05, -0.05], [0.04, 0.05], [0.01, 0.03]])


@pytest.fixture(scope="module")
def stance(tilted_stance):
    """Clik, joints, body and world grippers of a vertical-wall stance with soles fitted to
    hold tops tilted by 2-4 deg."""
    rm = RobotModel(Marcbot())
    q, body, feet = tilted_stance(rm, TILTS)
    return Clik(rm), q, body, feet


def test_the_planned_turn_minimises_the_predicted_windup_within_its_limits(stance):
    """Half a stride up the wall, the turn :meth:`BodyTurn.plan` picks minimises the sum of
    squared blind-axis turns (:func:`windup`, evaluated independently) plus the turn's
    regularisation: lower than with no turn, and no lower 5 mrad away in any axis; every
    axis of the turn lies within the limit."""
    clik, q, body, feet = stance
    end = pin.SE3(body.rotation, body.translation + 0.11 * body.rotation[:, 0])
    turner = BodyTurn(clik, limit=0.08)
    turner.welds = dict(zip(LEG_NAMES, feet, strict=True))
    x = turner.plan(q, end)

    def cost(turn: np.ndarray) -> float:
        w = windup(clik, q, pin.SE3(end.rotation @ pin.exp3(turn), end.translation), feet)
        return float(w @ w + turner.regularization**2 * turn @ turn)

    assert np.abs(x).max() <= 0.08 + 1e-12
    assert cost(x) < 0.95 * cost(np.zeros(3))
    for e in np.vstack([np.eye(3), -np.eye(3)]):
        assert cost(x + 0.005 * e) > cost(x) - 1e-9


def test_the_turn_blends_from_the_last_move_and_waits_for_four_grippers(stance):
    """A move blends from the previous turn to the new one; with a gripper open the turn in
    place is kept."""
    clik, q, body, feet = stance
    turner = BodyTurn(clik)
    turner.track(("LF", "RF", "RR"), lambda: dict(zip(LEG_NAMES, feet, strict=True)))
    assert set(turner.welds) == {"LF", "RF", "RR"}
    assert np.array_equal(turner.plan(q, body), np.zeros(3))
    turner.track(LEG_NAMES, lambda: dict(zip(LEG_NAMES, feet, strict=True)))
    end = pin.SE3(body.rotation, body.translation + 0.11 * body.rotation[:, 0])
    x = turner.plan(q, end)
    assert np.allclose(turner.turn(0.0), np.zeros(3))
    assert np.allclose(turner.turn(0.5), x / 2)
    turner.track(("LF", "LR", "RF"), lambda: pytest.fail("no gripper closed"))
    assert "RR" not in turner.welds


def test_a_climb_with_the_body_turn_repeats_exactly():
    """The same seed climbs the same way twice with the body turn on (one cycle)."""
    settings = ClimbSettings(incline_deg=90.0, body_turn=True, verdict_rerun=False,
                             gait=ClimbGaitSettings(cycles=1))
    a, _ = run_climb(settings, 3)
    b, _ = run_climb(settings, 3)
    assert a.failure == b.failure
    assert a.distance_m == b.distance_m and a.peak_gripper_load == b.peak_gripper_load
