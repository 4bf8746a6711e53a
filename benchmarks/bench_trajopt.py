"""Jumper trajectory optimization: backends side by side, build and solve times, convergence.

First the NLP backends (compiled vs reference) in one run: per-process build with a cold
and a warm disk cache (fresh subprocesses), the coarse solve and the refinement from the
same start, IPOPT's own split between function evaluations and the rest, and the optimum
of each backend on the nominal robot and on Sobol morphologies (4 with --quick, 16); the
compiled backend on the lean KKT (``drop_duplicate_rows``) beside them, the optimum of
both backends under the co-design fitness's IPOPT options, and the floor (the ratio the
compiled backend would reach if its functions cost nothing). Then
convergence figures on the default backend. Runs on one core (thread pools pinned to 1).
Prints one JSON object on its last line.
    python benchmarks/bench_trajopt.py [--quick]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import qmc  # noqa: E402

from clamber.jumper.formulation.backends import resolve  # noqa: E402
from clamber.jumper.morphology import DesignBounds, Morphology  # noqa: E402
from clamber.jumper.schedule import RESOLUTIONS  # noqa: E402
from clamber.jumper.seed import seed_solution  # noqa: E402
from clamber.jumper.settings import OptimizationSettings  # noqa: E402
from clamber.jumper.solve import (  # noqa: E402
    REFINE_BOUND_PUSH,
    interpolate_solution,
    problem_for,
    refine,
    solve,
)
from clamber.jumper.verify import attach_accuracy  # noqa: E402


def sobol_morphologies(n: int, seed: int = 0) -> list[Morphology]:
    """Sobol points over the 4 lengths and the inner-mass simplex (6 dims -> 7 parameters)."""
    b = DesignBounds()
    u = qmc.Sobol(d=6, scramble=True, seed=seed).random(n)
    out = []
    free = b.inner_mass_total - 3 * b.inner_mass_min
    for row in u:
        L = b.length_min + row[:4] * (b.length_max - b.length_min)
        a, c = np.sort(row[4:6])
        w = np.array([a, c - a, 1 - c])  # uniform on the simplex
        out.append(Morphology.from_design_vector(L, b.inner_mass_min + free * w, b))
    return out


_BUILD = """
import os, sys, time
t0 = time.perf_counter()
from clamber.jumper.schedule import RESOLUTIONS
from clamber.jumper.formulation.problem import build_problem
t1 = time.perf_counter()
pr = build_problem(RESOLUTIONS[sys.argv[1]])
pr.solver(False, backend=sys.argv[2])
pr.solver(True, backend=sys.argv[2])
print(t1 - t0, time.perf_counter() - t1)
"""


def _build_in_fresh_process(resolution: str, backend: str, cache: str) -> dict:
    """Import and build times [s] of one new process (graph and both IPOPT instances)."""
    env = {**os.environ, "CLAMBER_CACHE": cache}
    out = subprocess.run([sys.executable, "-c", _BUILD, resolution, backend], env=env,
                         capture_output=True, text=True, check=True)
    imp, build = (float(v) for v in out.stdout.split()[-2:])
    return {"import_s": imp, "build_s": build}


def _ipopt_split(sol, settings, refinement: bool = False) -> dict:
    """IPOPT's wall time split: NLP function evaluations vs the rest (IPOPT + MUMPS)."""
    push, scaling = ((REFINE_BOUND_PUSH, settings.refine_mumps_scaling) if refinement
                     else (settings.warm_bound_push, settings.mumps_scaling))
    stats = problem_for(sol.nodes, settings).solver(
        True, settings.max_iterations, settings.tolerance, settings.backend, push,
        scaling).stats()
    fun = sum(v for k, v in stats.items() if k.startswith("t_wall_nlp_"))
    total = stats.get("t_wall_total", sol.solve_time_s)
    it = max(sol.iterations, 1)
    return {"iterations": sol.iterations, "solve_s": sol.solve_time_s, "functions_s": fun,
            "ipopt_and_mumps_s": total - fun, "ms_per_iteration": 1e3 * total / it,
            "ipopt_and_mumps_ms_per_iteration": 1e3 * (total - fun) / it}


