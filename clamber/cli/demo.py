"""`clamber demo`: the main job on the embedded defaults, with one results page.

Steps (:func:`run_demo`) run in order; each returns its summary entries and the sections it adds to
``OUT/report.html``. The demo writes only inside ``OUT`` (default ``out/demo``, apart from
the other commands' default folders) and deletes nothing: it refuses a non-empty ``OUT``
that clamber did not write (:func:`~clamber.cli.options.claim_output_folder`), and a
co-design folder left by an earlier demo with the same settings is resumed (it is already
complete, so it returns at once), one with other settings is an error.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from clamber.cli import gripper, quadruped, sim
from clamber.cli.optimize import optimize_arguments, optimize_command
from clamber.cli.options import (
    FMT,
    Heartbeat,
    add_output_options,
    claim_output_folder,
    progress_enabled,
)

log = logging.getLogger("clamber")


def demo_config():
    """A few generations of a small population, scored by the coarse solve only: a couple
    of minutes on 2 cores. The paper's run is `clamber jumper codesign` (50 x 9, refined)."""
    from clamber.experiments.codesign import CodesignSettings
    from clamber.experiments.fitness import FitnessSettings

    return CodesignSettings(generations=3, popsize=4, fitness=FitnessSettings(refine=None))


def run_demo(args: argparse.Namespace) -> dict[str, Any]:
    """Optimize the nominal jumper, then the gripper, co-design, landing, simulation and
    quadruped steps; write the page."""
    from clamber.report.html import Section, write_page

    root = Path(args.out)
    claim_output_folder(root, "clamber demo")
    start = t0 = time.perf_counter()
    summary = optimize_command(optimize_arguments(
        "--out", str(root / "jumper"), *(["--json"] if args.json else [])))
    log.info("demo, nominal jump: done in %.0f s", time.perf_counter() - t0)
    figures = {k: v for k, v in summary.get("figures", {}).items() if str(v).endswith("png")}
    sections = [Section("The optimized jump of the nominal robot",
                        {k: summary.get(k) for k in ("status", "speed_mps", "period_s",
                                                     "height_m", "iterations")}, figures)]
    steps = (("gripper safe region", gripper.demo_step), ("co-design", codesign_demo),
             ("landing check", landing_demo), ("simulation", sim.demo_step),
             ("quadruped climb", quadruped.demo_step))
    for name, step in steps:
        t0 = time.perf_counter()
        with Heartbeat(f"demo, {name}"):
            entries, more = step(root, summary, args.json)
        log.info("demo, %s: done in %.0f s", name, time.perf_counter() - t0)
        summary.update(entries)
        sections.extend(more)
    summary["total_wall_time_s"] = time.perf_counter() - start
    summary["report"] = str(write_page(
        root / "report.html", "clamber demo", sections,
        notes=f"The demo took {summary['total_wall_time_s']:.0f} s of wall time."))
    log.info("demo: done in %.0f s; results written under %s/ (open %s)",
             summary["total_wall_time_s"], root, summary["report"])
    return summary


def codesign_demo(out_dir: Path, summary: dict[str, Any],
                  as_json: bool) -> tuple[dict[str, Any], list]:
    """Run the short co-design into ``out_dir/codesign`` (resuming an earlier demo's)."""
    from clamber.cli.codesign import ProgressBar
    from clamber.experiments.codesign import run_codesign
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator
    from clamber.report.html import Section, write_codesign_outputs
    from clamber.storage.runs import RunStore

    run_dir = Path(out_dir) / "codesign"
    cfg = demo_config()
    log.info("co-design demo: %d generations x %d candidates (coarse fitness) ...",
             cfg.generations, cfg.popsize)
    bar = ProgressBar(cfg.generations * cfg.popsize, cfg.generations,
                      enabled=progress_enabled())
    try:
        with make_evaluator(min(2, available_cores())) as evaluator:
            result = run_codesign(cfg, run_dir, evaluator, resume=RunStore.exists(run_dir),
                                  progress=bar)
    finally:
        bar.close()
    out = write_codesign_outputs(result)
    log.info("co-design report: %s", out["report"])
    entries = {"codesign_best_speed_mps": out["best_speed_mps"],
               "codesign_findings": out["findings"],
               "codesign_evaluations": out["evaluations"],
               "codesign_failed_evaluations": out["failed_evaluations"],
               "codesign_report": out["report"],
               "codesign_best_solution": (str(result.best_solution_path)
                                          if result.best_solution_path else None),
               "codesign_best_morphology": out.get("best_morphology_file")}
    table = {"best speed [m/s]": out["best_speed_mps"], "evaluations": out["evaluations"],
             "failed evaluations": out["failed_evaluations"],
             "full report": out["report"], **(out["findings"] or {})}
    return entries, [Section("Co-design (short CMA-ES run)", table)]


