"""`clamber jumper optimize`: one periodic jump for a morphology."""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from clamber.cli.options import (
    FMT,
    Heartbeat,
    add_output_options,
    input_file,
    quantity_type,
    seed_int,
)
from clamber.exceptions import ConfigError

if TYPE_CHECKING:
    from clamber.jumper.formulation.scenarios import MassScenarios

log = logging.getLogger("clamber")

EXAMPLES_OPTIMIZE = """examples:
  clamber jumper optimize
  clamber jumper optimize --morphology robot.toml --resolution coarse --out runs/a
  clamber jumper optimize --guess random --seed 3 --json
  clamber jumper optimize --torque-limit 0.4 --collocation hermite-simpson
  clamber jumper optimize --settings tuned.toml   # any OptimizationSettings field, e.g.
                                                  # safe_region_front = "safe_region.json"
  clamber jumper optimize --robust --tol-scale 1.5 --out out/robust15   # wider margin
  clamber jumper optimize --motor-headroom 0.1 --out out/headroom10   # voltage left free
"""


def optimize_command(args: argparse.Namespace) -> dict:
    """`clamber jumper optimize`: solve, check by replay, save, draw; the JSON summary."""
    from clamber import _validate
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.settings import OptimizationSettings
    from clamber.jumper.settings_file import load_settings
    from clamber.jumper.solve import optimize
    from clamber.jumper.verify import attach_accuracy

    morph = Morphology.load(args.morphology) if args.morphology else Morphology.nominal()
    _validate.morphology_in_range(morph)
    changes = {}
    if args.torque_limit is not None:
        changes["torque_limit"] = args.torque_limit
    if args.collocation is not None:
        changes["collocation"] = args.collocation
    if args.torque_rate_weight is not None:
        changes["torque_rate_weight"] = args.torque_rate_weight
    if getattr(args, "backend", None) is not None:
        changes["backend"] = args.backend
    if getattr(args, "motor_headroom", None) is not None:
        changes["motor_headroom"] = args.motor_headroom
    if getattr(args, "motor_headroom_phases", None) is not None:
        changes["motor_headroom_phases"] = tuple(args.motor_headroom_phases)
    base = load_settings(args.settings) if args.settings else OptimizationSettings()
    settings = base.with_(**changes)
    tol_scale = getattr(args, "tol_scale", None)  # namespaces built in code may lack it
    if tol_scale is not None and not args.robust:
        raise ConfigError("--tol-scale sets the margin of --robust; add --robust")
    run = optimize
    if args.robust:
        from functools import partial

        from clamber.jumper.robust import optimize_robust, robust_settings

        tol_scale = 1.0 if tol_scale is None else tol_scale
        settings = robust_settings(settings)
        run = partial(optimize_robust, scenarios=robust_scenarios(tol_scale))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    log.info("optimizing (%s, %s) ...%s", args.resolution, settings.collocation,
             _first_build_note(settings.backend))
    with Heartbeat(f"optimizing ({args.resolution})"):
        sol = run(morph, settings, args.resolution, args.guess, args.seed)
    elapsed = time.perf_counter() - t0
    solved = sum(h.get("solve_time_s", 0.0) for h in sol.history)
    log.info("solver: %s; built in %.1f s, solved in %.1f s (%d iterations)",
             sol.status.value, elapsed - solved, solved, sol.iterations)
    for stage in sol.history:  # -v: each IPOPT run of the coarse-to-fine sequence
        log.debug("  IPOPT on %s nodes (%s%s): %s after %d iterations, %.2f s, %.4f m/s",
                  stage.get("nodes"), stage.get("backend"),
                  ", warm start" if stage.get("warm_start") else "", stage.get("status"),
                  stage.get("iterations", 0), stage.get("solve_time_s", 0.0),
                  stage.get("speed_mps", float("nan")))
    if sol.status.success:
        log.info("checking the accuracy (replaying the torques with an adaptive "
                 "integrator) ...")
        with Heartbeat("checking the accuracy"):
            attach_accuracy(sol)
        if not sol.physically_consistent:
            log.warning("warning: replaying the torques drifts %.1f mm from the optimized "
                        "motion; the speed is not trustworthy at this resolution (refine, or "
                        "use --collocation hermite-simpson)",
                        sol.accuracy["max_position_drift_m"] * 1e3)
    if args.robust:
        from clamber.jumper.robust import with_design_tol_scale

        sol = with_design_tol_scale(sol, tol_scale)
    path = sol.save(out / "solution")
    morph.save(out / "morphology.toml")
    figures = {}
    if sol.status.success and not args.no_figures:
        from clamber.report.jumper import save_all

        log.info("writing figures%s ...", "" if args.no_animation else " and the animation")
        with Heartbeat("writing figures"):
            paths = save_all(sol, out, animation=not args.no_animation)
        figures = {k: str(v) for k, v in paths.items()}
    summary = sol.summary()
    summary["total_solve_time_s"] = sum(h.get("solve_time_s", 0.0) for h in sol.history)
    summary["total_wall_time_s"] = time.perf_counter() - t0
    summary["solution_path"] = str(path)
    summary["figures"] = figures
    if args.robust:
        summary["design_tol_scale"] = tol_scale
    return summary


