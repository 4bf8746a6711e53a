"""`clamber quadruped compare`: Q-WBC, CLIK and VMC on the comparison's scenarios, with the
gains tuned alike on request, and the ablations."""

from __future__ import annotations

import argparse
import csv
import json
import logging
import time
from pathlib import Path

from clamber.cli.options import (
    RESEAT_HELP,
    LazyChoices,
    add_execution_options,
    add_output_options,
    positive_float,
    quantity_type,
    seed_int,
    strict_json,
)
from clamber.exceptions import ConfigError
from clamber.quadruped.options import StateSource

log = logging.getLogger("clamber")

#: Wall time of one simulated gait cycle of a plane-wall climb in one process [s]
#: (`clamber quadruped climb --trials 2 --workers 0`, kernels already compiled), rounded
#: up; what decides whether a study pays for a cluster (options.pays_for_a_cluster).
CYCLE_S = 5.0
#: A physics step [s] on the command line: from 0.1 ms (a bounded number of steps) up to
#: the 20 ms control period at 50 Hz.
physics_step_seconds = quantity_type(float, "physics_dt")


def add_physics_dt(parser: argparse.ArgumentParser) -> None:
    """``--physics-dt``: None (the climbs' default step) or a step that divides the control
    period."""
    parser.add_argument("--physics-dt", type=physics_step_seconds, default=None,
                        help="physics step [s]; it must divide the control period into "
                        "whole steps (default at 50 Hz: 0.01, a climb near a gripper's "
                        "limit climbed again at 0.004; 0.004 from the start for breakable "
                        "climbs of 3 or more cycles; 0.001 for convergence checks)")


def physics_dt_of(args: argparse.Namespace, control_rate: float = 50.0) -> float | None:
    """The ``--physics-dt`` the command runs, checked against the control period; None where
    the climbs choose their default step (:func:`clamber.quadruped.sim.rates.climb_step`)."""
    from clamber.quadruped.sim.rates import check_physics_step

    if args.physics_dt is None:
        return None
    return check_physics_step(control_rate, args.physics_dt)


def sole_compliance(stiffness: float, armature: float | None = None):
    """The sole compliance for a ``--sole-stiffness`` value (0: rigid weld) and an optional
    ``--sole-armature`` [kg m^2]."""
    from clamber.quadruped.sim.grippers import SoleCompliance

    if stiffness <= 0:
        return None
    sole = SoleCompliance(stiffness=stiffness)
    if armature is None:
        return sole
    from dataclasses import replace

    return replace(sole, armature=armature)


