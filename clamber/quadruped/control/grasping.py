"""Grasp and release through the winch state machine, with detection and retry.

A grasp steps the :class:`~clamber.attachment.winch.WinchController` on ``ATTACH`` until it
holds or faults (the torque never rose: no engagement); a fault resets it, opens the gripper
and retries, up to ``retries`` times. A release runs ``DETACH`` until ``OPEN``. The plant
has ``step(goal_angle, dt) -> current``, a winch ``angle`` [rad] and an ``engaged`` flag
set before each try (:class:`clamber.quadruped.sim.winch_plant.WinchPlant`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from clamber.attachment.winch import WinchCommand, WinchController, WinchState
from clamber.exceptions import ConfigError

#: Longest one winch phase may run before the sequencer gives up on it [s].
PHASE_LIMIT = 10.0
#: Servo position error [rad] at which it has arrived at the goal.
ARRIVAL_TOLERANCE = 0.05


class GraspStatus(enum.Enum):
    HELD = "held"
    NOT_ENGAGED = "no try engaged"
    OPENED = "opened"
    STUCK = "the gripper did not open"


@dataclass(frozen=True)
class GraspReport:
    """Outcome, tries made, total duration [s] and the controller's last fault reason."""

    status: GraspStatus
    tries: int
    duration: float
    fault: str = ""


def _run(ctrl: WinchController, plant, command: WinchCommand, until: tuple[WinchState, ...],
         dt: float) -> tuple[WinchState, float]:
    """Step the controller on the plant until a state in ``until``; ``OPEN`` counts once the
    servo has also arrived (after a reset the goal jumps ahead of the servo)."""
    t = 0.0
    current = plant.step(plant.angle, dt)
    out = ctrl.step(current, command, dt)
    while t < PHASE_LIMIT:
        arrived = abs(plant.angle - out.goal_angle) <= ARRIVAL_TOLERANCE
        if out.state in until and (out.state is not WinchState.OPEN or arrived):
            break
        current = plant.step(out.goal_angle, dt)
        out = ctrl.step(current, WinchCommand.NONE, dt)
        t += dt
    return out.state, t


def release(ctrl: WinchController, plant, dt: float = 0.01) -> GraspReport:
    """Open the gripper (phalanges up)."""
    state, t = _run(ctrl, plant, WinchCommand.DETACH, (WinchState.OPEN, WinchState.FAULT), dt)
    ok = state is WinchState.OPEN
    return GraspReport(GraspStatus.OPENED if ok else GraspStatus.STUCK, 1, t,
                       "" if ok else ctrl.fault_reason)


def grasp(ctrl: WinchController, plant, catches: Callable[[int], bool], retries: int = 2,
          dt: float = 0.01) -> GraspReport:
    """Close the gripper until it holds; ``catches(k)`` says whether try ``k`` engages."""
    if retries < 0 or not dt > 0:
        raise ConfigError(f"retries must be >= 0 and dt > 0, got {retries}, {dt}")
    total, fault = 0.0, ""
    for k in range(retries + 1):
        plant.engaged = bool(catches(k))
        state, t = _run(ctrl, plant, WinchCommand.ATTACH, (WinchState.HOLDING, WinchState.FAULT),
                        dt)
        total += t
        if state is WinchState.HOLDING:
            return GraspReport(GraspStatus.HELD, k + 1, total)
        fault = ctrl.fault_reason or "phase limit"
        ctrl.step(0.0, WinchCommand.RESET, dt)
        opened = release(ctrl, plant, dt)
        total += opened.duration
        if opened.status is not GraspStatus.OPENED:
            return GraspReport(GraspStatus.STUCK, k + 1, total, opened.fault)
    return GraspReport(GraspStatus.NOT_ENGAGED, retries + 1, total, fault)
