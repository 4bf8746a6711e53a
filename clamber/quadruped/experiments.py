"""The quadruped's trials under their first import path (now in :mod:`clamber.quadruped.trials`)."""

from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial, run_climb
from clamber.quadruped.trials.log import TrialLog
from clamber.quadruped.trials.result import TrialResult
from clamber.quadruped.trials.stance import NOMINAL_FEET
from clamber.quadruped.trials.trot import TrotSettings, TrotTrial, run_trot

__all__ = ["NOMINAL_FEET", "ClimbSettings", "ClimbTrial", "TrialLog", "TrialResult",
           "TrotSettings", "TrotTrial", "run_climb", "run_trot"]
