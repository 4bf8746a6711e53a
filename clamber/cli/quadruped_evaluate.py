"""`clamber quadruped evaluate`: the controllers tuned alike, then every scenario."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from clamber.cli.options import (
    add_output_options,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    seed_int,
)
from clamber.exceptions import ConfigError
from clamber.quadruped.scenarios import SCENARIOS


def add_evaluate_command(qsub: argparse._SubParsersAction, epilog: str) -> None:
    """Add ``evaluate`` to the ``quadruped`` subcommands."""
    ev = qsub.add_parser(
        "evaluate", help="Q-WBC vs CLIK vs VMC tuned alike, on every scenario; ablations",
        description="The paper's comparison: the three controllers' gains tuned by one "
        "random search on training seeds, then seeded trials per controller and scenario on "
        "held-out seeds, written as comparison.md, comparison.json, trials.csv and "
        "gripper_loads.png.", epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ev.add_argument("--trials", type=positive_int, default=20, help="trials per cell (20)")
    ev.add_argument("--scenarios", nargs="+", default=None,
                    help="scenarios (default: all of clamber.quadruped.scenarios)")
    ev.add_argument("--ablations", action="store_true",
                    help="also run the Q-WBC, VMC and CLIK ablations")
    ev.add_argument("--cycles", type=positive_int, default=1, help="gait cycles (1)")
    ev.add_argument("--tune-budget", type=positive_int, default=6,
                    help="candidates per controller in the gain search (6)")
    ev.add_argument("--no-tune", action="store_true", help="class-default gains")
    ev.add_argument("--gains", default=None,
                    help="take the gains from a previous comparison.json (no tuning)")
    ev.add_argument("--seed", type=seed_int, default=0, help="first seed (0)")
    ev.add_argument("--workers", type=non_negative_int, default=0,
                    help="worker processes of the comparison's pool (0: in this process)")
    ev.add_argument("--sole-stiffness", type=non_negative_float, default=25.0,
                    help="sole stiffness about x and y [N m/rad] (25; 0: rigid weld)")
    ev.add_argument("--sole-armature", type=non_negative_float, default=None,
                    help="sole hinge armature [kg m^2] (default 1e-3)")
    ev.add_argument("--physics-dt", type=positive_float, default=0.004,
                    help="physics step [s] (0.004)")
    add_output_options(ev, "out/quadruped/evaluate", figures=False)
    ev.set_defaults(func=_evaluate)


def _evaluate(args: argparse.Namespace) -> dict:
    """Tune the three controllers alike, then run every scenario (and ablations)."""
    from clamber.quadruped.comparison import (
        ABLATION_ROWS,
        MAIN,
        cell_table,
        run_comparison,
    )
    from clamber.quadruped.sim.grippers import SoleCompliance
    from clamber.quadruped.tuning import TuningSpec
    from clamber.report.quadruped import plot_loads

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    scenarios = args.scenarios or list(SCENARIOS)
    rows = ABLATION_ROWS if args.ablations else MAIN
    gains = None
    if args.gains:
        try:
            gains = {c: tuple(g.items()) for c, g in
                     json.loads(Path(args.gains).read_text())["gains"].items()}
        except (OSError, ValueError, KeyError, AttributeError) as e:
            raise ConfigError(f"cannot read gains from {args.gains}: {e}") from None
    tuning = None if args.no_tune else TuningSpec(budget=args.tune_budget)
    sole = None
    if args.sole_stiffness > 0:
        armature = {} if args.sole_armature is None else {"armature": args.sole_armature}
        sole = SoleCompliance(stiffness=args.sole_stiffness, **armature)
    res = run_comparison(args.trials, scenarios, rows, args.seed, args.workers, args.cycles,
                         tuning, gains, sole, args.physics_dt)
    text = ["# Controller comparison in simulation", "",
            f"{args.trials} trials per cell on seeds {args.seed}-{args.seed + args.trials - 1} "
            f"(no tuning step used them), {args.cycles} gait cycle(s) of 0.22 m each, sole "
            f"stiffness {args.sole_stiffness:g} N m/rad, physics step "
            f"{1000 * args.physics_dt:g} ms; gains: "
            + ("class defaults" if not res["gains"] else
               "; ".join(f"{c} " + ", ".join(f"{k} x{v:.2f}" for k, v in g.items())
                         for c, g in res["gains"].items())), "",
            cell_table(res["cells"], rows, scenarios)]
    (out / "comparison.md").write_text("\n".join(text) + "\n")
    _write_results(out / "trials.csv", res["trials"])
    figure = plot_loads(res["trials"], out / "gripper_loads.png")
    summary = {"command": "evaluate", "trials": args.trials, "cycles": args.cycles,
               "scenarios": scenarios, "controllers": list(rows),
               "sole_stiffness": args.sole_stiffness, "gains": res["gains"],
               "tuning": res["tuning"], "results": res["cells"],
               "table": str(out / "comparison.md"), "figure": str(figure),
               "total_wall_time_s": time.perf_counter() - t0}
    (out / "comparison.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    if not args.json:
        print("\n".join(text), file=sys.stderr)
    return summary


def _write_results(path: Path, results: list) -> None:
    """One CSV row per trial result."""
    rows = [r.to_dict() for r in results]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
