"""Symbolic Lagrangian dynamics of the planar jump-climber, built once in CasADi.

Two coordinate choices share one derivation:

* ``"rear_foot"`` (the paper's): ``q = [x5, y5, phi5, th4, th3, th2]``, the rear gripper as
  floating base. Used for cross-checks and reporting.
* ``"com"``: ``q = [xc, yc, phi5, th4, th3, th2]``, the centre of mass as base. Flight is
  then exactly ballistic in ``(xc, yc)``, so trapezoidal collocation integrates it without
  error and the optimizer cannot "swim" through the air.

Angles: ``phi5`` is the absolute angle of link 4 (rear gripper -> hip) from +x; each
``th_i`` is the relative angle at joint ``i``. Gravity is ``-g`` along y; the wall is x = 0.
The morphology enters as the parameter vector ``p`` (see ``morphology.PARAMETER_NAMES``),
so one build serves every morphology.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import casadi as ca
import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.morphology import N_PARAMETERS

GRAVITY = 9.81
NQ = 6
NU = 3
BASES = ("com", "rear_foot")
#: Names of the generalized coordinates in each base.
COORDINATE_NAMES = {
    "com": ("xc", "yc", "phi5", "th4", "th3", "th2"),
    "rear_foot": ("x5", "y5", "phi5", "th4", "th3", "th2"),
}
JOINT_NAMES = ("hip", "spine", "shoulder")  # th4, th3, th2


def _split_parameters(p: ca.SX) -> dict[str, ca.SX]:
    return {
        "L": [p[i] for i in range(4)],  # L1..L4
        "m": [p[4 + i] for i in range(5)],  # m1..m5
        "lm": [p[9 + i] for i in range(4)],
        "lc": [p[13 + i] for i in range(4)],
        "lI": [p[17 + i] for i in range(4)],
    }


def _unit(a: ca.SX) -> ca.SX:
    return ca.vertcat(ca.cos(a), ca.sin(a))


def _chain_from_rear(p5: ca.SX, angles: ca.SX, par: dict) -> tuple[list, list, list]:
    """Mass points p1..p5, link centres of mass (links 1..4) and absolute link angles."""
    phi5, th4, th3, th2 = angles[0], angles[1], angles[2], angles[3]
    a4 = phi5
    a3 = a4 + th4
    a2 = a3 + th3
    a1 = a2 + th2
    L1, L2, L3, L4 = par["L"]
    p4 = p5 + L4 * _unit(a4)
    p3 = p4 + L3 * _unit(a3)
    p2 = p3 + L2 * _unit(a2)
    p1 = p2 + L1 * _unit(a1)
    points = [p1, p2, p3, p4, p5]
    # Link i runs from its rear end (mass i+1) toward mass i.
    rear_ends = [p2, p3, p4, p5]
    link_angles = [a1, a2, a3, a4]
    coms = [rear_ends[i] + par["lc"][i] * _unit(link_angles[i]) for i in range(4)]
    return points, coms, link_angles


def _com(points: list, coms: list, par: dict) -> tuple[ca.SX, ca.SX]:
    mtot = sum(par["m"]) + sum(par["lm"])
    moment = sum(par["m"][i] * points[i] for i in range(5))
    moment = moment + sum(par["lm"][i] * coms[i] for i in range(4))
    return moment / mtot, mtot


@dataclass(frozen=True)
class JumperModel:
    """CasADi functions of one coordinate base. Build with :func:`jumper_model`.

    Every function takes the parameter vector ``p`` last. Shapes: q, qd (6,), tau (3,).
    """

    base: str
    points: ca.Function  # (q, p) -> 2x5 matrix, columns p1..p5 [m]
    com: ca.Function  # (q, p) -> 2x1 centre of mass [m]
    mass_matrix: ca.Function  # (q, p) -> M (6x6)
    bias: ca.Function  # (q, qd, p) -> h = C qd + G (6,)
    jacobian_front: ca.Function  # (q, p) -> J1 (2x6)
    jacobian_rear: ca.Function  # (q, p) -> J5 (2x6)
    jdot_qd_front: ca.Function  # (q, qd, p) -> dJ1/dt qd (2,)
    jdot_qd_rear: ca.Function  # (q, qd, p) -> dJ5/dt qd (2,)
    energy: ca.Function  # (q, qd, p) -> (T, V) [J]
    inverse_dynamics: ca.Function  # (q, qd, qdd, p) -> M qdd + h, by projected Newton-Euler
    to_rear_foot: ca.Function  # (q, qd, p) -> (q, qd) in the rear-foot base
    from_rear_foot: ca.Function  # (q, qd, p) -> (q, qd) in this base
    B: np.ndarray  # actuation matrix (6x3): torques act on th4, th3, th2

    def forward_dynamics(self, q, qd, tau, p, forces: dict | None = None) -> np.ndarray:
        """qdd = M^-1 (B tau + sum J_i^T f_i - h), numerically (for simulation and checks)."""
        M = np.array(self.mass_matrix(q, p))
        rhs = self.B @ np.asarray(tau, float) - np.array(self.bias(q, qd, p)).ravel()
        for name, f in (forces or {}).items():
            J = np.array(self.contact_jacobian(name)(q, p))
            rhs = rhs + J.T @ np.asarray(f, float)
        return np.linalg.solve(M, rhs)

    def contact_jacobian(self, name: str) -> ca.Function:
        if name == "front":
            return self.jacobian_front
        if name == "rear":
            return self.jacobian_rear
        raise ConfigError(f"unknown gripper {name!r}; allowed: 'front', 'rear'")

    def contact_jdot_qd(self, name: str) -> ca.Function:
        return {"front": self.jdot_qd_front, "rear": self.jdot_qd_rear}[name]


@cache
def jumper_model(base: str = "com") -> JumperModel:
    """Derive and compile the dynamics once per base (cached for the process)."""
    if base not in BASES:
        raise ConfigError(f"unknown coordinate base {base!r}; allowed: {BASES}")
    q = ca.SX.sym("q", NQ)
    qd = ca.SX.sym("qd", NQ)
    p = ca.SX.sym("p", N_PARAMETERS)
    par = _split_parameters(p)
    angles = q[2:6]

    # Shape relative to the rear foot, then place the base.
    zero = ca.SX.zeros(2, 1)
    rel_points, rel_coms, link_angles = _chain_from_rear(zero, angles, par)
    rel_com, mtot = _com(rel_points, rel_coms, par)
    p5 = q[0:2] if base == "rear_foot" else q[0:2] - rel_com
    points = [p5 + r for r in rel_points]
    coms = [p5 + r for r in rel_coms]

    # Lagrangian: T - V, point masses plus optional link bodies.
    def vel(x: ca.SX) -> ca.SX:
        return ca.jtimes(x, q, qd)

    T = 0
    V = 0
    for i in range(5):
        v = vel(points[i])
        T += 0.5 * par["m"][i] * ca.dot(v, v)
        V += par["m"][i] * GRAVITY * points[i][1]
    for i in range(4):
        v = vel(coms[i])
        w = ca.jtimes(link_angles[i], q, qd)
        T += 0.5 * par["lm"][i] * ca.dot(v, v) + 0.5 * par["lI"][i] * w**2
        V += par["lm"][i] * GRAVITY * coms[i][1]

    M = ca.hessian(T, qd)[0]
    M = 0.5 * (M + M.T)
    # h = dM/dt qd - dT/dq + dV/dq  (Euler-Lagrange with L = T - V)
    h = ca.jtimes(M @ qd, q, qd) - ca.gradient(T, q) + ca.gradient(V, q)
    # The same M qdd + h, written as sum_i J_i^T m_i (a_i + g e_y) over bodies: a far
    # smaller expression than the Lagrangian route, used inside the collocation NLP.
    qdd = ca.SX.sym("qdd", NQ)
    g_vec = ca.vertcat(0, GRAVITY)

    def acc(x: ca.SX) -> ca.SX:
        return ca.jtimes(ca.jtimes(x, q, qd), q, qd) + ca.jtimes(x, q, qdd)

    def project(x: ca.SX, force: ca.SX) -> ca.SX:
        return ca.jtimes(x, q, force, True)

    inv = 0
    for i in range(5):
        inv += project(points[i], par["m"][i] * (acc(points[i]) + g_vec))
    for i in range(4):
        inv += project(coms[i], par["lm"][i] * (acc(coms[i]) + g_vec))
        inv += project(link_angles[i], par["lI"][i] * acc(link_angles[i]))

    J1 = ca.jacobian(points[0], q)
    J5 = ca.jacobian(points[4], q)
    J1dqd = ca.jtimes(J1 @ qd, q, qd)
    J5dqd = ca.jtimes(J5 @ qd, q, qd)
    P = ca.horzcat(*points)
    com_world = p5 + rel_com

    # Coordinate changes (same angles; base velocity through the chain rule).
    qr = ca.vertcat(p5, angles)
    qdr = ca.jtimes(qr, q, qd)
    if base == "rear_foot":
        q_from = q
        qd_from = qd
    else:
        # q given in rear-foot base -> CoM base
        q_from = ca.vertcat(q[0:2] + rel_com, angles)
        qd_from = ca.jtimes(q_from, q, qd)

    B = np.zeros((NQ, NU))
    B[3:, :] = np.eye(NU)
    opts = {"cse": True}
    return JumperModel(
        base=base,
        points=ca.Function("points", [q, p], [P], ["q", "p"], ["points"], opts),
        com=ca.Function("com", [q, p], [com_world], ["q", "p"], ["com"], opts),
        mass_matrix=ca.Function("M", [q, p], [M], ["q", "p"], ["M"], opts),
        bias=ca.Function("h", [q, qd, p], [h], ["q", "qd", "p"], ["h"], opts),
        jacobian_front=ca.Function("J1", [q, p], [J1], ["q", "p"], ["J1"], opts),
        jacobian_rear=ca.Function("J5", [q, p], [J5], ["q", "p"], ["J5"], opts),
        jdot_qd_front=ca.Function("J1dqd", [q, qd, p], [J1dqd], opts),
        jdot_qd_rear=ca.Function("J5dqd", [q, qd, p], [J5dqd], opts),
        energy=ca.Function("energy", [q, qd, p], [T, V], ["q", "qd", "p"], ["T", "V"], opts),
        inverse_dynamics=ca.Function("inverse_dynamics", [q, qd, qdd, p], [inv],
                                     ["q", "qd", "qdd", "p"], ["Mqdd_h"], opts),
        to_rear_foot=ca.Function("to_rear_foot", [q, qd, p], [qr, qdr], opts),
        from_rear_foot=ca.Function("from_rear_foot", [q, qd, p], [q_from, qd_from], opts),
        B=B,
    )
