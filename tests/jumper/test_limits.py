"""Honest limits: the pushing side of the safe region, and limits checked between nodes."""

from dataclasses import replace

import numpy as np
import pytest

from clamber.attachment.safe_region import SafeRegion
from clamber.exceptions import ConfigError
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.verify import limit_violations


def test_spined_region_bounds_the_downward_pull_of_a_pushed_gripper():
    """With the wall pushing, f_y may go down only to -mu f_x; the bare sector allows 1.7 f_x."""
    region = SafeRegion.spined(push_friction=0.3)
    assert region.contains(np.array([1.0, -0.29]))
    assert not region.contains(np.array([1.0, -0.31]))
    assert SafeRegion.sector().contains(np.array([1.0, -1.7]))
    # On the adhesion side the sector row is the stricter one: both regions agree there.
    for f in ([-1.0, 1.8], [-1.0, 1.7], [-2.0, 5.0]):
        assert region.contains(np.array(f)) == SafeRegion.sector().contains(np.array(f))
    assert SafeRegion.spined(push_friction=0.0).contains(np.array([1.0, 0.0]))
    assert not SafeRegion.spined(push_friction=0.0).contains(np.array([1.0, -1e-3]))
    with pytest.raises(ConfigError, match="push_friction"):
        SafeRegion.spined(push_friction=-0.1)


def test_default_settings_use_the_spined_region():
    """The optimizer's default safe region has the push-friction row."""
    s = OptimizationSettings()
    assert "push_friction" in s.safe_region_front.labels
    assert "push_friction" in s.safe_region_rear.labels


def test_between_node_check_catches_a_speed_limit_met_only_at_the_nodes(nominal_coarse):
    """A joint-speed limit set to the largest node speed holds at every node but the replay
    exceeds it between nodes; a limit 50 % higher holds everywhere."""
    sol = nominal_coarse
    peak = float(np.abs(sol.qd[:, 3:6]).max())
    tight = replace(sol, settings=replace(sol.settings, joint_speed_limit=peak))
    report = limit_violations(tight)
    assert report["joint_speed"]["nodes"] == pytest.approx(0.0, abs=1e-9)
    assert report["joint_speed"]["between"] > 0.05
    loose = replace(sol, settings=replace(sol.settings, joint_speed_limit=1.5 * peak))
    assert limit_violations(loose)["joint_speed"]["between"] == 0.0


def test_between_node_check_catches_a_force_region_met_only_at_the_nodes(nominal_coarse):
    """Capping f_y at the largest optimized node force: the replayed contact forces
    between the nodes exceed the cap by more than the node forces do."""
    sol = nominal_coarse
    f = np.vstack([sol.f_front, sol.f_rear])
    cap = float(np.nanmax(f[:, 1]))
    region = SafeRegion(A=np.array([[0.0, 1.0]]), b=np.array([cap]), labels=("cap",))
    capped = replace(sol, settings=replace(sol.settings, safe_region_front=region,
                                           safe_region_rear=region))
    report = limit_violations(capped)
    assert report["safe_region"]["between"] > report["safe_region"]["nodes"] + 1e-3


def test_attach_accuracy_reports_every_limit(nominal_coarse):
    """The replay report names every path limit with node and between-node values."""
    limits = nominal_coarse.accuracy["limits"]
    assert set(limits) == {"joint_speed", "torque", "joint_clearance", "foot_clearance",
                           "safe_region"}
    for v in limits.values():
        assert v["between"] >= 0.0 and v["nodes"] >= 0.0
