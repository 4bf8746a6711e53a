"""Physics step of the climbs: does the default step (10 ms) give the climbs of finer ones, and
what does it save?

Usage: ``python benchmarks/bench_physics_step.py [--quick] [--workers N]``. Runs one-cycle
breakable climbs of every controller on every comparison scenario (seeds 0-2; ``--quick``:
seed 0 on wall90, push90 and payload90) at 4 ms and at 10 ms, and at 1 ms on seed 0 of
wall90, push90 and overhang115 (not with ``--quick``), and reports: how many trials end
the same way (success, or the same failure reason) at both steps; the relative differences
of the figures the comparison prints (maximum tracking error, mean power, peak gripper load,
estimation error), median and largest, of 10 ms and of 4 ms against 1 ms and of 10 ms
against 4 ms; and the loop's CPU time at 10 ms over that at 4 ms per trial (median; the two
steps of a trial run next to each other on the same workers, so both see the same load).
``--near-boundary`` instead climbs CLIK with its tuned gains (``docs/quadruped_gains.json``),
whose grippers run closest to their sets, for 20 s (through the first swing) on seeds 0-11 of
wall70, wall90, overhang115 and push90 at 4 and 10 ms, and reports how the climbs whose peak
gripper gauge comes within the verdict margin of 1 end at both steps. ``--rock`` climbs
0.5 m of generated rock at 90 deg through the winch (Q-WBC, seeds 0-3) at 4 and 10 ms.
The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

SCENARIOS = ("wall70", "wall90", "overhang115", "diagonal90", "push90", "payload90")
CONTROLLERS = ("qwbc", "clik", "vmc")
FIGURES = ("max_tracking_error_mm", "mean_power_w", "peak_gripper_load", "estimation_rms_mm")


def climb(task: tuple) -> dict:
    """One one-cycle climb of ``(scenario, controller, seed, physics_dt[, gains,
    time_limit])``: its outcome, figures and the loop's CPU seconds."""
    from clamber.experiments.quadruped_scenarios import scenario_settings
    from clamber.quadruped.trials.climb import ClimbTrial

    sc, controller, seed, dt, *extra = task
    options = dict(zip(("gains", "time_limit"), extra, strict=False))
    trial = ClimbTrial(scenario_settings(sc, controller=controller, physics_dt=dt, **options),
                       seed)
    c0 = time.process_time()
    r, _ = trial.run()
    d = r.to_dict()
    return {"scenario": sc, "controller": controller, "seed": seed, "dt": dt,
            "success": r.success, "reason": d["reason"], "sim_s": d["sim_time_s"],
            "cpu_s": time.process_time() - c0, **{k: d[k] for k in FIGURES}}


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def compare_steps(rows: list[dict], dt: float, ref: float) -> dict:
    """Outcomes and figure differences of the trials run at ``dt`` and at ``ref``."""
    by = {}
    for r in rows:
        by.setdefault((r["scenario"], r["controller"], r["seed"]), {})[r["dt"]] = r
    pairs = [(v[dt], v[ref]) for v in by.values() if dt in v and ref in v]
    out: dict = {"pairs": len(pairs),
                 "same_outcome": sum((a["success"], a["reason"]) == (b["success"], b["reason"])
                                     for a, b in pairs)}
    for key in FIGURES:
        d = [_rel(a[key], b[key]) for a, b in pairs]
        out[key] = {"median_rel": statistics.median(d), "max_rel": max(d)}
    return out


def tuned_gains(controller: str) -> tuple[tuple[str, float], ...]:
    """The comparison's tuned gains of ``controller``, by value."""
    path = os.path.join(os.path.dirname(__file__), "..", "docs", "quadruped_gains.json")
    with open(path, encoding="utf-8") as f:
        return tuple(json.load(f)["gains"][controller].items())


