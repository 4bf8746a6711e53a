"""Gaits as reference generators: free climbing and trotting. They produce
:class:`~clamber.quadruped.control.reference.MotionReference` and world poses and never import
the controllers that track them."""

from clamber.quadruped.gaits.climb import (
    SWING_PHASES,
    ClimbEvent,
    ClimbGait,
    ClimbGaitSettings,
    ClimbPhase,
)
from clamber.quadruped.gaits.profiles import cubic, smooth_trapezoid
from clamber.quadruped.gaits.trot import TROT_OFFSETS, TrotGait, TrotGaitSettings

__all__ = [
    "SWING_PHASES",
    "TROT_OFFSETS",
    "ClimbEvent",
    "ClimbGait",
    "ClimbGaitSettings",
    "ClimbPhase",
    "TrotGait",
    "TrotGaitSettings",
    "cubic",
    "smooth_trapezoid",
]
