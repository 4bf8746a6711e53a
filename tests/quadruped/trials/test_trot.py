"""The trot in the loop: the robot walks its plan level, and the ground reaches past the walk."""

import mujoco
import numpy as np
import pinocchio as pin

from clamber.quadruped.gaits import TrotGaitSettings
from clamber.quadruped.trials.trot import TrotSettings, run_trot


def test_trot_walks_level_on_gravel():
    """Six cycles of the paper's trot on gravel with gripper feet: the robot does not tip,
    covers most of the planned distance and keeps its attitude within a few degrees (a
    controller blind to the body's tilt lets it grow past 15 deg within two cycles)."""
    gp = TrotGaitSettings(cycles=6)
    result, _ = run_trot(TrotSettings(terrain="gravel", feet="gripper", gait=gp), 0)
    planned = gp.speed * (gp.duration - gp.start_time)
    assert result.success, result.reason
    assert result.distance_m > 0.6 * planned
    assert result.attitude_error_rms_deg < 6.0
    assert result.attitude_error_max_deg < 15.0


def test_tilted_body_is_turned_back_level():
    """Started with the body pitched 8 deg on flat ground, the stance legs level it within
    0.7 s, before the trot starts."""
    gp = TrotGaitSettings(cycles=1, start_time=1.5)
    _, log = run_trot(TrotSettings(terrain="flat", feet="gripper", gait=gp), 0, log=True,
                      initial_tilt=pin.utils.rotate("y", np.radians(8.0)))
    att = log.arrays()["attitude_deg"]
    t = log.arrays()["t"]
    assert att[0] > 5.0
    assert att[(t > 0.7) & (t < gp.start_time)].max() < 2.0


def test_ground_reaches_past_the_walk():
    """The ground of a trotting trial extends at least 1 m past the end of its walk."""
    gp = TrotGaitSettings(cycles=2)
    _, log = run_trot(TrotSettings(terrain="grass", feet="gripper", gait=gp), 0, log=True)
    m = log.model
    g = m.geom("ground")
    assert g.type[0] == mujoco.mjtGeom.mjGEOM_HFIELD
    x_end = g.pos[0] + m.hfield_size[g.dataid[0]][0]
    assert x_end >= gp.speed * gp.duration + 1.0 - 1e-9
