"""A held-out check of a robust co-design's finalists.

Every candidate of a robust co-design is scored on the same seeded climbs, so CMA-ES
optimizes those few perturbed robots, and the best of hundreds of noisy scores is biased
upward (the winner's curse): a design that completed 27 of its 30 training climbs
completed 0.765 of 200 held-out ones (docs/results/jumper_codesign.md). The finalists,
the few candidates of highest training fitness, are therefore rescored on climbs from a
seed the run never used, and the co-design's recommended design is the best of them on
those. Picking among finalists is a selection too, so a figure meant for a paper comes
from a third seed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.experiments.landing_fitness import landing_fitness
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.base import Evaluator
from clamber.parallel.serial import SerialEvaluator
from clamber.storage.runs import TrialState, check_relative_path

#: Defaults: finalists rescored, climbs each, and the master seed of their climbs (the
#: co-design's own climbs use seed 0; spawned seeds of other masters are independent).
FINALISTS = 5
VALIDATION_TRIALS = 100
VALIDATION_SEED = 1000
VALIDATION_FILE = "validation.json"


@dataclass(frozen=True)
class FinalistTask:
    """One finalist's held-out climbs (picklable, self-contained)."""

    generation: int
    index: int
    solution: TrajectorySolution
    trials: int
    jumps: int
    seed: int
    controller: str
    score: str
    rear_spar: bool = False


def score_finalist(task: FinalistTask) -> dict[str, Any]:
    """The landing figures of one finalist on its held-out climbs (no racing)."""
    return landing_fitness(task.solution, task.trials, task.controller, seed=task.seed,
                           jumps=task.jumps, score=task.score, rear_spar=task.rear_spar)


def pick_finalists(trials: list, count: int) -> list:
    """The ``count`` complete trials with a stored trajectory of highest fitness (earlier
    first among equals), one per distinct design."""
    ok = [t for t in trials if t.state is TrialState.COMPLETE and t.trajectory
          and math.isfinite(t.fitness)]
    ok.sort(key=lambda t: (-t.fitness, t.generation, t.index))
    out, seen = [], set()
    for t in ok:
        if t.params in seen:
            continue
        seen.add(t.params)
        out.append(t)
        if len(out) == count:
            break
    return out


def validate_finalists(result: Any, evaluator: Evaluator | None = None,
                       count: int = FINALISTS, trials: int = VALIDATION_TRIALS,
                       seed: int = VALIDATION_SEED) -> dict[str, Any]:
    """Rescore a robust co-design's finalists on ``trials`` held-out climbs each.

    ``result`` is a :class:`~clamber.experiments.codesign.CodesignResult` whose fitness
    simulated landings. Returns (and writes to ``run_dir/validation.json``) every
    finalist's training and held-out figures and ``best``, the finalist of highest
    held-out fitness (earlier finalist wins ties).
    """
    check.integer("validation", "count", count, low=1)
    check.integer("validation", "trials", trials, low=1)
    check.integer("validation", "seed", seed, low=0)
    fitness = result.config.fitness
    if fitness.landing_trials <= 0:
        raise ConfigError("validate_finalists needs a co-design whose fitness simulates "
                         "landings (--fitness robust)")
    if seed == 0:
        raise ConfigError("validation seed 0 is the co-design's own: pick another master seed")
    chosen = pick_finalists(result.trials, count)
    root = Path(result.run_dir).resolve()
    for t in chosen:
        check_relative_path(t.trajectory, "path")
        if not (root / t.trajectory).resolve().is_relative_to(root):
            raise ConfigError(f"{t.trajectory}: a trajectory outside the run folder")
    tasks = [FinalistTask(t.generation, t.index,
                          TrajectorySolution.load(result.run_dir / t.trajectory), trials,
                          fitness.landing_jumps, seed, fitness.landing_controller,
                          fitness.landing_score, fitness.landing_rear_spar)
             for t in chosen]
    scored = (evaluator or SerialEvaluator()).map(score_finalist, tasks)
    rows = []
    for t, outcome in zip(chosen, scored, strict=True):
        row = {"generation": t.generation, "index": t.index, "trajectory": t.trajectory,
               "speed_mps": t.speed_mps, "training_fitness_mps": t.fitness,
               "training_climb_success_rate": t.info.get("climb_success_rate", math.nan),
               "training_trials_run": t.info.get("landing_trials_run", math.nan)}
        if outcome.ok:
            v = outcome.value
            row.update(fitness_mps=v["landing_fitness_mps"], ready_rate=v["ready_rate"],
                       climb_success_rate=v["climb_success_rate"],
                       expected_speed_mps=v["expected_speed_mps"],
                       climb_speed_mps=v["climb_speed_mps"])
        else:
            row.update(fitness_mps=math.nan, error=outcome.error)
        rows.append(row)
    ranked = [r for r in rows if math.isfinite(r["fitness_mps"])]
    best = max(ranked, key=lambda r: r["fitness_mps"]) if ranked else None
    out = {"seed": seed, "trials": trials, "jumps": fitness.landing_jumps,
           "score": fitness.landing_score, "rear_spar": fitness.landing_rear_spar,
           "finalists": rows, "best": best}
    Path(result.run_dir, VALIDATION_FILE).write_text(
        json.dumps(out, indent=1, allow_nan=True) + "\n")
    return out
