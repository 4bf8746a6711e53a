r"""Sobol sweep of the design space (the paper's Fig. 7), each sample optimized coarse.

Samples cover the feasible set uniformly: four lengths uniform in their range and the
inner masses uniform on the triangle :math:`\{m_j \ge m_{min}, \sum m_j = M\}`, reached
from two Sobol coordinates :math:`(u, v)` by the area-preserving map
:math:`s = \sqrt u,\ p = (1 - s,\ s (1 - v),\ s v)`. Every sample is warm-started from
one seed trajectory (the nominal robot's, solved first), as in the paper, falling back
to the designed guess if that fails.
"""

from __future__ import annotations

import csv
import math
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import qmc

from clamber import _validate as v
from clamber.experiments.codesign import FitnessFunction, ProgressCallback, _record
from clamber.experiments.fitness import CandidateTask, FitnessSettings, evaluate_candidate
from clamber.jumper.morphology import DesignBounds, Morphology
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.base import Evaluator
from clamber.parallel.serial import SerialEvaluator
from clamber.storage.runs import CandidateTrial, RunStore, TrialState

KIND = "sweep"
#: The seed trajectory is recorded as trial (SEED_GENERATION, 0); samples as (0, i).
SEED_GENERATION = -1
CSV_NAME = "sweep.csv"


@dataclass(frozen=True)
class SweepSettings:
    """A Sobol sweep: ``samples`` designs, scrambled with ``seed``, scored coarse."""

    samples: int = 256
    seed: int = 0
    fitness: FitnessSettings = field(default_factory=lambda: FitnessSettings(refine=None))
    bounds: DesignBounds = field(default_factory=DesignBounds)

    def __post_init__(self) -> None:
        v.integer("", "samples", self.samples, low=1)
        v.integer("", "seed", self.seed, low=0)

    def to_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "seed": self.seed, "fitness": self.fitness.to_dict(),
                "bounds": Morphology.nominal(self.bounds).to_dict()["bounds"]}


def sobol_designs(n: int, seed: int = 0, bounds: DesignBounds | None = None) -> list[Morphology]:
    """``n`` feasible morphologies from a scrambled 6-D Sobol sequence (see module doc)."""
    b = bounds or DesignBounds()
    sampler = qmc.Sobol(d=6, scramble=True, rng=np.random.default_rng(seed))
    with warnings.catch_warnings():  # balance properties need n = 2^k; any n is allowed
        warnings.simplefilter("ignore", UserWarning)
        u = sampler.random(n)
    lengths = b.length_min + (b.length_max - b.length_min) * u[:, :4]
    s = np.sqrt(u[:, 4])
    p = np.column_stack([1.0 - s, s * (1.0 - u[:, 5]), s * u[:, 5]])
    free = b.inner_mass_total - 3 * b.inner_mass_min
    masses = b.inner_mass_min + free * p
    masses[:, 2] = b.inner_mass_total - masses[:, 0] - masses[:, 1]
    return [Morphology.from_design_vector(L, m, b) for L, m in zip(lengths, masses, strict=True)]


def characteristics(m: Morphology) -> dict[str, float]:
    """The three axes of the paper's Fig. 7.

    ``spine_mass_fraction``: m3 / (m2 + m3 + m4); ``distal_link_length_mm``: mean of L1
    and L4 [mm]; ``front_rear_ratio``: (L1 + L2) / (L3 + L4).
    """
    L1, L2, L3, L4 = m.lengths
    _, m2, m3, m4, _ = m.masses
    return {"spine_mass_fraction": m3 / (m2 + m3 + m4),
            "distal_link_length_mm": 0.5 * (L1 + L4) * 1e3,
            "front_rear_ratio": (L1 + L2) / (L3 + L4)}


