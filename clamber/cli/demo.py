"""The co-design step of `clamber demo`: a short CMA-ES run with its report."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from clamber.experiments.codesign import CodesignConfig, run_codesign
from clamber.experiments.fitness import FitnessConfig

#: A few generations of a small population, scored by the coarse solve only: a couple
#: of minutes on 2 cores. The paper's run is `clamber jumper codesign` (50 x 9, refined).
DEMO_CONFIG = CodesignConfig(generations=3, popsize=4, fitness=FitnessConfig(refine=None))


def codesign_demo(out_dir: Path, summary: dict[str, Any], as_json: bool) -> dict[str, Any]:
    """Run the short co-design into ``out_dir/codesign`` (replacing an earlier demo run)."""
    from clamber.cli.codesign import ProgressBar
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator
    from clamber.report.html import write_codesign_outputs
    from clamber.storage.runs import RunStore

    run_dir = Path(out_dir) / "codesign"
    if RunStore.exists(run_dir):
        shutil.rmtree(run_dir)
    cfg = DEMO_CONFIG
    if not as_json:
        print(f"\nco-design demo: {cfg.generations} generations x {cfg.popsize} candidates "
              "(coarse fitness) ...", file=sys.stderr)
    bar = ProgressBar(cfg.generations * cfg.popsize, cfg.generations, enabled=not as_json)
    try:
        with make_evaluator(min(2, available_cores())) as evaluator:
            result = run_codesign(cfg, run_dir, evaluator, progress=bar)
    finally:
        bar.close()
    out = write_codesign_outputs(result)
    if not as_json:
        print(f"co-design report: {out['report']}", file=sys.stderr)
    return {"codesign_best_speed_mps": out["best_speed_mps"],
            "codesign_findings": out["findings"],
            "codesign_evaluations": out["evaluations"],
            "codesign_failed_evaluations": out["failed_evaluations"],
            "codesign_report": out["report"],
            "codesign_best_solution": (str(result.best_solution_path)
                                       if result.best_solution_path else None)}
