"""A four-hold stance on the wall: the body pose over it, the legs' joint angles (reach) and
the wrench QP's distribution of the body's weight (static stability, expected hold loads).

The body sits ``standoff`` [m] along the wall normal above the centroid of its four hold tops,
its frame aligned with the wall's (as the climbing gait places it). Each gripper's sole lands
on its hold top with its z axis along the hold's normal, its yaw about the normal free; the
leg's joint angles come from damped least squares clipped to the joint limits
(:func:`sole_ik`), so a converged solution is reachable within the limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.linalg import _umath_linalg

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.quadruped.kinematics import body_configuration
from clamber.quadruped.model import NQ_BASE, NV_BASE, RobotModel, RobotState, leg_slice
from clamber.quadruped.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.robot import LEG_NAMES
from clamber.quadruped.statics import StaticsEvaluator
from clamber.small_linalg import solve_vector

_SVD = _umath_linalg.svd_s
_EYE3 = np.eye(3)
_NEXT, _AFTER = np.array([1, 2, 0]), np.array([2, 0, 1])
#: Sole position error [m] above which a hold counts as out of reach.
REACH_TOLERANCE = 3e-3
#: Angle [rad] between the sole's and the hold's normals above which a landing sole does not
#: seat (the compliant sole's hinges give 0.3 rad; a third is left for the load's own tilt).
TILT_TOLERANCE = 0.2
#: The same for a gripper already attached, whose sole hinges take the misfit as the body
#: moves (0.3 rad range, 0.05 rad kept in reserve).
HELD_TILT_TOLERANCE = 0.25


def body_over(tops: dict[str, np.ndarray], rotation: np.ndarray, standoff: float) -> pin.SE3:
    """Body pose ``standoff`` [m] along the wall normal above the hold tops' centroid."""
    c = np.mean([tops[leg] for leg in LEG_NAMES], axis=0)
    return pin.SE3(rotation, c + standoff * rotation[:, 2])


@dataclass(frozen=True)
class Reach:
    """Joint angles (20,) [rad] for a body pose and holds, each leg's sole position error [m]
    and the angle [rad] between its sole normal and the hold's."""

    q: np.ndarray
    errors: dict[str, float]
    tilts: dict[str, float]

    @property
    def reachable(self) -> bool:
        """Every sole within the position and landing tilt tolerances."""
        return self.within(TILT_TOLERANCE)

    def within(self, tilt: float) -> bool:
        """Every sole within the position tolerance and ``tilt`` [rad]."""
        return (max(self.errors.values()) <= REACH_TOLERANCE
                and max(self.tilts.values()) <= tilt)


