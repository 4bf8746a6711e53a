"""Trajectory options that buy landing margin, and the defaults ``optimize --robust`` uses.

Each option is an ordinary setting of :class:`~clamber.jumper.settings.OptimizationSettings`
(no new constraint rows): the optimum trades nominal speed for time and slack at the
catches. Measured in the calibrated simulator (docs/landing.md):

* ``phase_duration_min[3]``: a longer phase 4 gives the joints time to settle after the
  front catch before the rear gripper lands (the paper's hand tuning); the default
  optimum sits at the 45 ms bound and its rear gripper tears off at impact;
* ``catch_approach_speed``: the catching gripper must move into the wall; measured
  inactive on the nominal robot (its catches already approach faster than 0.3 m/s);
* ``torque_rate_weight``: smoother torques, fewer direction changes in flight.
"""

from __future__ import annotations

from clamber.jumper.settings import OptimizationSettings

#: The robust defaults: phase 4 at least 100 ms [s] (chosen by ready rate in the calibrated
#: simulator against 45, 80, 100 and 120 ms; docs/landing.md).
ROBUST_CHANGES = {
    "phase_duration_min": (0.090, 0.045, 0.075, 0.100, 0.060),
}


def robust_settings(base: OptimizationSettings | None = None) -> OptimizationSettings:
    """``base`` (default settings if None) with the robust options applied.

    A phase-4 minimum above ``base``'s own is kept as it is.
    """
    base = base or OptimizationSettings()
    lo = tuple(max(a, b) for a, b in zip(base.phase_duration_min,
                                         ROBUST_CHANGES["phase_duration_min"], strict=True))
    return base.with_(phase_duration_min=lo)
