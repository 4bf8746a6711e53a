"""`clamber demo`: the main job on the embedded defaults, with one results page.

Steps (:func:`run_demo`) run in order; each returns its summary entries and the sections it adds to
``OUT/report.html``. The demo writes only inside ``OUT`` and deletes nothing: a co-design
folder left by an earlier demo with the same settings is resumed (it is already complete,
so it returns at once), one with other settings is an error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clamber.cli import gripper, quadruped, sim
from clamber.cli.optimize import optimize_command
from clamber.cli.options import FMT, add_output_options
from clamber.experiments.codesign import CodesignConfig, run_codesign
from clamber.experiments.fitness import FitnessConfig

#: A few generations of a small population, scored by the coarse solve only: a couple
#: of minutes on 2 cores. The paper's run is `clamber jumper codesign` (50 x 9, refined).
DEMO_CONFIG = CodesignConfig(generations=3, popsize=4, fitness=FitnessConfig(refine=None))



def run_demo(args: argparse.Namespace) -> dict[str, Any]:
    """Optimize the nominal jumper, then the gripper, co-design, simulation and quadruped
    steps; write the page."""
    from clamber.report.html import Section, write_page

    root = Path(args.out)
    opt = argparse.Namespace(
        morphology=None, resolution="fine", guess="seed", seed=0, torque_limit=None,
        collocation=None, torque_rate_weight=None, no_figures=False, no_animation=False,
        out=str(root / "jumper"), json=args.json)
    summary = optimize_command(opt)
    figures = {k: v for k, v in summary.get("figures", {}).items() if str(v).endswith("png")}
    sections = [Section("The optimized jump of the nominal robot",
                        {k: summary.get(k) for k in ("status", "speed_mps", "period_s",
                                                     "height_m", "iterations")}, figures)]
    steps = (gripper.demo_step, codesign_demo, sim.demo_step, quadruped.demo_step)
    for step in steps:
        entries, more = step(root, summary, args.json)
        summary.update(entries)
        sections.extend(more)
    summary["report"] = str(write_page(root / "report.html", "clamber demo", sections))
    if not args.json:
        print(f"\nresults written under {root}/ (open {summary['report']})", file=sys.stderr)
    return summary


def codesign_demo(out_dir: Path, summary: dict[str, Any],
                  as_json: bool) -> tuple[dict[str, Any], list]:
    """Run the short co-design into ``out_dir/codesign`` (resuming an earlier demo's)."""
    from clamber.cli.codesign import ProgressBar
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator
    from clamber.report.html import Section, write_codesign_outputs
    from clamber.storage.runs import RunStore

    run_dir = Path(out_dir) / "codesign"
    cfg = DEMO_CONFIG
    if not as_json:
        print(f"\nco-design demo: {cfg.generations} generations x {cfg.popsize} candidates "
              "(coarse fitness) ...", file=sys.stderr)
    bar = ProgressBar(cfg.generations * cfg.popsize, cfg.generations, enabled=True)
    try:
        with make_evaluator(min(2, available_cores())) as evaluator:
            result = run_codesign(cfg, run_dir, evaluator, resume=RunStore.exists(run_dir),
                                  progress=bar)
    finally:
        bar.close()
    out = write_codesign_outputs(result)
    if not as_json:
        print(f"co-design report: {out['report']}", file=sys.stderr)
    entries = {"codesign_best_speed_mps": out["best_speed_mps"],
               "codesign_findings": out["findings"],
               "codesign_evaluations": out["evaluations"],
               "codesign_failed_evaluations": out["failed_evaluations"],
               "codesign_report": out["report"],
               "codesign_best_solution": (str(result.best_solution_path)
                                          if result.best_solution_path else None)}
    table = {"best speed [m/s]": out["best_speed_mps"], "evaluations": out["evaluations"],
             "failed evaluations": out["failed_evaluations"],
             "full report": out["report"], **(out["findings"] or {})}
    return entries, [Section("Co-design (short CMA-ES run)", table)]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the top-level `demo` command."""
    demo = subparsers.add_parser("demo", help="run the main job on the defaults",
                          description="Optimize the nominal jump-climber (coarse, then fine) "
                          "and verify it, fit a gripper safe region, run a short co-design, "
                          "simulate the best design and climb the quadruped; one results "
                          "page, OUT/report.html.",
                          epilog="examples:\n  clamber demo --out out\n", formatter_class=FMT)
    add_output_options(demo, "out", figures=False)
    demo.set_defaults(func=run_demo)
