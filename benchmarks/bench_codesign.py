"""Co-design throughput: evaluations per minute in-process vs on Dask workers.

Scores one fixed batch of candidates (Sobol designs, warm-started from the nominal
robot's trajectory as the co-design does after its first generation) serially and on a
local Dask cluster of 1, 2, ... workers (up to the cores here, or ``--workers``), after
every process has built its solver once. Also times the local cluster's start. The
serial throughput is measured side by side, alternating candidate by candidate, for the
fitness's IPOPT options (no MUMPS scaling, fast steps) and the options before them
(MUMPS's automatic scaling, residual-checked steps), for both NLP backends, and for the
previous path (the reference backend with the former options and the warm start's former
bound push, 1e-5): evaluations per core-minute from wall time and from CPU time, and
their ratios.
``--scaling`` runs 1, 2, 4, ... workers up to the cores here (the last count is the core
count itself), so the same command measures a 16-core node or a cluster. Prints one
JSON object on its last line.
    python benchmarks/bench_codesign.py [--quick] [--scaling | --workers 1,2,4,8,16]
"""

from __future__ import annotations

import os

# One thread per process (workers inherit it): a core-minute is then a process-minute.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

from clamber.experiments.fitness import (  # noqa: E402
    CandidateTask,
    FitnessSettings,
    evaluate_candidate,
    fitness_settings,
)
from clamber.experiments.sweep import sobol_designs  # noqa: E402
from clamber.parallel.dask import DaskEvaluator, available_cores  # noqa: E402

#: MUMPS's scaling of the fitness's solves before the fitness turned it off (automatic).
PREVIOUS_MUMPS_SCALING = 77
#: The paper: 50 generations x 9 candidates in 188 min on 9 cores.
PAPER_CORE_MIN_PER_EVAL = 188 * 9 / (50 * 9)


def _tasks(fitness: FitnessSettings, n: int) -> list[CandidateTask]:
    """``n`` Sobol candidates warm-started from the nominal robot's solution."""
    from clamber.jumper.morphology import Morphology

    seed = evaluate_candidate(CandidateTask(0, 0, (), Morphology.nominal(), fitness))
    if not seed.success:  # without it every candidate would start from the packaged seed
        raise SystemExit(f"the nominal robot's solve failed: {seed.status} {seed.error}")
    return [CandidateTask(1, i, (), m, fitness, seed.solution)
            for i, m in enumerate(sobol_designs(n, seed=1))]


def _summary(results: list, wall: float, workers: int) -> dict:
    ok = [r for r in results if r.success]
    return {"workers": workers, "evaluations": len(results), "wall_s": wall,
            "evals_per_min": len(results) / wall * 60,
            "converged": len(ok),
            "mean_eval_s": statistics.fmean(r.wall_time_s for r in results),
            "mean_eval_cpu_s": statistics.fmean(r.info.get("cpu_time_s", r.wall_time_s)
                                                for r in results),
            "iterations": sum(r.info.get("iterations", 0) for r in results),
            "speeds": [round(r.speed_mps, 6) if r.success else None for r in results]}


def _throughput(evaluator, tasks: list[CandidateTask]) -> dict:
    evaluator.warm_up(evaluate_candidate, tasks[0])  # each worker builds its solvers once
    t0 = time.perf_counter()
    out = evaluator.map(evaluate_candidate, tasks)
    wall = time.perf_counter() - t0
    return _summary([o.value for o in out if o.ok], wall, evaluator.n_workers)


def _serial_side_by_side(columns: dict[str, list[CandidateTask]]) -> dict[str, dict]:
    """Each column's tasks in one process, alternating column by column per candidate
    (every solver built first), so load changes hit every column alike."""
    for tasks in columns.values():
        evaluate_candidate(tasks[0])
    results: dict[str, list] = {k: [] for k in columns}
    walls = dict.fromkeys(columns, 0.0)
    for i in range(len(next(iter(columns.values())))):
        for k, tasks in columns.items():
            t0 = time.perf_counter()
            results[k].append(evaluate_candidate(tasks[i]))
            walls[k] += time.perf_counter() - t0
    return {k: _summary(results[k], walls[k], 0) for k in columns}