#: The warm-start bound push before it became a setting (IPOPT's start 1e-5 inside bounds).
PREVIOUS_WARM_BOUND_PUSH = 1e-5
#: MUMPS's scaling of the refinement before it became a setting (IPOPT's default).
PREVIOUS_REFINE_MUMPS_SCALING = 77


def _same_start_rows(morphs: list[Morphology], sets: dict) -> dict:
    """Each morphology solved to 1e-9 from the packaged seed by both backends, and by the
    compiled backend from the seed perturbed by 1e-12 relative (a control: how often a
    rounding-level change of the start alone moves the solve to another local optimum)."""
    rng = np.random.default_rng(0)
    worst, rows = 0.0, []
    split = {"backend": 0, "perturbed_start": 0}
    for m in morphs:
        tight = {b: st.with_(tolerance=1e-9) for b, st in sets.items()}
        pr = problem_for(RESOLUTIONS["coarse"], tight["compiled"])
        x0 = interpolate_solution(seed_solution(), pr)
        sols = {b: solve(m, st, "coarse", guess=x0) for b, st in tight.items()}
        sols["perturbed"] = solve(m, tight["compiled"], "coarse",
                                  guess=x0 * (1 + 1e-12 * rng.standard_normal(x0.size)))
        a, r, q = sols["compiled"], sols["reference"], sols["perturbed"]
        if not all(x.status.success for x in (a, r, q)):
            rows.append({"status": [a.status.value, r.status.value, q.status.value]})
            continue

        def same(x, y):
            return abs(x.speed / y.speed - 1) <= 1e-6 and x.active_bounds == y.active_bounds

        rel = abs(a.speed / r.speed - 1)
        worst = max(worst, rel)
        split["backend"] += not same(a, r)
        split["perturbed_start"] += not same(a, q)
        rows.append({"speed_mps": [a.speed, r.speed], "relative_difference": rel,
                     "same_active_bounds": a.active_bounds == r.active_bounds,
                     "perturbed_start_speed_mps": q.speed,
                     "iterations": [a.iterations, r.iterations, q.iterations],
                     "solve_s": [a.solve_time_s, r.solve_time_s]})
    return {"morphologies": len(rows), "max_relative_speed_difference": worst,
            "same_optimum": sum(1 for r in rows if "speed_mps" in r) - split["backend"],
            "different_optimum_backend": split["backend"],
            "different_optimum_perturbed_start": split["perturbed_start"],
            "per_morphology": rows}


