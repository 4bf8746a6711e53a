"""Contact terms: pinned grippers stay at their anchors, their forces in the safe region.

A gripper is a disc of radius r_foot; attached, its centre sits at x = r_foot on the wall
(x = 0). While attached its pin holds at acceleration level at every node (J qdd +
dJ/dt qd = 0, which fixes each node's contact force uniquely; a velocity-level pin under
the trapezoidal rule leaves a zigzag of forces undetermined) and at position and velocity
level at nodes 1..N (node 0 is held by continuity, an impact or periodicity). The
collocation step is projected onto the pin (see :mod:`.dynamics`). Contact forces
satisfy the gripper's linearized safe region ``A f <= b`` at every node and midpoint.
"""

from __future__ import annotations

from functools import cache

import casadi as ca
import numpy as np

from clamber.jumper.formulation.dynamics import at_midpoint, interval_ends
from clamber.jumper.formulation.terms import Constraint, Context
from clamber.jumper.model import NQ, jumper_model
from clamber.jumper.morphology import N_PARAMETERS
from clamber.jumper.schedule import PHASES

#: Column of ``JumperModel.points`` holding each gripper (p1 front, p5 rear).
CONTACT_INDEX = {"front": 0, "rear": 4}


@cache
def pin_residual(gripper: str) -> ca.Function:
    """(q, qd, anchor, p) -> (foot - anchor, foot velocity) (4,) [m, m/s]."""
    m = jumper_model("com")
    q, qd = ca.SX.sym("q", NQ), ca.SX.sym("qd", NQ)
    anchor, p = ca.SX.sym("anchor", 2), ca.SX.sym("p", N_PARAMETERS)
    foot = m.points(q, p)[:, CONTACT_INDEX[gripper]]
    vel = m.contact_jacobian(gripper)(q, p) @ qd
    return ca.Function(f"pin_{gripper}", [q, qd, anchor, p], [ca.vertcat(foot - anchor, vel)],
                       {"cse": True})


@cache
def contact_acceleration(gripper: str) -> ca.Function:
    """(q, qd, qdd, p) -> J qdd + dJ/dt qd (2,) [m/s^2]: the pinned gripper's acceleration."""
    m = jumper_model("com")
    q, qd, qdd = (ca.SX.sym(n, NQ) for n in ("q", "qd", "qdd"))
    p = ca.SX.sym("p", N_PARAMETERS)
    acc = m.contact_jacobian(gripper)(q, p) @ qdd + m.contact_jdot_qd(gripper)(q, qd, p)
    return ca.Function(f"contact_acceleration_{gripper}", [q, qd, qdd, p], [acc],
                       {"cse": True})


def anchor(ctx: Context, phase: int, gripper: str) -> ca.MX:
    """Where ``gripper`` is pinned during ``phase`` [m] (the rear catch is at y = 0)."""
    H = ctx.variable("height")
    y_front = ctx.variable("front_anchor")
    y = {("front", 1): y_front - H, ("rear", 1): -H, ("rear", 2): -H,
         ("front", 4): y_front, ("front", 5): y_front, ("rear", 5): 0.0}[(gripper, phase)]
    return ca.vertcat(ctx.parameter("foot_radius"), y)


def _safe_upper(gripper: str):
    def upper(s) -> np.ndarray:
        region = getattr(s, f"safe_region_{gripper}")
        # each row pulled in by a force margin [N], so the region holds between nodes too
        return region.b - s.force_margin * np.linalg.norm(region.A, axis=1)
    upper.__name__ = f"safe_region_{gripper}_b"
    return upper


def contacts(ctx: Context) -> list[Constraint]:
    """Per phase: pins at nodes 1..N, pinned acceleration, forces in the safe regions."""
    rows = []
    mp = ctx.morphology
    for p in PHASES:
        i, N = p.index, ctx.intervals(p.index)
        if not p.contacts:
            continue
        q, qd, qdd = (ctx.nodes(i, t) for t in ("q", "qd", "qdd"))
        pins = [ca.vec(ctx.map(pin_residual(c), N, q[:, 1:], qd[:, 1:], anchor(ctx, i, c),
                               mp)) for c in p.contacts]
        rows.append(Constraint(f"p{i}.pin", ca.vertcat(*pins), 0.0, 0.0))
        acc = [ctx.map(contact_acceleration(c), N + 1, q, qd, qdd, mp) for c in p.contacts]
        acc = [ca.vec(ca.vertcat(*acc))]  # node by node, grippers interleaved
        if ctx.hermite_simpson:
            mid = [ctx.map(at_midpoint(contact_acceleration(c)), N, *interval_ends(ctx, i),
                           ctx.nodes(i, "mid.qdd"), mp) for c in p.contacts]
            acc.append(ca.vec(ca.vertcat(*mid)))
        rows.append(Constraint(f"p{i}.contact_acceleration", ca.vertcat(*acc), 0.0, 0.0))
        for c in p.contacts:
            A = ctx.safe_region(c)
            forces = [ctx.nodes(i, f"f_{c}")]
            if ctx.hermite_simpson:
                forces.append(ctx.nodes(i, f"mid.f_{c}"))
            rows.append(Constraint(f"p{i}.safe_region_{c}", ca.vec(A @ ca.horzcat(*forces)),
                                   -np.inf, _safe_upper(c)))
    return rows
