"""Trajectory options that buy landing margin, and the defaults ``optimize --robust`` uses.

Each option is an ordinary setting of :class:`~clamber.jumper.settings.OptimizationSettings`
(no new constraint rows): the optimum trades nominal speed for time and slack at the
catches. Measured in the calibrated simulator (docs/landing.md):

* ``phase_duration_min[3]``: a longer phase 4 gives the joints time to settle after the
  front catch before the rear gripper lands (the paper's hand tuning); the default
  optimum sits at the 45 ms bound and its rear gripper tears off at impact;
* ``catch_approach_speed``: the catching gripper must move into the wall; measured
  inactive on the nominal robot (its catches already approach faster than 0.3 m/s);
* ``torque_rate_weight``: smoother torques, fewer direction changes in flight;
* ``release_force_max``: each gripper lets go of the wall nearly unloaded (|f| <= 0.5 N
  at its release node). The robust optimum without it released the rear gripper under
  3.3 N, and the unloading kick at take-off varied from robot to robot: in 100 seeded
  closed-loop ten-jump climbs (same seeds) 65 succeeded without the bound, 76 with 1.5 N,
  81 with 0.5 N, at the same speed (0.516 -> 0.514 m/s).
"""

from __future__ import annotations

from typing import Any

from clamber.jumper.settings import OptimizationSettings

#: The robust defaults: phase 4 at least 100 ms [s] (chosen by ready rate in the calibrated
#: simulator against 45, 80, 100 and 120 ms) and grippers released under at most 0.5 N
#: (chosen by ten-jump climbs against none and 1.5 N; docs/landing.md).
ROBUST_CHANGES: dict[str, Any] = {
    "phase_duration_min": (0.090, 0.045, 0.075, 0.100, 0.060),
    "release_force_max": 0.5,
}


def robust_settings(base: OptimizationSettings | None = None) -> OptimizationSettings:
    """``base`` (default settings if None) with the robust options applied.

    A phase-4 minimum above ``base``'s own, or a release-force bound below it, is kept.
    """
    base = base or OptimizationSettings()
    lo = tuple(max(a, b) for a, b in zip(base.phase_duration_min,
                                         ROBUST_CHANGES["phase_duration_min"], strict=True))
    release = ROBUST_CHANGES["release_force_max"]
    if base.release_force_max is not None:
        release = min(release, base.release_force_max)
    return base.with_(phase_duration_min=lo, release_force_max=release)
