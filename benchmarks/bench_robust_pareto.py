"""Speed against margin: robust optima held at several tolerance scales, and the Pareto of
expected climbing speed against the ten-jump climb rate at 1 x and 1.5 x the tolerances.

Each design is one `clamber jumper optimize` command (the nominal robot plain or
``--robust --tol-scale X`` for X in 1, 1.5, 2, 3; the body of ``docs/data/long_climb``
``--robust --tol-scale X`` for X in 1, 1.5, 2) plus the stored long-climb design. Every
design climbs ten jumps in the calibrated simulator, closed loop, rear spar, rear
re-catch on, from robots drawn at 1 x and at 1.5 x the calibrated tolerances (master
seed 12345, used by no tuning step). Reports per design and scale the expected climbing
speed (first-jump ready rate times the measured climbing speed, the
``robustness`` key), the share of ten-jump climbs finished with its Wilson interval and
the per-jump ready rate, and marks per scale the designs no other beats in both speed and
climbs.

    python benchmarks/bench_robust_pareto.py [--quick] [--trials N] [--seed S] [--workers N]
        [--designs DIR] [--optimize] [--figure PATH] [--runs DIR]

The designs are read from ``--designs`` (``docs/data/robust_pareto``); one missing there is
optimized first (about 4 min each on two cores), ``--optimize`` redoes them all.
``--quick`` plays 10 climbs per design and scale (a few CPU minutes). ``--figure`` writes
the two-panel Pareto figure and its points as JSON beside it; ``--runs DIR`` records every
study there, and a killed run started again with it resumes. The last line is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from clamber.cli.optimize import optimize_arguments, optimize_command
from clamber.cli.options import claim_output_folder
from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.robustness import robustness
from clamber.jumper.robust import design_tol_scale
from clamber.jumper.sim.control import EventTriggeredSettings
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.factory import make_evaluator
from clamber.report.codesign import pareto_front, plot_margin_pareto
from clamber.report.save import save_figure
from clamber.storage.runs import STORE_NAME

ROOT = Path(__file__).resolve().parents[1]
LONG_CLIMB = ROOT / "docs" / "data" / "long_climb"
#: Each design's `clamber jumper optimize` options, by its folder under ``--designs``
#: (None: the stored long-climb design; ``long_climb_robust_*``: its body re-optimized from
#: the seed guess; a number: the stored design re-optimized robust at that tolerance scale
#: from its own trajectory, :func:`warm_robust`).
DESIGNS: dict[str, list[str] | float | None] = {
    "nominal_default": [],
    "nominal_robust_x1": ["--robust", "--tol-scale", "1"],
    "nominal_robust_x1.5": ["--robust", "--tol-scale", "1.5"],
    "nominal_robust_x2": ["--robust", "--tol-scale", "2"],
    "nominal_robust_x3": ["--robust", "--tol-scale", "3"],
    "long_climb": None,
    "long_climb_robust_x1": ["--robust", "--tol-scale", "1",
                             "--morphology", str(LONG_CLIMB / "morphology.toml")],
    "long_climb_robust_x1.5": ["--robust", "--tol-scale", "1.5",
                               "--morphology", str(LONG_CLIMB / "morphology.toml")],
    "long_climb_robust_x2": ["--robust", "--tol-scale", "2",
                             "--morphology", str(LONG_CLIMB / "morphology.toml")],
    "long_climb_warm_x1": 1.0,
    "long_climb_warm_x1.5": 1.5,
}
#: Tolerance scales every design is played at [-], and jumps per climb.
SCALES, JUMPS = ("1", "1.5"), 10
#: Evaluation master seed: no tuning step used it (the re-catch was tuned on seed 1).
SEED = 12345


def warm_robust(scale: float) -> TrajectorySolution:
    """The stored long-climb design re-optimized as ``optimize --robust --tol-scale scale``
    does, warm-started from its own trajectory (so it stays in the same optimum's basin),
    checked by replay and recording its rear spar and the scale."""
    from clamber.cli.optimize import robust_scenarios
    from clamber.jumper.robust import optimize_robust, with_design_tol_scale
    from clamber.jumper.sim.settings import with_hardware
    from clamber.jumper.verify import attach_accuracy

    stored = TrajectorySolution.load(LONG_CLIMB / "solution.npz")
    sol = optimize_robust(stored.morphology, stored.settings, "fine", stored,
                          scenarios=robust_scenarios(scale))
    if not sol.status.success:
        raise SystemExit(f"long_climb_warm_x{scale:g}: the optimization ended "
                         f"{sol.status.value}")
    attach_accuracy(sol)
    return with_design_tol_scale(with_hardware(sol, rear_spar=True), scale)


def load_design(name: str, root: Path, optimize: bool) -> TrajectorySolution:
    """The design ``name``: the stored long-climb solution, or its optimum from ``root``
    (optimized there first if missing or ``optimize``)."""
    argv = DESIGNS[name]
    if argv is None:
        return TrajectorySolution.load(LONG_CLIMB / "solution.npz")
    out = root / name
    if isinstance(argv, float) and (optimize or not (out / "solution.npz").exists()):
        print(f"optimizing {name} from the stored long-climb design ...", file=sys.stderr)
        claim_output_folder(out, "benchmarks/bench_robust_pareto.py")
        warm_robust(argv).save(out / "solution.npz")
        TrajectorySolution.load(LONG_CLIMB / "solution.npz").morphology.save(
            out / "morphology.toml")
    elif optimize or not (out / "solution.npz").exists():
        assert isinstance(argv, list)
        print(f"optimizing {name}: clamber jumper optimize {' '.join(argv)} ...",
              file=sys.stderr)
        claim_output_folder(out, "benchmarks/bench_robust_pareto.py")
        summary = optimize_command(optimize_arguments(*argv, "--no-figures", "--out", str(out)))
        if summary["status"] not in ("converged", "acceptable"):
            raise SystemExit(f"{name}: the optimization ended {summary['status']}")
    return TrajectorySolution.load(out / "solution.npz")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 climbs per design and scale")
    ap.add_argument("--trials", type=int, default=200, help="climbs per design and scale")
    ap.add_argument("--seed", type=int, default=SEED, help="master seed (12345)")
    ap.add_argument("--workers", type=int, default=2, help="Dask workers (0: this process)")
    ap.add_argument("--designs", type=Path, default=ROOT / "docs" / "data" / "robust_pareto",
                    help="folder of the optimized designs")
    ap.add_argument("--optimize", action="store_true", help="optimize every design again")
    ap.add_argument("--figure", type=Path, help="write the Pareto figure here")
    ap.add_argument("--runs", type=Path,
                    help="record each study in a run folder here and resume those found")
    args = ap.parse_args(argv)
    trials = 10 if args.quick else args.trials
    t0 = time.perf_counter()
    designs = {name: load_design(name, args.designs, args.optimize) for name in DESIGNS}
    config = calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar(),
                               event_triggered=EventTriggeredSettings(recovery=True))
    rows: dict[str, dict] = {}
    with make_evaluator(args.workers) as evaluator:
        for name, sol in designs.items():
            rows[name] = {"planned_speed_mps": sol.speed, "period_s": sol.period,
                          "design_tol_scale": design_tol_scale(sol)}
            for scale in SCALES:
                print(f"{name}, tolerances x{scale} ...", file=sys.stderr)
                t1 = time.perf_counter()
                run_dir = args.runs / f"{name}_tol{scale}" if args.runs else None
                res = robustness(sol, trials, seed=args.seed, jumps=JUMPS, config=config,
                                 tolerances=calibrated_tolerances(float(scale)),
                                 evaluator=evaluator, run_dir=run_dir,
                                 resume=bool(run_dir and (run_dir / STORE_NAME).exists()))
                s = {k: None if isinstance(v, float) and math.isnan(v) else v
                     for k, v in res.summary().items()}  # strict JSON: no NaN
                rows[name][scale] = {
                    **{k: s[k] for k in ("expected_speed_mps", "climb_speed_mps",
                                         "ready_rate", "landing_rate", "landing_interval",
                                         "per_jump_ready_rate", "per_jump_ready_interval",
                                         "rear_misses", "recovered_rear_misses",
                                         "failures")},
                    "wall_s": time.perf_counter() - t1}
    front = {}
    for scale in SCALES:
        pts = [(rows[n][scale]["expected_speed_mps"], rows[n][scale]["landing_rate"])
               for n in rows]
        front[scale] = [list(rows)[i] for i in pareto_front(pts)]
        for n in rows:
            rows[n][scale]["non_dominated"] = n in front[scale]
    if args.figure:
        args.figure.parent.mkdir(parents=True, exist_ok=True)
        points = {n: {s: r[s] for s in SCALES} for n, r in rows.items()}
        save_figure(plot_margin_pareto(points), args.figure)
        args.figure.with_suffix(".json").write_text(json.dumps(
            {"trials": trials, "seed": args.seed, "jumps": JUMPS, "designs": rows}, indent=1))
    out = {"trials": trials, "seed": args.seed, "jumps": JUMPS, "scales": list(SCALES),
           "designs": rows, "non_dominated": front, "wall_s": time.perf_counter() - t0}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
