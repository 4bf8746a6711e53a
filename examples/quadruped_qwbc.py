"""Q-WBC on a vertical wall: unload the LF gripper ahead of its swing and print the wrenches.

Usage: ``python examples/quadruped_qwbc.py [--quick]``. The robot hangs on a vertical rock
face in its default stance; the LF gripper's load factor ramps from 1 to 0 (the pre-swing
unloading of the paper's Discussion) while the body holds still. Each printed row shows the
wrench status, the LF normal force and the largest feed-forward joint torque.
"""

from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin

from clamber.quadruped.control.controllers import MotionReference, QWBCController
from clamber.quadruped.model.robot_model import RobotModel, RobotState


def smoothstep(x: float) -> float:
    """Cubic ramp from 0 to 1 on [0, 1] with zero end slopes."""
    x = min(max(x, 0.0), 1.0)
    return x * x * (3 - 2 * x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    args = parser.parse_args()
    rm = RobotModel()
    s0 = rm.default_state()
    state = RobotState(s0.body_position, pin.utils.rotate("y", -np.pi / 2), s0.joint_positions)
    ctrl = QWBCController(rm)
    steps = 5 if args.quick else 11
    print("load_LF  status    LF_fz[N]  max|tau|[N m]")
    for k in range(steps):
        lam = 1.0 - smoothstep(k / (steps - 1))
        ref = MotionReference(state.body_pose, load={"LF": lam, "LR": 1.0, "RF": 1.0, "RR": 1.0})
        cmd = ctrl.step(state, ref)
        print(f"{lam:7.2f}  {cmd.status.value:8s}  {cmd.wrenches[2]:8.2f}  "
              f"{np.abs(cmd.torque).max():8.2f}")


if __name__ == "__main__":
    main()
