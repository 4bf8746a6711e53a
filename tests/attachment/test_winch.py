"""Tests of the gripper winch stiffness-control state machine."""

from __future__ import annotations

import math

import pytest

from clamber.attachment.winch import (
    WinchCommand,
    WinchController,
    WinchSettings,
    WinchState,
)
from clamber.exceptions import ConfigError

DT = 0.002


def cable_current(params: WinchSettings, angle: float, stiffness: float, slack: float) -> float:
    """Servo current [A] of a series-elastic cable: torque grows past ``slack`` [rad]."""
    if angle > slack:
        torque = stiffness * (angle - slack)
    elif angle < params.natural_angle - slack:
        torque = -stiffness * (params.natural_angle - slack - angle)
    else:
        torque = 0.0
    return torque / params.torque_constant


def run(ctrl: WinchController, steps: int, command: WinchCommand, current_of) -> list:
    outs = [ctrl.step(current_of(ctrl.goal_angle), command, DT)]
    outs += [ctrl.step(current_of(ctrl.goal_angle), WinchCommand.NONE, DT) for _ in range(steps)]
    return outs


def test_attach_winds_until_target_band_then_holds():
    """ATTACH winds the cable while the torque is low, then holds the angle inside the band."""
    params = WinchSettings()
    ctrl = WinchController(params)
    outs = run(ctrl, 2000, WinchCommand.ATTACH, lambda a: cable_current(params, a, 0.2, 2.0))
    assert outs[0].state is WinchState.ENGAGING
    assert outs[1].goal_angle > outs[0].goal_angle
    assert ctrl.state is WinchState.HOLDING
    assert abs(ctrl.torque - params.target_torque) <= params.torque_band
    held = [o.goal_angle for o in outs[-200:]]
    assert max(held) == min(held)


def test_overload_releases_cable_in_steps():
    """Torque above the band releases one step of cable per settle time until back in band."""
    params = WinchSettings()
    ctrl = WinchController(params)
    run(ctrl, 2000, WinchCommand.ATTACH, lambda a: cable_current(params, a, 0.2, 2.0))
    angle_before = ctrl.goal_angle
    # The rock shifts: the same cable angle now pulls twice as hard.
    outs = run(ctrl, 2500, WinchCommand.NONE, lambda a: cable_current(params, a, 0.4, 2.0))
    states = [o.state for o in outs]
    assert WinchState.RELIEVING in states
    assert ctrl.goal_angle < angle_before
    released = angle_before - ctrl.goal_angle
    assert released == pytest.approx(
        params.release_step * round(released / params.release_step), abs=1e-12
    )
    assert ctrl.state is WinchState.HOLDING
    assert ctrl.torque <= params.target_torque + params.torque_band


def test_low_torque_while_holding_resumes_winding():
    """A slipping grip (torque below the band) sends HOLDING back to ENGAGING and winds on."""
    params = WinchSettings()
    ctrl = WinchController(params)
    run(ctrl, 2000, WinchCommand.ATTACH, lambda a: cable_current(params, a, 0.2, 2.0))
    angle_before = ctrl.goal_angle
    outs = run(ctrl, 20, WinchCommand.NONE, lambda a: 0.0)
    assert WinchState.ENGAGING in [o.state for o in outs]
    assert ctrl.goal_angle > angle_before


def test_noise_inside_band_does_not_chatter():
    """Current noise smaller than the band never leaves HOLDING (filter and hysteresis)."""
    params = WinchSettings()
    ctrl = WinchController(params)
    run(ctrl, 2000, WinchCommand.ATTACH, lambda a: cable_current(params, a, 0.2, 2.0))
    base = ctrl.torque / params.torque_constant
    noise = 0.5 * params.torque_band / params.torque_constant
    for k in range(2000):
        out = ctrl.step(base + noise * math.sin(1.3 * k) * (-1) ** k, WinchCommand.NONE, DT)
        assert out.state is WinchState.HOLDING


def test_engage_timeout_faults_and_reset_recovers():
    """No torque within the engage timeout is a FAULT that holds still until RESET."""
    params = WinchSettings(max_wind_angle=100.0)
    ctrl = WinchController(params)
    outs = run(ctrl, int(params.engage_timeout / DT) + 10, WinchCommand.ATTACH, lambda a: 0.0)
    assert ctrl.state is WinchState.FAULT
    assert "timeout" in ctrl.fault_reason
    frozen = ctrl.goal_angle
    assert ctrl.step(0.0, WinchCommand.ATTACH, DT).state is WinchState.FAULT
    assert ctrl.goal_angle == frozen
    assert outs[-1].goal_angle == frozen
    assert ctrl.step(0.0, WinchCommand.RESET, DT).state is WinchState.NATURAL
    assert ctrl.goal_angle == params.natural_angle


