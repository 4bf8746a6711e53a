"""Landing benchmark: open-loop, closed-loop and robust jumps in the calibrated simulator.

For the nominal robot it solves the default optimum, the paper's hand-tuned variant and
the robust one (``optimize --robust``), then plays each open loop and closed loop over
seeded trials (one jump: ready rate with its Wilson interval; ten jumps: climb success)
at the calibrated tolerances and at twice them. Every configuration uses the same seeds.

    python benchmarks/bench_landing.py [--quick] [--workers N] [--only NAME,...]
        [--controllers NAME,...] [--solution NAME=PATH ...] [--seed N] [--rear-spar]

``--solution`` adds stored trajectories (e.g. a co-design's recommended design,
``RUN_DIR/validation.json``); ``--seed`` moves every study to other seeds (0 by default;
the robust co-design trains on 0 and validates on 1000, so 2000 is held out from both).

``--only`` keeps some trajectories (optimized, tuned, robust, and the ablations
robust-no-release: the robust options without the release-force bound, and
robust-no-scenarios: the robust settings without the multi-scenario clearance term).
``--rear-spar`` plays every trial with a spar on the rear foot too (a design option:
``FootPivot.rear_stop_angle`` at the front spar's 0.35 rad instead of 1.2 rad).

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from clamber.experiments.calibration import (
    CALIBRATED,
    HARDWARE,
    TUNED_CHANGES,
    calibrated_config,
    calibrated_tolerances,
)
from clamber.experiments.robustness import robustness
from clamber.jumper.morphology import Morphology
from clamber.jumper.robust import optimize_robust, robust_settings
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.solution import TrajectorySolution
from clamber.jumper.solve import optimize
from clamber.parallel.factory import make_evaluator


def _trajectories(resolution: str, only: list[str] | None = None) -> dict:
    morph, base = Morphology.nominal(), OptimizationSettings()
    settings = {"optimized": base, "tuned": base.with_(**TUNED_CHANGES),
                "robust": robust_settings(base),
                "robust-no-release": robust_settings(base).with_(release_force_max=None),
                "robust-no-scenarios": robust_settings(base)}
    if only:
        unknown = set(only) - set(settings)
        if unknown:
            raise SystemExit(f"unknown trajectories {sorted(unknown)}; allowed: {list(settings)}")
        settings = {k: v for k, v in settings.items() if k in only}
    else:
        settings.pop("robust-no-release")
        settings.pop("robust-no-scenarios")
    out = {}
    for name, s in settings.items():
        sol = optimize_robust(morph, base, resolution) if name == "robust" else \
            optimize(morph, s, resolution)
        if not sol.status.success:
            raise SystemExit(f"{name} jump did not solve: {sol.return_status}")
        out[name] = sol
    return out


def _study(sol, controller: str, trials: int, jumps: int, factor: float, evaluator,
           seed: int = 0, rear_spar: bool = False) -> dict:
    changes = {"pivot": FootPivot().with_rear_spar()} if rear_spar else {}
    res = robustness(sol, trials, seed=seed, jumps=jumps, config=calibrated_config(
        controller=controller, **changes), tolerances=calibrated_tolerances(factor),
        evaluator=evaluator)
    s = res.summary()
    keep = ("ready_rate", "ready_interval", "first_catch_rate", "both_caught_rate",
            "climb_success_rate", "climb_speed_mps", "expected_speed_mps", "cpu_time_s", "failures",
            "front_misses_after_touch")
    return {k: s[k] for k in keep}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="coarse grid, 30 trials, 3-jump climbs")
    ap.add_argument("--workers", type=int, default=0, help="processes (0: serial)")
    ap.add_argument("--only", default="", help="comma-separated trajectories to play")
    ap.add_argument("--controllers", default="open-loop,closed-loop",
                    help="comma-separated controllers")
    ap.add_argument("--solution", action="append", default=[], metavar="NAME=PATH",
                    help="also play this stored trajectory (.npz) under NAME; repeatable")
    ap.add_argument("--seed", type=int, default=0, help="master seed of every study")
    ap.add_argument("--rear-spar", action="store_true",
                    help="a spar on the rear foot too (design option; see the docstring)")
    args = ap.parse_args()
    trials = 30 if args.quick else 200
    climb_jumps = 3 if args.quick else 10
    t0 = time.perf_counter()
    stored = dict(x.split("=", 1) for x in args.solution)
    only = [x for x in args.only.split(",") if x]
    traj = {} if stored and not only else _trajectories("coarse" if args.quick else "fine",
                                                        only)
    traj |= {name: TrajectorySolution.load(path) for name, path in stored.items()}
    rows = []
    evaluator = make_evaluator(args.workers)
    for name, sol in traj.items():
        for controller in [x for x in args.controllers.split(",") if x]:
            for factor in (1.0, 2.0):
                row = {"trajectory": name, "controller": controller, "tolerance_factor": factor,
                       "speed_mps": sol.speed}
                row["one_jump"] = _study(sol, controller, trials, 1, factor, evaluator,
                                         args.seed, args.rear_spar)
                row["climb"] = _study(sol, controller, trials, climb_jumps, factor,
                                      evaluator, args.seed, args.rear_spar)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    best = max((r for r in rows if r["tolerance_factor"] == 1.0),
               key=lambda r: r["one_jump"]["expected_speed_mps"])
    hardware = {k: v[0] / v[1] for k, v in HARDWARE.items()}
    print(json.dumps({
        "benchmark": "landing", "quick": args.quick, "trials": trials, "seed": args.seed,
        "rear_spar": args.rear_spar,
        "climb_jumps": climb_jumps, "calibrated": CALIBRATED, "hardware": hardware,
        "rows": rows,
        "best": {k: best[k] for k in ("trajectory", "controller", "speed_mps")}
        | {"ready_rate": best["one_jump"]["ready_rate"],
           "ready_interval": best["one_jump"]["ready_interval"],
           "climb_success_rate": best["climb"]["climb_success_rate"]},
        "wall_time_s": time.perf_counter() - t0,
    }))


if __name__ == "__main__":
    main()