def robust_scenarios(tol_scale: float) -> MassScenarios:
    """The take-off clearance scenarios of ``optimize --robust --tol-scale X``: the shoulder
    motor lighter by twice the mass tolerance of :func:`calibrated_tolerances` ``(X)``, the
    scatter ``robustness --tol-scale X`` draws robots from."""
    from clamber.experiments.calibration import calibrated_tolerances
    from clamber.jumper.robust import clearance_scenarios

    return clearance_scenarios(calibrated_tolerances(tol_scale).mass_rel)


def _first_build_note(backend: str) -> str:
    """What a first run waits for: the compiled backend builds each problem structure's C
    code once (about one to three minutes each on two cores), then loads it from the
    cache; said when the cache holds no library yet."""
    if backend != "compiled":
        return ""
    from clamber.jumper.formulation.backends import cache_dir

    root = cache_dir()
    if root.is_dir() and any(root.glob("*.so")):
        return ""
    return (f" (first run: compiling the NLP's C code once per problem structure, about "
            f"1-3 min each, cached in {root})")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `optimize` under `clamber jumper`."""
    opt = subparsers.add_parser(
        "optimize", help="optimize one jump for a morphology",
        description="Direct-collocation trajectory optimization of one periodic jump "
        "(IPOPT): a coarse solve from an initial guess, then refinement.",
        epilog=EXAMPLES_OPTIMIZE, formatter_class=FMT)
    opt.add_argument("--morphology", type=input_file,
                     help="morphology TOML (default: nominal)")
    opt.add_argument("--settings", type=input_file,
                     help="TOML file setting any optimization setting (safe regions too; "
                     "see clamber.jumper.settings_file); the options below override it")
    opt.add_argument("--resolution", choices=("coarse", "fine"), default="fine",
                     help="coarse (18,9,15,9,12) or coarse then fine (27,14,23,14,18)")
    opt.add_argument("--guess", choices=("seed", "deterministic", "random"), default="seed",
                     help="initial guess: packaged seed trajectory (falls back to the designed "
                     "motion), the designed bounding motion, or the paper's random one")
    opt.add_argument("--seed", type=seed_int, default=0,
                     help="seed of the random guess")
    opt.add_argument("--torque-limit", type=quantity_type(float, "joint_torque"),
                     help="joint torque bound [N m] (0.25)")
    opt.add_argument("--collocation", choices=("trapezoidal", "hermite-simpson"),
                     help="how the dynamics are enforced between nodes: the trapezoidal "
                     "rule (the paper's, default) or Hermite-Simpson (4th order, adds a "
                     "midpoint per interval)")
    opt.add_argument("--torque-rate-weight", type=quantity_type(float, "torque_rate_weight"),
                     help="penalty on torque changes between nodes (1e-2; 0 = off)")
    opt.add_argument("--motor-headroom", type=quantity_type(float, "motor_headroom"),
                     metavar="H",
                     help="share of the motor line kept free in the push-off, [0, 0.5) "
                     "(default 0): |tau + k w| <= (1 - H) x the torque limit there, so the "
                     "ESC keeps voltage for feedback; slows the jump")
    opt.add_argument("--motor-headroom-phases", type=int, nargs="+", choices=range(1, 6),
                     metavar="PHASE",
                     help="phases (1-5) that keep --motor-headroom (default 1 2, the "
                     "push-off's stance phases)")
    opt.add_argument("--backend", choices=("compiled", "reference"),
                     help="NLP function evaluation: compiled C (default, cached) or reference")
    add_output_options(opt, "out/jumper")
    opt.add_argument("--robust", action="store_true",
                     help="add the landing-margin options (phase 4 at least 100 ms, grippers "
                     "released under at most 0.5 N, the front foot off the wall after "
                     "take-off on a lighter-shouldered robot too; clamber.jumper.robust)")
    opt.add_argument("--tol-scale", type=quantity_type(float, "design_tolerance_scale"),
                     help="with --robust: the calibrated tolerances' multiple to hold, (0, 4] "
                     "(default 1): the lighter shoulder motor is lighter by twice the mass "
                     "tolerance at that scale; above 1 trades speed for margin. Recorded "
                     "in the solution, which robustness reports")
    opt.add_argument("--no-animation", action="store_true", help="skip the GIF only")
    opt.set_defaults(func=optimize_command)


def optimize_arguments(*argv: str) -> argparse.Namespace:
    """The options of `clamber jumper optimize ARGV`, defaults included: how another command
    (the demo) runs an optimization exactly as the CLI would."""
    parser = argparse.ArgumentParser(prog="clamber jumper")
    register(parser.add_subparsers(required=True))
    return parser.parse_args(["optimize", *argv])
