"""Estimation drift while climbing: the climbing trial's own leg odometry (fed the grippers'
true attachment state) against the anchor EKF run alongside from the sensors alone (contacts
from the servo currents), on the same climbs.

Usage: ``python benchmarks/bench_climb_estimation.py [--quick]`` (quick: seed 0; full: seeds
0-2; one gait cycle on the vertical wall with Q-WBC). Drift is the final position error
over the distance climbed [%]. The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.shadow import shadow_climb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seed 0 only")
    args = parser.parse_args()
    seeds = [0] if args.quick else [0, 1, 2]
    rows = []
    for seed in seeds:
        r = shadow_climb(ClimbSettings(incline_deg=90.0), seed)
        rows.append(r)
        print(seed, r, flush=True)
    print(json.dumps({
        "seeds": len(seeds), "climbed": int(sum(r.success for r in rows)),
        "distance_m": float(np.mean([r.distance_m for r in rows])),
        "trial_drift_percent": float(np.mean([r.trial_drift_percent for r in rows])),
        "anchor_drift_percent": float(np.mean([r.anchor_drift_percent for r in rows])),
        "trial_drift_mm": float(1000 * np.mean([r.trial_drift_m for r in rows])),
        "anchor_drift_mm": float(1000 * np.mean([r.anchor_drift_m for r in rows])),
        "contact_precision": float(np.mean([r.contact_precision for r in rows])),
        "contact_recall": float(np.mean([r.contact_recall for r in rows]))}))


if __name__ == "__main__":
    main()
