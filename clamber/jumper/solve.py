"""Solve the jump NLP: build once per structure, warm-start, refine coarse -> fine."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.formulation.problem import (
    DEFAULT_TERMS,
    JumperProblem,
    ProblemKey,
    build_problem,
)
from clamber.jumper.formulation.terms import TermGroup
from clamber.jumper.guess import deterministic_guess, random_guess
from clamber.jumper.model import jumper_model
from clamber.jumper.morphology import Morphology
from clamber.jumper.schedule import PHASES, RESOLUTIONS, resolve_nodes
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solution import SolveStatus, TrajectorySolution

_PROBLEMS: dict[ProblemKey, JumperProblem] = {}
#: IPOPT's bound_push/bound_frac when refining a solution of the same robot [-]: measured
#: on the nominal robot's refinement from one coarse solution, 33 iterations against 69
#: with ``warm_bound_push`` 1e-2 (see docs/results/jumper_trajopt.md).
REFINE_BOUND_PUSH = 1e-5
GUESSES = ("seed", "deterministic", "random")


def problem_for(nodes: tuple[int, ...], settings: OptimizationSettings,
                terms: Sequence[TermGroup] = DEFAULT_TERMS) -> JumperProblem:
    """The NLP of this structure, built on first request and reused for the process.

    The structure is the grid, the collocation rule, the safe regions' row counts and the
    term groups; every number is a parameter or bound, so candidates never rebuild.
    """
    motor_line_rows = not (settings.drop_duplicate_rows and settings.no_load_speed <= 0
                           and settings.motor_headroom == 0)
    key = ProblemKey(tuple(nodes), settings.collocation, settings.safe_region_front.A.shape[0],
                     settings.safe_region_rear.A.shape[0], tuple(terms), motor_line_rows)
    if key not in _PROBLEMS:
        _PROBLEMS[key] = build_problem(key.nodes, key.collocation, key.rows_front,
                                       key.rows_rear, key.terms, key.motor_line_rows)
    return _PROBLEMS[key]


def solve(
    morphology: Morphology,
    settings: OptimizationSettings | None = None,
    resolution: str | tuple[int, ...] = "coarse",
    guess: str | TrajectorySolution | np.ndarray = "seed",
    seed: int = 0,
    terms: Sequence[TermGroup] = DEFAULT_TERMS,
) -> TrajectorySolution:
    """One IPOPT solve on one grid. Non-convergence is a status, never an exception.

    ``guess`` is 'seed' (the packaged seed trajectory of a reference robot, falling back to
    the designed guess if that solve fails), 'deterministic' (the designed bounding
    motion), 'random' (the paper's, seeded), a solution (interpolated onto this grid) or a
    raw decision vector. ``terms`` are the formulation's term groups (add your own to
    :data:`~clamber.jumper.formulation.problem.DEFAULT_TERMS`; see
    :mod:`clamber.jumper.formulation.terms`).
    """
    settings = settings or OptimizationSettings()
    nodes = resolve_nodes(resolution)
    problem = problem_for(nodes, settings, terms)
    if isinstance(guess, str):
        if guess not in GUESSES:
            raise ConfigError(f"guess {guess!r} unknown; allowed: {GUESSES}")
        if guess == "seed":
            from clamber.jumper.seed import seed_solution

            first = _run(problem, morphology, settings,
                         interpolate_solution(seed_solution(), problem), warm=True)
            first.history[-1]["guess"] = "seed"
            if first.status.success:
                return first
            fallback = solve(morphology, settings, resolution, "deterministic", seed, terms)
            fallback.history = first.history + fallback.history
            return fallback
        make = deterministic_guess if guess == "deterministic" else None
        x0 = (make(problem.variables, nodes, morphology, settings) if make
              else random_guess(problem.variables, nodes, morphology, settings, seed))
        warm = False
    elif isinstance(guess, TrajectorySolution):
        x0 = interpolate_solution(guess, problem)
        # Refinement (a solution of this very robot) starts next to its optimum, with its
        # active bounds: keep it there (REFINE_BOUND_PUSH) rather than warm_bound_push,
        # factorize with settings.refine_mumps_scaling and check every step's residual.
        if guess.morphology == morphology:
            return _run(problem, morphology, settings, x0, REFINE_BOUND_PUSH,
                        settings.refine_mumps_scaling, fast_steps=False)
        warm = True
    else:
        x0 = np.asarray(guess, dtype=float)
        if x0.shape != (problem.variables.size,):
            raise ConfigError(
                f"guess vector has shape {x0.shape}, this grid needs ({problem.variables.size},)"
            )
        warm = True
    return _run(problem, morphology, settings, x0, warm)


def refine(solution: TrajectorySolution, resolution: str | tuple[int, ...] = "fine",
           settings: OptimizationSettings | None = None,
           terms: Sequence[TermGroup] = DEFAULT_TERMS) -> TrajectorySolution:
    """Interpolate every decision variable onto a finer grid and warm-start from it."""
    return solve(solution.morphology, settings or solution.settings, resolution,
                 guess=solution, terms=terms)


def optimize(
    morphology: Morphology,
    settings: OptimizationSettings | None = None,
    resolution: str = "fine",
    guess: str | TrajectorySolution = "seed",
    seed: int = 0,
    terms: Sequence[TermGroup] = DEFAULT_TERMS,
) -> TrajectorySolution:
    """The paper's procedure: a coarse solve, then (for 'fine') refinement from it."""
    coarse = solve(morphology, settings, "coarse", guess, seed, terms)
    if resolution == "coarse" or not coarse.status.success:
        return coarse
    if resolution not in RESOLUTIONS:
        raise ConfigError(f"resolution {resolution!r} unknown; allowed: {sorted(RESOLUTIONS)}")
    fine = refine(coarse, resolution, settings, terms)
    fine.history = coarse.history + fine.history
    return fine


