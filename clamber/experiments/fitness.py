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
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

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


def fitness_settings() -> OptimizationSettings:
    """The trajectory settings a candidate is scored with by default.

    IPOPT stops at optimality error 1e-4 (constraints still hold to 1e-6): speeds agree
    with 1e-6 to about 1 % and it saves ~15 % of the iterations (12 Sobol designs: 1763
    vs 2058). The solves from the seed or another design factorize without MUMPS's
    scaling and take fast steps (``mumps_scaling`` 0, ``fast_step_computation``): on 16
    Sobol morphologies warm-started from the nominal robot, 1.55x less CPU time for the
    coarse solve than IPOPT's defaults, to optima as good (mean speed 0.4935 against
    0.4934 m/s, 11 of 16 the same, 2 higher, 3 lower by at most 0.2 %); see
    docs/results/jumper_codesign.md, "Throughput".
    """
    return OptimizationSettings(tolerance=FITNESS_TOLERANCE, mumps_scaling=0,
                                fast_step_computation=True)


@dataclass(frozen=True)
class FitnessSettings:
    """How a candidate is scored (units in brackets).

    The procedure is the trajectory optimizer's own: a solve on the ``resolution`` grid,
    warm-started from the task's guess (else the seed trajectory), retried once from the
    seed trajectory if the warm start fails; then, if ``refine`` names a grid,
    refinement onto it. If the refinement fails the converged coarse speed is kept (the
    record says ``refined: false``). A candidate whose solve fails scores
    ``failure_speed``.
    """

    settings: OptimizationSettings = field(default_factory=lambda: fitness_settings())
    """Trajectory settings; by default those of :func:`fitness_settings`."""
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
    landing_jumps: int = 1
    """Jumps per landing trial: 1 scores speed x ready rate; more scores the height
    climbed per second over that many jumps, falls included
    (:func:`~clamber.experiments.landing_fitness.landing_fitness`)."""
    starts: int = 1
    """Optimizer starts per candidate [-]: start 0 is the warm start (seed trajectory as
    fallback), start 1 the designed bounding motion, later ones the paper's random guess
    seeded by (generation, index, start). The best converged start scores the candidate;
    the co-design runs the starts of all candidates as separate tasks, so a cluster wider
    than the population helps (the landscape is multimodal: docs/results/jumper_trajopt.md,
    "Same optimum")."""
    landing_score: str = "jumps"
    """What a landing climb adds to the fitness: 'jumps' scores the expected speed (the jumps
    landed ready before the climb's first failure), 'climbs' only completed climbs (the
    speed times the fraction of climbs that land every jump; prefers rare failures),
    'measured' the same with the climbing speed measured in the simulator (waits for the
    catches included) instead of the planned one."""
    landing_rear_spar: bool = False
    """Simulate the landings with a spar on the rear foot too (a hardware option:
    :meth:`~clamber.jumper.sim.gripper.FootPivot.with_rear_spar`)."""
    landing_tol_scale: float = 1.0
    """The landing trials' robots are drawn from the calibrated tolerances times this [-]:
    the margin the design must hold (speed traded for it above 1); recorded in each scored
    trajectory (:func:`~clamber.jumper.robust.with_design_tol_scale`)."""
    landing_race: bool = False
    """Stop a candidate's landing trials once its expected speed cannot reach the best
    fitness of the co-design's finished generations (an exact bound, not a statistical
    guess); the candidate then scores the estimate from the trials it ran, which lies
    below that best (:func:`~clamber.experiments.landing_fitness.landing_fitness`)."""

    def __post_init__(self) -> None:
        resolve_nodes(self.resolution)
        if self.refine is not None:
            resolve_nodes(self.refine)
        v.number("fitness", "failure_speed", self.failure_speed)
        v.integer("fitness", "landing_trials", self.landing_trials, low=0)
        v.choice("fitness", "landing_controller", self.landing_controller,
                 ("open-loop", "closed-loop"))
        v.integer("fitness", "landing_jumps", self.landing_jumps, low=1)
        v.integer("fitness", "starts", self.starts, low=1)
        v.choice("fitness", "landing_race", self.landing_race, (False, True))
        v.choice("fitness", "landing_score", self.landing_score,
                 ("jumps", "climbs", "measured"))
        v.choice("fitness", "landing_rear_spar", self.landing_rear_spar, (False, True))
        v.in_range("fitness", "landing_tol_scale", self.landing_tol_scale,
                   "design_tolerance_scale")

    def to_dict(self) -> dict[str, Any]:
        # the default landing score is left out, so runs recorded before it existed resume
        d = {
            "settings": self.settings.to_dict(),
            "resolution": self.resolution if isinstance(self.resolution, str)
            else list(self.resolution),
            "refine": self.refine if self.refine is None or isinstance(self.refine, str)
            else list(self.refine),
            "failure_speed": self.failure_speed,
            "landing_trials": self.landing_trials,
            "landing_controller": self.landing_controller,
            "landing_jumps": self.landing_jumps,
            "starts": self.starts,
            "landing_race": self.landing_race,
        }
        if self.landing_score != "jumps":
            d["landing_score"] = self.landing_score
        if self.landing_rear_spar:
            d["landing_rear_spar"] = True
        if self.landing_tol_scale != 1.0:
            d["landing_tol_scale"] = self.landing_tol_scale
        return d


