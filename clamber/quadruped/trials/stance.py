"""Where a trial starts: the nominal footholds and the joint angles that put the soles on them."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from clamber.exceptions import InfeasibleStart
from clamber.quadruped.model.kinematics import leg_ik
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel

#: Nominal footholds relative to the body centre (u, y) [m] (mid-cycle, each leg).
NOMINAL_FEET = {"LF": np.array([0.17, 0.25]), "LR": np.array([-0.17, 0.25]),
                "RF": np.array([0.17, -0.25]), "RR": np.array([-0.17, -0.25])}


def initial_joints(rm_true: RobotModel, body: pin.SE3, tops: dict[str, np.ndarray],
                   normals: dict[str, np.ndarray], lift: float = 0.0) -> np.ndarray:
    """Joint angles [rad] putting each sole ``lift`` [m] above its hold top (true geometry),
    soles along the normal, radial axis kept from the mount yaw."""
    q = rm_true.robot.default_joint_angles()
    for i, leg in enumerate(LEG_NAMES):
        n = body.rotation.T @ normals[leg]
        x = pin.utils.rotate("z", rm_true.robot.mount_yaw[i])[:, 0]
        x = x - (x @ n) * n
        x /= np.linalg.norm(x)
        Rf = np.column_stack([x, np.cross(n, x), n])
        tgt = body.actInv(pin.SE3(np.eye(3), tops[leg] + lift * normals[leg])).translation
        # Position first (a loose rotation weight leaves the local minima), then the pose.
        res = leg_ik(rm_true, leg, pin.SE3(Rf, tgt), q, rotation_weight=0.05, max_iter=200)
        res = leg_ik(rm_true, leg, pin.SE3(Rf, tgt), res.q, max_iter=200)
        if res.position_error > 3e-3:
            raise InfeasibleStart(f"start stance out of reach for {leg} "
                              f"({res.position_error * 1000:.1f} mm)")
        q = res.q
    return q
