"""Multi-scenario wall clearance: the free front foot clears the wall on perturbed robots too.

The robust optimum swings the released front foot back to the wall about 10 ms after
take-off, with its clearance exactly the foot radius at one node; on a robot whose masses
differ from the design the graze becomes an impact that pushes the flight off the wall
(docs/results/jumper_landing.md). The shoulder motor mass ``m2`` moves that clearance most: in the
calibrated simulator 7.5 % less ``m2`` brings the foot 1.9 mm closer to the wall, a
hip-motor resistance or shoulder-gain change of twice the tolerance under 0.5 mm.

This term plays the optimized jump on a few robots with scaled point masses
(:class:`MassScenarios`) from the front gripper's release through the first flight nodes
and asks each of them to keep the front foot off the wall:
``x_plan + (x_scenario - x_nominal) >= foot_radius`` at the constrained flight nodes.

The model of a perturbed robot: its joints follow the planned joint trajectory exactly
(the push-off's stiff ESC gains track it to milliradians), so only its unactuated
coordinates differ. With the rear gripper pinned (phase 2) that is the rear link's angle
``phi5``, with the unactuated row of the equations of motion in the rear-foot base (the
pin force has no component on it); in flight the centre of mass is ballistic and ``phi5``
follows the unactuated row of the centre-of-mass base. Both robots start phase 2 in the
planned state (phase 1 is a closed chain: the joint angles fix the configuration). The
joint trajectory between nodes is the cubic whose acceleration is linear between the
node accelerations, and each interval is one classic Runge-Kutta step. The nominal robot
is played by the same integrator, and only the difference enters the constraint, so the
integration error of the shooting (and of the plan's own trapezoidal rule) cancels to
first order.

The term adds rows, no variables (:mod:`.terms`): solutions with and without it share
the variable layout and warm-start each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import casadi as ca
import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.jumper.formulation.terms import Constraint, Context
from clamber.jumper.model import GRAVITY, NQ, jumper_model
from clamber.jumper.morphology import N_PARAMETERS
from clamber.jumper.settings import OptimizationSettings

#: First index of the point masses m1..m5 in the morphology vector.
_MASS_START = 4


def _foot_radius(s: OptimizationSettings) -> float:
    return s.foot_radius


def joint_motion(a: ca.SX, b: ca.SX, h: ca.SX, s: ca.SX) -> tuple[ca.SX, ca.SX, ca.SX]:
    """Joint angle, speed and acceleration ``s`` [s] into an interval of length ``h``.

    ``a`` and ``b`` stack (angle, speed, acceleration) of the three joints at the
    interval's nodes (9,); the acceleration is linear between them.
    """
    th0, w0, acc0 = a[0:3], a[3:6], a[6:9]
    acc1 = b[6:9]
    slope = (acc1 - acc0) / h
    acc = acc0 + slope * s
    w = w0 + acc0 * s + slope * s**2 / 2
    th = th0 + w0 * s + acc0 * s**2 / 2 + slope * s**3 / 6
    return th, w, acc


@cache
def base_acceleration(base: str) -> ca.Function:
    """(phi5, phi5_rate, joints (9,), p) -> phi5's acceleration [rad/s^2] with the joints'
    motion prescribed, from the unactuated row of ``base`` (pin forces and the centre of
    mass drop out of it in the rear-foot base with a pinned rear foot and in the
    centre-of-mass base respectively)."""
    m = jumper_model(base)
    phi, rate = ca.SX.sym("phi"), ca.SX.sym("rate")
    j = ca.SX.sym("joints", 9)
    p = ca.SX.sym("p", N_PARAMETERS)
    q = ca.vertcat(0, 0, phi, j[0:3])
    qd = ca.vertcat(0, 0, rate, j[3:6])
    qdd = ca.vertcat(0, 0, 0, j[6:9])
    rest = m.inverse_dynamics(q, qd, qdd, p)[2]
    inertia = m.mass_matrix(q, p)[2, 2]
    return ca.Function(f"phi_acceleration_{base}", [phi, rate, j, p], [-rest / inertia],
                       {"cse": True})


@cache
def rk4_step(base: str) -> ca.Function:
    """(phi5, phi5_rate, node a (9,), node b (9,), h, p) -> (phi5, phi5_rate) one interval
    later: a classic Runge-Kutta step with the joints' motion prescribed."""
    f = base_acceleration(base)
    y = ca.SX.sym("y", 2)
    a, b = ca.SX.sym("a", 9), ca.SX.sym("b", 9)
    h = ca.SX.sym("h")
    p = ca.SX.sym("p", N_PARAMETERS)

    def rhs(s, yy):
        th, w, acc = joint_motion(a, b, h, s)
        return ca.vertcat(yy[1], f(yy[0], yy[1], ca.vertcat(th, w, acc), p))

    k1 = rhs(0, y)
    k2 = rhs(h / 2, y + h / 2 * k1)
    k3 = rhs(h / 2, y + h / 2 * k2)
    k4 = rhs(h, y + h * k3)
    out = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return ca.Function(f"rk4_{base}", [y, a, b, h, p], [out], {"cse": True})


