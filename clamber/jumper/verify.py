"""Physical accuracy of a solution: replay its torques through the exact constrained dynamics.

Each phase is integrated on its own with an adaptive 8th-order Runge-Kutta method
(SciPy's DOP853, tight tolerances) from the phase's first optimized node, with the
torques interpolated linearly between nodes as the trapezoidal rule assumes, and the
attached grippers held by their exact constraint forces (a KKT solve per evaluation).
The state drift at the end of the phase says how much the collocation could exploit
its discretization error; a solution whose speed does not survive this is suspect.

The same replay, sampled densely between the nodes, checks every path limit where the
optimizer does not look (:func:`limit_violations`): joint speed, torque (and the motor
line), the clearances of joints and free grippers, and the safe region of every attached
gripper's force. Each is reported at the optimized nodes and over the replay.
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


def _replay_phase(sol: TrajectorySolution, p, rtol: float, atol: float):
    """One phase integrated from its first node (dense output); None if it fails."""
    m = jumper_model("com")
    params = sol.morphology.parameters()
    idx = np.flatnonzero(sol.phase == p.index)
    t = sol.t[idx]
    tau_nodes = sol.tau[idx]
    tau_mid = None if sol.tau_mid is None else sol.tau_mid[idx]

    def rhs(time, x):
        tau = _torque(time, t, tau_nodes, tau_mid)
        qdd, _ = constrained_acceleration(x[:6], x[6:], tau, params, p.contacts, m)
        return np.r_[x[6:], qdd]

    res = solve_ivp(rhs, (t[0], t[-1]), np.r_[sol.q[idx[0]], sol.qd[idx[0]]],
                    method="DOP853", t_eval=t, rtol=rtol, atol=atol, dense_output=True)
    return res, idx, tau_nodes, tau_mid


def phase_drift(sol: TrajectorySolution, rtol: float = 1e-10, atol: float = 1e-12,
                replays: dict | None = None) -> dict:
    """Integrate every phase; report end-of-phase drift and the worst per-node drift.

    ``replays`` (filled if given) keeps each phase's integration for the limit check.
    """
    m = jumper_model("com")
    params = sol.morphology.parameters()
    out = {}
    worst_q, worst_qd = 0.0, 0.0
    for p in PHASES:
        res, idx, *_ = replay = _replay_phase(sol, p, rtol, atol)
        if replays is not None:
            replays[p.index] = replay
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


#: Path limits checked by :func:`limit_violations`, with the unit of their violation.
LIMITS = {"joint_speed": "rad/s", "torque": "N m", "joint_clearance": "m",
          "foot_clearance": "m", "safe_region": "N"}


def _path_violations(sol: TrajectorySolution, p, q: np.ndarray, qd: np.ndarray,
                     tau: np.ndarray) -> dict[str, float]:
    """Worst violation of each path limit over states ``q, qd`` (n, 6) and torques (n, 3).

    0 means the limit holds everywhere; forces come from the exact constrained dynamics.
    """
    s = sol.settings
    m = jumper_model("com")
    params = sol.morphology.parameters()
    w = np.abs(qd[:, 3:6])
    out = {"joint_speed": float(np.max(w - s.joint_speed_limit, initial=0.0))}
    cap = s.torque_limit * (1 - w / s.no_load_speed) if s.no_load_speed > 0 else s.torque_limit
    out["torque"] = float(np.max(np.abs(tau) - cap, initial=0.0))
    P = np.array(m.points.map(len(q))(q.T, params)).reshape(2, len(q), 5)
    out["joint_clearance"] = float(np.max(s.motor_radius - P[0, :, 1:4], initial=0.0))
    free = [k for c, k in (("front", 0), ("rear", 4)) if c not in p.contacts]
    out["foot_clearance"] = float(np.max(s.foot_radius - P[0][:, free], initial=0.0))
    worst = 0.0
    regions = {"front": s.safe_region_front, "rear": s.safe_region_rear}
    for k in range(len(q)) if p.contacts else ():
        _, forces = constrained_acceleration(q[k], qd[k], tau[k], params, p.contacts, m)
        for c, f in forces.items():
            worst = max(worst, float(regions[c].violation(f)))
    out["safe_region"] = worst
    return out


def limit_violations(sol: TrajectorySolution, samples_per_interval: int = 8,
                     replays: dict | None = None) -> dict[str, dict[str, float]]:
    """Worst violation of every path limit at the nodes and between them (0: holds).

    ``between`` samples the independent replay (:func:`phase_drift`'s integration from
    each phase's first node, torques interpolated as the collocation assumes)
    ``samples_per_interval`` times per interval, nodes included; it therefore also
    contains the replay's drift, which is what a robot playing the torques would see.
    ``nodes`` evaluates the optimized nodes themselves (forces from the exact dynamics).
    """
    if replays is None:
        replays = {}
        phase_drift(sol, replays=replays)
    report = {name: {"nodes": 0.0, "between": 0.0, "unit": unit} for name, unit in LIMITS.items()}
    for p in PHASES:
        res, idx, tau_nodes, tau_mid = replays[p.index]
        t = sol.t[idx]
        node = _path_violations(sol, p, sol.q[idx], sol.qd[idx], sol.tau[idx])
        for name, v in node.items():
            report[name]["nodes"] = max(report[name]["nodes"], v)
        if not res.success:
            continue
        s = np.linspace(0.0, 1.0, samples_per_interval + 1)
        times = np.unique((t[:-1, None] + np.diff(t)[:, None] * s[None, :]).ravel())
        x = res.sol(times).T
        tau = np.array([_torque(tt, t, tau_nodes, tau_mid) for tt in times])
        between = _path_violations(sol, p, x[:, :6], x[:, 6:], tau)
        for name, v in between.items():
            report[name]["between"] = max(report[name]["between"], v)
    return report


def attach_accuracy(sol: TrajectorySolution) -> TrajectorySolution:
    """Fill ``sol.accuracy`` with the phase drifts, the flight check and the limit check.

    ``accuracy["limits"][name]["between"]`` is the worst violation of each path limit
    over the replay between nodes (units in ``["unit"]``; 0: holds).
    """
    replays: dict = {}
    acc = phase_drift(sol, replays=replays)
    acc["flight_ballistic_error_m"] = flight_ballistic_error(sol)
    acc["limits"] = limit_violations(sol, replays=replays)
    sol.accuracy = acc
    return sol
