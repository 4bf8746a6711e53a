"""Dynamics terms: the manipulator equation at every node and the collocation rule.

Accelerations are decision variables and ``M(q) qdd + h(q, qd) = B tau + sum J_i^T f_i``
holds at every node (and at every midpoint under Hermite-Simpson): no mass-matrix
inversion. The state is integrated by the trapezoidal rule (the paper's; exact for the
ballistic flight of the centre-of-mass base) or by separated Hermite-Simpson. While a
gripper is pinned, each collocation step is projected onto the pin along ``J^T``
(Posa et al., 2016); the corrections are NLP variables that vanish as the grid is refined.
"""

from __future__ import annotations

from functools import cache

import casadi as ca

from clamber.jumper.formulation.terms import Constraint, Context
from clamber.jumper.model import NQ, NU, jumper_model
from clamber.jumper.morphology import N_PARAMETERS
from clamber.jumper.schedule import PHASES


def _contact_name(contacts: tuple[str, ...]) -> str:
    return "_".join(contacts) or "flight"


@cache
def manipulator_residual(contacts: tuple[str, ...]) -> ca.Function:
    """(q, qd, qdd, tau, f_c..., p) -> M qdd + h - B tau - sum J_c^T f_c [N or N m]."""
    m = jumper_model("com")
    q, qd, qdd = (ca.SX.sym(n, NQ) for n in ("q", "qd", "qdd"))
    tau = ca.SX.sym("tau", NU)
    forces = [ca.SX.sym(f"f_{c}", 2) for c in contacts]
    p = ca.SX.sym("p", N_PARAMETERS)
    rhs = m.B @ tau
    for c, f in zip(contacts, forces, strict=True):
        rhs = rhs + m.contact_jacobian(c)(q, p).T @ f
    res = m.inverse_dynamics(q, qd, qdd, p) - rhs
    return ca.Function(f"dynamics_{_contact_name(contacts)}", [q, qd, qdd, tau, *forces, p],
                       [res], {"cse": True})


@cache
def interval_defects(contacts: tuple[str, ...], hermite_simpson: bool) -> ca.Function:
    """One collocation interval: (q0, q1, qd0, qd1, qdd0, qdd1, h, [mqdd], gam_c..., nu_c...,
    p) -> the position and velocity defects (12,), corrections J_c(q1)^T gam applied."""
    m = jumper_model("com")
    q0, q1, qd0, qd1, qdd0, qdd1 = (ca.SX.sym(n, NQ) for n in
                                    ("q0", "q1", "qd0", "qd1", "qdd0", "qdd1"))
    h = ca.SX.sym("h")
    mqdd = ca.SX.sym("mqdd", NQ)
    gam = [ca.SX.sym(f"gam_{c}", 2) for c in contacts]
    nu = [ca.SX.sym(f"nu_{c}", 2) for c in contacts]
    p = ca.SX.sym("p", N_PARAMETERS)
    corr_q, corr_v = ca.SX.zeros(NQ), ca.SX.zeros(NQ)
    for c, g, n in zip(contacts, gam, nu, strict=True):
        J = m.contact_jacobian(c)(q1, p)
        corr_q += J.T @ g
        corr_v += J.T @ n
    if hermite_simpson:  # cubic state, midpoint collocation
        qdm = 0.5 * (qd0 + qd1) + h / 8 * (qdd0 - qdd1)
        dq = q1 - q0 - h / 6 * (qd0 + 4 * qdm + qd1) - corr_q
        dv = qd1 - qd0 - h / 6 * (qdd0 + 4 * mqdd + qdd1) - corr_v
        inputs = [q0, q1, qd0, qd1, qdd0, qdd1, h, mqdd, *gam, *nu, p]
    else:  # trapezoidal rule on q (velocity) and qd (acceleration)
        dq = q1 - q0 - 0.5 * h * (qd0 + qd1) - corr_q
        dv = qd1 - qd0 - 0.5 * h * (qdd0 + qdd1) - corr_v
        inputs = [q0, q1, qd0, qd1, qdd0, qdd1, h, *gam, *nu, p]
    name = f"defects_{_contact_name(contacts)}{'_hs' if hermite_simpson else ''}"
    return ca.Function(name, inputs, [ca.vertcat(dq, dv)], {"cse": True})