def _compare(args: argparse.Namespace) -> dict:
    """Tune the three controllers alike (``--tune``), then run every scenario (and the
    ablations)."""
    from clamber.cli.options import (
        TrialProgress,
        evaluator_for,
        progress_enabled,
        release_run,
        restore_options,
        run_folder,
    )
    from clamber.experiments.quadruped_comparison import ABLATION_ROWS, MAIN, run_comparison
    from clamber.experiments.quadruped_tuning import TuningSettings
    from clamber.quadruped.gaits import ClimbGaitSettings
    from clamber.quadruped.sim.rates import climb_step
    from clamber.report.quadruped import plot_loads
    from clamber.report.quadruped_comparison import cell_table, failure_table, rerun_note

    if args.tune and args.gains:
        raise ConfigError("give --tune or --gains, not both")
    out = run_folder(args)
    if args.resume:
        check_comparison_folder(out)
    restore_options(args, out)
    physics_dt = physics_dt_of(args)
    reseat = ClimbGaitSettings(cycles=args.cycles, reseat_every=args.reseat_every).reseat_every
    cell_dt = climb_step(50.0, args.cycles) if physics_dt is None else physics_dt
    t0 = time.perf_counter()
    from clamber.experiments.quadruped_scenarios import SCENARIOS

    scenarios = list(SCENARIOS) if not args.scenarios or "all" in args.scenarios \
        else list(dict.fromkeys(args.scenarios))
    rows = ABLATION_ROWS if args.ablations else MAIN
    gains = _read_gains(args.gains) if args.gains else None
    tuning = TuningSettings(budget=args.tune_budget) if args.tune and not gains else None
    sole = sole_compliance(args.sole_stiffness, args.sole_armature)
    total = len(scenarios) * len(rows) * args.trials + (
        0 if tuning is None else len(MAIN) * tuning.budget * len(tuning.seeds)
        * len(tuning.scenarios))
    with evaluator_for(args, total, CYCLE_S * args.cycles) as evaluator, \
            TrialProgress(total, "quadruped-compare", progress_enabled(args)) as bar:
        res = run_comparison(args.trials, scenarios, rows, args.seed, evaluator, args.cycles,
                             tuning, gains, sole, physics_dt, out, bool(args.resume),
                             bar, args.time_limit, args.state, args.reseat_every)
    release_run(out)
    text = ["# Controller comparison in simulation", "",
            f"{args.trials} trials per cell on seeds {args.seed}-{args.seed + args.trials - 1} "
            f"(no tuning step used them), {args.cycles} gait cycle(s) of 0.22 m each, sole "
            f"stiffness {args.sole_stiffness:g} N m/rad, physics step "
            f"{1000 * cell_dt:g} ms, grippers re-seated "
            + (f"after every {reseat} body move(s)" if reseat else "never") + "; gains: "
            + ("class defaults" if not res["gains"] else
               "; ".join(f"{c} " + ", ".join(f"{k} x{v:.2f}" for k, v in g.items())
                         for c, g in res["gains"].items())), "",
            cell_table(res["cells"], rows, scenarios)]
    note = rerun_note(sum(bool(r.verdict_rerun) for r in res["trials"]), len(res["trials"]))
    text += ["", note] if note else []
    failures = failure_table(res["cells"], rows, scenarios)
    if failures:
        text += ["", "Where and why each failed trial failed (height: body travel up the wall):",
                 "", failures]
    (out / "comparison.md").write_text("\n".join(text) + "\n")
    _write_results(out / "trials.csv", res["trials"])
    figure = None if args.no_figures else str(plot_loads(res["trials"],
                                                         out / "gripper_loads.png"))
    summary = {"command": "compare", "trials": args.trials, "cycles": args.cycles,
               "reseat_every": reseat,
               "scenarios": scenarios, "controllers": list(rows),
               "sole_stiffness": args.sole_stiffness, "physics_dt": cell_dt,
               "gains": res["gains"],
               "tuning": res["tuning"], "results": res["cells"],
               "table": str(out / "comparison.md"), "figure": figure, "run_dir": str(out),
               "total_wall_time_s": time.perf_counter() - t0}
    (out / "comparison.json").write_text(strict_json(summary, indent=1) + "\n")
    if not args.json:
        log.info("%s", "\n".join(text))
    return summary


def check_stored_trials(run_dir: Path, kind: str | None, conditions: int | None = None,
                        seeds: list[int] | None = None) -> None:
    """Before a resume: every recorded trial of the study in ``run_dir`` is one of its
    ``conditions`` x ``seeds`` (when given) and its metrics have the types of the fields of
    :class:`~clamber.quadruped.trials.result.TrialResult` and of the rock climb's
    :class:`~clamber.quadruped.trials.rock_climb.RockTrialResult` (other metrics plain
    values); a FileFormatError names the table, row and field otherwise."""
    from dataclasses import fields

    from clamber import _validate as check
    from clamber.exceptions import FileFormatError
    from clamber.experiments.record import StudyTrial
    from clamber.quadruped.trials.rock_climb import RockTrialResult
    from clamber.storage.runs import STORE_NAME, RunStore

    types = {f.name: str(f.type) for f in fields(RockTrialResult)}
    plain = {"float": check.is_real, "int": lambda v: isinstance(v, int)
             and not isinstance(v, bool), "bool": lambda v: isinstance(v, bool),
             "str": lambda v: isinstance(v, str),
             "tuple[float, float]": lambda v: isinstance(v, list | tuple) and len(v) == 2
             and all(check.is_real(x) for x in v)}
    for t in RunStore.read_trials(run_dir, kind, StudyTrial):
        row = f"{Path(run_dir) / STORE_NAME}: table trials, row {t.slot}"
        if conditions is not None and seeds is not None and not (
                0 <= t.group < conditions and 0 <= t.index < len(seeds)
                and t.seed == seeds[t.index]):
            raise FileFormatError(f"{row}: not a trial of this study ({conditions} "
                                  f"conditions x seeds {seeds[0]}-{seeds[-1]}; seed {t.seed})")
        for name, value in t.metrics.items():
            ok = plain.get(types.get(name, ""), lambda v: isinstance(v, str | bool | int
                                                                        | float))
            if value is not None and not ok(value):
                raise FileFormatError(f"{row}: metric {name!r} = {str(value)[:60]!r} is "
                                      f"not a {types.get(name, 'plain value')}")