def near_boundary(workers: int) -> dict:
    """CLIK's climbs near its grippers' boundary at 10 and at 4 ms."""
    from clamber.quadruped.sim.rates import VERDICT_MARGIN, marginal_verdict

    gains = tuned_gains("clik")
    tasks = [(sc, "clik", s, dt, gains, 20.0) for sc in ("wall70", "wall90", "overhang115",
                                                         "push90")
             for s in range(12) for dt in (0.004, 0.01)]
    with ProcessPoolExecutor(workers) as pool:
        rows = list(pool.map(climb, tasks))
    by: dict = {}
    for r in rows:
        by.setdefault((r["scenario"], r["seed"]), {})[r["dt"]] = r
    near = [v for v in by.values() if marginal_verdict(v[0.01]["peak_gripper_load"])
            or marginal_verdict(v[0.004]["peak_gripper_load"])]
    for v in near:
        a, b = v[0.01], v[0.004]
        print(json.dumps({"scenario": a["scenario"], "seed": a["seed"],
                          "peak_10ms": a["peak_gripper_load"], "peak_4ms": b["peak_gripper_load"],
                          "reason_10ms": a["reason"], "reason_4ms": b["reason"]}))
    same = lambda v: (v[0.01]["success"], v[0.01]["reason"]) == (v[0.004]["success"],  # noqa: E731
                                                                  v[0.004]["reason"])
    return {"pairs": len(by), "same_outcome": sum(same(v) for v in by.values()),
            "margin": VERDICT_MARGIN, "near_boundary": len(near),
            "near_same_outcome": sum(same(v) for v in near),
            "near_peak_max_rel": max((_rel(v[0.01]["peak_gripper_load"],
                                           v[0.004]["peak_gripper_load"]) for v in near),
                                     default=None)}


def rock_climb(task: tuple[int, float]) -> dict:
    """One 0.5 m winch climb on generated rock of ``(seed, physics_dt)``."""
    from clamber.quadruped.trials.climb import ClimbSettings
    from clamber.quadruped.trials.rock_climb import (
        RockClimbSettings,
        RockClimbTrial,
        plan_rock_climb,
    )

    seed, dt = task
    settings = RockClimbSettings(climb=ClimbSettings(physics_dt=dt), distance=0.5,
                                 grasp="winch")
    trial = RockClimbTrial(settings, seed, plan=plan_rock_climb(settings, seed))
    c0 = time.process_time()
    r, _ = trial.run()
    d = r.to_dict()
    return {"scenario": "rock90", "controller": "qwbc", "seed": seed, "dt": dt,
            "success": r.success, "reason": d["reason"], "sim_s": d["sim_time_s"],
            "cpu_s": time.process_time() - c0, "distance_m": d["distance_m"],
            **{k: d[k] for k in FIGURES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="seed 0 on wall90, push90 and payload90, 4 and 10 ms only")
    parser.add_argument("--near-boundary", action="store_true",
                        help="CLIK's tuned climbs near its grippers' boundary, 10 against 4 ms")
    parser.add_argument("--rock", action="store_true",
                        help="0.5 m winch climbs on generated rock, 10 against 4 ms")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    args = parser.parse_args()
    if args.near_boundary:
        print(json.dumps(near_boundary(args.workers)))
        return
    if args.rock:
        with ProcessPoolExecutor(args.workers) as pool:
            rows = list(pool.map(rock_climb, [(s, dt) for s in range(4) for dt in (0.004, 0.01)]))
        for r in rows:
            print(json.dumps(r))
        print(json.dumps({"trials": len(rows), "10ms_vs_4ms": compare_steps(rows, 0.01, 0.004)}))
        return
    scenarios = ("wall90", "push90", "payload90") if args.quick else SCENARIOS
    seeds = (0,) if args.quick else (0, 1, 2)
    tasks = [(sc, c, s, dt) for s in seeds for sc in scenarios for c in CONTROLLERS
             for dt in (0.004, 0.01)]
    if not args.quick:
        tasks += [(sc, c, 0, 0.001) for sc in ("wall90", "push90", "overhang115")
                  for c in CONTROLLERS]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(climb, tasks))
    for r in rows:
        print(json.dumps(r))
    by = {}
    for r in rows:
        by.setdefault((r["scenario"], r["controller"], r["seed"]), {})[r["dt"]] = r
    ratios = [v[0.004]["cpu_s"] / v[0.01]["cpu_s"] for v in by.values()
              if v[0.004]["success"] and v[0.01]["success"]]
    summary = {"trials": len(rows), "wall_s": time.perf_counter() - t0,
               "10ms_vs_4ms": compare_steps(rows, 0.01, 0.004),
               "cpu_4ms_over_10ms_median": statistics.median(ratios) if ratios else None}
    if not args.quick:
        summary["10ms_vs_1ms"] = compare_steps(rows, 0.01, 0.001)
        summary["4ms_vs_1ms"] = compare_steps(rows, 0.004, 0.001)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
