"""Limits: wall clearances, the motor line and the simple bounds on every variable.

Clearances hold at the nodes only (the trapezoidal motion between nodes is not checked):
inner joints (shoulder, spine, hip) stay ``motor_radius`` from the wall, a free gripper's
disc centre ``foot_radius`` (plus ``release_clearance``, ramped in after its release and
out before its catch). The motor line ``|tau + k w| <= tau_max`` with
``k = tau_max / no_load_speed`` (``k = 0`` leaves the plain torque bound) holds per joint
at every node, tightened to ``(1 - h) tau_max`` in the phases that keep a headroom ``h``
(``OptimizationSettings.motor_headroom``; left out where it repeats the torque bound, see
``OptimizationSettings.drop_duplicate_rows``). Simple bounds: relative joint angles,
joint speeds, torques and each phase's time step (phase-duration bounds divided by the
phase's interval count, so refining the grid keeps the same problem).
"""

from __future__ import annotations

from functools import cache, partial

import casadi as ca
import numpy as np

from clamber.jumper.formulation.layout import Layout
from clamber.jumper.formulation.terms import Constraint, Context
from clamber.jumper.model import NQ, jumper_model
from clamber.jumper.morphology import N_PARAMETERS
from clamber.jumper.schedule import PHASES
from clamber.jumper.settings import OptimizationSettings

INF = np.inf


@cache
def wall_distances() -> ca.Function:
    """(q, p) -> x of the five mass points p1..p5 (5,) [m]: their distance from the wall."""
    m = jumper_model("com")
    q, p = ca.SX.sym("q", NQ), ca.SX.sym("p", N_PARAMETERS)
    return ca.Function("wall_distances", [q, p], [m.points(q, p)[0, :].T], {"cse": True})


def _motor_radius(s: OptimizationSettings) -> float:
    """Inner joints keep the motor radius plus a margin (the limit holds between nodes)."""
    return s.motor_radius + s.clearance_margin


def _free_gripper_bound(s: OptimizationSettings, ramps: tuple[str, ...],
                        intervals: int) -> np.ndarray:
    """Lower bounds of a phase's free grippers' wall distance, node-major (one per free
    gripper and node): the radius plus ``release_clearance``, ramped up over the phase in
    which a gripper was released ("up"), down over the one that ends in its catch
    ("down"), linear in the node index ("up-down": both at once)."""
    if s.release_clearance == 0.0:
        return np.array(s.foot_radius)
    j = np.arange(intervals + 1) / intervals
    share = {"up": j, "down": 1.0 - j, "up-down": np.minimum(j, 1.0 - j) * 2, "": 1.0 + 0 * j}
    return s.foot_radius + s.release_clearance * np.column_stack(
        [share[r] for r in ramps]).ravel()


def _ramp(gripper: str, index: int) -> str:
    """How the release clearance of a gripper free in phase ``index`` ramps there."""
    free = [p.index for p in PHASES if gripper not in p.contacts]
    up, down = index == free[0], index == free[-1]
    return "up-down" if up and down else "up" if up else "down" if down else ""


def _motor_line_limit(s: OptimizationSettings, phase: int) -> float:
    return s.motor_line_limit(phase)


def _minus_motor_line_limit(s: OptimizationSettings, phase: int) -> float:
    return -s.motor_line_limit(phase)


def limits(ctx: Context) -> list[Constraint]:
    """Per phase: joint clearance, free-gripper clearance and the motor line."""
    rows = []
    slope = ctx.parameter("motor_slope")
    for p in PHASES:
        i, N = p.index, ctx.intervals(p.index)
        q, qd, tau = (ctx.nodes(i, t) for t in ("q", "qd", "tau"))
        x = ctx.map(wall_distances(), N + 1, q, ctx.morphology)  # 5 x (N+1)
        rows.append(Constraint(f"p{i}.joint_clearance", ca.vec(x[1:4, :]), _motor_radius, INF))
        grippers = [c for c in ("front", "rear") if c not in p.contacts]
        free = [0 if c == "front" else 4 for c in grippers]
        if free:
            rows.append(Constraint(f"p{i}.foot_clearance",
                                   ca.vec(ca.vertcat(*(x[j, :] for j in free))),
                                   partial(_free_gripper_bound, intervals=N,
                                           ramps=tuple(_ramp(c, i) for c in grippers)),
                                   INF))
        if ctx.motor_line_rows:
            rows.append(Constraint(f"p{i}.motor_line", ca.vec(tau + slope * qd[3:6, :]),
                                   partial(_minus_motor_line_limit, phase=i),
                                   partial(_motor_line_limit, phase=i)))
    return rows


def variable_bounds(variables: Layout, nodes: tuple[int, ...],
                    s: OptimizationSettings) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper simple bounds on the decision vector (physical units)."""
    lo = variables.pack({}, -INF)
    hi = variables.pack({}, INF)
    # joint speeds keep a margin at the nodes so the limit holds between them too
    ang, speed = s.joint_angle_limit, s.joint_speed_limit * (1 - s.speed_margin)
    for p, n in zip(PHASES, nodes, strict=True):
        pre = f"p{p.index}."
        b = variables.blocks[pre + "q"]
        bound = np.tile([INF, INF, INF, ang, ang, ang], b.shape[0])
        lo[b.slice], hi[b.slice] = -bound, bound
        b = variables.blocks[pre + "qd"]
        bound = np.tile([INF, INF, INF, speed, speed, speed], b.shape[0])
        lo[b.slice], hi[b.slice] = -bound, bound
        if p.index == 1 and s.start_joint_speed_max is not None:
            first = b.slice.start + np.arange(3, 6)  # node 0's joint speeds (node-major)
            lim = min(speed, s.start_joint_speed_max)
            lo[first], hi[first] = -lim, lim
        nxt = PHASES[p.index] if p.index < len(PHASES) else None
        released = [c for c in p.contacts if nxt is not None and c not in nxt.contacts]
        for c in released if s.release_force_max is not None else ():
            b = variables.blocks[pre + f"f_{c}"]
            last = b.slice.stop - 2 + np.arange(2)  # the phase's last node (node-major)
            lo[last], hi[last] = -s.release_force_max, s.release_force_max
        for tag in ("tau", "mid.tau"):
            if pre + tag in variables:
                b = variables.blocks[pre + tag]
                lo[b.slice], hi[b.slice] = -s.torque_limit, s.torque_limit
        b = variables.blocks[pre + "dt"]
        lo[b.slice] = s.phase_duration_min[p.index - 1] / n
        hi[b.slice] = s.phase_duration_max[p.index - 1] / n
    lo[variables.blocks["height"].slice] = s.min_height_gain
    return lo, hi
