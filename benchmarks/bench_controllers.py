"""The controllers' cost per control cycle alone: the (state, reference) pairs of a climb,
replayed through a fresh controller.

Usage: ``python benchmarks/bench_controllers.py [--quick] [--cycles N] [--repeat R]
[--baseline DIR]`` (``--quick``: 500 cycles, 3 passes).
A breakable climb at 90 deg (seed 0, Q-WBC, CLIK and VMC in turn) runs ``N`` control cycles
(default 2000) while its controller's inputs are recorded; then a fresh controller of the
same name steps through them ``R`` times (default 5), and the CPU microseconds per step of
the fastest and the median pass are reported. Replaying leaves out everything but the
controller, so its cost is measured without the physics' and estimator's noise (its share
of the loop is ``--breakdown`` of ``bench_quadruped_sim.py``). ``--baseline DIR`` measures
another checkout the same way in a fresh process, alternating controller by controller,
and checks that both computed the same commands bit for bit (a hash of every command).
The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def replay(name: str, cycles: int, repeat: int) -> dict:
    """CPU microseconds per step of controller ``name`` over the recorded inputs of
    ``cycles`` control cycles of its climb, and a hash of its commands."""
    from clamber.experiments.quadruped_comparison import cell_settings
    from clamber.quadruped.control.variants import make_controller
    from clamber.quadruped.trials.climb import ClimbTrial

    trial = ClimbTrial(cell_settings("wall90", name, (), 1), 0)
    inputs = []
    step = trial.ctrl.step

    def recorded(state, ref):
        inputs.append((copy.deepcopy(state), ref))
        return step(state, ref)

    trial.ctrl.step = recorded
    for _ in range(cycles):
        if not trial.step():
            break
    passes, h = [], hashlib.sha256()
    for k in range(repeat + 1):  # the first pass warms caches and is not counted
        ctrl = make_controller(name, trial.rm, (), 1.0 / trial.settings.control_rate)
        c0 = time.process_time()
        commands = [ctrl.step(state, ref) for state, ref in inputs]
        if k > 0:
            passes.append(1e6 * (time.process_time() - c0) / len(inputs))
    for cmd in commands:
        for a in (cmd.position, cmd.torque, cmd.current_limit, cmd.wrenches):
            h.update(np.ascontiguousarray(a).tobytes())
    return {"controller": name, "cycles": len(inputs), "us_per_step_min": min(passes),
            "us_per_step_median": float(np.median(passes)), "commands": h.hexdigest()[:16]}


def _run(source: str, name: str, cycles: int, repeat: int) -> dict:
    """:func:`replay` in a fresh process importing clamber from ``source`` (a checkout)."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(source)}
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name,
                          str(cycles), str(repeat)], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        print(json.dumps(replay(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(
        description="The controllers' cost per control cycle alone, replayed from a climb.",
        epilog="examples:\n  python benchmarks/bench_controllers.py --quick\n"
               "  python benchmarks/bench_controllers.py --baseline ../clamber-before",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="500 cycles, 3 passes")
    parser.add_argument("--cycles", type=int, default=None,
                        help="control cycles recorded (2000)")
    parser.add_argument("--repeat", type=int, default=None, help="timed passes over them (5)")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout, side by side")
    args = parser.parse_args()
    args.cycles = args.cycles or (500 if args.quick else 2000)
    args.repeat = args.repeat or (3 if args.quick else 5)
    if args.cycles < 1 or args.repeat < 1:
        parser.error("--cycles and --repeat must be >= 1")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = {"this": here} | ({"baseline": args.baseline} if args.baseline else {})
    out: dict = {}
    for name in ("qwbc", "clik", "vmc"):
        row = {name_: _run(src, name, args.cycles, args.repeat)
               for name_, src in sources.items()}
        if args.baseline:
            row["speedup"] = (row["baseline"]["us_per_step_min"]
                              / row["this"]["us_per_step_min"])
            row["identical"] = row["this"]["commands"] == row["baseline"]["commands"]
        print(json.dumps({name: row}))
        out[name] = row
    print(json.dumps(out))


if __name__ == "__main__":
    main()
