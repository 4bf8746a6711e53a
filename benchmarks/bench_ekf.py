"""State estimation speed: one control cycle of the climb's leg-odometry EKF and of the anchor EKF.

Usage: ``python benchmarks/bench_ekf.py [--quick] [--baseline DIR]``. A cycle of the leg
odometry is what a climb runs every 20 ms: an IMU sample, the prediction, the update with
three anchored feet (velocity rows on) and the state read out for the controller; the
anchor EKF's cycle is a prediction and an update with two feet (a trot's). Times are CPU
microseconds per cycle, medians over repeats. ``--baseline DIR`` times both also with the
clamber of another checkout (its layout of commit 7d1957b or this one), alternating with
this checkout's, each in a fresh process. The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

_ONE_CHECKOUT = r'''
import json, sys, time
import numpy as np
try:
    from clamber.quadruped.estimation.contact_ekf import AnchorEkf
    from clamber.quadruped.estimation.estimator import LegOdometryEkf, SimulatedImu
    from clamber.quadruped.model.robot import LEG_NAMES
    from clamber.quadruped.model.robot_model import RobotModel
except ImportError:  # the flat layout of older checkouts
    from clamber.quadruped.contact_ekf import AnchorEkf
    from clamber.quadruped.estimator import LegOdometryEkf, SimulatedImu
    from clamber.quadruped.robot import LEG_NAMES
    from clamber.quadruped.model import RobotModel
cycles, repeats = int(sys.argv[1]), int(sys.argv[2])
rm = RobotModel()
q0 = rm.robot.default_joint_angles()
ekf, imu = LegOdometryEkf(rm, np.zeros(3), np.eye(3)), SimulatedImu(seed=1)
anchor = AnchorEkf(rm, np.zeros(3), np.eye(3))
f, w, contacts = np.array([0.0, 0.0, 9.81]), np.array([0.01, 0.0, 0.0]), LEG_NAMES[1:]
fused = "specific_force" in LegOdometryEkf.step.__code__.co_varnames
def leg_odometry(k):
    q = q0 + 1e-3 * np.sin(0.1 * k)
    if fused:
        ekf.step(imu, f, w, 0.02, q, contacts)
    else:
        ekf.step(imu.measure(f, w, 0.02), 0.02, q, contacts)
    ekf.state(q, q)
def anchor_ekf(k):
    anchor.predict(f, w, 0.02)
    anchor.update(q0 + 1e-3 * np.sin(0.1 * k), ("LF", "RR"))
out = {}
for name, cycle in (("leg_odometry", leg_odometry), ("anchor_ekf", anchor_ekf)):
    times = []
    for r in range(repeats + 1):
        t = time.process_time()
        for k in range(cycles):
            cycle(k)
        if r:  # the first repeat compiles and warms up
            times.append((time.process_time() - t) / cycles * 1e6)
    out[name] = float(np.median(times))
print(json.dumps(out))
'''


def cycle_us(cycles: int, repeats: int, path: str | None = None) -> dict[str, float]:
    """CPU microseconds per cycle of each filter, in a fresh process (``path``: the checkout
    whose clamber it imports; None: this one)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = path
    out = subprocess.run([sys.executable, "-c", _ONE_CHECKOUT, str(cycles), str(repeats)],
                         env=env, capture_output=True, text=True, check=True,
                         cwd=path or os.getcwd())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cycles and repeats")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout to time alongside")
    args = parser.parse_args()
    cycles, repeats = (500, 3) if args.quick else (3000, 7)
    ours, theirs = [], []
    for _ in range(1 if args.quick else 3):
        ours.append(cycle_us(cycles, repeats))
        if args.baseline:
            theirs.append(cycle_us(cycles, repeats, args.baseline))
    out: dict[str, float] = {}
    for name in ("leg_odometry", "anchor_ekf"):
        out[f"{name}_cycle_us"] = statistics.median(o[name] for o in ours)
        if theirs:
            base = statistics.median(o[name] for o in theirs)
            out[f"baseline_{name}_cycle_us"] = base
            out[f"{name}_speed_ratio"] = base / out[f"{name}_cycle_us"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