def test_winding_limit_faults():
    """Reaching the winding limit before the target torque is a FAULT at the limit angle."""
    params = WinchSettings(max_wind_angle=1.0)
    ctrl = WinchController(params)
    run(ctrl, 400, WinchCommand.ATTACH, lambda a: 0.0)
    assert ctrl.state is WinchState.FAULT
    assert "limit" in ctrl.fault_reason
    assert ctrl.goal_angle == params.max_wind_angle


def test_detach_unwinds_past_natural_until_detach_cable_tight():
    """DETACH unwinds through the natural angle and opens when the detach cable is tight."""
    params = WinchSettings()
    ctrl = WinchController(params)
    cable = lambda a: cable_current(params, a, 0.2, 2.0)  # noqa: E731
    run(ctrl, 2000, WinchCommand.ATTACH, cable)
    outs = run(ctrl, 3000, WinchCommand.DETACH, cable)
    assert outs[0].state is WinchState.DISENGAGING
    assert ctrl.state is WinchState.OPEN
    assert params.detach_angle <= ctrl.goal_angle < params.natural_angle
    assert -ctrl.torque >= params.detach_torque
    angles = [o.goal_angle for o in outs if o.state is WinchState.DISENGAGING]
    assert all(b <= a for a, b in zip(angles, angles[1:], strict=False))


def test_detach_stops_at_detach_angle_without_torque():
    """With no detach-cable torque, DETACH stops at the detach angle and reports OPEN."""
    params = WinchSettings()
    ctrl = WinchController(params)
    run(ctrl, 2000, WinchCommand.DETACH, lambda a: 0.0)
    assert ctrl.state is WinchState.OPEN
    assert ctrl.goal_angle == params.detach_angle


def test_commands_are_ignored_where_they_do_not_apply():
    """ATTACH while holding and DETACH while open change nothing; RELAX goes to natural."""
    params = WinchSettings()
    ctrl = WinchController(params)
    cable = lambda a: cable_current(params, a, 0.2, 2.0)  # noqa: E731
    run(ctrl, 2000, WinchCommand.ATTACH, cable)
    angle = ctrl.goal_angle
    assert ctrl.step(cable(angle), WinchCommand.ATTACH, DT).state is WinchState.HOLDING
    assert ctrl.goal_angle == angle
    assert ctrl.step(cable(angle), WinchCommand.RELAX, DT).state is WinchState.NATURAL
    assert ctrl.goal_angle == params.natural_angle
    run(ctrl, 3000, WinchCommand.DETACH, cable)
    assert ctrl.state is WinchState.OPEN
    angle = ctrl.goal_angle
    assert ctrl.step(cable(angle), WinchCommand.DETACH, DT).state is WinchState.OPEN
    assert ctrl.goal_angle == angle


def test_outputs_respect_limits():
    """Every goal stays within [detach_angle, max_wind_angle] and carries the current limit."""
    params = WinchSettings()
    ctrl = WinchController(params)
    cable = lambda a: cable_current(params, a, 0.3, 1.0)  # noqa: E731
    for command in (WinchCommand.ATTACH, WinchCommand.DETACH, WinchCommand.ATTACH):
        for out in run(ctrl, 1500, command, cable):
            assert params.detach_angle <= out.goal_angle <= params.max_wind_angle
            assert out.current_limit == params.current_limit


@pytest.mark.parametrize(
    ("field", "value"),
    [("torque_constant", 0.0), ("torque_band", 5.0), ("detach_angle", 1.0),
     ("current_limit", 0.1), ("wind_rate", math.nan)],
)
def test_bad_params_raise_config_error(field, value):
    """Invalid parameters raise ConfigError naming the field."""
    with pytest.raises(ConfigError, match=field):
        WinchSettings(**{field: value})


def test_bad_step_input_raises():
    """NaN current, a non-positive dt or an unknown command raise ConfigError."""
    ctrl = WinchController()
    with pytest.raises(ConfigError):
        ctrl.step(math.nan, WinchCommand.NONE, DT)
    with pytest.raises(ConfigError):
        ctrl.step(0.0, WinchCommand.NONE, 0.0)
    with pytest.raises(ConfigError):
        ctrl.step(0.0, "attach", DT)  # type: ignore[arg-type]
