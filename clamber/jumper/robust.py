"""Trajectory options that buy landing margin, and the defaults ``optimize --robust`` uses.

Each option is an ordinary setting of :class:`~clamber.jumper.settings.OptimizationSettings`
(no new constraint rows): the optimum trades nominal speed for time and slack at the
catches. Measured in the calibrated simulator (docs/landing.md):

* ``phase_duration_min[3]``: a longer phase 4 gives the joints time to settle after the
  front catch before the rear gripper lands (the paper's hand tuning);
* ``catch_approach_speed``: the catching gripper must move into the wall, so a perturbed
  jump still reaches it;
* ``torque_rate_weight``: smoother torques, fewer direction changes in flight.
"""

from __future__ import annotations

from clamber.jumper.settings import OptimizationSettings

#: The robust defaults [s], [m/s], [-]: chosen by ready rate in the calibrated simulator.
ROBUST_CHANGES = {
    "phase_duration_min": (0.090, 0.045, 0.075, 0.120, 0.060),
    "catch_approach_speed": 0.1,
}


def robust_settings(base: OptimizationSettings | None = None) -> OptimizationSettings:
    """``base`` (default settings if None) with the robust options applied."""
    return (base or OptimizationSettings()).with_(**ROBUST_CHANGES)
