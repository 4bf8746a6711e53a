"""Estimation drift while trotting: the leg odometry against the anchor EKF, with
contacts from the gait schedule, the servo currents (alone, or cut by the schedule), or the
simulator, and the anchor EKF again on a robot whose link lengths match the model exactly
(the ablation that isolates the +-2 % kinematic mismatch).

Usage: ``python benchmarks/bench_trot_estimation.py [--quick]`` (quick: seed 0, 6 cycles,
flat only; full: seeds 0-2, 20 cycles, flat and gravel). Drift is the final position error
over the distance walked [%]; the target of issue 15 is <= 2 % with torque contacts. The
last printed line is one JSON object (means over seeds per terrain and configuration).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from clamber.quadruped.gaits import TrotGaitSettings
from clamber.quadruped.sim.world import ModelMismatch
from clamber.quadruped.trials.trot import TrotSettings, run_trot

#: (name, estimator, contacts, exact link lengths)
CONFIGURATIONS = (
    ("odometry_schedule", "odometry", "schedule", False),
    ("anchors_schedule", "anchor", "schedule", False),
    ("anchors_truth", "anchor", "truth", False),
    ("anchors_torque", "anchor", "torque", False),
    ("anchors_torque_exact_lengths", "anchor", "torque", True),
    ("anchors_fused", "anchor", "fused", False),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seed 0, 6 cycles, flat only")
    args = parser.parse_args()
    seeds = [0] if args.quick else [0, 1, 2]
    cycles = 6 if args.quick else 20
    terrains = ("flat",) if args.quick else ("flat", "gravel")
    out: dict[str, float] = {"seeds": len(seeds), "cycles": cycles}
    for terrain in terrains:
        for name, estimator, contacts, exact in CONFIGURATIONS:
            mismatch = ModelMismatch(length=0.0) if exact else ModelMismatch()
            drift, nees = [], []
            for seed in seeds:
                r, _ = run_trot(TrotSettings(terrain=terrain, estimator=estimator,
                                             contacts=contacts, mismatch=mismatch,
                                             gait=TrotGaitSettings(cycles=cycles)), seed)
                drift.append(r.estimation_drift_percent)
                nees.append(r.estimation_nees)
            out[f"{terrain}_{name}_drift_percent"] = float(np.mean(drift))
            out[f"{terrain}_{name}_drift_percent_max"] = float(np.max(drift))
            if estimator == "anchor":
                out[f"{terrain}_{name}_nees_per_dof"] = float(np.mean(nees))
            print(terrain, name, np.round(drift, 2).tolist(), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
