"""What the simulator knows and the robot does not: true foot contacts; and the servos' motor
torques, which the robot sees only through its current readings
(:class:`clamber.quadruped.estimation.contact.ServoCurrentSensor`)."""

from __future__ import annotations

import numpy as np

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim.simulator import QuadrupedSim


def motor_torques(sim: QuadrupedSim) -> np.ndarray:
    """Torque [N m] each servo's motor applies now (its position loop's output, before the
    back-EMF damping), signed along the joint axes; a current reading measures it."""
    return sim.data.actuator_force.copy()


def true_contacts(sim: QuadrupedSim) -> tuple[str, ...]:
    """Legs whose foot geom touches the ground now (MuJoCo's active contacts)."""
    m, d = sim.model, sim.data
    ground = m.geom("ground").id
    feet = {m.geom(f"{leg}_gripper_geom").id: leg for leg in LEG_NAMES}
    n = d.ncon
    g1, g2, dist = d.contact.geom1[:n], d.contact.geom2[:n], d.contact.dist[:n]
    touching = set()
    for a, b, gap in zip(g1, g2, dist, strict=True):
        if gap <= 0.0 and ground in (a, b):
            other = int(b if a == ground else a)
            if other in feet:
                touching.add(feet[other])
    return tuple(leg for leg in LEG_NAMES if leg in touching)
