"""Phase transitions: continuity, the two catches (impacts) and where the grippers land.

Positions and torques are continuous across every transition; velocities across the
two take-off transitions (1->2, 2->3). At the 3->4 catch the front gripper hits the wall
inelastically: ``M (qd+ - qd-) = J1^T Lambda_1`` with ``J1 qd+ = 0``; at the 4->5 catch the
rear gripper hits while the front is pinned, and both stop. Impulses lie in the
grippers' safe-region cones (``A Lambda <= 0`` where the region's ``b`` is 0).
"""

from __future__ import annotations

from functools import cache

import casadi as ca
import numpy as np

from clamber.jumper.formulation.contacts import CONTACT_INDEX
from clamber.jumper.formulation.terms import Constraint, Context
from clamber.jumper.model import NQ, jumper_model
from clamber.jumper.morphology import N_PARAMETERS


@cache
def impact_residual(grippers: tuple[str, ...]) -> ca.Function:
    """(q, qd-, qd+, Lambda_c..., p) -> [M (qd+ - qd-) - sum J_c^T Lambda_c; J_c qd+ ...]."""
    m = jumper_model("com")
    q, vm, vp = (ca.SX.sym(n, NQ) for n in ("q", "qd_minus", "qd_plus"))
    impulses = [ca.SX.sym(f"impulse_{c}", 2) for c in grippers]
    p = ca.SX.sym("p", N_PARAMETERS)
    momentum = m.mass_matrix(q, p) @ (vp - vm)
    stops = []
    for c, L in zip(grippers, impulses, strict=True):
        J = m.contact_jacobian(c)(q, p)
        momentum -= J.T @ L
        stops.append(J @ vp)
    return ca.Function(f"impact_{'_'.join(grippers)}", [q, vm, vp, *impulses, p],
                       [ca.vertcat(momentum, *stops)], {"cse": True})


@cache
def foot_state(gripper: str) -> ca.Function:
    """(q, qd, p) -> [gripper position; gripper velocity] (4,) [m, m/s]."""
    m = jumper_model("com")
    q, qd, p = ca.SX.sym("q", NQ), ca.SX.sym("qd", NQ), ca.SX.sym("p", N_PARAMETERS)
    return ca.Function(f"foot_{gripper}", [q, qd, p],
                       [ca.vertcat(m.points(q, p)[:, CONTACT_INDEX[gripper]],
                                   m.contact_jacobian(gripper)(q, p) @ qd)], {"cse": True})


def _cone_upper(gripper: str):
    def upper(s) -> np.ndarray:  # a cone where the region's b is 0, else unbounded
        return np.where(getattr(s, f"safe_region_{gripper}").b == 0, 0.0, np.inf)
    upper.__name__ = f"cone_{gripper}"
    return upper


def _foot_radius(s) -> float:
    return s.foot_radius


def _minus_approach_speed(s) -> float:
    return -s.catch_approach_speed


def catches(ctx: Context) -> list[Constraint]:
    """Catching grippers land on the wall (a disc of radius r_foot) at their anchors.

    The rear catch is the vertical gauge (y = 0). A catch also stops the gripper
    (:func:`transitions`); from then on the pin is held at acceleration level, so later
    positions and velocities follow without constraining anything twice.
    """
    rows = []
    y_front = ctx.variable("front_anchor")
    for name, i, c, y in (("front_catch", 4, "front", y_front), ("rear_catch", 5, "rear", 0.0)):
        pos = ctx.map(foot_state(c), 1, ctx.nodes(i, "q")[:, 0], ctx.nodes(i, "qd")[:, 0],
                      ctx.morphology)[:2]
        rows.append(Constraint(f"pin.{name}.x", pos[0], _foot_radius, _foot_radius))
        rows.append(Constraint(f"pin.{name}.y", pos[1] - y, 0.0, 0.0))
    return rows


def transitions(ctx: Context) -> list[Constraint]:
    """Continuity across phases; impacts at the two catches."""
    rows = []
    mp = ctx.morphology
    for i in range(1, 5):
        last = ctx.intervals(i)
        qa, qb = ctx.nodes(i, "q")[:, last], ctx.nodes(i + 1, "q")[:, 0]
        ta, tb = ctx.nodes(i, "tau")[:, last], ctx.nodes(i + 1, "tau")[:, 0]
        vm, vp = ctx.nodes(i, "qd")[:, last], ctx.nodes(i + 1, "qd")[:, 0]
        rows.append(Constraint(f"continuity.q{i}{i + 1}", qb - qa, 0.0, 0.0))
        rows.append(Constraint(f"continuity.tau{i}{i + 1}", tb - ta, 0.0, 0.0))
        if i in (1, 2):
            rows.append(Constraint(f"continuity.qd{i}{i + 1}", vp - vm, 0.0, 0.0))
            continue
        # The catching gripper must be moving into the wall, not grazing it, so that a
        # perturbed jump still makes contact (a margin for the real robot).
        catcher = "front" if i == 3 else "rear"
        event = "catch_front" if i == 3 else "catch_rear"
        v_foot = ctx.map(foot_state(catcher), 1, qb, vm, mp)[2:]
        rows.append(Constraint(f"impact.{event}.approach", v_foot[0], -np.inf,
                               _minus_approach_speed))
        if i == 3:  # front gripper catches: M (qd+ - qd-) = J1^T Lambda_1, J1 qd+ = 0
            L1 = ctx.variable("impulse_catch_front")
            res = ctx.map(impact_residual(("front",)), 1, qb, vm, vp, L1, mp)
            momentum, stop = res[:NQ], res[NQ:]
            rows += [Constraint(f"impact.{event}.momentum", momentum, 0.0, 0.0),
                     Constraint(f"impact.{event}.stop", stop, 0.0, 0.0),
                     Constraint(f"impact.{event}.cone", ctx.safe_region("front") @ L1,
                                -np.inf, _cone_upper("front"))]
        else:  # rear catches while the front is pinned: both stop
            L5 = ctx.variable("impulse_settle_rear")
            L1b = ctx.variable("impulse_settle_front")
            res = ctx.map(impact_residual(("rear", "front")), 1, qb, vm, vp, L5, L1b, mp)
            momentum, stop = res[:NQ], res[NQ:]
            rows += [Constraint(f"impact.{event}.momentum", momentum, 0.0, 0.0),
                     Constraint(f"impact.{event}.stop", stop, 0.0, 0.0),
                     Constraint(f"impact.{event}.cone", ctx.safe_region("rear") @ L5,
                                -np.inf, _cone_upper("rear")),
                     Constraint(f"impact.{event}.cone_front", ctx.safe_region("front") @ L1b,
                                -np.inf, _cone_upper("front"))]
    return rows
