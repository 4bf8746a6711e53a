"""Winch-driven grasp and release: durations from the plant, non-engagement detected and
retried, and the winch in the planned climb."""

import math

import pytest

from clamber.attachment.winch import WinchController, WinchSettings, WinchState
from clamber.exceptions import ConfigError
from clamber.quadruped.control.grasping import ARRIVAL_TOLERANCE, GraspStatus, grasp, release
from clamber.quadruped.planning.rollout import PlanClimbSettings, plan_climb
from clamber.quadruped.sim.winch_plant import WinchPlant, WinchPlantParameters

QUIET = WinchPlantParameters(current_noise=0.0)


def test_engaged_grasp_takes_the_time_the_tendons_need():
    """From the natural angle an engaging grasp holds after winding the slack plus the
    torque band's low edge over the engaged stiffness, at the servo's speed (within the
    torque filter's lag and one cycle)."""
    w = WinchSettings()
    ctrl, plant = WinchController(w), WinchPlant(w, QUIET)
    r = grasp(ctrl, plant, lambda k: True, dt=0.002)
    expected = (QUIET.slack + (w.target_torque - w.torque_band) / QUIET.engaged_stiffness) \
        / QUIET.speed
    assert r.status is GraspStatus.HELD and r.tries == 1
    assert r.duration == pytest.approx(expected, abs=4 * w.filter_time_constant)
    assert ctrl.state is WinchState.HOLDING


def test_grasp_that_does_not_engage_is_detected_and_retried():
    """A try whose spines slip never reaches the band: the controller faults (here on its
    engage timeout, before the winding limit), the gripper is opened (the servo arrives at
    the open angle, not only the controller's goal) and the next try that catches holds;
    with no catching try the grasp reports NOT_ENGAGED after every retry."""
    w = WinchSettings()
    ctrl, plant = WinchController(w), WinchPlant(w, QUIET)
    r = grasp(ctrl, plant, lambda k: k == 1, retries=2)
    assert r.status is GraspStatus.HELD and r.tries == 2
    assert r.duration > w.engage_timeout
    release(ctrl, plant)
    ctrl_bad, plant_bad = WinchController(w), WinchPlant(w, QUIET)
    bad = grasp(ctrl_bad, plant_bad, lambda k: False, retries=2)
    assert bad.status is GraspStatus.NOT_ENGAGED and bad.tries == 3
    assert ctrl_bad.state is WinchState.OPEN
    assert abs(plant_bad.angle - ctrl_bad.goal_angle) <= ARRIVAL_TOLERANCE
    assert "timeout" in bad.fault
    assert bad.duration > 3 * w.engage_timeout
    with pytest.raises(ConfigError):
        grasp(ctrl, plant, lambda k: True, retries=-1)


def test_release_opens_through_the_detachment_tendons():
    """Release from holding ends OPEN after unwinding past the natural angle, the slack
    and the detachment tendon's stretch to its torque threshold."""
    w = WinchSettings()
    ctrl, plant = WinchController(w), WinchPlant(w, QUIET)
    grasp(ctrl, plant, lambda k: True, dt=0.002)
    start = plant.angle
    r = release(ctrl, plant, dt=0.002)
    assert r.status is GraspStatus.OPENED and ctrl.state is WinchState.OPEN
    travel = start - (w.natural_angle - QUIET.slack - w.detach_torque / QUIET.detach_stiffness)
    assert r.duration == pytest.approx(travel / QUIET.speed, abs=0.05)


def test_stiff_detachment_that_never_tightens_is_reported_stuck():
    """If the detachment tendon never tightens and the detach angle is out of the servo's
    time budget, the release reports STUCK with the controller's fault."""
    w = WinchSettings(detach_angle=-40.0, disengage_timeout=1.0)
    ctrl, plant = WinchController(w), WinchPlant(w, WinchPlantParameters(detach_stiffness=1e-6,
                                                                     current_noise=0.0))
    r = release(ctrl, plant)
    assert r.status is GraspStatus.STUCK and "disengage timeout" in r.fault


def test_planned_climb_with_the_winch_counts_its_time():
    """With the winch in the loop the climb records at least one try per attempt and
    positive grasp and release times; an unknown grasp model is refused."""
    s = PlanClimbSettings(distance=0.04, grasp="winch")
    r = plan_climb(s, 3)
    assert r.winch_tries >= r.attempts >= r.steps >= 1
    assert r.grasp_time_s > 0 and r.release_time_s > 0
    assert math.isfinite(r.distance_m)
    with pytest.raises(ConfigError):
        PlanClimbSettings(grasp="magnet")
