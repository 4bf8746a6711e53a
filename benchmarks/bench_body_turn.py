"""Ablation of the body turn against sole wind-up: each controller with and without it.

Five-cycle climbs (1.1 m) of Q-WBC, VMC and CLIK, each with and without
:mod:`clamber.quadruped.gaits.body_turn`, on the same seeds (a range no tuning step used),
every climb in its own process. Per cell: climbs completed with the Wilson 95 % interval,
median distance and median peak gripper gauge. The last line is one JSON object.

    python benchmarks/bench_body_turn.py [--quick] [--scenario wall90] [--seed 6000]
        [--trials 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

CONTROLLERS = ("qwbc", "vmc", "clik")


def climb(job: tuple[str, str, bool, int, int]) -> dict:
    """One climb: scenario, controller, body turn on/off, seed, gait cycles."""
    from clamber.experiments.quadruped_scenarios import scenario_settings
    from clamber.quadruped.gaits import ClimbGaitSettings
    from clamber.quadruped.trials.climb import run_climb

    scenario, controller, turn, seed, cycles = job
    settings = scenario_settings(scenario, controller=controller, body_turn=turn,
                                 gait=ClimbGaitSettings(cycles=cycles))
    t0 = time.process_time()
    r, _ = run_climb(settings, seed)
    return {"controller": controller, "body_turn": turn, "seed": seed,
            "success": r.failure is None, "distance_m": r.distance_m,
            "peak_gauge": r.peak_gripper_load, "cpu_s": time.process_time() - t0}


def main() -> None:
    from clamber.experiments.statistics import wilson_interval

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="Q-WBC only, 2 seeds, 2 cycles")
    ap.add_argument("--scenario", default="wall90", help="comparison scenario (wall90)")
    ap.add_argument("--seed", type=int, default=6000, help="first seed (6000)")
    ap.add_argument("--trials", type=int, default=20, help="climbs per cell (20)")
    ap.add_argument("--cycles", type=int, default=5, help="gait cycles (5)")
    ap.add_argument("--workers", type=int, default=2, help="processes (2)")
    args = ap.parse_args()
    controllers, trials, cycles = (("qwbc",), 2, 2) if args.quick else \
        (CONTROLLERS, args.trials, args.cycles)
    jobs = [(args.scenario, c, turn, args.seed + k, cycles)
            for c in controllers for turn in (False, True) for k in range(trials)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = []
        for row in pool.map(climb, jobs):
            rows.append(row)
            print(json.dumps(row), flush=True)
    cells = {}
    for c in controllers:
        for turn in (False, True):
            cell = [r for r in rows if r["controller"] == c and r["body_turn"] == turn]
            k = sum(r["success"] for r in cell)
            ci = wilson_interval(k, len(cell))
            cells[f"{c}{'+turn' if turn else ''}"] = {
                "successes": k, "trials": len(cell), "success_interval": [ci.low, ci.high],
                "distance_m_median": float(np.median([r["distance_m"] for r in cell])),
                "peak_gauge_median": float(np.median([r["peak_gauge"] for r in cell])),
                "cpu_s_median": float(np.median([r["cpu_s"] for r in cell]))}
    print(json.dumps({"benchmark": "body_turn", "quick": args.quick,
                      "scenario": args.scenario, "cycles": cycles,
                      "seeds": [args.seed, args.seed + trials - 1], "cells": cells,
                      "wall_s": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
