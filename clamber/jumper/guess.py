"""Initial guesses for the jump NLP: a hand-designed bounding motion, or the paper's random one.

The deterministic guess is a crouch on the wall, an extension that releases first the
front then the rear gripper, a short ballistic flight, a catch with the front gripper and
a crouch one step higher. Key poses are solved by small least-squares problems for the
given morphology, so the same recipe fits every design in the space.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from clamber.jumper.formulation.layout import Layout
from clamber.jumper.model import GRAVITY, jumper_model
from clamber.jumper.morphology import Morphology
from clamber.jumper.schedule import PHASES
from clamber.jumper.settings import OptimizationSettings

_REAR = jumper_model("rear_foot")


def _points(angles: np.ndarray, p5: np.ndarray, params: np.ndarray) -> np.ndarray:
    return np.array(_REAR.points(np.r_[p5, angles], params))  # 2x5


def _pose(params: np.ndarray, front: np.ndarray | None, rear: np.ndarray | None,
          bulge: float, clearance: float, x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Angles (and rear foot) placing the grippers at targets with joints off the wall."""

    def unpack(z):
        return z[:4], (rear if rear is not None else z[4:6])

    def residual(z):
        ang, p5 = unpack(z)
        P = _points(ang, p5, params)
        r = []
        if front is not None:
            r.extend(10.0 * (P[:, 0] - front))
        if rear is not None:
            r.extend(10.0 * (P[:, 4] - rear))
        else:
            r.extend(0.1 * (p5 - x0[4:6]))
        # Inner joints bulge away from the wall by about `bulge`.
        r.extend(P[0, 1:4] - bulge)
        r.extend(3.0 * np.minimum(P[0, 1:4] - clearance, 0.0))
        r.extend(0.05 * ang[1:])
        return np.asarray(r)

    z0 = x0 if rear is None else x0[:4]
    sol = least_squares(residual, z0, method="lm", max_nfev=2000)
    return unpack(sol.x)


def deterministic_guess(layout: Layout, nodes: tuple[int, ...], morph: Morphology,
                        settings: OptimizationSettings) -> np.ndarray:
    """The hand-designed bounding motion on the given grid (CoM-base coordinates)."""
    params = morph.parameters()
    r = settings.foot_radius
    BL = morph.body_length
    s0 = 0.55 * BL  # gripper separation when crouched
    H = 0.40 * BL  # height gained per jump
    reach = 0.88 * BL  # front gripper height at rear release
    bulge = 0.30 * BL
    clear = settings.motor_radius + 0.01
    x0 = np.array([np.pi / 2 - 0.6, 0.5, 0.4, 0.5, r + 0.02, 0.0])
    # Heights relative to the rear catch (the NLP's gauge): the jump starts H lower.
    crouch_a, _ = _pose(params, np.array([r, s0]), np.array([r, 0.0]), bulge, clear, x0)
    reach_a, _ = _pose(params, np.array([r + 0.02, reach]), np.array([r, 0.0]), 0.4 * bulge,
                       clear, np.r_[crouch_a, x0[4:]])
    catch_a, _ = _pose(params, np.array([r, s0 + H]), np.array([r + 0.03, s0 + H - reach]),
                       0.4 * bulge, clear, np.r_[reach_a, x0[4:]])
    start = np.array([0.0, -H])
    # Phase end poses (angles) and which gripper anchors the base in that phase.
    key = [crouch_a, crouch_a, reach_a, catch_a, crouch_a, crouch_a]
    anchors = {1: ("rear", np.array([r, 0.0]) + start), 2: ("rear", np.array([r, 0.0]) + start),
               4: ("front", np.array([r, s0 + H]) + start), 5: ("rear", np.array([r, H]) + start)}
    durations = [0.5 * (a + b) for a, b in zip(settings.phase_duration_min,
                                               settings.phase_duration_max, strict=True)]
    durations = [min(d, 2.0 * lo) for d, lo in zip(durations, settings.phase_duration_min,
                                                   strict=True)]
    values: dict[str, np.ndarray] = {}
    # Flight: ballistic CoM between take-off and catch poses.
    c_take = _com_of(reach_a, np.array([r, 0.0]) + start, params)
    c_catch = _com_of(catch_a, _rear_from_front(catch_a, np.array([r, s0 + H]) + start, params),
                      params)
    for p, N in zip(PHASES, nodes, strict=True):
        i = p.index
        T = durations[i - 1]
        s = np.linspace(0.0, 1.0, N + 1)
        smooth = s * s * (3 - 2 * s)
        ang = key[i - 1][None, :] + smooth[:, None] * (key[i] - key[i - 1])[None, :]
        q = np.zeros((N + 1, 6))
        for k in range(N + 1):
            if i == 3:
                t = s[k] * T
                v0 = (c_catch - c_take + 0.5 * np.array([0, -GRAVITY]) * T**2 * -1) / T
                c = c_take + v0 * t + 0.5 * np.array([0.0, -GRAVITY]) * t**2
                q[k] = np.r_[c, ang[k]]
                continue
            who, anchor = anchors[i]
            p5 = anchor if who == "rear" else _rear_from_front(ang[k], anchor, params)
            q[k] = np.r_[_com_of(ang[k], p5, params), ang[k]]
        dt = T / N
        qd = np.gradient(q, dt, axis=0)
        qdd = np.gradient(qd, dt, axis=0)
        pre = f"p{i}."
        values.update({pre + "q": q, pre + "qd": qd, pre + "qdd": qdd, pre + "dt": [dt]})
        tau, forces = _efforts(q, qd, qdd, p.contacts, params, settings.torque_limit)
        values[pre + "tau"] = tau
        for c in p.contacts:
            values[pre + f"f_{c}"] = forces[c]
        if pre + "mid.qdd" in layout:
            values[pre + "mid.tau"] = 0.5 * (tau[1:] + tau[:-1])
            values[pre + "mid.qdd"] = 0.5 * (qdd[1:] + qdd[:-1])
            for c in p.contacts:
                values[pre + f"mid.f_{c}"] = values[pre + f"f_{c}"][1:]
    values["height"] = [H]
    values["front_anchor"] = [s0]
    return layout.pack(values)


