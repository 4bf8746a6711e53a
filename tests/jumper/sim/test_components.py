"""Motor model, ESC law, capture window, tear-off and export checks (no physics)."""

import numpy as np
import pytest

from clamber.attachment.safe_region import SafeRegion
from clamber.exceptions import ConfigError, ExportError
from clamber.experiments.statistics import wilson_interval
from clamber.jumper.sim.gripper import CaptureWindow, Gripper, GripperState
from clamber.jumper.sim.motor import EscGains, MotorParameters, pd_voltage


def test_motor_voltage_inverts_torque_and_limits_follow_the_supply():
    """voltage() inverts torque() below the supply; stall torque and no-load speed bound it."""
    mo = MotorParameters()
    tau, w = np.array([0.2, -0.1, 0.0]), np.array([10.0, -30.0, 5.0])
    np.testing.assert_allclose(mo.torque(mo.voltage(tau, w), w), tau)
    assert mo.torque(1e3, 0.0) == pytest.approx(mo.stall_torque)
    assert mo.torque(1e3, mo.no_load_speed) == pytest.approx(0.0, abs=1e-12)
    assert mo.no_load_speed == pytest.approx(12.0 * 0.05 / 0.003)


def test_pd_voltage_is_clipped_to_the_supply():
    """A large error saturates at +-supply; at zero error the law returns the feed-forward."""
    g = EscGains(kp=40.0, kd=0.4)
    assert pd_voltage(g, 1.0, 0.0, 0.0, 0.0, 0.0, 12.0) == 12.0
    assert pd_voltage(g, -1.0, 0.0, 0.0, 0.0, 0.0, 12.0) == -12.0
    assert pd_voltage(g, 0.3, 0.3, 2.0, 2.0, 3.5, 12.0) == pytest.approx(3.5)


def test_capture_window_checks_distance_speed_approach_and_angle():
    """Each window bound rejects on its own; a gentle, close, wall-facing approach hooks."""
    w = CaptureWindow(distance=0.001, max_speed=3.0, max_normal_speed=1.5, max_angle_deg=80)
    ok = dict(gap=0.0005, vx=-0.2, vy=-0.5, link_dx=-0.05, link_dy=0.02)
    assert w.accepts(**ok)
    assert not w.accepts(**{**ok, "gap": 0.002})
    assert not w.accepts(**{**ok, "vy": -3.5})
    assert not w.accepts(**{**ok, "vx": -1.6})
    assert not w.accepts(**{**ok, "link_dx": 0.05})  # spines face away from the wall
    with pytest.raises(ConfigError, match="distance"):
        CaptureWindow(distance=-1.0)


def test_gripper_hooks_only_when_armed_releases_on_command_and_tears_after_persistent_excess():
    """Unarmed grippers never hook; a violation beyond the margin tears only after tear_time;
    a short spike or a violation within the margin does not."""
    region = SafeRegion.sector()
    w = CaptureWindow(tear_margin=1.0, tear_time=0.003)
    g = Gripper("front", region, w, dt=0.001, hooked=False)
    args = (0.0, 0.0, -0.1, -0.05, 0.0)
    assert not g.try_capture(*args)
    g.arm()
    assert g.try_capture(*args) and g.hooked
    inside = (-1.0, 5.0)
    far_out = (-8.0, 1.0)  # adhesion far outside the 30 deg sector
    assert g.violation(*inside) == 0.0 and g.violation(*far_out) > 1.0
    assert not g.check_force(*far_out) and not g.check_force(*far_out)
    assert not g.check_force(*inside)  # the spike ends: counter resets
    assert not g.check_force(*far_out) and not g.check_force(*far_out)
    assert g.check_force(*far_out) and g.state is GripperState.TORN and not g.hooked
    g2 = Gripper("rear", region, w, dt=0.001, hooked=True)
    g2.release()
    assert g2.state is GripperState.FREE and not g2.armed


def test_wilson_interval_brackets_the_rate_and_matches_a_known_value():
    """12/30 gives the textbook Wilson interval [0.246, 0.577] at 95 %."""
    iv = wilson_interval(12, 30)
    assert iv.low == pytest.approx(0.2459, abs=1e-3) and iv.high == pytest.approx(0.5768, abs=1e-3)
    assert wilson_interval(0, 30).low == 0.0 < wilson_interval(0, 30).high
    with pytest.raises(ConfigError):
        wilson_interval(31, 30)


def test_export_writes_checked_files_and_refuses_a_violation(coarse_solution, tmp_path):
    """The binary round-trips the CSV's samples; a 5 V supply stops the export naming sample,
    joint and limit, and writes nothing."""
    from clamber.jumper.sim.export import export_reference, read_binary

    # force: the session's coarse solve is not replayed (test_export_safety covers that)
    paths = export_reference(coarse_solution, tmp_path / "ok", force=True)
    header, data = read_binary(paths["binary"])
    csv = np.loadtxt(paths["csv"], delimiter=",", skiprows=1)
    assert header["rate_hz"] == 500 and header["joints"] == ["hip", "spine", "shoulder"]
    assert "angle=rad" in header["units"] and len(data) == len(csv)
    np.testing.assert_allclose(data["angle"], csv[:, 1:4], atol=1e-5)
    np.testing.assert_allclose(np.diff(csv[:, 0]), 0.002, atol=1e-6)
    with pytest.raises(ExportError, match=r"sample \d+ .*joint '.*'.*voltage.*limit \+-5 V"):
        export_reference(coarse_solution, tmp_path / "bad",
                         motor=MotorParameters(supply_voltage=5.0))
    assert not (tmp_path / "bad").exists()
