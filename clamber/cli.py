"""The `clamber` command: optimize, check and show climbing robots."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

from clamber.exceptions import ClamberError

#: Modules that add subcommands under `clamber jumper`; each defines register(subparsers).
JUMPER_COMMAND_MODULES: tuple[str, ...] = ("clamber.search.cli", "clamber.jumper.sim_cli",
                                            "clamber.attachment.cli")
#: Modules that add top-level commands; each defines register(subparsers).
TOP_COMMAND_MODULES: tuple[str, ...] = ("clamber.quadruped.cli",)
#: Steps of `clamber demo` after the single optimization: "module:function", each called
#: as function(out_dir: Path, summary: dict, as_json: bool) -> dict merged into the summary.
DEMO_STEPS: tuple[str, ...] = ("clamber.attachment.cli:demo_step",
                              "clamber.search.demo:codesign_demo",
                              "clamber.jumper.sim_cli:demo_step",
                              "clamber.quadruped.cli:demo_step")

EXAMPLES_MAIN = """examples:
  clamber jumper optimize                       # nominal robot, coarse then fine
  clamber jumper optimize --resolution coarse --json
  clamber demo --out out                        # what `make demo` runs
"""

EXAMPLES_OPTIMIZE = """examples:
  clamber jumper optimize
  clamber jumper optimize --morphology robot.toml --resolution coarse --out runs/a
  clamber jumper optimize --guess random --seed 3 --json
  clamber jumper optimize --torque-limit 0.4 --collocation hermite-simpson
"""


def _print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, default=str))
        return
    width = max(len(k) for k in summary)
    for k, v in summary.items():
        if isinstance(v, float):
            v = f"{v:.4g}"
        elif isinstance(v, dict | list):
            v = json.dumps(v, default=str)
        print(f"{k:<{width}}  {v}")


def _optimize(args: argparse.Namespace) -> dict:
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.settings import OptimizationSettings
    from clamber.jumper.solve import optimize
    from clamber.jumper.verify import attach_accuracy

    morph = Morphology.load(args.morphology) if args.morphology else Morphology.nominal()
    changes = {}
    if args.torque_limit is not None:
        changes["torque_limit"] = args.torque_limit
    if args.collocation is not None:
        changes["collocation"] = args.collocation
    if args.torque_rate_weight is not None:
        changes["torque_rate_weight"] = args.torque_rate_weight
    settings = OptimizationSettings().with_(**changes)
    if args.robust:
        from clamber.jumper.robust import robust_settings

        settings = robust_settings(settings)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if not args.json:
        print(f"optimizing ({args.resolution}, {settings.collocation}) ...", file=sys.stderr)
    sol = optimize(morph, settings, args.resolution, args.guess, args.seed)
    if sol.status.success:
        attach_accuracy(sol)
        if not sol.physically_consistent:
            print(f"warning: replaying the torques drifts "
                  f"{sol.accuracy['max_position_drift_m'] * 1e3:.1f} mm from the optimized "
                  "motion; the speed is not trustworthy at this resolution (refine, or use "
                  "--collocation hermite-simpson)", file=sys.stderr)
    path = sol.save(out / "solution")
    morph.save(out / "morphology.toml")
    figures = {}
    if sol.status.success and not args.no_figures:
        from clamber.plotting.jumper import save_all

        paths = save_all(sol, out, animation=not args.no_animation)
        figures = {k: str(v) for k, v in paths.items()}
    summary = sol.summary()
    summary["total_solve_time_s"] = sum(h["solve_time_s"] for h in sol.history)
    summary["wall_time_s"] = time.perf_counter() - t0
    summary["solution_path"] = str(path)
    summary["figures"] = figures
    return summary


def _demo(args: argparse.Namespace) -> dict:
    args.morphology = None
    args.resolution = "fine"
    args.guess = "seed"
    args.seed = 0
    args.torque_limit = None
    args.collocation = None
    args.torque_rate_weight = None
    args.no_figures = False
    args.no_animation = False
    args.out = str(Path(args.out) / "jumper")
    summary = _optimize(args)
    root = Path(args.out).parent
    for step in DEMO_STEPS:
        module, func = step.split(":")
        summary.update(getattr(importlib.import_module(module), func)(root, summary, args.json))
    if not args.json:
        print(f"\nresults written under {root}/ (solution, figures, climb.gif)")
    return summary


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="clamber", description="Design, optimize and control climbing robots.",
        epilog=EXAMPLES_MAIN, formatter_class=fmt)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run the main job on the defaults",
                          description="Optimize the nominal jump-climber (coarse, then fine), "
                          "verify it and write figures and an animation.",
                          epilog="examples:\n  clamber demo --out out\n", formatter_class=fmt)
    demo.add_argument("--out", default="out", help="output folder (default: out)")
    demo.add_argument("--json", action="store_true", help="print one JSON summary")
    demo.set_defaults(func=_demo)

    jumper = sub.add_parser("jumper", help="the planar jump-climbing robot",
                            epilog=EXAMPLES_OPTIMIZE, formatter_class=fmt)
    jsub = jumper.add_subparsers(dest="jumper_command", required=True)
    opt = jsub.add_parser(
        "optimize", help="optimize one jump for a morphology",
        description="Direct-collocation trajectory optimization of one periodic jump "
        "(IPOPT): a coarse solve from an initial guess, then refinement.",
        epilog=EXAMPLES_OPTIMIZE, formatter_class=fmt)
    opt.add_argument("--morphology", type=Path, help="morphology TOML (default: nominal)")
    opt.add_argument("--resolution", choices=("coarse", "fine"), default="fine",
                     help="coarse (18,9,15,9,12) or coarse then fine (27,14,23,14,18)")
    opt.add_argument("--guess", choices=("seed", "deterministic", "random"), default="seed",
                     help="initial guess: packaged seed trajectory (falls back to the designed "
                     "motion), the designed bounding motion, or the paper's random one")
    opt.add_argument("--seed", type=int, default=0, help="seed of the random guess")
    opt.add_argument("--torque-limit", type=float, help="joint torque bound [N m] (0.25)")
    opt.add_argument("--collocation", choices=("trapezoidal", "hermite-simpson"))
    opt.add_argument("--torque-rate-weight", type=float,
                     help="penalty on torque changes between nodes (1e-2; 0 = off)")
    opt.add_argument("--robust", action="store_true",
                     help="add the landing-margin options (longer phase 4, catch approach "
                     "speed; clamber.jumper.robust)")
    opt.add_argument("--out", default="out/jumper", help="output folder (default: out/jumper)")
    opt.add_argument("--no-figures", action="store_true", help="skip figures and animation")
    opt.add_argument("--no-animation", action="store_true", help="skip the GIF only")
    opt.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    opt.set_defaults(func=_optimize)
    for module in JUMPER_COMMAND_MODULES:
        importlib.import_module(module).register(jsub)
    for module in TOP_COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        summary = args.func(args)
    except ClamberError as e:
        print(f"clamber: error: {e}", file=sys.stderr)
        return 2
    _print_summary(summary, args.json)
    return 0 if summary.get("status") in ("converged", "acceptable", None) else 1


if __name__ == "__main__":
    raise SystemExit(main())
