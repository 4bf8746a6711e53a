"""`clamber quadruped wall` writes a generated rock wall (MJCF asset, height field, figure);
`clamber quadruped holds` compares hold selection rules on generated walls."""

from __future__ import annotations

import argparse
from pathlib import Path

from clamber.cli.options import (
    add_execution_options,
    add_output_options,
    number_type,
    quantity_type,
    seed_int,
    strict_json,
)

#: Wall inclines the generator accepts [deg]: from a slab to a 45-degree overhang.
wall_incline = number_type(float, 0, 135, unit=" deg")

EXAMPLES = """examples:
  clamber quadruped wall --seed 3 --incline 90 --out out/quadruped/wall
  clamber quadruped wall --seed 3 --incline 110 --json --no-figures
  clamber quadruped holds --inclines 70 90 110 --trials 10 --distance 1.0 --workers 0 --json
  clamber quadruped holds --inclines 90 --rules planner --grasp winch --trials 5
"""
trial_count = number_type(int, 1, 100_000)


def _wall(args: argparse.Namespace) -> dict:
    from clamber.quadruped.rock.holding import GripperSurfaceModel, patch_features
    from clamber.quadruped.rock.mjcf import hfield_bytes, wall_mjcf
    from clamber.quadruped.rock.wall import SPINE_WAVELENGTHS, generate_wall

    wall = generate_wall(args.incline, args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"rock_wall_{args.seed}"
    (out / f"{stem}.bin").write_bytes(hfield_bytes(wall))
    (out / f"{stem}.xml").write_text(wall_mjcf(wall, f"{stem}.bin"))
    model = GripperSurfaceModel()
    feats = patch_features(wall.z, wall.spacing, model)
    factors = model.capacity_factor(feats.convexity, feats.step, wall.micro_rms)
    summary = {"seed": args.seed, "incline_deg": args.incline,
               "mjcf": str(out / f"{stem}.xml"), "hfield": str(out / f"{stem}.bin"),
               "grid": list(wall.z.shape), "spacing_m": wall.spacing,
               "hurst": wall.spec.spectrum.hurst, "psd_exponent": wall.spec.spectrum.exponent,
               "rms_m": wall.spec.spectrum.rms, "asperity_rms_m": wall.micro_rms,
               "fractal_asperity_band_rms_m": wall.spec.spectrum.band_rms(
                   wall.spec.spectrum.level(wall.z.shape, wall.spacing), SPINE_WAVELENGTHS),
               "knobs": sum(not k.ledge for k in wall.knobs),
               "ledges": sum(k.ledge for k in wall.knobs),
               "area_fz_capacity_over_half": float((factors[..., 2] > 0.5).mean())}
    if not args.no_figures:
        from clamber.report.rock import plot_wall
        from clamber.report.save import save_figure

        summary["figure"] = str(save_figure(plot_wall(wall, factors), out / f"{stem}.png"))
    return summary


def _holds(args: argparse.Namespace) -> dict:
    from clamber.cli.options import TrialProgress, evaluator_for, progress_enabled, run_folder
    from clamber.experiments.rock import holds_table, run_hold_selection_study
    from clamber.quadruped.planning.rollout import PlanClimbSettings

    conditions = [PlanClimbSettings(rule=rule, incline_deg=inc, distance=args.distance,
                                    grasp=args.grasp)
                  for inc in args.inclines for rule in args.rules]
    seeds = list(range(args.seed, args.seed + args.trials))
    run_dir = run_folder(args)
    total = len(conditions) * len(seeds)
    with TrialProgress(total, "holds", progress_enabled(args)) as bar, \
            evaluator_for(args, total) as evaluator:
        results, _ = run_hold_selection_study(conditions, seeds, evaluator, run_dir,
                                              bool(args.resume), bar)
    table = holds_table(results)
    (run_dir / "holds.md").write_text(table + "\n")
    summary = {"conditions": [r.to_dict() for r in results], "table": str(run_dir / "holds.md")}
    (run_dir / "holds.json").write_text(strict_json(summary, indent=1) + "\n")
    return summary


def register(qsub: argparse._SubParsersAction) -> None:
    """Add `wall` and `holds` to the `quadruped` subcommands."""
    p = qsub.add_parser(
        "wall", help="write a generated rock wall (MJCF asset and a figure)",
        description="A seeded rock wall: a fractional-Brownian surface (Hurst 0.8, 5 mm RMS) "
        "with knobs and ledges, as a MuJoCo height field (MJCF plus binary elevations), "
        "with a figure of its heights, holding capacity and spectrum.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=seed_int, default=0, help="wall seed (0)")
    p.add_argument("--incline", type=wall_incline, default=90.0,
                   help="wall incline [deg], 0-135 (90; over 90 overhangs)")
    add_output_options(p, "out/quadruped/wall")
    p.set_defaults(func=_wall)

    h = qsub.add_parser(
        "holds", help="hold selection on generated rock walls: planner vs nearest hold",
        description="Quasi-static planned climbs on seeded rock walls from a noisy depth map: "
        "the planner (reach, wrench-QP stability, load within the estimated capacity) "
        "against the nearest-hold rule, each grasp judged on the true wall; written as "
        "holds.md and holds.json.", epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    h.add_argument("--inclines", type=wall_incline, nargs="+", default=[70.0, 90.0, 110.0],
                   help="wall inclines [deg] (70 90 110)")
    h.add_argument("--rules", nargs="+", choices=("planner", "nearest"),
                   default=["planner", "nearest"], help="selection rules (both)")
    h.add_argument("--distance", type=quantity_type(float, "climb_distance"), default=1.0,
                   help="distance to climb [m] (1.0; at most 1.9 on the 2.8 m wall)")
    h.add_argument("--grasp", choices=("instant", "winch"), default="instant",
                   help="grasp model: instant, or the winch state machine on its plant with "
                   "real durations, detection of non-engaging grasps and re-grasps (instant)")
    h.add_argument("--trials", type=trial_count, default=10, help="walls per condition (10)")
    h.add_argument("--seed", type=seed_int, default=0, help="first wall seed (0)")
    add_output_options(p=h, default_out="out/quadruped/holds", figures=False)
    add_execution_options(h)
    h.set_defaults(func=_holds)
