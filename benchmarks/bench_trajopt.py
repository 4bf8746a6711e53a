"""Jumper trajectory optimization: build and solve times, convergence, grid convergence.

Runs on one core (thread pools pinned to 1). Prints one JSON object on its last line.
    python benchmarks/bench_trajopt.py [--quick]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import qmc  # noqa: E402

from clamber.jumper.formulation.problem import build_problem  # noqa: E402
from clamber.jumper.morphology import DesignBounds, Morphology  # noqa: E402
from clamber.jumper.schedule import RESOLUTIONS  # noqa: E402
from clamber.jumper.settings import OptimizationSettings  # noqa: E402
from clamber.jumper.solve import refine, solve  # noqa: E402
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and morphologies")
    args = ap.parse_args()
    repeats = 1 if args.quick else 3
    n_morph = 8 if args.quick else 64
    s = OptimizationSettings()
    nominal = Morphology.nominal()
    res: dict = {}

    for name, nodes in RESOLUTIONS.items():
        t0 = time.perf_counter()
        pr = build_problem(nodes)
        pr.solver(False)
        pr.solver(True)
        res[f"build_{name}_s"] = time.perf_counter() - t0

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
