"""What a quadruped comparison study costs, and how much of it is the study runner's: wall
time, the trials' own time and the time spent outside trials, this checkout beside another.

Usage: ``python benchmarks/bench_quadruped_study.py [--quick] [--baseline DIR] [--repeat N]``.
Each run is the command itself, ``clamber quadruped compare`` with the controllers' default
gains (no tuning), in a fresh process from a scratch folder, with ``PYTHONPATH`` set to the
checkout it times; with ``--baseline DIR`` (a checkout of another commit, e.g. 7d1957b) the
two checkouts alternate, so both see the same load. Per run:

* ``wall_s``: the command's wall time [s];
* ``cpu_s``: CPU time [s] of the command and of every worker process it started (the
  resource usage :func:`os.wait4` returns for it, which includes its reaped children);
* ``trial_s``: the sum over trials of the time each took where it ran (the study runner's
  own timing, recorded with every trial);
* ``overhead_s = wall_s * workers - trial_s``: worker time spent outside any trial (process
  start-up and imports, loading compiled kernels, scheduling, the idle tail while the last
  trial runs); ``overhead_per_trial_s`` divides it by the trials;
* ``cpu_outside_trials_s = cpu_s - trial_s``: on an idle machine (where a trial's wall
  time is its CPU time) the CPU the command spends on anything but trials;
* ``sim_s``: simulated time summed over the trials (the work done; two checkouts whose
  arithmetic differs may end a failing climb a control cycle apart);
* ``fingerprint``: a hash of every trial's controller, scenario, seed, success and failure
  reason, so that ``same_outcomes`` says whether both checkouts reached the same verdicts;
* ``fine_step_trials``: trials whose verdict was climbed at the 4 ms step (a rerun, or a
  climb that started there), ``reruns`` those climbed twice.

Defaults: every scenario, 2 trials per cell, five gait cycles, 2 workers (36 trials);
``--quick``: the 70 and 90 degree walls, 2 trials, 2 cycles (12 trials). Medians over
``--repeat`` runs. The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clamber.experiments.record import StudyTrial
from clamber.quadruped.sim.rates import FINE_CLIMB_PHYSICS_DT
from clamber.storage.runs import STORE_NAME, RunStore

HERE = Path(__file__).resolve().parents[1]
#: Per-run figures whose medians over the repeats are reported.
FIGURES = ("wall_s", "cpu_s", "trial_s", "overhead_s", "overhead_per_trial_s",
           "cpu_outside_trials_s", "sim_s")


def command(args: argparse.Namespace, checkout: Path, out: Path) -> list[str]:
    """The comparison command for ``checkout`` (figures off where it can draw them)."""
    cmd = [sys.executable, "-m", "clamber", "-q", "quadruped", "compare",
           "--scenarios", *args.scenarios, "--trials", str(args.trials),
           "--cycles", str(args.cycles), "--workers", str(args.workers),
           "--seed", str(args.seed), "--out", str(out), "--json", "--no-progress"]
    help_text = subprocess.run([*cmd[:6], "--help"], capture_output=True, text=True,
                               env=environment(checkout), cwd=out.parent, check=True).stdout
    return cmd + (["--no-figures"] if "--no-figures" in help_text else [])


def environment(checkout: Path) -> dict[str, str]:
    """This process's environment with ``checkout`` first on the module path."""
    return {**os.environ, "PYTHONPATH": str(checkout)}


def recorded_trials(out: Path) -> list[StudyTrial]:
    """The trials a comparison recorded: in ``cells/`` (this release) or in its folder."""
    run_dir = out / "cells" if (out / "cells" / STORE_NAME).exists() else out
    return RunStore.read_trials(run_dir, "quadruped-compare", StudyTrial)


