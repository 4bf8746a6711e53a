"""The co-design step of `clamber demo`: a short CMA-ES run with its report."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from clamber.exceptions import ConfigError
from clamber.experiments.codesign import CodesignConfig, run_codesign
from clamber.experiments.fitness import FitnessConfig

#: A few generations of a small population, scored by the coarse solve only: a couple
#: of minutes on 2 cores. The paper's run is `clamber jumper codesign` (50 x 9, refined).
log = logging.getLogger("clamber")
DEMO_CONFIG = CodesignConfig(generations=3, popsize=4, fitness=FitnessConfig(refine=None))


#: A file the demo leaves in its folder: only a folder holding it may be written over.
DEMO_MARK = ".clamber-demo"


def claim_demo_folder(root: Path) -> None:
    """The demo writes only into its own folder: a new one, or one an earlier demo made."""
    if root.exists() and any(root.iterdir()) and not (root / DEMO_MARK).exists():
        raise ConfigError(f"{root} holds files the demo did not write; give the demo a "
                          "folder of its own with --out (default out/demo)")
    root.mkdir(parents=True, exist_ok=True)
    (root / DEMO_MARK).write_text("written by `clamber demo`; it may replace this folder's "
                                  "contents\n", encoding="utf-8")


def codesign_demo(out_dir: Path, summary: dict[str, Any], as_json: bool) -> dict[str, Any]:
    """Run the short co-design into ``out_dir/codesign``, the demo's own folder (an earlier
    demo's run there is replaced; ``clamber demo`` refuses folders it did not write)."""
    from clamber.cli.codesign import ProgressBar
    from clamber.parallel.dask import available_cores
    from clamber.parallel.factory import make_evaluator
    from clamber.report.html import write_codesign_outputs
    from clamber.storage.runs import RunStore

    run_dir = Path(out_dir) / "codesign"
    if RunStore.exists(run_dir):
        if not (Path(out_dir) / DEMO_MARK).exists():
            raise ConfigError(f"{run_dir} holds a run the demo did not write; not replacing it")
        shutil.rmtree(run_dir)
    cfg = DEMO_CONFIG
    log.info("co-design demo: %d generations x %d candidates (coarse fitness) ...",
             cfg.generations, cfg.popsize)
    bar = ProgressBar(cfg.generations * cfg.popsize, cfg.generations, enabled=True)
    try:
        with make_evaluator(min(2, available_cores())) as evaluator:
            result = run_codesign(cfg, run_dir, evaluator, progress=bar)
    finally:
        bar.close()
    out = write_codesign_outputs(result)
    log.info("co-design report: %s", out["report"])
    return {"codesign_best_speed_mps": out["best_speed_mps"],
            "codesign_findings": out["findings"],
            "codesign_evaluations": out["evaluations"],
            "codesign_failed_evaluations": out["failed_evaluations"],
            "codesign_report": out["report"],
            "codesign_best_solution": (str(result.best_solution_path)
                                       if result.best_solution_path else None)}
