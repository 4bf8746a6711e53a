"""Stiffness control of the SPASAS gripper winch: a current-threshold state machine.

The gripper servo drives a winch that winds the attachment cables (positive angle) or,
turned the other way past the slack "natural" position, the detachment cables. The servo
current, times the torque constant, gives the winch torque; the cable, torsion springs and
compression springs are in series, so holding a torque is holding a grip stiffness. The rules
of the paper's Gripper Control section:

* torque below the target band: keep winding (``ENGAGING``), tightening the attachment cable;
* torque inside the band: hold the winch angle (``HOLDING``);
* torque above the band: release a small step of cable (``RELIEVING``), wait for it to
  settle, and re-evaluate, which prevents overload and wasted energy.

Detaching (``DISENGAGING``) unwinds back through the natural state and tightens the
detachment cable until its torque threshold or the detach angle is reached (``OPEN``, the
walking mode with the phalanges up). Timeouts and the winding limit end in ``FAULT``, where
the winch holds still until ``RESET``. The torque estimate is low-pass filtered, and the band
gives hysteresis, so current noise does not chatter the states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from enum import Enum

from clamber import _validate as v
from clamber.exceptions import ConfigError


class WinchState(Enum):
    """Where the gripper is in its attach / hold / detach cycle."""

    NATURAL = "natural"  # cables slack, winch at the natural angle
    ENGAGING = "engaging"  # winding the attachment cable until the target torque
    HOLDING = "holding"  # torque in the band, winch angle held
    RELIEVING = "relieving"  # torque above the band, a step of cable released
    DISENGAGING = "disengaging"  # unwinding, then pulling the detachment cable
    OPEN = "open"  # phalanges pulled up (walking mode)
    FAULT = "fault"  # a timeout or the winding limit; held until RESET


class WinchCommand(Enum):
    """Requests from the gait layer; ``NONE`` continues what is under way."""

    NONE = "none"
    ATTACH = "attach"
    DETACH = "detach"
    RELAX = "relax"  # go to the natural state (cables slack)
    RESET = "reset"  # leave FAULT for NATURAL


@dataclass(frozen=True)
class WinchSettings:
    """Thresholds, rates and timeouts of the winch controller.

    Defaults are for a Dynamixel-class servo driving a 10 mm radius winch.

    Attributes:
        torque_constant: winch torque per servo current, in [N m / A].
        target_torque: winch torque held while attached, in [N m].
        torque_band: half-width of the hold band around ``target_torque``, in [N m].
        detach_torque: winch torque (magnitude) at which the detachment cable counts as
            tight, in [N m].
        wind_rate: winch speed while engaging or disengaging, in [rad/s].
        release_step: cable released per overload step, as a winch angle, in [rad].
        settle_time: wait after a release step before re-evaluating, in [s].
        natural_angle: winch angle with all cables slack, in [rad].
        detach_angle: winch angle with the phalanges fully up, in [rad] (< natural_angle).
        max_wind_angle: winding limit of the attachment cable, in [rad] (> natural_angle).
        engage_timeout: longest time to reach the target torque, in [s].
        disengage_timeout: longest time to open the gripper, in [s].
        filter_time_constant: time constant of the torque low-pass filter, in [s].
        current_limit: servo current limit sent with every goal, in [A].
    """

    torque_constant: float = 1.6
    target_torque: float = 0.8
    torque_band: float = 0.1
    detach_torque: float = 0.5
    wind_rate: float = 6.0
    release_step: float = 0.05
    settle_time: float = 0.1
    natural_angle: float = 0.0
    detach_angle: float = -6.0
    max_wind_angle: float = 20.0
    engage_timeout: float = 3.0
    disengage_timeout: float = 3.0
    filter_time_constant: float = 0.02
    current_limit: float = 1.2

    def __post_init__(self) -> None:
        angles = ("natural_angle", "detach_angle", "max_wind_angle")
        v.numeric_fields(self, "WinchSettings", low=-math.inf, names=angles)
        v.numeric_fields(self, "WinchSettings", strict=True,
                         names=[f.name for f in fields(self) if f.name not in angles])
        if not self.torque_band < self.target_torque:
            raise ConfigError(
                f"WinchSettings.torque_band must be < target_torque ({self.target_torque} N m), "
                f"got {self.torque_band}"
            )
        if not self.detach_angle < self.natural_angle < self.max_wind_angle:
            raise ConfigError(
                "WinchSettings needs detach_angle < natural_angle < max_wind_angle, got "
                f"{self.detach_angle}, {self.natural_angle}, {self.max_wind_angle}"
            )
        needed = (self.target_torque + self.torque_band) / self.torque_constant
        if self.current_limit <= needed:
            raise ConfigError(
                f"WinchSettings.current_limit must exceed the current of the band's top, "
                f"{needed:.3f} A, got {self.current_limit}"
            )


@dataclass(frozen=True)
class WinchOutput:
    """One control cycle's result.

    Attributes:
        goal_angle: winch goal angle for the servo, in [rad].
        current_limit: servo current limit, in [A].
        state: state after this cycle.
        torque: filtered winch torque estimate, in [N m].
    """

    goal_angle: float
    current_limit: float
    state: WinchState
    torque: float


class WinchController:
    """The gripper winch state machine; call :meth:`step` once per control cycle."""

    def __init__(self, params: WinchSettings | None = None, angle: float | None = None) -> None:
        """Start in ``NATURAL`` (or at ``angle`` in [rad], if the winch is elsewhere)."""
        self.params = WinchSettings() if params is None else params
        self.state = WinchState.NATURAL
        self.goal_angle = self.params.natural_angle if angle is None else float(angle)
        self.torque = 0.0
        self._timer = 0.0  # time in the current phase [s]
        self._fault_reason = ""

    @property
    def fault_reason(self) -> str:
        """Why the controller entered ``FAULT`` ("" otherwise)."""
        return self._fault_reason

    def _enter(self, state: WinchState) -> None:
        self.state = state
        self._timer = 0.0

    def _fault(self, reason: str) -> None:
        self._fault_reason = reason
        self._enter(WinchState.FAULT)

    def step(
        self, measured_current: float, command: WinchCommand = WinchCommand.NONE, dt: float = 0.002
    ) -> WinchOutput:
        """Advance one cycle.

        Args:
            measured_current: servo current in [A], positive when pulling the attachment
                cable.
            command: request from the gait layer.
            dt: cycle time in [s].
        """
        if not (math.isfinite(dt) and dt > 0):
            raise ConfigError(f"winch step dt must be finite and > 0 s, got {dt}")
        if not math.isfinite(measured_current):
            raise ConfigError(f"measured winch current must be finite, got {measured_current}")
        if not isinstance(command, WinchCommand):
            raise ConfigError(f"winch command must be a WinchCommand, got {command!r}")
        p = self.params
        alpha = dt / (p.filter_time_constant + dt)
        self.torque += alpha * (p.torque_constant * measured_current - self.torque)
        self._timer += dt
        self._apply_command(command)
        self._advance(dt)
        return WinchOutput(self.goal_angle, p.current_limit, self.state, self.torque)

    def _apply_command(self, command: WinchCommand) -> None:
        attached = (WinchState.ENGAGING, WinchState.HOLDING, WinchState.RELIEVING)
        if command is WinchCommand.RESET and self.state is WinchState.FAULT:
            self._fault_reason = ""
            self._enter(WinchState.NATURAL)
        elif self.state is WinchState.FAULT:
            return
        elif command is WinchCommand.ATTACH and self.state not in attached:
            self._enter(WinchState.ENGAGING)
        elif command is WinchCommand.DETACH and self.state not in (
            WinchState.DISENGAGING, WinchState.OPEN
        ):
            self._enter(WinchState.DISENGAGING)
        elif command is WinchCommand.RELAX and self.state is not WinchState.NATURAL:
            self._enter(WinchState.NATURAL)

    def _advance(self, dt: float) -> None:
        p = self.params
        low, high = p.target_torque - p.torque_band, p.target_torque + p.torque_band
        if self.state is WinchState.NATURAL:
            self.goal_angle = p.natural_angle
        elif self.state is WinchState.ENGAGING:
            if self.torque > high:
                self._enter(WinchState.RELIEVING)
                self._release()
            elif self.torque >= low:
                self._enter(WinchState.HOLDING)
            elif self._timer > p.engage_timeout:
                self._fault("engage timeout: target torque not reached")
            elif self.goal_angle + p.wind_rate * dt > p.max_wind_angle:
                self.goal_angle = p.max_wind_angle
                self._fault("winding limit reached before the target torque")
            else:
                self.goal_angle += p.wind_rate * dt
        elif self.state is WinchState.HOLDING:
            if self.torque > high:
                self._enter(WinchState.RELIEVING)
                self._release()
            elif self.torque < low:
                self._enter(WinchState.ENGAGING)
        elif self.state is WinchState.RELIEVING:
            if self._timer >= p.settle_time:
                if self.torque > high:
                    self._timer = 0.0
                    self._release()
                elif self.torque < low:
                    self._enter(WinchState.ENGAGING)
                else:
                    self._enter(WinchState.HOLDING)
        elif self.state is WinchState.DISENGAGING:
            tight = self.goal_angle < p.natural_angle and -self.torque >= p.detach_torque
            if tight or self.goal_angle <= p.detach_angle:
                self._enter(WinchState.OPEN)
            elif self._timer > p.disengage_timeout:
                self._fault("disengage timeout: gripper not open")
            else:
                self.goal_angle = max(self.goal_angle - p.wind_rate * dt, p.detach_angle)

    def _release(self) -> None:
        """Let out one step of attachment cable, never past the natural angle."""
        p = self.params
        self.goal_angle = max(self.goal_angle - p.release_step, p.natural_angle)