@cache
def at_midpoint(fn: ca.Function) -> ca.Function:
    """``fn(q, qd, ...)`` at the Hermite-Simpson midpoint of an interval, as a function of
    (q0, q1, qd0, qd1, qdd0, qdd1, h, ...): the cubic state interpolant at its centre."""
    q0, q1, qd0, qd1, qdd0, qdd1 = (ca.SX.sym(n, NQ) for n in
                                    ("q0", "q1", "qd0", "qd1", "qdd0", "qdd1"))
    h = ca.SX.sym("h")
    qm = 0.5 * (q0 + q1) + h / 8 * (qd0 - qd1)
    qdm = 0.5 * (qd0 + qd1) + h / 8 * (qdd0 - qdd1)
    rest = [ca.SX.sym(fn.name_in(i), fn.sparsity_in(i)) for i in range(2, fn.n_in())]
    return ca.Function(f"{fn.name()}_midpoint", [q0, q1, qd0, qd1, qdd0, qdd1, h, *rest],
                       [fn(qm, qdm, *rest)], {"cse": True})


def interval_ends(ctx: Context, i: int) -> list[ca.MX]:
    """(q0, q1, qd0, qd1, qdd0, qdd1, h) of every interval of phase ``i``, one column each."""
    N = ctx.intervals(i)
    q, qd, qdd = (ctx.nodes(i, t) for t in ("q", "qd", "qdd"))
    a, b = slice(0, N), slice(1, N + 1)
    return [q[:, a], q[:, b], qd[:, a], qd[:, b], qdd[:, a], qdd[:, b], ctx.steps(i)]


def dynamics(ctx: Context) -> list[Constraint]:
    """Per phase: equal time steps, the collocation defects and the manipulator equation."""
    rows = []
    mp = ctx.morphology
    for p in PHASES:
        i, N = p.index, ctx.intervals(p.index)
        q, qd, qdd, tau = (ctx.nodes(i, t) for t in ("q", "qd", "qdd", "tau"))
        f = [ctx.nodes(i, f"f_{c}") for c in p.contacts]
        h = ctx.steps(i)
        # One copy of the phase's time step per interval, chained equal: a single shared
        # variable would be a dense column coupling the whole phase, which costs the sparse
        # factorization dearly; the chain keeps the KKT system banded.
        rows.append(Constraint(f"p{i}.uniform_step", ca.vec(h[:, 1:] - h[:, :-1]), 0.0, 0.0))
        gam = [ctx.nodes(i, f"pos_correction_{c}") for c in p.contacts]
        nu = [ctx.nodes(i, f"vel_correction_{c}") for c in p.contacts]
        mid = [ctx.nodes(i, "mid.qdd")] if ctx.hermite_simpson else []
        defects = ctx.map(interval_defects(p.contacts, ctx.hermite_simpson), N,
                          *interval_ends(ctx, i), *mid, *gam, *nu, mp)
        rows.append(Constraint(f"p{i}.collocation", ca.vec(defects), 0.0, 0.0))
        res = [ca.vec(ctx.map(manipulator_residual(p.contacts), N + 1,
                              q, qd, qdd, tau, *f, mp))]
        if ctx.hermite_simpson:
            mf = [ctx.nodes(i, f"mid.f_{c}") for c in p.contacts]
            res.append(ca.vec(ctx.map(at_midpoint(manipulator_residual(p.contacts)), N,
                                      *interval_ends(ctx, i), ctx.nodes(i, "mid.qdd"),
                                      ctx.nodes(i, "mid.tau"), *mf, mp)))
        rows.append(Constraint(f"p{i}.dynamics", ca.vertcat(*res), 0.0, 0.0))
    return rows
