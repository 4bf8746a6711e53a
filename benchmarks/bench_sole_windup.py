"""Where the sole hinges' moment comes from: the geometry's wind-up and the climbs' own.

Two measurements (medians; the last line is one JSON object):

* model: the largest turn about a gripper's blind axis
  (:mod:`clamber.quadruped.model.windup`) while the body slides one stride along a vertical
  wall, for soles fitted to hold tops tilted by a given angle in random directions;
* climbs: five-cycle Q-WBC climbs on the vertical wall, with the true hinge angles read from
  the simulator every 10 control cycles: the share of the deflection along each leg's blind
  axis, its peak, and the net growth of its size over each kind of gait phase (body moves,
  other legs' descents, grasps and reloads, the rest). The climbs are repeated with the
  controller on the true state and with no model mismatch, to show which of the two the
  failures depend on.

    python benchmarks/bench_sole_windup.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np
import pinocchio as pin

from clamber.experiments.quadruped_scenarios import scenario_settings
from clamber.quadruped.gaits import ClimbGaitSettings
from clamber.quadruped.model.kinematics import Clik
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.windup import blind_axis, windup
from clamber.quadruped.sim.world import ModelMismatch, wall_rotation
from clamber.quadruped.trials.climb import ClimbTrial
from clamber.quadruped.trials.stance import NOMINAL_FEET, initial_joints

STRIDE = 0.22
#: Gait phases whose hinge changes are told apart.
GROUPS = {"body": ("body",), "touchdown": ("descend", "grasp", "reload")}


def model_windup(tilt: float, draws: int) -> float:
    """Median over ``draws`` random tilt directions of the largest blind-axis turn [rad] of
    any gripper at either end of a stride."""
    rm = RobotModel(Marcbot())
    clik = Clik(rm)
    R = wall_rotation(90.0)
    body = pin.SE3(R, 0.16 * R[:, 2])
    tops = {leg: R @ np.array([*NOMINAL_FEET[leg], 0.0]) for leg in LEG_NAMES}
    rng = np.random.default_rng(1)
    worst = []
    for _ in range(draws):
        angles = rng.uniform(0, 2 * np.pi, len(LEG_NAMES))
        normals = {leg: R @ pin.exp3(tilt * np.array([np.cos(a), np.sin(a), 0.0]))[:, 2]
                   for leg, a in zip(LEG_NAMES, angles, strict=True)}
        q = initial_joints(rm, body, tops, normals)
        feet = [body * f for f in clik.kinematics(q)[0]]
        ends = [windup(clik, q, pin.SE3(R, body.translation + s * R[:, 0]), feet)
                for s in (-STRIDE / 2, STRIDE / 2)]
        worst.append(float(np.abs(ends).max()))
    return float(np.median(worst))


def climb(settings, seed: int) -> dict:
    """One climb with its hinges read every 10 control cycles."""
    tr = ClimbTrial(settings, seed)
    m = tr.sim.model
    adr = {leg: [m.jnt_qposadr[m.joint(f"{leg}_sole_{a}").id] for a in "xy"]
           for leg in LEG_NAMES}
    last: dict[str, float] = {}
    added = dict.fromkeys((*GROUPS, "other"), 0.0)
    blind, total, peak = [], [], 0.0
    while tr.step():
        if tr.k % 10:
            continue
        _, J = tr.ctrl.clik.kinematics(tr.sim.joints()[0])
        phase = tr.gait.phase.value
        group = next((g for g, names in GROUPS.items() if phase in names), "other")
        for i, leg in enumerate(LEG_NAMES):
            if leg not in tr.sim.grippers.attached:
                last.pop(leg, None)
                continue
            th = np.array([*tr.sim.data.qpos[adr[leg]], 0.0])
            u = float(th @ blind_axis(J[i]))
            blind.append(u)
            total.append(float(np.linalg.norm(th)))
            peak = max(peak, abs(u))
            if leg in last and (group != "touchdown" or leg != tr.gait.swing_leg):
                added[group] += abs(u) - abs(last[leg])
            last[leg] = u
    r = tr.result()
    blind_rms = float(np.sqrt(np.mean(np.square(blind))))
    total_rms = float(np.sqrt(np.mean(np.square(total))))
    return {"seed": seed, "success": r.failure is None, "distance_m": r.distance_m,
            "peak_gauge": r.peak_gripper_load, "blind_share": blind_rms / total_rms,
            "peak_blind_mrad": 1e3 * peak,
            "added_mrad": {k: 1e3 * v for k, v in added.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="two seeds, two cycles, few tilts")
    ap.add_argument("--seeds", type=int, default=10, help="climbs per condition (seeds 0..)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    draws, seeds, cycles = (3, 2, 2) if args.quick else (12, args.seeds, 5)
    tilts = {f"{t:.2f}": model_windup(t, draws) * 1e3 for t in (0.0, 0.02, 0.04, 0.06)}
    print("model: largest blind-axis turn over a stride [mrad] by sole tilt [rad]:", tilts,
          flush=True)
    base = scenario_settings("wall90", controller="qwbc", verdict_rerun=False,
                             gait=ClimbGaitSettings(cycles=cycles))
    conditions = {"default": base, "true_state": replace(base, state="true"),
                  "no_mismatch": replace(base, mismatch=ModelMismatch(0.0, 0.0, 0.0))}
    out = {}
    for name, settings in conditions.items():
        rows = [climb(settings, s) for s in range(seeds)]
        for r in rows:
            print(name, json.dumps(r), flush=True)
        out[name] = {
            "successes": sum(r["success"] for r in rows), "trials": len(rows),
            "blind_share_median": float(np.median([r["blind_share"] for r in rows])),
            "peak_blind_mrad_median": float(np.median([r["peak_blind_mrad"] for r in rows])),
            "added_mrad_median": {k: float(np.median([r["added_mrad"][k] for r in rows]))
                                  for k in rows[0]["added_mrad"]}}
    print(json.dumps({"benchmark": "sole_windup", "quick": args.quick, "cycles": cycles,
                      "model_windup_mrad_by_tilt_rad": tilts, "climbs": out,
                      "wall_s": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
