"""A longer phase 4 makes open-loop landings reliable: measured in simulation.

The paper's open-loop reference caught the wall in 12 of 30 hardware trials and landed
ready for the next jump in 1; lengthening the short phase 4 (front gripper attached, rear
swinging in) was part of the hand tuning that brought it to 25 of 30. This example
optimizes the nominal robot twice -- with the default phase-4 minimum (45 ms) and with
120 ms -- and runs the same seeded Monte-Carlo study on both.

    python examples/jumper_landing_margin.py [--trials 200] [--quick]
"""

from __future__ import annotations

import argparse
import json

from clamber.experiments.robustness import robustness
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solve import optimize


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="coarse grid, 20 trials")
    args = ap.parse_args()
    trials = 20 if args.quick else args.trials
    resolution = "coarse" if args.quick else "fine"
    base = OptimizationSettings()
    longer = base.with_(phase_duration_min=(0.09, 0.045, 0.075, 0.12, 0.06),
                        phase_duration_max=(0.27, 0.135, 0.225, 0.2, 0.18))
    out = {}
    for name, settings in (("default_phase4", base), ("phase4_min_120ms", longer)):
        sol = optimize(Morphology.nominal(), settings, resolution)
        study = robustness(sol, trials, seed=0).summary()
        out[name] = {"speed_mps": sol.speed, "status": sol.status.value,
                     **{k: study[k] for k in ("catch_rate", "catch_interval",
                                              "landing_rate", "landing_interval")}}
        print(name, json.dumps(out[name]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
