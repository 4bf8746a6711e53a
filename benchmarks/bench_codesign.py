"""Co-design throughput: evaluations per minute in-process vs on Dask workers.

Scores one fixed batch of candidates (Sobol designs, warm-started from the nominal
robot's trajectory as the co-design does after its first generation) serially and on a
local Dask cluster of 1, 2, ... workers (up to the cores here, or ``--workers``), after
every process has built its solver once. Also times the local cluster's start. The
serial throughput is measured for both NLP backends side by side (evaluations per
core-minute and their ratio), and for the previous path (the reference backend with the
warm start's former IPOPT bound push, 1e-5).
``--scaling`` runs 1, 2, 4, ... workers up to the cores here (the last count is the core
count itself), so the same command measures a 16-core node or a cluster. Prints one
JSON object on its last line.
    python benchmarks/bench_codesign.py [--quick] [--scaling | --workers 1,2,4,8,16]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace

from clamber.experiments.fitness import CandidateTask, FitnessSettings, evaluate_candidate
from clamber.experiments.sweep import sobol_designs
from clamber.jumper.settings import OptimizationSettings
from clamber.parallel.dask import DaskEvaluator, available_cores
from clamber.parallel.serial import SerialEvaluator

#: The paper: 50 generations x 9 candidates in 188 min on 9 cores.
PAPER_CORE_MIN_PER_EVAL = 188 * 9 / (50 * 9)


def _tasks(fitness: FitnessSettings, n: int) -> list[CandidateTask]:
    from clamber.jumper.morphology import Morphology

    seed = evaluate_candidate(CandidateTask(-1, 0, (), Morphology.nominal(), fitness))
    return [CandidateTask(0, i, (), m, fitness, seed.solution)
            for i, m in enumerate(sobol_designs(n, seed=1))]


def _throughput(evaluator, tasks: list[CandidateTask]) -> dict:
    evaluator.warm_up(evaluate_candidate, tasks[0])  # each worker builds its solvers once
    t0 = time.perf_counter()
    out = evaluator.map(evaluate_candidate, tasks)
    wall = time.perf_counter() - t0
    ok = [o.value for o in out if o.ok]
    return {"workers": evaluator.n_workers, "evaluations": len(tasks), "wall_s": wall,
            "evals_per_min": len(tasks) / wall * 60,
            "converged": sum(r.success for r in ok),
            "mean_eval_s": statistics.fmean(r.wall_time_s for r in ok),
            "speeds": [round(r.speed_mps, 6) for r in ok if r.success]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny grids, 8 candidates")
    ap.add_argument("--workers", help="comma-separated worker counts (default: 1, 2 up to "
                    "the cores here)")
    ap.add_argument("--scaling", action="store_true",
                    help="1, 2, 4, ... workers up to the cores here")
    args = ap.parse_args()
    cores = available_cores()
    if args.workers:
        counts = [int(w) for w in args.workers.split(",")]
    elif args.scaling:
        counts = [w for w in (2**k for k in range(12)) if w < cores] + [cores]
    else:
        counts = [w for w in (1, 2, 4, 8, 16) if w <= max(cores, 2)]
    if args.quick:
        fitness = FitnessSettings(settings=OptimizationSettings(max_iterations=300),
                                resolution=(6, 3, 5, 3, 4), refine=None)
        n = 8
    else:
        fitness = FitnessSettings(refine=None)  # coarse, the sweep's and demo's fitness
        n = 2 * max(counts)
    tasks = _tasks(fitness, n)
    serial = _throughput(SerialEvaluator(), tasks)
    reference = replace(fitness, settings=fitness.settings.with_(backend="reference"))
    ref_serial = _throughput(SerialEvaluator(), [replace(t, fitness=reference) for t in tasks])
    # The previous path: the reference backend with the warm start's former bound push
    # (the coarse fitness does not refine, so the refinement's MUMPS scaling is moot).
    previous = replace(fitness, settings=reference.settings.with_(warm_bound_push=1e-5))
    prev_serial = _throughput(SerialEvaluator(), [replace(t, fitness=previous) for t in tasks])
    starts, dask = [], []
    for w in counts:
        t0 = time.perf_counter()
        with DaskEvaluator(n_workers=w) as ev:
            starts.append({"workers": w, "start_s": ev.start_time_s})
            dask.append(_throughput(ev, tasks))
        dask[-1]["close_s"] = time.perf_counter() - t0 - ev.start_time_s - dask[-1]["wall_s"]
    same = all(d["speeds"] == serial["speeds"] for d in dask)
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
        "core_min_per_eval": serial["mean_eval_s"] / 60,
        "evals_per_core_min": 60 / serial["mean_eval_s"],
        "reference_backend_evals_per_core_min": 60 / ref_serial["mean_eval_s"],
        "backend_ratio": ref_serial["mean_eval_s"] / serial["mean_eval_s"],
        "previous_path_evals_per_core_min": 60 / prev_serial["mean_eval_s"],
        "ratio_vs_previous_path": prev_serial["mean_eval_s"] / serial["mean_eval_s"],
        "reference_backend_max_speed_difference": max(
            (abs(a / b - 1) for a, b in zip(serial["speeds"], ref_serial["speeds"], strict=False)),
            default=None) if len(serial["speeds"]) == len(ref_serial["speeds"]) else None,
        "paper_core_min_per_eval": PAPER_CORE_MIN_PER_EVAL,
        "converged": serial["converged"],
        "dask_equals_serial": same,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
