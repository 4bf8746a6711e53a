"""What the simulated joint power of a climb consists of, per controller, beside the paper.

Usage: ``python benchmarks/bench_quadruped_power.py [--quick]``. One gait cycle up the
70-degree wall (the paper's comparison climb) per controller on held-out seeds 5011-5020
(``--quick``: 5011-5012), the grippers unbreakable so every climb is measured whole. Every
fifth control cycle after the placement, as the robot senses it (nominal model, its state
estimate, servo torques): the servos' bus power ``V sum(k |tau| + I_idle)`` split into

* ``idle_w``: the servos' standby current;
* ``net_w``: the torques that carry the body with the grippers' wrenches stripped of their
  internal part (:mod:`clamber.quadruped.estimation.wrenches`): the weight, the motion and
  the net wrench the controller asks for;
* ``internal_w``: the rest, what squeezing the closed chain costs;

and the internal wrench's size in capacity units. Medians over seeds of each climb's mean.
The paper measured 64.65, 80.84 and 69.71 W mean power for Q-WBC, CLIK and VMC on hardware.
The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from clamber.experiments.quadruped_scenarios import scenario_settings
from clamber.quadruped.estimation.wrenches import GripperWrenchEstimator
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.trials.climb import PLACEMENT_TIME, ClimbTrial

#: The paper's mean power on the 70-degree wall [W].
PAPER_MEAN_POWER_W = {"qwbc": 64.65, "clik": 80.84, "vmc": 69.71}


def power_parts(controller: str, seed: int) -> dict:
    """One climb's mean power parts [W] and mean internal wrench (capacity units)."""
    trial = ClimbTrial(replace(scenario_settings("wall70", controller=controller),
                               breakable=False), seed)
    servos = trial.sim.servos
    volts, idle, k = servos.params.voltage, servos.params.idle_current, servos.current_per_torque
    estimator = GripperWrenchEstimator(RobotModel(trial.robot), servos.kv)
    rows = []
    while trial.step():
        if trial.k % 5 or trial.k * trial.dt < PLACEMENT_TIME or not trial.held:
            continue
        tau = trial.sim.joint_torques()
        g = estimator.estimate(trial.ekf.state(*trial.sim.joints()), tau, trial.held)
        untensed = tau.copy()
        for n, leg in enumerate(g.legs):
            i = LEG_NAMES.index(leg)
            cols = slice(JOINTS_PER_LEG * i, JOINTS_PER_LEG * (i + 1))
            untensed[cols] += g.jacobians[n].T @ g.internal[n]
        total = volts * float(np.sum(k * np.abs(tau) + idle))
        net = volts * float(np.sum(k * np.abs(untensed)))
        rows.append((total, volts * idle * len(tau), net, g.internal_norm()))
    total, idle_w, net, internal = np.mean(rows, axis=0)
    r = trial.result()
    return {"controller": controller, "seed": seed, "mean_power_w": r.mean_power_w,
            "sampled_power_w": total, "idle_w": idle_w, "net_w": net,
            "internal_w": total - idle_w - net, "internal_wrench": internal,
            "max_tracking_error_mm": r.max_tracking_error_mm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two seeds instead of ten")
    args = parser.parse_args()
    seeds = range(5011, 5013) if args.quick else range(5011, 5021)
    t0 = time.perf_counter()
    out: dict = {"seeds": [seeds.start, seeds.stop - 1], "scenario": "wall70", "cycles": 1}
    for controller in ("qwbc", "clik", "vmc"):
        rows = [power_parts(controller, s) for s in seeds]
        for row in rows:
            print(json.dumps(row))
        for key in ("mean_power_w", "idle_w", "net_w", "internal_w", "internal_wrench",
                    "max_tracking_error_mm"):
            out[f"{controller}_{key}_median"] = float(np.median([r[key] for r in rows]))
        out[f"{controller}_paper_mean_power_w"] = PAPER_MEAN_POWER_W[controller]
    out["wall_time_s"] = time.perf_counter() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