def compare_backends(quick: bool, builds_too: bool = True) -> dict:
    """Both backends side by side: builds, timed solves from the same start, optima.

    Timings alternate the backends ``repeats`` times and report medians. The ratios are
    the backend alone (same IPOPT options) and end to end against the previous path (the
    reference backend with the warm start's previous bound push and MUMPS's automatic
    scaling in the refinement).
    """
    res: dict = {"compiled_backend_used": resolve("compiled")}
    builds = {}
    with tempfile.TemporaryDirectory() as cache:
        for name in (() if not builds_too else ("coarse",) if quick else ("coarse", "fine")):
            builds[name] = {
                "reference": _build_in_fresh_process(name, "reference", cache),
                "compiled_cold": _build_in_fresh_process(name, "compiled", cache),
                "compiled_warm": _build_in_fresh_process(name, "compiled", cache),
            }
    res["builds"] = builds
    nominal = Morphology.nominal()
    sets = {b: OptimizationSettings(backend=b) for b in ("compiled", "reference")}
    sets["previous"] = sets["reference"].with_(warm_bound_push=PREVIOUS_WARM_BOUND_PUSH,
                                               refine_mumps_scaling=PREVIOUS_REFINE_MUMPS_SCALING)
    # The compiled backend on the leaner KKT (motor-line rows that repeat the torque
    # bounds left out): a new structure, same feasible set.
    sets["compiled_lean"] = sets["compiled"].with_(drop_duplicate_rows=True)
    for st in sets.values():  # build (or load) every solver in this process before timing
        for name in RESOLUTIONS:
            pr = problem_for(RESOLUTIONS[name], st)
            pr.solver(True, st.max_iterations, st.tolerance, st.backend, st.warm_bound_push,
                      st.mumps_scaling)
    runs: dict = {}
    # The refinements all start from one coarse solution: each backend's own coarse
    # solution differs by its tolerance (about 3e-5 in speed), and from different starts
    # the refinement can take a different path (measured: 69 against 27 iterations).
    shared = solve(nominal, sets["compiled"], "coarse")
    for _ in range(1 if quick else 3):
        for b, st in sets.items():  # the packaged seed as the start, as every evaluation does
            c = solve(nominal, st, "coarse")
            f = refine(shared, settings=st)
            runs.setdefault(f"{b}_coarse", []).append((c, _ipopt_split(c, st)))
            runs.setdefault(f"{b}_refine", []).append(
                (f, _ipopt_split(f, st, refinement=True)))
    timing = {}
    for key, pairs in runs.items():
        med = {k: statistics.median(p[1][k] for p in pairs) for k in pairs[0][1]}
        med["speed_mps"] = pairs[0][0].speed
        med["solve_s_all"] = [p[1]["solve_s"] for p in pairs]
        timing[key] = med
    res["timing"] = timing
    for step in ("coarse", "refine"):
        res[f"{step}_ratio"] = (timing[f"reference_{step}"]["solve_s"]
                                / timing[f"compiled_{step}"]["solve_s"])
        res[f"{step}_ratio_vs_previous_path"] = (timing[f"previous_{step}"]["solve_s"]
                                                 / timing[f"compiled_{step}"]["solve_s"])
        res[f"{step}_ratio_lean"] = (timing[f"reference_{step}"]["solve_s"]
                                     / timing[f"compiled_lean_{step}"]["solve_s"])
        res[f"{step}_lean_vs_compiled"] = (timing[f"compiled_{step}"]["solve_s"]
                                           / timing[f"compiled_lean_{step}"]["solve_s"])
        # The floor: the ratio if the compiled backend's functions cost nothing (its
        # IPOPT + MUMPS time alone, at its own iteration count), and the share of a
        # compiled solve that IPOPT + MUMPS take.
        c = timing[f"compiled_{step}"]
        res[f"{step}_ratio_bound_free_functions"] = (
            timing[f"reference_{step}"]["solve_s"] / (c["solve_s"] - c["functions_s"]))
        res[f"{step}_compiled_ipopt_and_mumps_share"] = 1 - c["functions_s"] / c["solve_s"]
    # Same optimum: solved to 1e-9 (at the default 1e-6 each backend stops within its
    # tolerance of the optimum, which differs between them by about that much).
    morphs = [nominal, *sobol_morphologies(4 if quick else 16, seed=7)]
    res["same_optimum"] = _same_start_rows(
        morphs, {b: sets[b] for b in ("compiled", "reference")})
    res["same_optimum_lean"] = _same_start_rows(
        morphs, {"compiled": sets["compiled_lean"], "reference": sets["reference"]})
    # The co-design fitness's IPOPT options (no MUMPS scaling, fast steps) on both backends.
    res["same_optimum_fitness_options"] = _same_start_rows(
        morphs, {b: sets[b].with_(mumps_scaling=0, fast_step_computation=True)
                 for b in ("compiled", "reference")})
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and morphologies")
    ap.add_argument("--backends-only", action="store_true",
                    help="only the side-by-side backend comparison")
    ap.add_argument("--skip-builds", action="store_true",
                    help="no fresh-process build timings (a cold build compiles for minutes)")
    args = ap.parse_args()
    repeats = 1 if args.quick else 3
    n_morph = 8 if args.quick else 64
    s = OptimizationSettings()
    nominal = Morphology.nominal()
    res: dict = {"backends": compare_backends(args.quick, not args.skip_builds)}
    b = res["backends"]
    so = b["same_optimum"]
    print(f"coarse {b['coarse_ratio']:.2f}x, refine {b['refine_ratio']:.2f}x faster compiled "
          f"(vs the previous path {b['coarse_ratio_vs_previous_path']:.2f}x, "
          f"{b['refine_ratio_vs_previous_path']:.2f}x); same optimum on {so['same_optimum']}"
          f"/{so['morphologies']} (a 1e-12 perturbed start moved "
          f"{so['different_optimum_perturbed_start']})", file=sys.stderr)
    sl = b["same_optimum_lean"]
    print(f"lean KKT: coarse {b['coarse_ratio_lean']:.2f}x, refine {b['refine_ratio_lean']:.2f}x "
          f"faster than the reference ({b['coarse_lean_vs_compiled']:.2f}x, "
          f"{b['refine_lean_vs_compiled']:.2f}x the compiled backend); same optimum on "
          f"{sl['same_optimum']}/{sl['morphologies']}", file=sys.stderr)
    sf = b["same_optimum_fitness_options"]
    print(f"floor: with free functions the compiled backend would be at most "
          f"{b['coarse_ratio_bound_free_functions']:.2f}x (coarse), "
          f"{b['refine_ratio_bound_free_functions']:.2f}x (refine) faster; the fitness's "
          f"options: same optimum on {sf['same_optimum']}/{sf['morphologies']}",
          file=sys.stderr)
    if args.backends_only:
        print(json.dumps(res))
        return

    cold_t, cold_it = [], []
    for _ in range(repeats):
        cold = solve(nominal, s, "coarse", guess="deterministic")
        cold_t.append(cold.solve_time_s)
        cold_it.append(cold.iterations)
    res["nominal_coarse_cold_solve_s_median"] = statistics.median(cold_t)
    res["nominal_coarse_cold_iterations"] = cold_it[0]
    res["nominal_coarse_cold_speed_mps"] = cold.speed

    coarse_t, fine_t, coarse_it, fine_it = [], [], [], []
    for _ in range(repeats):
        c = solve(nominal, s, "coarse")  # default guess: the packaged seed trajectory
        f = refine(c)
        coarse_t.append(c.solve_time_s)
        fine_t.append(f.solve_time_s)
        coarse_it.append(c.iterations)
        fine_it.append(f.iterations)
    res.update({
        "nominal_coarse_solve_s_median": statistics.median(coarse_t),
        "nominal_refine_solve_s_median": statistics.median(fine_t),
        "nominal_coarse_iterations": coarse_it[0],
        "nominal_refine_iterations": fine_it[0],
        "nominal_coarse_speed_mps": c.speed,
        "nominal_fine_speed_mps": f.speed,
        "nominal_fine_status": f.status.value,
    })
    attach_accuracy(f)
    res["nominal_fine_max_position_drift_m"] = f.accuracy["max_position_drift_m"]

    # Grid convergence: 1x, 2x, 4x the coarse nodes, each warm-started from the previous.
    grid = {}
    prev = c
    for mult in (1, 2, 4):
        nodes = tuple(mult * n for n in RESOLUTIONS["coarse"])
        sol = prev if mult == 1 else refine(prev, nodes)
        grid[f"{mult}x"] = {"speed_mps": sol.speed, "status": sol.status.value,
                            "solve_time_s": sol.solve_time_s}
        if sol.status.success:
            prev = sol
    res["grid_convergence"] = grid

    # Torque-rate penalty: its effect on the speed.
    res["torque_rate_effect"] = {
        str(w): solve(nominal, s.with_(torque_rate_weight=w), "coarse").speed
        for w in (0.0, 1e-3, 1e-2)
    }

    # Convergence over Sobol morphologies: the default guess (seed, with its fallback),
    # and the designed guess alone, side by side.
    for label, guess in (("sobol", "seed"), ("sobol_designed_guess", "deterministic")):
        ok, times, speeds, fallbacks = 0, [], [], 0
        for m in sobol_morphologies(n_morph):
            sol = solve(m, s, "coarse", guess=guess)
            times.append(sum(h["solve_time_s"] for h in sol.history))
            fallbacks += len(sol.history) > 1
            if sol.status.success:
                ok += 1
                speeds.append(sol.speed)
        res.update({
            f"{label}_morphologies": n_morph,
            f"{label}_converged": ok,
            f"{label}_convergence_rate": ok / n_morph,
            f"{label}_solve_s_median": statistics.median(times),
            f"{label}_fallbacks": fallbacks,
            f"{label}_speed_mps_min_median_max":
                [min(speeds), statistics.median(speeds), max(speeds)] if speeds else None,
        })

    # The paper's randomized guess on the nominal robot, for comparison.
    n_random = 4 if args.quick else 16
    ok = sum(solve(nominal, s, "coarse", guess="random", seed=k).status.success
             for k in range(n_random))
    res["random_guess_convergence_rate"] = ok / n_random
    print(json.dumps(res))


if __name__ == "__main__":
    main()