def check_comparison_folder(run_dir: Path) -> None:
    """``compare --resume``: the folder holds a comparison (its sub-studies), not a run of
    another command, and its records are sound."""
    from clamber.storage.runs import RunStore

    if RunStore.exists(run_dir):
        raise ConfigError(f"{run_dir} holds a {RunStore.stored_kind(run_dir)!r} run, not a "
                          "comparison; resume it with its own command")
    for sub in ("tuning", "cells"):
        if RunStore.exists(run_dir / sub):
            check_stored_trials(run_dir / sub, None)


def _read_gains(path: str) -> dict:
    """The tuned gains of a previous ``comparison.json``: ``{"gains": {controller: {gain:
    multiplier}}}`` with tuned controllers only, each with exactly its own gains, every
    multiplier within ``RANGES['gain_multiplier']``."""
    from clamber import _validate as check
    from clamber.quadruped.control.variants import GAINS

    text = check.read_text(path, "gains file", ConfigError)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ConfigError(f"{path}: not valid JSON ({e})") from None
    gains = data.get("gains") if isinstance(data, dict) else None
    if not isinstance(gains, dict):
        raise ConfigError(f"{path}: must hold an object \"gains\" of controller gains, "
                          "as comparison.json does")
    out = {}
    for controller, values in gains.items():
        if controller not in GAINS:
            raise ConfigError(f"{path}: gains.{controller}: not a tuned controller; "
                              f"allowed: {', '.join(GAINS)}")
        if not isinstance(values, dict) or set(values) != set(GAINS[controller]):
            raise ConfigError(f"{path}: gains.{controller} must be an object of exactly "
                              f"{', '.join(GAINS[controller])}")
        out[controller] = tuple(
            (name, check.in_range(f"gains.{controller}", name, v, "gain_multiplier"))
            for name, v in values.items())
    return out


def _write_results(path: Path, results: list) -> None:
    """One CSV row per trial result."""
    rows = [r.to_dict() for r in results]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def register_compare(qsub: argparse._SubParsersAction, examples: str) -> None:
    """Add `quadruped compare` to the quadruped command's subparsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    ev = qsub.add_parser(
        "compare", help="Q-WBC vs CLIK vs VMC on every scenario; gain tuning, ablations",
        description="The paper's comparison: seeded multi-cycle climbs per controller and "
        "scenario on held-out seeds, with the class-default gains or (--tune) gains tuned "
        "for all three controllers by one random search on training seeds; written as "
        "comparison.md, comparison.json, trials.csv and gripper_loads.png.",
        epilog=examples, formatter_class=fmt)
    ev.add_argument("--trials", type=quantity_type(int, "trials"), default=20,
                    help="trials per cell (20)")
    ev.add_argument("--seed", type=seed_int, default=0, help="first seed (0)")
    ev.add_argument("--scenarios", nargs="+", default=None, metavar="NAME",
                    choices=LazyChoices("clamber.experiments.quadruped_scenarios",
                                        "SCENARIOS", extra=("all",)),
                    help="scenarios (default and all: every one): %(choices)s")
    ev.add_argument("--ablations", action="store_true",
                      help="also run the Q-WBC, VMC and CLIK ablations")
    ev.add_argument("--cycles", type=quantity_type(int, "gait_cycles"), default=5,
                    help="gait cycles per climb (5, 1.1 m)")
    ev.add_argument("--reseat-every", type=quantity_type(int, "reseat_every"), default=None,
                    metavar="N", help=RESEAT_HELP)
    ev.add_argument("--tune-budget", type=quantity_type(int, "tune_budget"), default=6,
                      help="candidates per controller in the gain search (6)")
    ev.add_argument("--tune", action="store_true",
                    help="tune the three controllers' gains alike first (default: class "
                    "defaults)")
    ev.add_argument("--state", choices=StateSource.values(), default="estimate",
                    help="controllers run on the state estimate (default) or on the "
                    "simulator's true state (an ablation)")
    ev.add_argument("--gains", default=None,
                      help="take the gains from a previous comparison.json (no tuning)")
    ev.add_argument("--sole-stiffness", type=quantity_type(float, "sole_stiffness"),
                    default=25.0,
                      help="sole stiffness about x and y [N m/rad] (25; 0: rigid weld)")
    ev.add_argument("--sole-armature", type=quantity_type(float, "sole_armature"),
                    default=None,
                      help="sole hinge armature [kg m^2] (default 1e-3)")
    add_physics_dt(ev)
    ev.add_argument("--time-limit", type=positive_float, default=None,
                    help="stop every trial after this much simulated time [s] (a quick look: "
                    "such trials fail with 'time limit')")
    add_output_options(ev, "out/quadruped/compare")
    add_execution_options(ev)
    ev.set_defaults(func=_compare)