@dataclass(frozen=True)
class CandidateTask:
    """Everything a worker needs to score one candidate (picklable, self-contained)."""

    generation: int
    index: int
    params: tuple[float, ...]
    """Optimizer coordinates of the candidate (recorded, not used by the solve)."""
    morphology: Morphology
    fitness: FitnessSettings
    guess: TrajectorySolution | None = None
    """Warm start: a solution of a nearby design (any morphology, any grid), or None."""
    start: int | None = None
    """Run only this start (0 .. ``fitness.starts - 1``); None runs all of them here."""
    beat: float | None = None
    """With ``fitness.landing_race``: the fitness [m/s] the landing trials race against
    (the best of the finished generations; None: no race)."""


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


def start_guesses(task: CandidateTask, k: int) -> list[tuple[str, Any]]:
    """The guesses start ``k`` of a candidate tries, in order ((label, guess) pairs)."""
    if k == 0:
        warm = [("warm", task.guess)] if task.guess is not None else []
        return warm + [("seed", SEED_GUESS)]
    if k == 1:
        return [("deterministic", "deterministic")]
    return [(f"random{k}", "random")]


def start_seed(task: CandidateTask, k: int) -> int:
    """Seed of start ``k``'s random guess: a function of the candidate's place only."""
    return int(np.random.SeedSequence((task.generation, task.index, k)).generate_state(1)[0])


def score(r: CandidateResult) -> float:
    """What the search is told for a result [m/s] (-inf when it failed)."""
    if not r.success:
        return -math.inf
    return r.speed_mps if math.isnan(r.fitness_mps) else r.fitness_mps


#: CPU seconds [s] a candidate's record sums over its starts: all, the trajectory
#: optimization, the landing trials.
CPU_FIGURES = ("cpu_time_s", "solve_cpu_s", "landing_cpu_s")
#: Figures of each start kept in the candidate's record besides its speed and score.
START_FIGURES = (*CPU_FIGURES, "iterations", "landing_trials_run")


def best_start(results: list[CandidateResult]) -> CandidateResult:
    """The best of a candidate's starts (in start order; ties go to the earlier start),
    with every start's speed, score, CPU seconds and iterations; wall, solve and CPU
    times summed over the starts."""
    best = max(range(len(results)), key=lambda k: (score(results[k]), -k))
    r = results[best]
    starts = [{"start": k, "guess": x.guess, "status": x.status,
               "speed_mps": x.speed_mps if x.success else None,
               "fitness_mps": score(x) if x.success else None,
               **{key: x.info[key] for key in START_FIGURES if key in x.info}}
              for k, x in enumerate(results)]
    info = {**r.info, "start": best, "starts": starts,
            **{key: sum(x.info.get(key, 0.0) for x in results) for key in CPU_FIGURES}}
    return replace(r, info=info, wall_time_s=sum(x.wall_time_s for x in results),
                   solve_time_s=sum(x.solve_time_s for x in results))


def evaluate_candidate(task: CandidateTask) -> CandidateResult:
    """Optimize the candidate's jump and return its climbing speed (never raises).

    With ``task.start`` None every start runs here and the best is returned; else only
    that start runs (the co-design then keeps the best with :func:`best_start`).
    """
    if task.start is None:
        results = [evaluate_start(task, k) for k in range(task.fitness.starts)]
        return results[0] if len(results) == 1 else best_start(results)
    return evaluate_start(task, task.start)


def evaluate_start(task: CandidateTask, k: int) -> CandidateResult:
    """One start of a candidate: solve, refine, and (robust fitness) simulate."""
    from clamber.jumper.solve import refine, solve

    cfg = task.fitness
    t0, c0 = time.perf_counter(), time.process_time()
    history: list[dict] = []
    label, sol = "", None
    try:
        for start, guess in start_guesses(task, k):
            label = start
            sol = solve(task.morphology, cfg.settings, cfg.resolution, guess,
                        seed=start_seed(task, k))
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
        c1 = time.process_time()
        if ok and cfg.landing_trials > 0:
            from clamber.experiments.landing_fitness import landing_fitness
            from clamber.jumper.robust import with_design_tol_scale

            landing = landing_fitness(sol, cfg.landing_trials, cfg.landing_controller,
                                      jumps=cfg.landing_jumps,
                                      beat=task.beat if cfg.landing_race else None,
                                      score=cfg.landing_score,
                                      rear_spar=cfg.landing_rear_spar,
                                      tol_scale=cfg.landing_tol_scale)
            info.update(landing)
            fitness = landing["landing_fitness_mps"]
            sol = with_design_tol_scale(sol, cfg.landing_tol_scale)
        c2 = time.process_time()
        info.update(cpu_time_s=c2 - c0, solve_cpu_s=c1 - c0, landing_cpu_s=c2 - c1)
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