def _max_difference(a: list[float], b: list[float]) -> float | None:
    """Largest relative speed difference of two columns (None if convergence differs)."""
    if [x is None for x in a] != [y is None for y in b]:
        return None
    return max((abs(x / y - 1) for x, y in zip(a, b, strict=True) if x is not None),
               default=None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny grids, 8 candidates")
    ap.add_argument("--workers", help="comma-separated worker counts (default: 1, 2 up to "
                    "the cores here)")
    ap.add_argument("--scaling", action="store_true",
                    help="1, 2, 4, ... workers up to the cores here")
    ap.add_argument("--candidates", type=int,
                    help="candidates of the serial side-by-side columns (default: the batch)")
    args = ap.parse_args()
    cores = available_cores()
    if args.workers:
        counts = [int(w) for w in args.workers.split(",")]
    elif args.scaling:
        counts = [w for w in (2**k for k in range(12)) if w < cores] + [cores]
    else:
        counts = [w for w in (1, 2, 4, 8, 16) if w <= max(cores, 2)]
    if args.quick:
        fitness = FitnessSettings(settings=fitness_settings().with_(max_iterations=300),
                                resolution=(6, 3, 5, 3, 4), refine=None)
        n = 8
    else:
        fitness = FitnessSettings(refine=None)  # coarse, the sweep's and demo's fitness
        n = 2 * max(counts)
    tasks = _tasks(fitness, max(n, args.candidates or 0))
    # The fitness's IPOPT options against those before them (MUMPS's automatic scaling,
    # residual-checked steps), each on both backends; the previous path also with the
    # warm start's former bound push (the coarse fitness does not refine, so the
    # refinement's MUMPS scaling is moot).
    st = fitness.settings
    before = st.with_(mumps_scaling=PREVIOUS_MUMPS_SCALING, fast_step_computation=False)
    variants = {"compiled": st, "compiled_previous_options": before,
                "reference": st.with_(backend="reference"),
                "reference_previous_options": before.with_(backend="reference"),
                "previous_path": before.with_(backend="reference", warm_bound_push=1e-5)}
    side = _serial_side_by_side(
        {k: [replace(t, fitness=replace(fitness, settings=v)) for t in tasks]
         for k, v in variants.items()})
    tasks = tasks[:n]
    serial, ref_serial, prev_serial = side["compiled"], side["reference"], side["previous_path"]
    starts, dask = [], []
    for w in counts:
        t0 = time.perf_counter()
        with DaskEvaluator(n_workers=w) as ev:
            starts.append({"workers": w, "start_s": ev.start_time_s})
            dask.append(_throughput(ev, tasks))
        dask[-1]["close_s"] = time.perf_counter() - t0 - ev.start_time_s - dask[-1]["wall_s"]
    same = all(d["speeds"] == serial["speeds"][:n] for d in dask)
    for d in dask:
        d["parallel_efficiency"] = d["evals_per_min"] / (d["workers"] * serial["evals_per_min"])
        print(f"dask {d['workers']:2d} workers: {d['evals_per_min']:7.2f} evals/min "
              f"(efficiency {d['parallel_efficiency']:.0%})")
    print(f"serial        : {serial['evals_per_min']:7.2f} evals/min")
    two = next((d for d in dask if d["workers"] == 2), dask[-1])
    result = {
        "benchmark": "codesign", "quick": args.quick, "cores": cores,
        "grid": list(fitness.resolution) if not isinstance(fitness.resolution, str)
        else fitness.resolution,
        "evaluations_per_batch": n,
        "serial_evals_per_min": serial["evals_per_min"],
        "dask_2_workers_evals_per_min": two["evals_per_min"],
        "dask_speedup_2_workers": two["evals_per_min"] / serial["evals_per_min"],
        "cluster_start_s": statistics.median(s["start_s"] for s in starts),
        "cluster_starts": starts,
        "scaling": [{k: d[k] for k in ("workers", "evals_per_min", "parallel_efficiency")}
                    for d in dask],
        "serial_candidates": serial["evaluations"],
        "core_min_per_eval": serial["mean_eval_s"] / 60,
        "evals_per_core_min": 60 / serial["mean_eval_s"],
        "evals_per_cpu_min": 60 / serial["mean_eval_cpu_s"],
        "side_by_side": {k: {"evals_per_core_min": 60 / v["mean_eval_s"],
                             "evals_per_cpu_min": 60 / v["mean_eval_cpu_s"],
                             "iterations": v["iterations"], "converged": v["converged"],
                             "speed_mean_mps": statistics.fmean(
                                 x for x in v["speeds"] if x is not None) if v["converged"]
                             else None}
                         for k, v in side.items()},
        "options_ratio": side["compiled_previous_options"]["mean_eval_s"] / serial["mean_eval_s"],
        "options_ratio_cpu": (side["compiled_previous_options"]["mean_eval_cpu_s"]
                              / serial["mean_eval_cpu_s"]),
        "reference_backend_evals_per_core_min": 60 / ref_serial["mean_eval_s"],
        "backend_ratio": ref_serial["mean_eval_s"] / serial["mean_eval_s"],
        "previous_path_evals_per_core_min": 60 / prev_serial["mean_eval_s"],
        "ratio_vs_previous_path": prev_serial["mean_eval_s"] / serial["mean_eval_s"],
        "reference_backend_max_speed_difference": _max_difference(serial["speeds"],
                                                                  ref_serial["speeds"]),
        "paper_core_min_per_eval": PAPER_CORE_MIN_PER_EVAL,
        "converged": serial["converged"],
        "dask_equals_serial": same,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
