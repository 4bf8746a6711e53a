"""What the simulator knows and the robot does not: the true foot contacts."""

from __future__ import annotations

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim.simulator import QuadrupedSim


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
