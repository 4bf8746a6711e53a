"""Release clearance: a free gripper keeps off the wall between its release and its catch,
ramped in and out, and out-of-range clearances are refused."""

import math

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solution import TrajectorySolution
from clamber.jumper.solve import solve

C = 0.004


def _gap_and_bound(sol: TrajectorySolution, phase: int, gripper: int, ramp: str):
    """The gripper's distance from the wall beyond its radius at the phase's nodes [m],
    and the clearance the rule asks for there (linear in the node index)."""
    k = np.flatnonzero(sol.phase == phase)
    k = k[np.r_[True, np.diff(sol.t[k]) > 0]]  # one node per instant
    j = np.arange(len(k)) / (len(k) - 1)
    share = j if ramp == "up" else 1.0 - j
    return sol.points[k, 0, gripper] - sol.settings.foot_radius, C * share


@pytest.fixture(scope="module")
def cleared(nominal_coarse):
    sol = solve(Morphology.nominal(), OptimizationSettings(release_clearance=C), "coarse",
                nominal_coarse)
    assert sol.status.success, sol.return_status
    return sol


@pytest.mark.parametrize(("phase", "gripper", "ramp"), [
    (2, 0, "up"), (3, 0, "down"), (3, 4, "up"), (4, 4, "down")])
def test_free_grippers_keep_the_ramped_clearance_at_every_node(cleared, nominal_coarse,
                                                               phase, gripper, ramp):
    """Front gripper free in phases 2-3, rear in 3-4: its distance from the wall keeps the
    clearance, ramped up over the first free phase and down over the last."""
    gap, bound = _gap_and_bound(cleared, phase, gripper, ramp)
    assert np.all(gap >= bound - 1e-6)


def test_the_clearance_binds_where_the_optimum_slid_along_the_wall(cleared, nominal_coarse):
    """Without it the optimum keeps a released gripper within the clearance somewhere the
    rule forbids (the test can fail); with it that row is active and the jump is slower."""
    before = [_gap_and_bound(nominal_coarse, *a) for a in
              ((2, 0, "up"), (3, 0, "down"), (3, 4, "up"), (4, 4, "down"))]
    assert any(np.any(g < b - 1e-4) for g, b in before)
    after = [_gap_and_bound(cleared, *a) for a in
             ((2, 0, "up"), (3, 0, "down"), (3, 4, "up"), (4, 4, "down"))]
    assert min(np.min(g - b) for g, b in after) == pytest.approx(0.0, abs=1e-5)
    assert cleared.speed < nominal_coarse.speed


def test_a_zero_clearance_is_the_plain_radius_and_is_not_recorded():
    s = OptimizationSettings()
    assert s.release_clearance == 0.0
    assert "release_clearance" not in s.to_dict()
    assert OptimizationSettings.from_dict(s.with_(release_clearance=0.002).to_dict()) \
        .release_clearance == 0.002


@pytest.mark.parametrize("bad", [-0.001, 0.06, math.nan, math.inf, "0.01"])
def test_a_clearance_out_of_range_is_refused(bad):
    with pytest.raises(ConfigError, match="release_clearance"):
        OptimizationSettings(release_clearance=bad)