@cache
def take_off() -> ca.Function:
    """(phi5, phi5_rate, joints (6,: angles, speeds), rear foot (2,), p) -> centre of mass
    position and velocity (4,) of a robot leaving the wall from its pinned rear foot."""
    m = jumper_model("com")
    phi, rate = ca.SX.sym("phi"), ca.SX.sym("rate")
    j = ca.SX.sym("joints", 6)
    rear = ca.SX.sym("rear", 2)
    p = ca.SX.sym("p", N_PARAMETERS)
    q_r = ca.vertcat(rear, phi, j[0:3])
    qd_r = ca.vertcat(0, 0, rate, j[3:6])
    q_c, qd_c = m.from_rear_foot(q_r, qd_r, p)
    return ca.Function("take_off", [phi, rate, j, rear, p],
                       [ca.vertcat(q_c[0:2], qd_c[0:2])], {"cse": True})


@cache
def front_x() -> ca.Function:
    """(q in the centre-of-mass base, p) -> the front gripper's distance from the wall [m]."""
    m = jumper_model("com")
    q, p = ca.SX.sym("q", NQ), ca.SX.sym("p", N_PARAMETERS)
    return ca.Function("front_x", [q, p], [m.points(q, p)[0, 0]], {"cse": True})


@cache
def rear_foot() -> ca.Function:
    """(q, qd in the centre-of-mass base, p) -> the rear gripper's position (2,) [m]."""
    m = jumper_model("com")
    q, qd = ca.SX.sym("q", NQ), ca.SX.sym("qd", NQ)
    p = ca.SX.sym("p", N_PARAMETERS)
    return ca.Function("rear_foot", [q, qd, p], [m.to_rear_foot(q, qd, p)[0][0:2]],
                       {"cse": True})


def shoot_front_x(ctx: Context, params: ca.MX, flight_nodes: int) -> ca.MX:
    """Front gripper x [m] at flight nodes 1..``flight_nodes`` of a robot with morphology
    vector ``params`` that follows the plan's joint motion from the front release on."""
    def joints(i: int) -> ca.MX:
        return ca.vertcat(*(ctx.nodes(i, t)[3:6, :] for t in ("q", "qd", "qdd")))

    q2, qd2 = ctx.nodes(2, "q"), ctx.nodes(2, "qd")
    j2, h2 = joints(2), ctx.steps(2)
    y = ca.vertcat(q2[2, 0], qd2[2, 0])
    step2 = rk4_step("rear_foot")
    for k in range(ctx.intervals(2)):
        y = step2(y, j2[:, k], j2[:, k + 1], h2[0, k], params)
    n2 = ctx.intervals(2)
    rear = rear_foot()(q2[:, n2], qd2[:, n2], ctx.morphology)
    com = take_off()(y[0], y[1], ca.vertcat(q2[3:6, n2], qd2[3:6, n2]), rear, params)
    q3, j3, h3 = ctx.nodes(3, "q"), joints(3), ctx.steps(3)
    step3 = rk4_step("com")
    out, elapsed = [], 0
    for k in range(flight_nodes):
        y = step3(y, j3[:, k], j3[:, k + 1], h3[0, k], params)
        elapsed = elapsed + h3[0, k]
        xc = com[0] + com[2] * elapsed
        yc = com[1] + com[3] * elapsed - GRAVITY * elapsed**2 / 2
        out.append(front_x()(ca.vertcat(xc, yc, y[0], q3[3:6, k + 1]), params))
    return ca.vertcat(*out)


@dataclass(frozen=True)
class MassScenarios:
    """Term group: the front foot clears the wall on robots with scaled point masses.

    ``scales`` holds one tuple of five factors on the point masses m1..m5 per scenario
    [-]; ``flight_share`` is the share of the flight's nodes after take-off that are
    constrained [-] (the catch at the flight's end is left to the catch terms; 0.35 is
    about the first 40 ms of the robust jump's flight). A frozen dataclass, so it can key
    the problem cache (:class:`~clamber.jumper.formulation.problem.ProblemKey`).
    """

    scales: tuple[tuple[float, ...], ...] = ((1.0, 0.925, 1.0, 1.0, 1.0),)
    flight_share: float = 0.35

    def __post_init__(self) -> None:
        check.number("scenarios", "flight_share", self.flight_share, low=0.0, high=1.0,
                     low_open=True)
        if not self.scales:
            raise ConfigError("scenarios.scales: give at least one scenario")
        for s in self.scales:
            if len(s) != 5 or any(not np.isfinite(v) or v <= 0 for v in s):
                raise ConfigError(f"scenarios.scales entry {s!r}: five factors > 0 on m1..m5")

    def __call__(self, ctx: Context) -> list[Constraint]:
        n = min(max(1, round(self.flight_share * ctx.intervals(3))), ctx.intervals(3) - 1)
        mp = ctx.morphology
        nominal = shoot_front_x(ctx, mp, n)
        q3 = ctx.nodes(3, "q")
        plan = ca.vertcat(*(front_x()(q3[:, k], mp) for k in range(1, n + 1)))
        rows = []
        for i, scale in enumerate(self.scales):
            factor = np.ones(N_PARAMETERS)
            factor[_MASS_START:_MASS_START + 5] = scale
            perturbed = shoot_front_x(ctx, mp * ca.DM(factor), n)
            rows.append(Constraint(f"scenario{i}.front_clearance",
                                   plan + perturbed - nominal, _foot_radius, np.inf))
        return rows
