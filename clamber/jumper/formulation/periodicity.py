"""Periodicity: the jump ends where it began, raised by the height gain H."""

from __future__ import annotations

import casadi as ca

from clamber.jumper.formulation.terms import Constraint, Context


def periodicity(ctx: Context) -> list[Constraint]:
    """Last state equals first state raised by H (and the same torque)."""
    H = ctx.variable("height")
    last = ctx.intervals(5)
    first_q, last_q = ctx.nodes(1, "q")[:, 0], ctx.nodes(5, "q")[:, last]
    shift = ca.vertcat(0, H, 0, 0, 0, 0)
    return [
        Constraint("periodic.q", last_q - first_q - shift, 0.0, 0.0),
        Constraint("periodic.qd", ctx.nodes(5, "qd")[:, last] - ctx.nodes(1, "qd")[:, 0],
                   0.0, 0.0),
        Constraint("periodic.tau", ctx.nodes(5, "tau")[:, last] - ctx.nodes(1, "tau")[:, 0],
                   0.0, 0.0),
    ]
