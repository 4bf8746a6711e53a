"""Objective: maximize the climbing speed H / T, with a small penalty on torque changes."""

from __future__ import annotations

import casadi as ca

from clamber.jumper.formulation.terms import Context, Cost


def objective(ctx: Context) -> list[Cost]:
    """-H / T [m/s] plus ``w sum(dtau / tau_max)^2 / n`` over consecutive nodes.

    The penalty makes the reference trackable and the optimum smooth enough to
    interpolate onto a finer grid; its weight is ``torque_rate_weight``.
    """
    H = ctx.variable("height")
    period = sum(ctx.intervals(i) * ctx.steps(i)[0] for i in ctx.phases)
    tau = ca.horzcat(*(ctx.nodes(i, "tau") for i in ctx.phases))
    n = tau.size2()
    rate = ca.sumsqr(tau[:, 1:] - tau[:, :-1])
    weight, limit = ctx.parameter("torque_rate_weight"), ctx.parameter("torque_limit")
    return [Cost("speed", -H / period), Cost("torque_rate", weight * rate / (limit**2 * n))]