@dataclass
class SweepResult:
    """The recorded samples of a sweep and where its table lies."""

    out_dir: Path
    config: SweepSettings
    seed_trial: CandidateTrial | None
    trials: list[CandidateTrial]
    wall_time_s: float
    evaluator: dict[str, Any]

    @property
    def table_path(self) -> Path:
        return self.out_dir / CSV_NAME

    def rows(self) -> list[dict[str, Any]]:
        """One row per sample: design [mm, g], characteristics, state, speed [m/s]."""
        rows = []
        for t in self.trials:
            m = Morphology.from_design_vector(t.lengths, t.masses[1:4], self.config.bounds)
            row: dict[str, Any] = {"sample": t.index}
            row.update({f"L{i}_mm": L * 1e3 for i, L in enumerate(t.lengths, start=1)})
            row.update({f"m{i}_g": t.masses[i - 1] * 1e3 for i in (2, 3, 4)})
            row.update(characteristics(m))
            row.update({"state": t.state.value, "status": t.status, "speed_mps": t.speed_mps,
                        "solve_time_s": t.solve_time_s, "guess": t.guess})
            rows.append(row)
        return rows

    def summary(self) -> dict[str, Any]:
        ok = [t for t in self.trials if t.state is TrialState.COMPLETE]
        best = max(ok, key=lambda t: t.fitness, default=None)
        return {
            "samples": len(self.trials),
            "converged": len(ok),
            "convergence_rate": len(ok) / max(len(self.trials), 1),
            "best_speed_mps": best.fitness if best else math.nan,
            "best_sample": best.index if best else None,
            "median_speed_mps": float(np.median([t.fitness for t in ok])) if ok else math.nan,
            "seed_speed_mps": self.seed_trial.speed_mps if self.seed_trial else math.nan,
            "wall_time_s": self.wall_time_s,
            "table": str(self.table_path),
            "out_dir": str(self.out_dir),
            "evaluator": self.evaluator,
        }


def run_sweep(config: SweepSettings, out_dir: str | Path, evaluator: Evaluator | None = None,
              resume: bool = False, fitness_fn: FitnessFunction = evaluate_candidate,
              progress: ProgressCallback | None = None) -> SweepResult:
    """Score every Sobol sample (resumable like a co-design) and write the CSV table."""
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    evaluator = evaluator or SerialEvaluator()
    cfg = config.to_dict()
    store = RunStore.open(out_dir, KIND, cfg) if resume else RunStore.create(out_dir, KIND, cfg)
    (out_dir / "trajectories").mkdir(exist_ok=True)
    try:
        seed = store.trials(SEED_GENERATION)
        if not seed:
            nominal = Morphology.nominal(config.bounds)
            task = CandidateTask(SEED_GENERATION, 0, (), nominal, config.fitness, None)
            outcome = evaluator.map(fitness_fn, [task])[0]
            store.append(_record(task, outcome, config.fitness, out_dir))
            seed = store.trials(SEED_GENERATION)
        guess = (TrajectorySolution.load(store.path(seed[0].trajectory))
                 if seed[0].trajectory else None)
        designs = sobol_designs(config.samples, config.seed, config.bounds)
        done = {t.index for t in store.trials(0)}
        tasks = [CandidateTask(0, i, (), m, config.fitness, guess)
                 for i, m in enumerate(designs) if i not in done]
        n_done = len(done)
        for k, outcome in evaluator.imap_unordered(fitness_fn, tasks):
            store.append(_record(tasks[k], outcome, config.fitness, out_dir))
            n_done += 1
            if progress is not None:
                progress({"generation": 0, "evaluations_done": n_done,
                          "evaluations_total": config.samples})
        result = SweepResult(out_dir, config, seed[0], store.trials(0),
                             time.perf_counter() - t0, evaluator.describe())
    finally:
        store.close()
    write_table(result.rows(), result.table_path)
    return result


def write_table(rows: list[dict[str, Any]], path: Path) -> Path:
    """Write rows as CSV (floats at full precision)."""
    if not rows:
        path.write_text("")
        return path
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path