def fingerprint(trials: list[StudyTrial]) -> str:
    """The trials' verdicts, independent of order and of their timing."""
    rows = sorted((str(t.metrics.get("controller")), str(t.metrics.get("setting")), t.seed,
                   t.success, str(t.metrics.get("failure"))) for t in trials)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def run_once(args: argparse.Namespace, checkout: Path, scratch: Path, tag: str) -> dict:
    """One comparison with ``checkout``'s clamber; its figures (see the module docstring)."""
    out = scratch / tag
    cmd = command(args, checkout, out)
    stdout, stderr = scratch / f"{tag}.json", scratch / f"{tag}.err"
    with open(stdout, "wb") as fo, open(stderr, "wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=environment(checkout), cwd=scratch, stdout=fo,
                                stderr=fe)
        # wait4's usage of the command includes every worker process it reaped.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{checkout}: the comparison failed:\n{stderr.read_text()[-2000:]}")
    if json.loads(stdout.read_text().strip().splitlines()[-1])["command"] != "compare":
        raise SystemExit(f"{checkout}: not a comparison's summary")
    trials = recorded_trials(out)
    trial_s = sum(t.wall_time_s for t in trials)
    overhead = wall * args.workers - trial_s
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "trial_s": trial_s,
            "overhead_s": overhead, "overhead_per_trial_s": overhead / len(trials),
            "cpu_outside_trials_s": usage.ru_utime + usage.ru_stime - trial_s,
            "sim_s": sum(float(t.metrics.get("sim_time_s") or 0.0) for t in trials),
            "trials": len(trials), "fingerprint": fingerprint(trials),
            "reruns": sum(bool(t.metrics.get("verdict_rerun")) for t in trials),
            "fine_step_trials": sum(bool(t.metrics.get("verdict_rerun"))
                                    or t.metrics.get("physics_dt_s") == FINE_CLIMB_PHYSICS_DT
                                    for t in trials),
            "load_1min": os.getloadavg()[0]}


def summary(runs: list[dict]) -> dict:
    """Medians of the figures over repeated runs of one checkout, and every run."""
    out = {f"{k}_median": statistics.median(r[k] for r in runs) for k in FIGURES}
    return out | {"trials": runs[0]["trials"], "fingerprint": runs[0]["fingerprint"],
                  "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="70 and 90 degree walls, 2 trials, 2 gait cycles")
    parser.add_argument("--baseline", metavar="DIR", type=Path,
                        help="another checkout timed beside this one, alternating")
    parser.add_argument("--repeat", type=int, default=1, help="runs per checkout (medians)")
    parser.add_argument("--scenarios", nargs="+", default=None,
                        help="scenarios (default: all; --quick: wall70 wall90)")
    parser.add_argument("--trials", type=int, default=2, help="trials per cell (2)")
    parser.add_argument("--cycles", type=int, default=None,
                        help="gait cycles per climb (5; --quick: 2)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (0)")
    args = parser.parse_args()
    if args.workers < 1 or args.trials < 1 or args.repeat < 1:
        parser.error("--workers, --trials and --repeat must be >= 1")
    if args.baseline is not None and not (args.baseline / "clamber" / "__init__.py").is_file():
        parser.error(f"--baseline {args.baseline}: not a clamber checkout")
    args.scenarios = args.scenarios or (["wall70", "wall90"] if args.quick else ["all"])
    args.cycles = args.cycles or (2 if args.quick else 5)
    checkouts = {"this": HERE} | ({"baseline": args.baseline.resolve()}
                                  if args.baseline is not None else {})
    runs: dict[str, list[dict]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="bench_study_") as scratch:
        for rep in range(args.repeat):
            for name, checkout in checkouts.items():
                runs[name].append(run_once(args, checkout, Path(scratch), f"{name}{rep}"))
                print(json.dumps({"checkout": name, "repeat": rep, **runs[name][-1]}),
                      file=sys.stderr)
    result = {"scenarios": args.scenarios, "trials_per_cell": args.trials,
              "cycles": args.cycles, "workers": args.workers, "repeat": args.repeat,
              "this": summary(runs["this"])}
    if args.baseline is not None:
        base = summary(runs["baseline"])
        result["baseline"] = base | {"dir": str(args.baseline)}
        result["same_outcomes"] = base["fingerprint"] == result["this"]["fingerprint"]
        result["wall_ratio"] = result["this"]["wall_s_median"] / base["wall_s_median"]
        result["cpu_ratio"] = result["this"]["cpu_s_median"] / base["cpu_s_median"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