# ---------------------------------------------------------------------------------------------
def _run(problem: JumperProblem, morph: Morphology, settings: OptimizationSettings,
         x0: np.ndarray, warm: bool | float, mumps_scaling: int | None = None,
         fast_steps: bool | None = None) -> TrajectorySolution:
    """One IPOPT run; ``warm`` is False (cold), True (``settings.warm_bound_push``) or the
    bound push of this warm start; ``mumps_scaling`` None is ``settings.mumps_scaling``,
    ``fast_steps`` None is ``settings.fast_step_computation``."""
    push = settings.warm_bound_push if warm is True else float(warm)
    scaling = settings.mumps_scaling if mumps_scaling is None else mumps_scaling
    fast = settings.fast_step_computation if fast_steps is None else fast_steps
    solver = problem.solver(bool(warm), settings.max_iterations, settings.tolerance,
                            settings.backend, push, scaling, fast)
    params = problem.parameter_vector(morph.parameters(), settings)
    lbx, ubx = problem.variable_bounds(settings)
    lbg, ubg = problem.constraint_bounds(settings)
    x0 = np.clip(x0, lbx, ubx)
    t0 = time.perf_counter()
    try:
        sc = problem.scale
        res = solver(x0=x0 / sc, p=params, lbx=lbx / sc, ubx=ubx / sc, lbg=lbg, ubg=ubg)
        stats = solver.stats()
        x = np.array(res["x"]).ravel() * sc
        status = SolveStatus.from_ipopt(stats.get("return_status", ""))
        return_status = stats.get("return_status", "")
        iterations = int(stats.get("iter_count", 0))
        objective = float(res["f"])
    except RuntimeError as e:  # IPOPT evaluation errors (NaN in a function) land here
        x, status, return_status, iterations, objective = x0, SolveStatus.FAILED, str(e), 0, np.nan
    elapsed = time.perf_counter() - t0
    if status.success and not np.all(np.isfinite(x)):
        status = SolveStatus.FAILED
    sol = read_solution(problem, x, morph, settings, status)
    sol.iterations = iterations
    sol.solve_time_s = elapsed
    sol.return_status = return_status
    sol.objective = objective
    sol.active_bounds = active_bounds(problem, x, params, settings)
    sol.history = [{"nodes": list(problem.nodes), "status": status.value,
                    "iterations": iterations, "solve_time_s": elapsed,
                    "speed_mps": sol.speed, "warm_start": bool(warm),
                    "backend": problem.backend_used(settings.backend)}]
    return sol


def read_solution(problem: JumperProblem, x: np.ndarray, morph: Morphology,
                  settings: OptimizationSettings, status: SolveStatus) -> TrajectorySolution:
    """Read a decision vector back as named, time-ordered arrays."""
    v = problem.variables.unpack(x)
    params = morph.parameters()
    com, rear = jumper_model("com"), jumper_model("rear_foot")
    t_parts, ph, Q, QD, QDD, TAU, FF, FR = [], [], [], [], [], [], [], []
    durations = []
    t_start = 0.0
    for p, N in zip(PHASES, problem.nodes, strict=True):
        pre = f"p{p.index}."
        dt = float(np.mean(v[pre + "dt"]))
        durations.append(N * dt)
        t_parts.append(t_start + dt * np.arange(N + 1))
        t_start += N * dt
        ph.append(np.full(N + 1, p.index))
        Q.append(v[pre + "q"])
        QD.append(v[pre + "qd"])
        QDD.append(v[pre + "qdd"])
        TAU.append(v[pre + "tau"])
        nan = np.full((N + 1, 2), np.nan)
        FF.append(v.get(pre + "f_front", nan))
        FR.append(v.get(pre + "f_rear", nan))
    tau_mid = None
    if "p1.mid.tau" in v:  # one midpoint after each node; NaN after a phase's last node
        tau_mid = np.vstack([np.vstack([v[f"p{p.index}.mid.tau"], np.full((1, 3), np.nan)])
                             for p in PHASES])
    q = np.vstack(Q)
    qd = np.vstack(QD)
    qr, _ = com.to_rear_foot.map(q.shape[0])(q.T, qd.T, params)
    points = np.array(rear.points.map(q.shape[0])(np.array(qr), params))  # 2 x (5K)
    points = points.reshape(2, q.shape[0], 5).transpose(1, 0, 2)
    return TrajectorySolution(
        morphology=morph, settings=settings, nodes=problem.nodes, status=status,
        t=np.concatenate(t_parts), phase=np.concatenate(ph), q=q, q_rear=np.array(qr).T,
        qd=qd, qdd=np.vstack(QDD), tau=np.vstack(TAU), f_front=np.vstack(FF),
        f_rear=np.vstack(FR), points=points,
        impulses={k: np.asarray(v[k]) for k in ("impulse_catch_front", "impulse_settle_rear",
                                                 "impulse_settle_front")},
        phase_durations=np.array(durations), height=float(v["height"]),
        front_anchor=float(v["front_anchor"]), iterations=0, solve_time_s=0.0,
        build_time_s=problem.build_time_s, return_status="", x=np.asarray(x, float),
        tau_mid=tau_mid,
    )


