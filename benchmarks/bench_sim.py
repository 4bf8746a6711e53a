"""Simulation speed (one core) and a 200-trial robustness study (2 processes).

Usage: python benchmarks/bench_sim.py [--quick]. Prints a table, then one JSON line.
Targets: playback >= 50x real time (median of repeats); 200 trials < 120 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from clamber.experiments.robustness import robustness
from clamber.jumper.morphology import Morphology
from clamber.jumper.sim.gripper import CaptureWindow
from clamber.jumper.sim.settings import SimulationSettings
from clamber.jumper.sim.simulate import simulate
from clamber.jumper.solve import solve
from clamber.parallel.dask import DaskEvaluator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and 40 trials")
    args = ap.parse_args()
    sol = solve(Morphology.nominal(), resolution="coarse")
    simulate(sol, jumps=1)  # builds the CasADi model once
    # Speed is measured on three whole jumps: a forgiving gripper and readiness test keep
    # the coarse jump from ending the playback early (model compilation included).
    full = SimulationSettings(capture=CaptureWindow(distance=0.004, tear_margin=100.0,
                                                  max_speed=5.0, max_normal_speed=5.0,
                                                  max_angle_deg=120.0),
                            ready_distance_tol=1.0, ready_angle_tol=10.0)
    repeats = 5 if args.quick else 20
    factors, factors_rec = [], []
    for _ in range(repeats):
        factors.append(simulate(sol, 3, full, record=False).realtime_factor)
        factors_rec.append(simulate(sol, 3, full, record=True).realtime_factor)
    trials = 40 if args.quick else 200
    t0 = time.perf_counter()
    with DaskEvaluator(n_workers=2) as evaluator:
        rob = robustness(sol, trials, evaluator=evaluator)
    wall = time.perf_counter() - t0
    out = {
        "realtime_factor_median": statistics.median(factors),
        "realtime_factor_recorded_median": statistics.median(factors_rec),
        "realtime_target": 50.0,
        "robustness_trials": trials,
        "robustness_wall_s": wall,
        "robustness_wall_s_per_200": wall * 200 / trials,
        "robustness_target_s": 120.0,
        "catch_rate": rob.catch.rate,
        "landing_rate": rob.landing.rate,
    }
    for k, v in out.items():
        print(f"{k:<34} {v:.4g}" if isinstance(v, float) else f"{k:<34} {v}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
