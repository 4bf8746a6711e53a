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
    python benchmarks/bench_long_climb.py --headroom 0,0.05,0.1 [--headroom-phases 1,2]
        [--headroom-robust X] [--designs DIR]
    python benchmarks/bench_long_climb.py --release-clearance 0.002,0.005 [--designs DIR]
    python benchmarks/bench_long_climb.py --clip-share N [--solution PATH]
    python benchmarks/bench_long_climb.py --front-drag N [--release-lift RAD]

The evaluation seeds (12345 and 777 by default) were used by no tuning step: the clock's
re-catch settings were chosen on master seed 1. ``--quick`` runs 20 trials of 10 and 5
jumps on one seed. ``--figure`` writes the height-climbed survival curves. ``--origins N``
only measures where first-jump misses come from at 1.5 times the calibrated tolerances
(N one-jump trials on the tuning seed 1; ``miss_origins``). ``--stance-ablation`` plays,
instead of the re-catch on and off, the re-catch with the push-off feedback off and on
(``stance_feedback`` 'none' and 'tvlqr', :mod:`clamber.jumper.sim.stance_feedback`); with
``--origins`` it measures the miss origins for both. ``--headroom H1,H2,...`` only
re-optimizes the design (``--solution``) with each motor-line headroom
(``OptimizationSettings.motor_headroom`` in ``--headroom-phases``), warm-started from its
own trajectory with its own settings otherwise, checked by replay and recording the same
hardware, into ``DIR/h<H>/`` (``--headroom-robust X``: as ``optimize --robust --tol-scale
X``, into ``DIR/h<H>_robust<X>/``); the rows are then ``clamber jumper robustness
DIR/h<H>/solution.npz ...`` or this script with ``--solution``. ``--release-clearance
C1,...`` does the same with each free-gripper clearance
(``OptimizationSettings.release_clearance``) into ``DIR/c<C>/``. ``--clip-share N`` only
measures how much of the push-off each joint's ESC spends at its supply clip (N one-jump
trials of seed 1 at 1.5 x; with ``--stance-ablation`` without and with the feedback).
``--front-drag N`` only measures, per outcome of N one-jump trials of seed 1 at 1 x and
1.5 x, how long the released front gripper touches the wall in the push-off, the
shoulder's error at the take-off and the board's flight prediction (``front_drag``).
The last line is one JSON object.
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
from clamber.experiments.robustness import (
    RobustnessResult,
    jump_failure,
    miss_origins,
    robustness,
)
from clamber.experiments.statistics import wilson_interval
from clamber.failures import FailureReason
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


