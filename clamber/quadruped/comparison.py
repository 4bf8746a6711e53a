"""The controllers the comparison runs and the climbs of its named scenarios.

The comparison itself (tuning, cells, statistics) runs on the study layer
(:mod:`clamber.experiments.quadruped_comparison`); its tables and figures are in
:mod:`clamber.report.quadruped_comparison`.
"""

from __future__ import annotations

from typing import Any

from clamber.quadruped.scenarios import scenario
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.variants import ABLATIONS, GAINS

#: The compared controllers, then the ablations.
MAIN = tuple(GAINS)
ABLATION_ROWS = ("qwbc", "qwbc-nolimits", "qwbc-noweights", "qwbc-noramp", "qwbc-notorque",
                 "vmc", "vmc-plain", "clik", "clik-plain")


def scenario_settings(name: str, **kwargs: Any) -> ClimbSettings:
    """:class:`~clamber.quadruped.trials.climb.ClimbSettings` of scenario ``name``; keyword
    arguments (controller, gains, gait, ...) are passed on."""
    sc = scenario(name)
    return ClimbSettings(incline_deg=sc.incline_deg, heading_deg=sc.heading_deg, rocks=sc.rocks,
                         disturbance=sc.disturbance, scenario=sc.name, **kwargs)


__all__ = ["ABLATIONS", "ABLATION_ROWS", "MAIN", "scenario_settings"]
