"""Long-climb benchmark: per-jump reliability, rear re-catch, and margins past calibration.

Plays the stored long-climb design (``docs/data/long_climb``, with the hardware options it
records) closed loop in the calibrated simulator: thirty-jump climbs at the calibrated
tolerances and ten-jump climbs at 1.5 times them, each with the rear re-catch on and off
on the same seeds. Reports per configuration the per-jump ready rate with its Wilson
interval, the share of climbs that finished, the rear misses and how many the re-catch
turned into ready landings (with the time it took), the height climbed before the first
failure (median, quartiles, range) and the measured climbing speed.

    python benchmarks/bench_long_climb.py [--quick] [--trials N] [--seeds 12345,777]
        [--workers N] [--solution PATH] [--figure PATH] [--origins N] [--stance-ablation]

The evaluation seeds (12345 and 777 by default) were used by no tuning step: the clock's
re-catch settings were chosen on master seed 1. ``--quick`` runs 20 trials of 10 and 5
jumps on one seed. ``--figure`` writes the height-climbed survival curves. ``--origins N``
only measures where first-jump misses come from at 1.5 times the calibrated tolerances
(N one-jump trials on the tuning seed 1; ``miss_origins``). ``--stance-ablation`` plays,
instead of the re-catch on and off, the re-catch with the push-off feedback off and on
(``stance_feedback`` 'none' and 'tvlqr', :mod:`clamber.jumper.sim.stance_feedback`); with
``--origins`` it measures the miss origins for both. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.robustness import RobustnessResult, miss_origins, robustness
from clamber.experiments.statistics import wilson_interval
from clamber.jumper.sim.control import EventTriggeredSettings
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.sim.settings import hardware_options
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.factory import make_evaluator

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "data" / "long_climb" / "solution.npz"


def _summary(res: RobustnessResult, wall: float) -> dict:
    s = res.summary()
    keys = ("trials", "jumps", "per_jump_ready_rate", "per_jump_ready_interval", "jumps_played",
            "landing_rate", "landing_interval", "rear_misses", "recovered_rear_misses",
            "rear_miss_recovery_rate", "mean_recovery_time_s", "height_climbed_m",
            "climb_speed_mps", "failures")
    per_jump = res.per_jump_ready
    return {**{k: s[k] for k in keys}, "jumps_ready": per_jump.successes if per_jump else 0,
            "wall_s": wall}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 trials, 10 and 5 jumps, one seed")
    ap.add_argument("--trials", type=int, default=200, help="trials per study (200)")
    ap.add_argument("--seeds", default="12345,777", help="master seeds, comma-separated")
    ap.add_argument("--workers", type=int, default=2, help="Dask workers (0: this process)")
    ap.add_argument("--solution", type=Path, default=DESIGN, help="design to play")
    ap.add_argument("--figure", type=Path, help="write the height-climbed figure here")
    ap.add_argument("--origins", type=int, default=0,
                    help="only measure where misses come from, over this many trials")
    ap.add_argument("--stance-ablation", action="store_true",
                    help="push-off feedback off and on (re-catch on) instead of the re-catch "
                    "on and off")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    trials, long_jumps, short_jumps = args.trials, 30, 10
    if args.quick:
        trials, long_jumps, short_jumps, seeds = 20, 10, 5, seeds[:1]
    sol = TrajectorySolution.load(args.solution)
    hardware = hardware_options(sol)
    pivot = FootPivot().with_rear_spar() if hardware.get("rear_spar") else FootPivot()
    base = calibrated_config(controller="closed-loop", pivot=pivot)
    if args.origins:
        if args.stance_ablation:  # the same trials with the push-off feedback off and on
            out = {f: miss_origins(sol, args.origins, seed=1, config=replace(
                       base, event_triggered=EventTriggeredSettings(stance_feedback=f)),
                       tolerances=calibrated_tolerances(1.5)) for f in ("none", "tvlqr")}
        else:
            out = miss_origins(sol, args.origins, seed=1, config=base,
                               tolerances=calibrated_tolerances(1.5))
        print(json.dumps(out))
        return out
    studies = {}
    heights = {}  # ready landings before the first failure, per climb
    with make_evaluator(args.workers) as evaluator:
        for seed in seeds:
            for scale, jumps in ((1.0, long_jumps), (1.5, short_jumps)):
                if args.stance_ablation:  # the re-catch on in both
                    variants = [(f"stance-{f}", EventTriggeredSettings(stance_feedback=f))
                                for f in ("none", "tvlqr")]
                else:
                    variants = [("recovery", EventTriggeredSettings()),
                                ("no-recovery", EventTriggeredSettings(recovery=False))]
                for tag, et in variants:
                    cfg = replace(base, event_triggered=et)
                    name = f"seed{seed}_tol{scale:g}_{jumps}jumps_{tag}"
                    print(f"{name} ...", file=sys.stderr)
                    t0 = time.perf_counter()
                    res = robustness(sol, trials, seed=seed, jumps=jumps, config=cfg,
                                     tolerances=calibrated_tolerances(scale),
                                     evaluator=evaluator)
                    studies[name] = _summary(res, time.perf_counter() - t0)
                    heights[name] = ([int(t.metrics.get("ready_jumps", 0))
                                      for t in res.trials], jumps)
    if args.figure:
        from clamber.report.simulation import plot_height_climbed

        args.figure.parent.mkdir(parents=True, exist_ok=True)
        curves = {k.replace("_", " "): v for k, v in heights.items()}
        plot_height_climbed(curves, sol.height,
                            "closed loop, re-catch on and off").savefig(args.figure, dpi=120)
        args.figure.with_suffix(".json").write_text(json.dumps(heights))  # redraw from it
    pooled = {}
    tags = ([f"tol{x}_{j}jumps_stance-{f}" for x, j in (("1", long_jumps), ("1.5", short_jumps))
             for f in ("none", "tvlqr")] if args.stance_ablation else
            [f"tol1_{long_jumps}jumps_recovery", f"tol1.5_{short_jumps}jumps_recovery"])
    for tag in tags:
        rows = [v for k, v in studies.items() if k.endswith(tag)]
        played = sum(r["jumps_played"] for r in rows)
        ci = wilson_interval(sum(r["jumps_ready"] for r in rows), played) if played else None
        pooled[tag] = {"per_jump_ready_rate": ci.rate if ci else None,
                       "per_jump_ready_interval": [ci.low, ci.high] if ci else None,
                       "jumps_played": played,
                       "climbs_finished": float(np.mean([r["landing_rate"] for r in rows])),
                       "recovered_rear_misses": sum(r["recovered_rear_misses"] for r in rows),
                       "rear_misses": sum(r["rear_misses"] for r in rows)}
    out = {"solution": str(args.solution), "hardware": hardware, "speed_mps": sol.speed,
           "trials": trials, "seeds": seeds, "studies": studies, "pooled": pooled}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