def reoptimized_designs(design: Path, variants: dict[str, dict], root: Path,
                        robust: float | None = None) -> dict:
    """``design`` re-optimized with each variant's settings changes into ``root/<name>/``:
    the same body, settings otherwise and hardware, warm-started from its own trajectory
    (so it stays in the same optimum's basin); a summary per variant. ``robust`` X
    re-optimizes as ``optimize --robust --tol-scale X`` does (the take-off clearance
    scenario added, recording X) into ``root/<name>_robust<X>/``."""
    from clamber.jumper.sim.settings import with_hardware
    from clamber.jumper.solve import optimize
    from clamber.jumper.verify import attach_accuracy

    stored = TrajectorySolution.load(design)
    hardware = hardware_options(stored)
    out = {}
    for name, changes in variants.items():
        settings = stored.settings.with_(**changes)
        t0 = time.perf_counter()
        if robust is None:
            sol = optimize(stored.morphology, settings, "fine", stored)
        else:
            from clamber.cli.optimize import robust_scenarios
            from clamber.jumper.robust import optimize_robust

            sol = optimize_robust(stored.morphology, settings, "fine", stored,
                                  scenarios=robust_scenarios(robust))
            if sol.history and sol.history[-1].get("scenarios") == "failed":
                raise SystemExit(f"{name}: the scenario solve did not converge")
        if not sol.status.success:
            raise SystemExit(f"{name}: the optimization ended {sol.status.value}")
        attach_accuracy(sol)
        if hardware:
            sol = with_hardware(sol, **hardware)
        if robust is not None:
            from clamber.jumper.robust import with_design_tol_scale

            sol = with_design_tol_scale(sol, robust)
        folder = root / (name if robust is None else f"{name}_robust{robust:g}")
        folder.mkdir(parents=True, exist_ok=True)
        sol.save(folder / "solution.npz")
        stored.morphology.save(folder / "morphology.toml")
        k = (settings.torque_limit / settings.no_load_speed
             if settings.no_load_speed > 0 else 0.0)
        line = np.abs(sol.tau + k * sol.qd[:, 3:6])
        free = [sol.points[(sol.phase == ph), 0, g] - settings.foot_radius
                for ph, g in ((2, 0), (3, 4))]
        out[name] = {
            "solution": str(folder / "solution.npz"), "status": sol.status.value,
            "planned_speed_mps": sol.speed, "period_s": sol.period,
            "phase_durations_s": [float(d) for d in sol.phase_durations],
            "motor_line_peak_nm": [float(line[sol.phase == p].max()) for p in range(1, 6)],
            "released_gripper_gap_mm": {  # front in the push-off, rear in flight
                "front_phase2_min_after_first_quarter": float(
                    1e3 * free[0][len(free[0]) // 4:].min()),
                "rear_phase3_median": float(1e3 * np.median(free[1]))},
            "physically_consistent": sol.physically_consistent,
            "wall_s": time.perf_counter() - t0}
        print(f"{name}: {sol.status.value}, {sol.speed:.4f} m/s planned", file=sys.stderr)
    return out


def front_drag(sol: TrajectorySolution, trials: int, scale: float, config,
               lift: float = 0.0) -> dict:
    """Per first-jump outcome of ``trials`` one-jump trials of the tuning seed 1 at
    ``scale`` times the calibrated tolerances: how long the released front gripper touches
    the wall before the take-off (ms), the shoulder's error at the take-off (rad), and the
    front gripper's distance at the planned catch beyond the nominal robot's as the board's
    flight prediction gives it from the sensed take-off (mm; flight_aim); with the areas
    under the ROC curve separating front misses from ready landings."""
    from scipy.stats import mannwhitneyu

    from clamber.experiments.robustness import trial_seeds
    from clamber.jumper.sim.flight_aim import FlightAimSettings
    from clamber.jumper.sim.robustness import sample_realization
    from clamber.jumper.sim.simulate import JumpTrial

    et = replace(config.event_triggered, release_lift=lift, flight_feedback="aim",
                 flight_aim=FlightAimSettings(deadband=1e3))  # predicts, never acts
    cfg = replace(config, event_triggered=et)
    tol, pt = calibrated_tolerances(scale), sol.phase_times
    rows: dict[str, list] = {}
    for s in trial_seeds(1, trials):
        trial = JumpTrial(sol, 1, cfg, sample_realization(sol, cfg, tol, s), record=True)
        touch = [0]  # push-off ticks (1 kHz: ms) with the front gripper on the wall
        feet = trial._feet

        def watch(t, trial=trial, touch=touch, feet=feet):
            feet(t)
            g, d = trial.foot_geom[0], trial.d
            if trial.r < pt[2] and not trial.grip[0].hooked and any(  # the push-off
                    g in (d.contact[i].geom1, d.contact[i].geom2) for i in range(d.ncon)):
                touch[0] += 1

        trial._feet = watch
        res = trial.run()
        k = int(np.searchsorted(res.column("t"), pt[2]))
        err = float(res.column("shoulder")[k] - res.column("ref_shoulder")[k])
        f = jump_failure(res.jumps[0])
        rows.setdefault(f.name if f else "ready", []).append(
            (float(touch[0]), err, 1e3 * trial.aim_gaps[0] if trial.aim_gaps else np.nan))
    out: dict = {"trials": trials, "tol_scale": scale, "release_lift": lift}
    names = ("drag_ms", "shoulder_error_rad", "predicted_gap_mm")
    for outcome, vals in rows.items():
        v = np.array(vals)
        out[outcome] = {"count": len(v), **{n: {"median": float(np.nanmedian(v[:, i])),
                                                "max": float(np.nanmax(v[:, i]))}
                                            for i, n in enumerate(names)},
                        "dragged_over_5ms": int((v[:, 0] > 5).sum())}
    miss, ready = (np.array(rows.get(k, [])) for k in (FailureReason.FRONT_MISSED.name,
                                                          "ready"))
    if len(miss) and len(ready):
        out["front_miss_auc"] = {n: float(mannwhitneyu(miss[:, i], ready[:, i]).statistic
                                          / (len(miss) * len(ready)))
                                 for i, n in enumerate(names)}
    return out


def clip_shares(sol: TrajectorySolution, trials: int, config, tolerances) -> dict:
    """How much of the push-off each joint's ESC spends at its supply clip: over
    ``trials`` one-jump trials of the tuning seed 1 with the 1 kHz log, per stance phase
    (1 and 2, by the reference clock, up to the planned rear release) and joint (hip,
    spine, shoulder) the share of the ticks whose commanded voltage is at the supply; the
    median per outcome (ready, front miss, other), and the planned feed-forward's peak [V]
    per phase and joint."""
    from clamber.experiments.robustness import trial_seeds
    from clamber.jumper.sim.robustness import sample_realization
    from clamber.jumper.sim.simulate import JumpTrial

    pt = sol.phase_times
    shares: dict[str, list[list[float]]] = {}
    for s in trial_seeds(1, trials):
        real = sample_realization(sol, config, tolerances, s)
        res = JumpTrial(sol, 1, config, real, record=True).run()
        ref, t = res.column("ref_time"), res.column("t")
        row = []
        for phase in (1, 2):
            ticks = (ref >= pt[phase - 1]) & (ref < pt[phase]) & (t < pt[2] + 0.05)
            for i, j in enumerate(("hip", "spine", "shoulder")):
                clipped = np.abs(res.column(f"v_{j}")[ticks]) >= real.motors[i].supply_voltage
                row.append(float(np.mean(clipped)) if ticks.any() else 0.0)
        failure = jump_failure(res.jumps[0])
        tag = ("ready" if failure is None else
               "front_missed" if failure is FailureReason.FRONT_MISSED else "other")
        shares.setdefault(tag, []).append(row)
    feed = np.abs(config.motor.voltage(sol.tau, sol.qd[:, 3:6]))
    names = [f"p{p}_{j}" for p in (1, 2) for j in ("hip", "spine", "shoulder")]
    return {"trials": trials,
            "planned_feed_forward_peak_v": {
                f"p{p}": feed[sol.phase == p].max(axis=0).round(3).tolist() for p in (1, 2)},
            **{tag: {"count": len(rows),
                     "median_clip_share": dict(zip(names, np.median(rows, axis=0).round(4)
                                                   .tolist(), strict=True)),
                     "mean_clip_share": dict(zip(names, np.mean(rows, axis=0).round(4)
                                                 .tolist(), strict=True))}
               for tag, rows in sorted(shares.items())}}


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
    ap.add_argument("--clip-share", type=int, default=0,
                    help="only measure, over this many one-jump trials of seed 1 at 1.5 x, "
                    "the share of the push-off each joint's ESC spends at its supply clip")
    ap.add_argument("--headroom", help="only re-optimize --solution with these motor-line "
                    "headrooms (comma-separated shares in [0, 0.5)) into --designs")
    ap.add_argument("--headroom-phases", default="1,2",
                    help="phases that keep the headroom, comma-separated (1,2: the push-off)")
    ap.add_argument("--headroom-robust", type=float, metavar="X",
                    help="with --headroom: re-optimize as optimize --robust --tol-scale X")
    ap.add_argument("--front-drag", type=int, default=0, metavar="N",
                    help="only measure, over N one-jump trials of seed 1 at 1 x and 1.5 x, "
                    "the released front gripper's drag on the wall and the flight prediction "
                    "per outcome (with --release-lift RAD also with that lift)")
    ap.add_argument("--release-lift", type=float, default=0.0, metavar="RAD",
                    help="with --front-drag: the shoulder offset after the front release")
    ap.add_argument("--release-clearance", help="only re-optimize --solution with these "
                    "release clearances (comma-separated, in m) into --designs")
    ap.add_argument("--designs", type=Path, default=ROOT / "out" / "long_climb_headroom",
                    help="folder of the re-optimized designs (--headroom, --release-clearance)")
    args = ap.parse_args(argv)
    if args.headroom or args.release_clearance:
        phases = tuple(int(p) for p in args.headroom_phases.split(","))
        variants = {f"h{float(h):g}": {"motor_headroom": float(h),
                                       "motor_headroom_phases": phases}
                    for h in (args.headroom.split(",") if args.headroom else ())}
        variants.update({f"c{float(c):g}": {"release_clearance": float(c)}
                         for c in (args.release_clearance.split(",")
                                   if args.release_clearance else ())})
        designs = reoptimized_designs(args.solution, variants, args.designs,
                                      args.headroom_robust)
        out = {"solution": str(args.solution), "phases": list(phases), "designs": designs}
        print(json.dumps(out))
        return out
    seeds = [int(s) for s in args.seeds.split(",")]
    trials, long_jumps, short_jumps = args.trials, 30, 10
    if args.quick:
        trials, long_jumps, short_jumps, seeds = 20, 10, 5, seeds[:1]
    sol = TrajectorySolution.load(args.solution)
    hardware = hardware_options(sol)
    pivot = FootPivot().with_rear_spar() if hardware.get("rear_spar") else FootPivot()
    base = calibrated_config(controller="closed-loop", pivot=pivot)
    if args.clip_share:  # with --stance-ablation: the push-off feedback off and on
        feedbacks = ("none", "tvlqr") if args.stance_ablation else ("none",)
        out = {"solution": str(args.solution), "tol_scale": 1.5, **{
            f"stance-{f}": clip_shares(sol, args.clip_share, replace(
                base, event_triggered=EventTriggeredSettings(stance_feedback=f)),
                calibrated_tolerances(1.5)) for f in feedbacks}}
        print(json.dumps(out))
        return out
    if args.front_drag:
        out = {f"tol{x:g}": front_drag(sol, args.front_drag, x, base, args.release_lift)
               for x in (1.0, 1.5)}
        print(json.dumps(out))
        return out
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
