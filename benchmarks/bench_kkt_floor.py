"""Where an IPOPT solve of the jump NLP spends its time: functions, MUMPS, the rest.

For the nominal robot's coarse solve (from the packaged seed) and its refinement (from
one coarse solution), on the compiled backend, with MUMPS's scaling off (0, the
refinement's default) and IPOPT's automatic one (77, the coarse solve's default), side
by side in one process per grid:
- timed solves (alternating, medians): wall time, iterations, NLP function time;
- one solve with IPOPT's ``print_timing_statistics``: the KKT solves (IPOPT does not
  time MUMPS's numeric factorization itself; it is the KKT solves less the symbolic
  factorization and the backsolves);
- one solve with MUMPS's statistics (``mumps_print_level`` 2): the KKT matrix, numeric
  factorizations and solves, entries in the factors (fill-in), operations and delayed
  pivots per factorization, and MUMPS's own time per factorization (this run prints,
  so its times are a little high).
With ``--lean`` the lean KKT (``OptimizationSettings.drop_duplicate_rows``: the
motor-line rows that repeat the torque bounds left out) runs beside them, alternating,
from the same start. Each grid runs in a fresh process (so MUMPS's output can be read)
on one thread. Prints one JSON object on its last line.
    python benchmarks/bench_kkt_floor.py [--quick] [--repeats N] [--lean]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

SCALINGS = (0, 77)  # MUMPS ICNTL(8): none, automatic (IPOPT's default)
_RESULT = "KKT_FLOOR_RESULT "


def _start(resolution: str):
    """The problem, start and bound push of the step as the project runs it."""
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.schedule import RESOLUTIONS
    from clamber.jumper.seed import seed_solution
    from clamber.jumper.settings import OptimizationSettings
    from clamber.jumper.solve import REFINE_BOUND_PUSH, interpolate_solution, problem_for, solve

    s = OptimizationSettings()
    pr = problem_for(RESOLUTIONS[resolution], s)
    if resolution == "coarse":
        return s, pr, interpolate_solution(seed_solution(), pr), s.warm_bound_push
    coarse = solve(Morphology.nominal(), s, "coarse")
    return s, pr, interpolate_solution(coarse, pr), REFINE_BOUND_PUSH


def _variants(lean: bool) -> dict[str, tuple[bool, int]]:
    """Label -> (lean KKT, MUMPS scaling) of every configuration measured."""
    out = {str(sc): (False, sc) for sc in SCALINGS}
    if lean:
        out.update({f"lean_{sc}": (True, sc) for sc in SCALINGS})
    return out


def _child(resolution: str, repeats: int, lean: bool) -> None:
    """Runs in a fresh process: timed solves, then the two printing solves."""
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.solve import problem_for

    s, pr, x0, push = _start(resolution)
    params = pr.parameter_vector(Morphology.nominal().parameters(), s)
    lbx, ubx = pr.variable_bounds(s)
    sc = pr.scale
    problems = {False: pr}
    if lean:
        problems[True] = problem_for(pr.nodes, s.with_(drop_duplicate_rows=True))

    def args(lean_kkt: bool) -> dict:
        lbg, ubg = problems[lean_kkt].constraint_bounds(s)
        return {"x0": np.clip(x0, lbx, ubx) / sc, "p": params, "lbx": lbx / sc,
                "ubx": ubx / sc, "lbg": lbg, "ubg": ubg}

    def solver(label: str, **extra):
        lean_kkt, scaling = _variants(True)[label]
        opts = pr.ipopt_options(True, s.max_iterations, s.tolerance, push, scaling)
        return problems[lean_kkt].build_solver(
            {**opts, **{f"ipopt.{k}": v for k, v in extra.items()}})

    variants = _variants(lean)
    timed = {label: solver(label) for label in variants}
    runs: dict = {label: [] for label in variants}
    for _ in range(repeats):
        for label, fn in timed.items():
            t0 = time.perf_counter()
            res = fn(**args(variants[label][0]))
            wall = time.perf_counter() - t0
            st = fn.stats()
            runs[label].append({
                "solve_s": wall, "iterations": int(st["iter_count"]),
                "status": st["return_status"], "objective": float(res["f"]),
                "functions_s": sum(v for k, v in st.items() if k.startswith("t_wall_nlp_")),
            })
    out = {}
    for scaling, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs)
               for k in ("solve_s", "functions_s")}
        out[str(scaling)] = {**med, "iterations": rs[0]["iterations"],
                             "status": rs[0]["status"], "objective": rs[0]["objective"],
                             "solve_s_all": [r["solve_s"] for r in rs]}
    print(_RESULT + json.dumps(out), flush=True)
    for label, (lean_kkt, _) in variants.items():
        print(f"=== timing {label}", flush=True)
        solver(label, print_level=3, print_timing_statistics="yes")(**args(lean_kkt))
        sys.stdout.flush()
        print(f"=== mumps {label}", flush=True)
        solver(label, mumps_print_level=2)(**args(lean_kkt))
        sys.stdout.flush()
    print("=== end", flush=True)


def _section(text: str, name: str) -> str:
    m = re.search(rf"=== {name}\n(.*?)(?:\n=== |\Z)", text, re.S)
    return m.group(1) if m else ""


def _timing(text: str) -> dict:
    """IPOPT's timing statistics [s, wall]."""
    keys = {"OverallAlgorithm": "ipopt_total_s", "StdAugSystemSolverMultiSolve": "kkt_solves_s",
            "LinearSystemSymbolicFactorization": "symbolic_s",
            "LinearSystemBackSolve": "backsolves_s", "Function Evaluations": "functions_s"}
    out = {}
    for key, name in keys.items():
        m = re.search(rf"^\s*{key}\.*:\s+\S+ \(sys:\s+\S+ wall:\s+(\S+)\)", text, re.M)
        if m:
            out[name] = float(m.group(1))
    if {"kkt_solves_s", "symbolic_s", "backsolves_s"} <= set(out):
        out["numeric_factorizations_s"] = (out["kkt_solves_s"] - out["symbolic_s"]
                                           - out["backsolves_s"])
    m = re.search(r"Number of Iterations\.*:\s+(\d+)", text)
    out["iterations"] = int(m.group(1)) if m else None
    return out