def landing_demo(out_dir: Path, summary: dict[str, Any],
                 as_json: bool) -> tuple[dict[str, Any], list]:
    """The co-design's best design and the nominal robot, each re-optimized with the robust
    options and played with closed-loop catching in the calibrated simulator (30 seeded
    one-jump trials and 30 ten-jump climbs each); the one with the larger expected speed
    is the demo's landing design, simulated next (docs/results/jumper_landing.md)."""
    from clamber.cli.options import pays_for_a_cluster
    from clamber.cli.sim import ROBUSTNESS_JUMP_S
    from clamber.experiments.landing_check import check_landing
    from clamber.jumper.morphology import Morphology
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator
    from clamber.report.html import Section

    root = Path(out_dir) / "landing"
    root.mkdir(parents=True, exist_ok=True)
    designs = [("nominal robot", Morphology.nominal())]
    best = summary.get("codesign_best_morphology")
    if best:
        designs.insert(0, ("co-design best", Morphology.load(best)))
    log.info("landing: robust optimum + closed-loop catching of %d designs ...", len(designs))
    checks = []
    # 30 one-jump trials and 30 ten-jump climbs per design: a cluster only where it pays
    jumps = len(designs) * 30 * (1 + 10)
    workers = min(2, available_cores()) if pays_for_a_cluster(jumps, ROBUSTNESS_JUMP_S) else 0
    with make_evaluator(workers) as evaluator:
        for name, morph in designs:
            checks.append(check_landing(name, morph, evaluator=evaluator))
    rows = [c.summary() for c in checks]
    pick = max(checks, key=lambda c: c.expected_speed)
    entries: dict[str, Any] = {"landing_designs": rows, "landing_design": pick.name}
    if pick.solution.status.success and pick.expected_speed > 0:
        path = pick.solution.save(root / "solution.npz")
        entries["landing_solution"] = str(path)
    for c in checks:
        log.info("landing, %s: %.3f m/s planned, ready %s, 10-jump climbs %s", c.name,
                 c.summary()["speed_mps"], c.summary().get("ready_rate"),
                 c.summary().get("climb_success_rate"))
    sections = []
    for r in rows:
        table = {"planned speed [m/s]": r["speed_mps"],
                 "ready landings, 1 jump (30 trials)": r.get("ready_rate"),
                 "Wilson 95 %": r.get("ready_interval"),
                 "10-jump climbs without a fall (30 trials)": r.get("climb_success_rate"),
                 "expected speed [m/s]": r["expected_speed_mps"],
                 "shown below": r["design"] == pick.name}
        sections.append(Section(f"Landing: {r['design']}, robust optimum, closed loop", table))
    return entries, sections


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the top-level `demo` command."""
    demo = subparsers.add_parser("demo", help="run the main job on the defaults",
                          description="Optimize the nominal jump-climber (coarse, then fine) "
                          "and verify it, fit a gripper safe region, run a short co-design, "
                          "re-optimize the best design and the nominal robot with the robust "
                          "options, simulate the one that lands with closed-loop catching and "
                          "climb the quadruped; one results "
                          "page, OUT/report.html.",
                          epilog="examples:\n  clamber demo --out out/demo\n",
                          formatter_class=FMT)
    add_output_options(demo, "out/demo", figures=False)
    demo.set_defaults(func=run_demo)