def _efforts(q, qd, qdd, contacts, params, torque_limit):
    """Torques and contact forces that best explain the guessed motion (least squares).

    Starting the NLP from dynamically consistent efforts removes most of the initial
    dynamics residual, which saves IPOPT many restoration-like iterations.
    """
    m = jumper_model("com")
    n = q.shape[0]
    tau = np.zeros((n, 3))
    forces = {c: np.zeros((n, 2)) for c in contacts}
    for k in range(n):
        rhs = np.array(m.inverse_dynamics(q[k], qd[k], qdd[k], params)).ravel()
        cols = [m.B] + [np.array(m.contact_jacobian(c)(q[k], params)).T for c in contacts]
        A = np.hstack(cols)
        sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
        tau[k] = np.clip(sol[:3], -torque_limit, torque_limit)
        for i, c in enumerate(contacts):
            forces[c][k] = sol[3 + 2 * i: 5 + 2 * i]
    return tau, forces


def _com_of(angles: np.ndarray, p5: np.ndarray, params: np.ndarray) -> np.ndarray:
    qr = np.r_[p5, angles]
    return np.array(_REAR.com(qr, params)).ravel()


def _rear_from_front(angles: np.ndarray, front: np.ndarray, params: np.ndarray) -> np.ndarray:
    P = _points(angles, np.zeros(2), params)
    return front - P[:, 0]


def random_guess(layout: Layout, nodes: tuple[int, ...], morph: Morphology,
                 settings: OptimizationSettings, seed: int) -> np.ndarray:
    """The paper's randomized initial guess: every node drawn at random within its bounds."""
    rng = np.random.default_rng(seed)
    BL = morph.body_length
    values: dict[str, np.ndarray] = {}
    lim = settings.joint_angle_limit
    for p, N in zip(PHASES, nodes, strict=True):
        pre = f"p{p.index}."
        n = N + 1
        q = np.column_stack([
            rng.uniform(0.02, 0.3 * BL, n), rng.uniform(0.0, BL, n),
            rng.uniform(0.0, np.pi, n), rng.uniform(-lim, lim, (n, 3)),
        ])
        values[pre + "q"] = q
        values[pre + "qd"] = rng.uniform(-1, 1, (n, 6))
        values[pre + "qdd"] = rng.uniform(-10, 10, (n, 6))
        values[pre + "tau"] = rng.uniform(-settings.torque_limit, settings.torque_limit, (n, 3))
        lo, hi = settings.phase_duration_min[p.index - 1], settings.phase_duration_max[p.index - 1]
        values[pre + "dt"] = [rng.uniform(lo, hi) / N]
        for c in p.contacts:
            values[pre + f"f_{c}"] = rng.uniform(-1, 3, (n, 2))
    values["height"] = [rng.uniform(0.1, 0.5) * BL]
    values["front_anchor"] = [rng.uniform(0.3, 0.7) * BL]
    for p in PHASES:  # the jump starts one step below the rear catch
        values[f"p{p.index}.q"][:, 1] -= values["height"][0]
    return layout.pack(values)