def _mumps(text: str) -> dict:
    """MUMPS's statistics: the KKT matrix, fill-in, operations, counts and times."""
    def values(pattern: str) -> list[float]:
        return [float(v.replace("D", "e")) for v in re.findall(pattern, text)]

    n_nnz = re.search(r"JOB, N, NNZ =\s+1\s+(\d+)\s+(\d+)", text)
    entries = values(r"INFOG \(29\) Number of entries in factors\s+=\s+(\S+)")
    ops = values(r"\(3\) Operations in node elimination\s+=\s+(\S+)")
    delayed = values(r"INFOG \(13\) Number of delayed pivots\s+=\s+(\S+)")
    fact = values(r"Elapsed time for factorization\s+=\s+(\S+)")
    out = {"factorizations": text.count("FACTORIZATION STEP"),
           "solves": text.count("SOLVE & CHECK STEP")}
    if n_nnz:
        out["kkt_dimension"], out["kkt_nonzeros"] = int(n_nnz.group(1)), int(n_nnz.group(2))
    if entries:
        out["factor_entries_median"] = statistics.median(entries)
        if n_nnz:
            out["fill_in_ratio"] = out["factor_entries_median"] / out["kkt_nonzeros"]
    if ops:
        out["flops_per_factorization_median"] = statistics.median(ops)
    if delayed:
        out["delayed_pivots_median"] = statistics.median(delayed)
    if fact:
        out["ms_per_factorization_median"] = 1e3 * statistics.median(fact)
    return out


def measure(resolution: str, repeats: int, lean: bool = False) -> dict:
    """One grid in a fresh process; IPOPT's and MUMPS's output parsed here."""
    out = subprocess.run([sys.executable, __file__, "--child", resolution, "--repeats",
                          str(repeats), *(["--lean"] if lean else [])],
                         capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith(_RESULT))
    res = json.loads(line[len(_RESULT):])
    for label in _variants(lean):
        r = res[label]
        r["ipopt_and_mumps_s"] = r["solve_s"] - r["functions_s"]
        r["ms_per_iteration"] = 1e3 * r["solve_s"] / max(r["iterations"], 1)
        r["timing_statistics"] = _timing(_section(out, f"timing {label}"))
        r["mumps"] = _mumps(_section(out, f"mumps {label}"))
    res["time_ratio_77_over_0"] = res["77"]["solve_s"] / res["0"]["solve_s"]
    res["same_objective"] = abs(res["0"]["objective"] / res["77"]["objective"] - 1) <= 1e-6
    if lean:  # the project's scaling of each step: 77 from the seed, 0 refining
        d = "77" if resolution == "coarse" else "0"
        res["time_ratio_default_over_lean"] = res[d]["solve_s"] / res[f"lean_{d}"]["solve_s"]
        res["lean_same_objective"] = abs(res[f"lean_{d}"]["objective"]
                                         / res[d]["objective"] - 1) <= 1e-6
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repeat, the coarse grid only")
    ap.add_argument("--repeats", type=int, default=5, help="timed solves per scaling (5)")
    ap.add_argument("--lean", action="store_true",
                    help="also the lean KKT (drop_duplicate_rows), side by side")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.repeats, args.lean)
        return
    repeats = 1 if args.quick else args.repeats
    result = {"benchmark": "kkt_floor", "backend": "compiled", "repeats": repeats,
              "mumps_scalings": list(SCALINGS), "lean": args.lean}
    for resolution in ("coarse",) if args.quick else ("coarse", "fine"):
        r = measure(resolution, repeats, args.lean)
        result[resolution] = r
        d = r["0" if resolution == "fine" else "77"]
        print(f"{resolution}: {d['solve_s']:.3f} s, {d['iterations']} it, functions "
              f"{d['functions_s']:.3f} s, {d['mumps'].get('factorizations')} factorizations "
              f"of {d['mumps'].get('kkt_dimension')}x{d['mumps'].get('kkt_dimension')} at "
              f"{d['mumps'].get('ms_per_factorization_median', float('nan')):.1f} ms, fill "
              f"{d['mumps'].get('fill_in_ratio', float('nan')):.1f}x; scaling 77 takes "
              f"{r['time_ratio_77_over_0']:.2f}x the time", file=sys.stderr)
        if args.lean:
            d = "0" if resolution == "fine" else "77"
            e = r[f"lean_{d}"]
            print(f"  lean KKT: {e['solve_s']:.3f} s, {e['iterations']} it, "
                  f"{e['mumps'].get('factorizations')} factorizations of "
                  f"{e['mumps'].get('kkt_dimension')} at "
                  f"{e['mumps'].get('ms_per_factorization_median', float('nan')):.1f} ms, fill "
                  f"{e['mumps'].get('fill_in_ratio', float('nan')):.1f}x; the default takes "
                  f"{r['time_ratio_default_over_lean']:.2f}x its time", file=sys.stderr)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