def interpolate_solution(sol: TrajectorySolution, problem: JumperProblem) -> np.ndarray:
    """Every decision variable linearly interpolated in phase-normalized time onto ``problem``."""
    src = problem_for(sol.nodes, sol.settings)
    v = src.variables.unpack(sol.x)
    out: dict[str, np.ndarray] = {}
    for p, n_src, n_dst in zip(PHASES, sol.nodes, problem.nodes, strict=True):
        pre = f"p{p.index}."
        s_src, s_dst = np.linspace(0, 1, n_src + 1), np.linspace(0, 1, n_dst + 1)
        m_src = 0.5 * (s_src[1:] + s_src[:-1])
        m_dst = 0.5 * (s_dst[1:] + s_dst[:-1])
        for name in problem.variables.blocks:
            if not name.startswith(pre):
                continue
            if name == pre + "dt":
                out[name] = np.array([float(np.mean(v[name])) * n_src / n_dst])
                continue
            if "correction" in name:  # defined at nodes 1..N
                a, xs, xd = v[name], s_src[1:], s_dst[1:]
            elif name in v:
                a, xs, xd = v[name], (m_src if ".mid." in name else s_src), \
                    (m_dst if ".mid." in name else s_dst)
            else:  # midpoint blocks from node values (trapezoidal -> Hermite-Simpson)
                a, xs, xd = v[name.replace("mid.", "")], s_src, m_dst
            out[name] = np.column_stack([np.interp(xd, xs, a[:, j]) for j in range(a.shape[1])])
    for name in ("height", "front_anchor", "impulse_catch_front", "impulse_settle_rear",
                 "impulse_settle_front"):
        out[name] = np.atleast_1d(v[name])
    return problem.variables.pack(out)


def active_bounds(problem: JumperProblem, x: np.ndarray, params: np.ndarray,
                  settings: OptimizationSettings, tol: float = 1e-4) -> dict[str, object]:
    """Which bounds bind at this point: the knobs that decide the answer."""
    v = problem.variables.unpack(x)
    lbx, ubx = problem.variable_bounds(settings)
    lo, hi = problem.variables.unpack(lbx), problem.variables.unpack(ubx)
    report: dict[str, object] = {}
    report["phase_duration"] = {}
    for p in PHASES:
        name = f"p{p.index}.dt"
        val, a, b = (float(np.mean(arr[name])) for arr in (v, lo, hi))
        state = "min" if val <= a * (1 + tol) else ("max" if val >= b * (1 - tol) else "free")
        report["phase_duration"][f"phase{p.index}"] = state
    tl, ws = settings.torque_limit, settings.joint_speed_limit
    taus = np.vstack([v[f"p{p.index}.tau"] for p in PHASES])
    qds = np.vstack([v[f"p{p.index}.qd"] for p in PHASES])[:, 3:]
    report["torque_limit_nodes"] = int(np.sum(np.abs(taus) >= tl * (1 - tol)))
    report["joint_speed_limit_nodes"] = int(np.sum(np.abs(qds) >= ws * (1 - tol)))
    g = problem.evaluate(x, params)
    lbg, ubg = problem.constraint_bounds(settings)
    counts: dict[str, int] = {}
    for name, sl in problem.row_slices.items():
        lb, ub, val = lbg[sl], ubg[sl], g[name]
        ineq = lb < ub
        if not np.any(ineq):
            continue
        act = ineq & ((np.abs(val - lb) <= 1e-5) | (np.abs(val - ub) <= 1e-5))
        kind = name.split(".", 1)[-1]
        counts[kind] = counts.get(kind, 0) + int(np.sum(act))
    if not problem.key.motor_line_rows:  # left out as copies of the torque bounds
        counts["motor_line"] = int(np.sum(np.abs(np.abs(taus) - tl) <= 1e-5))
    report["active_inequalities"] = counts
    return report