def _pinv(a: np.ndarray, rcond: float) -> np.ndarray:
    """``np.linalg.pinv(a, rcond)`` of a real matrix: its SVD kernel and steps, without its
    per-call wrapping (the same numbers)."""
    u, s, vt = _SVD(a, signature="d->ddd")
    if not math.isfinite(np.add.reduce(s)):
        raise np.linalg.LinAlgError("SVD did not converge")
    large = s > rcond * s.max()
    s = np.divide(1, s, where=large, out=s)
    s[~large] = 0
    return vt.T @ (s[:, None] * u.T)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of two 3-vectors (the same products and differences)."""
    return a.take(_NEXT) * b.take(_AFTER) - a.take(_AFTER) * b.take(_NEXT)


def _norm(x: np.ndarray) -> float:
    """``np.linalg.norm`` of a vector: ``sqrt(x . x)`` (the same number)."""
    return math.sqrt(x.dot(x))


def sole_ik(rm: RobotModel, leg: str, position: np.ndarray, normal: np.ndarray,
            q_start: np.ndarray, iterations: int = 100, damping: float = 1e-3
            ) -> tuple[np.ndarray, float, float]:
    """Joint angles putting ``leg``'s sole at ``position`` with its z axis as close to
    ``normal`` as the leg allows (both in {B}).

    The leg's first joint turns about the body normal, the next three about parallel axes
    and the fifth about the sole normal, so at a given sole position only one tilt of the
    sole is free: the position is the primary task and the tilt ``z x n*`` (its component
    along ``z``, the free yaw, projected out) is pursued in the position task's null space
    (damped least squares, each step clipped to the joint limits). Returns the angles, the
    position error [m] and the angle [rad] left between the sole normal and ``normal``.
    (The planner runs it thousands of times per climb: the small products, solves and the
    pseudo-inverse are NumPy's own kernels without their per-call wrapping.)
    """
    q = np.array(q_start, dtype=float)
    i = LEG_NAMES.index(leg)
    sl = leg_slice(leg)
    cols = slice(NV_BASE + sl.start, NV_BASE + sl.stop)
    fid = rm.foot_ids[i]
    n = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    eye = np.eye(sl.stop - sl.start)
    # The damping terms of the two least-squares steps (three task rows each).
    damp_p, damp_r = damping**2 * np.eye(3), 1e-2**2 * np.eye(3)
    lo, hi = rm.q_min[sl], rm.q_max[sl]
    model, data = rm.model, rm.data
    config = body_configuration(q)
    at = slice(NQ_BASE + sl.start, NQ_BASE + sl.stop)
    for _ in range(iterations):
        config[at] = q[sl]
        pin.computeJointJacobians(model, data, config)
        pin.updateFramePlacements(model, data)
        M = data.oMf[fid]
        z = M.rotation[:, 2]
        ep, er = position - M.translation, _cross(z, n)
        if _norm(ep) < 1e-7 and _norm(er) < 1e-6:
            break
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, cols]
        Jp, Jr = J[:3], (_EYE3 - z[:, None] * z) @ J[3:]
        dq1 = Jp.T @ solve_vector(Jp @ Jp.T + damp_p, ep)
        N = eye - _pinv(Jp, 1e-6) @ Jp
        JrN = Jr @ N
        dq = dq1 + N @ (JrN.T @ solve_vector(JrN @ JrN.T + damp_r, er - Jr @ dq1))
        q[sl] = np.clip(q[sl] + dq, lo, hi)
    pin.framesForwardKinematics(model, data, body_configuration(q))
    M = data.oMf[fid]
    tilt = float(np.arccos(np.clip(M.rotation[:, 2] @ n, -1.0, 1.0)))
    return q, float(np.linalg.norm(position - M.translation)), tilt


def reach(rm: RobotModel, body: pin.SE3, tops: dict[str, np.ndarray],
          normals: dict[str, np.ndarray], q_start: np.ndarray,
          legs: tuple[str, ...] = LEG_NAMES) -> Reach:
    """:func:`sole_ik` of ``legs`` onto their hold tops [m, {S}] along their normals, from
    ``q_start`` (and, where that ends in a local minimum, from the default stance); the other
    legs keep their angles."""
    q = np.array(q_start, dtype=float)
    default = rm.robot.default_joint_angles()
    errors, tilts = {}, {}
    for leg in legs:
        p = body.actInv(pin.SE3(np.eye(3), tops[leg])).translation
        n = body.rotation.T @ normals[leg]
        q1, e1, t1 = sole_ik(rm, leg, p, n, q)
        if e1 > REACH_TOLERANCE or t1 > TILT_TOLERANCE:  # a local minimum: start over
            sl = leg_slice(leg)
            q0 = q.copy()
            q0[sl] = default[sl]
            q2, e2, t2 = sole_ik(rm, leg, p, n, q0)
            if (e2, t2) < (e1, t1):
                q1, e1, t1 = q2, e2, t2
        q, errors[leg], tilts[leg] = q1, e1, t1
    return Reach(q, errors, tilts)


@dataclass(frozen=True)
class Support:
    """The wrench QP at one stance: whether the body is held (``stable``: the hard body
    balance met within every hold's limits and the servos' torques), the wrenches (4, 6)
    [N, N m] and each loaded hold's gauge in its limits (0 for a swing leg)."""

    stable: bool
    wrenches: np.ndarray
    gauges: np.ndarray


def _box_gauge(limits: WrenchLimits, w: np.ndarray) -> float:
    """Largest ``(H w) / h`` over the rows: <= 1 inside, inf if a zero-width row is loaded."""
    Hw = limits.H @ w
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(limits.h > 0, Hw / np.where(limits.h > 0, limits.h, 1.0),
                     np.where(Hw > 1e-9, np.inf, 0.0))
    return float(max(g.max(), 0.0))


def support(rm: RobotModel, statics: StaticsEvaluator, body: pin.SE3, q_joints: np.ndarray,
            limits: list[WrenchLimits], swing: str | None = None) -> Support:
    """Distribute the robot's weight over the stance legs (``swing`` carries nothing)."""
    state = RobotState.trusted(body.translation, body.rotation, q_joints, np.zeros(6),
                               np.zeros(q_joints.size))
    qp = WrenchQP(limits, rm.tau_max)
    load = {leg: (0.0 if leg == swing else 1.0) for leg in LEG_NAMES}
    sol = qp.solve(statics.evaluate(state.q()), load)
    W = sol.F.reshape(len(LEG_NAMES), 6)
    gauges = np.array([0.0 if leg == swing else _box_gauge(lim, W[i])
                       for i, (leg, lim) in enumerate(zip(LEG_NAMES, limits, strict=True))])
    return Support(sol.status is WrenchStatus.OPTIMAL, W, gauges)
