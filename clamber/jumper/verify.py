"""Physical accuracy of a solution: replay its torques through the exact constrained dynamics.

Each phase is integrated on its own with an adaptive 8th-order Runge-Kutta method
(SciPy's DOP853, tight tolerances) from the phase's first optimized node, with the
torques interpolated linearly between nodes as the trapezoidal rule assumes, and the
attached grippers held by their exact constraint forces (a KKT solve per evaluation).
The state drift at the end of the phase says how much the collocation could exploit
its discretization error; a solution whose speed does not survive this is suspect.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from clamber.jumper.model import jumper_model
from clamber.jumper.schedule import PHASES
from clamber.jumper.solution import TrajectorySolution


def constrained_acceleration(q, qd, tau, params, contacts, model=None):
    """qdd and contact forces with the given grippers pinned (KKT of M qdd = ... + J^T f)."""
    m = model or jumper_model("com")
    M = np.array(m.mass_matrix(q, params))
    rhs = m.B @ tau - np.array(m.bias(q, qd, params)).ravel()
    if not contacts:
        return np.linalg.solve(M, rhs), {}
    J = np.vstack([np.array(m.contact_jacobian(c)(q, params)) for c in contacts])
    jdqd = np.concatenate([np.array(m.contact_jdot_qd(c)(q, qd, params)).ravel()
                           for c in contacts])
    n, k = M.shape[0], J.shape[0]
    K = np.block([[M, -J.T], [J, np.zeros((k, k))]])
    sol = np.linalg.solve(K, np.r_[rhs, -jdqd])
    forces = {c: sol[n + 2 * i: n + 2 * i + 2] for i, c in enumerate(contacts)}
    return sol[:n], forces


def _torque(time: float, t: np.ndarray, nodes: np.ndarray, mid: np.ndarray | None) -> np.ndarray:
    """Torque between nodes as each collocation rule assumes it.

    Trapezoidal: linear between nodes. Hermite-Simpson: the quadratic through the two
    nodes and the midpoint of the interval.
    """
    if mid is None:
        return np.array([np.interp(time, t, nodes[:, j]) for j in range(nodes.shape[1])])
    k = int(np.clip(np.searchsorted(t, time, side="right") - 1, 0, len(t) - 2))
    s = (time - t[k]) / (t[k + 1] - t[k])
    return (2 * (s - 0.5) * (s - 1) * nodes[k] - 4 * s * (s - 1) * mid[k]
            + 2 * s * (s - 0.5) * nodes[k + 1])


def phase_drift(sol: TrajectorySolution, rtol: float = 1e-10, atol: float = 1e-12) -> dict:
    """Integrate every phase; report end-of-phase drift and the worst per-node drift."""
    m = jumper_model("com")
    params = sol.morphology.parameters()
    out = {}
    worst_q, worst_qd = 0.0, 0.0
    for p in PHASES:
        idx = np.flatnonzero(sol.phase == p.index)
        t = sol.t[idx]
        tau_nodes = sol.tau[idx]
        x0 = np.r_[sol.q[idx[0]], sol.qd[idx[0]]]

        tau_mid = None if sol.tau_mid is None else sol.tau_mid[idx]

        def rhs(time, x, t=t, tau_nodes=tau_nodes, tau_mid=tau_mid, contacts=p.contacts):
            tau = _torque(time, t, tau_nodes, tau_mid)
            qdd, _ = constrained_acceleration(x[:6], x[6:], tau, params, contacts, m)
            return np.r_[x[6:], qdd]

        res = solve_ivp(rhs, (t[0], t[-1]), x0, method="DOP853", t_eval=t, rtol=rtol,
                        atol=atol)
        if not res.success:
            out[f"phase{p.index}"] = {"integration_failed": res.message}
            continue
        dq = np.abs(res.y[:6].T - sol.q[idx])
        dqd = np.abs(res.y[6:].T - sol.qd[idx])
        # Position drift in metres of the joints and grippers.
        P_sim = np.array(m.points.map(len(idx))(res.y[:6], params)).reshape(2, len(idx), 5)
        P_opt = np.array(m.points.map(len(idx))(sol.q[idx].T, params)).reshape(2, len(idx), 5)
        dp = np.linalg.norm(P_sim - P_opt, axis=0)
        out[f"phase{p.index}"] = {
            "end_position_drift_m": float(dp[-1].max()),
            "end_angle_drift_rad": float(dq[-1, 2:].max()),
            "end_velocity_drift": float(dqd[-1].max()),
            "max_position_drift_m": float(dp.max()),
        }
        worst_q = max(worst_q, float(dp.max()))
        worst_qd = max(worst_qd, float(dqd.max()))
    out["max_position_drift_m"] = worst_q
    out["max_velocity_drift"] = worst_qd
    return out


def flight_ballistic_error(sol: TrajectorySolution) -> float:
    """Largest deviation [m] of the flight-phase centre of mass from its exact parabola."""
    idx = np.flatnonzero(sol.phase == 3)
    t = sol.t[idx] - sol.t[idx[0]]
    c0, v0 = sol.q[idx[0], :2], sol.qd[idx[0], :2]
    exact = c0 + np.outer(t, v0) + np.outer(0.5 * t**2, [0.0, -9.81])
    return float(np.abs(sol.q[idx, :2] - exact).max())


def attach_accuracy(sol: TrajectorySolution) -> TrajectorySolution:
    """Fill ``sol.accuracy`` with the phase drifts and the flight check; returns ``sol``."""
    acc = phase_drift(sol)
    acc["flight_ballistic_error_m"] = flight_ballistic_error(sol)
    sol.accuracy = acc
    return sol
