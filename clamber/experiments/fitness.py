"""The fitness of a candidate morphology: the climbing speed of its optimized jump.

:func:`evaluate_candidate` is what runs on a worker. It is a pure function of its
:class:`CandidateTask`, so every backend and worker count returns the same result, and
it never raises for a solver failure: that is a result with a status, penalized by the
search and recorded.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from clamber import _validate as v
from clamber.jumper.morphology import Morphology
from clamber.jumper.schedule import resolve_nodes
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solution import TrajectorySolution

#: The packaged seed trajectory (:mod:`clamber.jumper.seed`, itself falling back to the
#: designed bounding motion): used when no better warm start exists, and the fallback
#: when a warm start fails -- the paper's "same seed trajectory" for every candidate.
SEED_GUESS = "seed"
#: IPOPT optimality tolerance for fitness evaluations (scaled NLP error).
FITNESS_TOLERANCE = 1e-4


@dataclass(frozen=True)
class FitnessConfig:
    """How a candidate is scored (units in brackets).

    The procedure is the trajectory optimizer's own: a solve on the ``resolution`` grid,
    warm-started from the task's guess (else the seed trajectory), retried once from the
    seed trajectory if the warm start fails; then, if ``refine`` names a grid,
    refinement onto it. If the refinement fails the converged coarse speed is kept (the
    record says ``refined: false``). A candidate whose solve fails scores
    ``failure_speed``.
    """

    settings: OptimizationSettings = field(
        default_factory=lambda: OptimizationSettings(tolerance=FITNESS_TOLERANCE))
    """Trajectory settings; by default IPOPT stops at optimality error 1e-4 (constraints
    still hold to 1e-6): speeds agree with 1e-6 to about 1% and it saves ~15% of the
    iterations (12 Sobol designs: 1763 vs 2058)."""
    resolution: str | tuple[int, ...] = "coarse"
    """Grid of the first solve: 'coarse', 'fine' or 5 node counts."""
    refine: str | tuple[int, ...] | None = "fine"
    """Grid to refine onto, or None to score the first solve."""
    failure_speed: float = 0.0
    """Fitness of a failed evaluation [m/s]: no climbing. Converged jumps climb, so they
    rank above it; failures are told to the optimizer, never dropped."""
    landing_trials: int = 0
    """If > 0, the fitness is the expected speed: the speed times the ready-landing rate
    of this many seeded one-jump trials in the calibrated simulator
    (:func:`~clamber.experiments.landing_fitness.landing_fitness`); 0 scores the speed."""
    landing_controller: str = "closed-loop"
    """Controller of those trials ('open-loop' or 'closed-loop')."""

    def __post_init__(self) -> None:
        resolve_nodes(self.resolution)
        if self.refine is not None:
            resolve_nodes(self.refine)
        v.number("fitness", "failure_speed", self.failure_speed)
        v.integer("fitness", "landing_trials", self.landing_trials, low=0)
        v.choice("fitness", "landing_controller", self.landing_controller,
                 ("open-loop", "closed-loop"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_dict(),
            "resolution": self.resolution if isinstance(self.resolution, str)
            else list(self.resolution),
            "refine": self.refine if self.refine is None or isinstance(self.refine, str)
            else list(self.refine),
            "failure_speed": self.failure_speed,
            "landing_trials": self.landing_trials,
            "landing_controller": self.landing_controller,
        }


@dataclass(frozen=True)
class CandidateTask:
    """Everything a worker needs to score one candidate (picklable, self-contained)."""

    generation: int
    index: int
    params: tuple[float, ...]
    """Optimizer coordinates of the candidate (recorded, not used by the solve)."""
    morphology: Morphology
    fitness: FitnessConfig
    guess: TrajectorySolution | None = None
    """Warm start: a solution of a nearby design (any morphology, any grid), or None."""


@dataclass(frozen=True)
class CandidateResult:
    """A candidate's score. ``speed_mps`` is NaN and ``solution`` None when it failed."""

    success: bool
    status: str
    speed_mps: float
    solve_time_s: float
    wall_time_s: float
    guess: str = ""
    """Which start converged: 'warm', 'seed' (or the last one tried, on failure)."""
    refined: bool = False
    error: str = ""
    solution: TrajectorySolution | None = None
    info: dict[str, Any] = field(default_factory=dict)
    fitness_mps: float = math.nan
    """What the search is told when not the speed: the expected speed [m/s] (NaN: speed)."""


def evaluate_candidate(task: CandidateTask) -> CandidateResult:
    """Optimize the candidate's jump and return its climbing speed (never raises)."""
    from clamber.jumper.solve import refine, solve

    cfg = task.fitness
    t0 = time.perf_counter()
    starts: list[tuple[str, Any]] = [("warm", task.guess)] if task.guess is not None else []
    starts.append(("seed", SEED_GUESS))
    history: list[dict] = []
    label, sol = "", None
    try:
        for start, guess in starts:
            label = start
            sol = solve(task.morphology, cfg.settings, cfg.resolution, guess)
            history += sol.history
            if sol.status.success:
                break
        refined = False
        if sol is not None and sol.status.success and cfg.refine is not None:
            fine = refine(sol, cfg.refine, cfg.settings)
            history += fine.history
            if fine.status.success:
                sol, refined = fine, True
        assert sol is not None
        sol.history = history
        ok = sol.status.success
        info: dict[str, Any] = {"iterations": sum(h["iterations"] for h in history),
                                "nodes": list(sol.nodes)}
        fitness = math.nan
        if ok and cfg.landing_trials > 0:
            from clamber.experiments.landing_fitness import landing_fitness

            landing = landing_fitness(sol, cfg.landing_trials, cfg.landing_controller)
            info.update(landing)
            fitness = landing["expected_speed_mps"]
        return CandidateResult(
            success=ok, status=sol.status.value, speed_mps=sol.speed if ok else math.nan,
            solve_time_s=sum(h["solve_time_s"] for h in history),
            wall_time_s=time.perf_counter() - t0, guess=label, refined=refined,
            solution=sol if ok else None, info=info, fitness_mps=fitness,
        )
    except Exception as e:  # noqa: BLE001 - a crashing solve is a recorded failure
        return CandidateResult(
            success=False, status="failed", speed_mps=math.nan,
            solve_time_s=sum(h["solve_time_s"] for h in history),
            wall_time_s=time.perf_counter() - t0, guess=label,
            error=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}",
        )
