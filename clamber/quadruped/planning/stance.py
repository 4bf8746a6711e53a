"""A four-hold stance: the body pose over it, the legs' joint angles (reach) and the wrench
QP's distribution of the weight. Each sole lands on its hold top with z along the hold's
normal, yaw free (:func:`sole_ik`)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.compiled import kernel
from clamber.exceptions import ConfigError
from clamber.quadruped.control.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.model.kinematics import body_configuration, foot_poses
from clamber.quadruped.model.robot import LEG_NAMES, Marcbot
from clamber.quadruped.model.robot_model import NQ_BASE, NV_BASE, RobotModel, RobotState, leg_slice
from clamber.quadruped.model.statics import StaticsEvaluator

#: Sole position error [m] above which a hold counts as out of reach.
REACH_TOLERANCE = 3e-3
#: Angle [rad] between sole and hold normals above which a landing sole does not seat
#: (the sole's hinges give 0.3 rad).
TILT_TOLERANCE = 0.2
#: The same for an attached gripper, whose hinges take the misfit as the body moves.
HELD_TILT_TOLERANCE = 0.25
#: Largest change [rad] of an attached sole's tilt since it landed: the hinges
#: (25 N m/rad) pass each radian of change to the weld as an x/y moment.
LANDED_TILT_TOLERANCE = 0.08
#: Index of the knee (joint 3) among a leg's five joints: straight at 0, bent for q > 0.
KNEE = 2


def planning_model(knee_bend: float | None = None, robot: Marcbot | None = None) -> RobotModel:
    """The model stances are planned on: ``robot``'s (default :class:`Marcbot`), its knees
    kept bent by at least ``knee_bend`` [rad] (None: the robot's own knee limit). A leg
    planned near the straight knee sits at a singularity through which a body move's small
    tracking error carries it onto the reversed branch; the next move then drives that knee
    into its limit and the leg's welded gripper takes the misfit."""
    robot = robot or Marcbot()
    if knee_bend is None:
        return RobotModel(robot)
    if not robot.q_min[KNEE] <= knee_bend < robot.q_default[KNEE]:
        raise ConfigError(f"knee_bend = {knee_bend}: must lie from the knee's limit "
                          f"{robot.q_min[KNEE]} to below its default {robot.q_default[KNEE]} rad")
    q_min = list(robot.q_min)
    q_min[KNEE] = knee_bend
    return RobotModel(replace(robot, q_min=tuple(q_min)))


def sole_normal(rm: RobotModel, body: pin.SE3, q: np.ndarray, leg: str) -> np.ndarray:
    """``leg``'s sole normal in {S} at body pose ``body`` and joint angles ``q`` (20,)."""
    foot = foot_poses(rm, body_configuration(q))[LEG_NAMES.index(leg)]
    return body.rotation @ foot.rotation[:, 2]


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


@kernel
def _sole_step(J: np.ndarray, R: np.ndarray, p: np.ndarray, position: np.ndarray,
               n: np.ndarray, q: np.ndarray, lo: np.ndarray, hi: np.ndarray,
               damping2: float) -> bool:
    """One :func:`sole_ik` step on the leg's angles ``q`` (5,) in place, clipped to ``[lo,
    hi]``, from the sole's LOCAL_WORLD_ALIGNED Jacobian ``J`` (6, 5) and placement ``R``,
    ``p``; True (``q`` untouched) once converged."""
    ep = position - p
    z = R[:, 2].copy()
    er = np.cross(z, n)
    if np.sqrt(ep @ ep) < 1e-7 and np.sqrt(er @ er) < 1e-6:
        return True
    Jp = J[:3].copy()
    Jr = (np.eye(3) - np.outer(z, z)) @ J[3:]
    dq1 = Jp.T @ np.linalg.solve(Jp @ Jp.T + damping2 * np.eye(3), ep)
    N = np.eye(5) - np.linalg.pinv(Jp, 1e-6) @ Jp
    JrN = Jr @ N
    dq = dq1 + N @ (JrN.T @ np.linalg.solve(JrN @ JrN.T + 1e-4 * np.eye(3), er - Jr @ dq1))
    for k in range(q.shape[0]):
        q[k] = min(max(q[k] + dq[k], lo[k]), hi[k])
    return False


def sole_ik(rm: RobotModel, leg: str, position: np.ndarray, normal: np.ndarray,
            q_start: np.ndarray, iterations: int = 100, damping: float = 1e-3
            ) -> tuple[np.ndarray, float, float]:
    """Joint angles putting ``leg``'s sole at ``position`` with its z axis as close to
    ``normal`` as the leg allows (both in {B}): damped least squares on the position, the
    tilt ``z x n*`` (yaw projected out) in its null space, clipped to the joint limits.
    Returns the angles, position error [m] and tilt left [rad].
    """
    q = np.array(q_start, dtype=float)
    i = LEG_NAMES.index(leg)
    sl = leg_slice(leg)
    cols = slice(NV_BASE + sl.start, NV_BASE + sl.stop)
    fid = rm.foot_ids[i]
    n = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    position = np.asarray(position, dtype=float)
    lo, hi = rm.q_min[sl], rm.q_max[sl]
    model, data = rm.model, rm.data
    config = body_configuration(q)
    at = slice(NQ_BASE + sl.start, NQ_BASE + sl.stop)
    angles = q[sl]  # a view: the steps update q
    for _ in range(iterations):
        config[at] = angles
        pin.computeJointJacobians(model, data, config)
        M = pin.updateFramePlacement(model, data, fid)
        J = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)[:, cols]
        if _sole_step(np.ascontiguousarray(J), M.rotation, M.translation, position, n, angles,
                      lo, hi, damping**2):
            break
    pin.framesForwardKinematics(model, data, body_configuration(q))
    M = data.oMf[fid]
    tilt = float(np.arccos(np.clip(M.rotation[:, 2] @ n, -1.0, 1.0)))
    return q, float(np.linalg.norm(position - M.translation)), tilt


#: Leg solutions per robot model (:func:`_leg_reach`), dropped when full.
_LEG_REACH_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LEG_REACH_CACHE_SIZE = 4096


def _leg_reach(rm: RobotModel, leg: str, p: np.ndarray, n: np.ndarray, q: np.ndarray
               ) -> tuple[np.ndarray, float, float]:
    """``leg``'s angles (5,), sole error [m] and tilt [rad] at ``p`` along ``n`` (in {B}):
    :func:`sole_ik` from ``q`` (20,), else from the default stance; kept per exact
    ``(leg, p, n, q[leg])``, the only inputs the answer depends on."""
    sl = leg_slice(leg)
    cache = _LEG_REACH_CACHE.setdefault(rm, {})
    key = (leg, p.tobytes(), n.tobytes(), q[sl].tobytes())
    hit = cache.get(key)
    if hit is not None:
        return hit[0].copy(), hit[1], hit[2]
    q1, e1, t1 = sole_ik(rm, leg, p, n, q)
    if e1 > REACH_TOLERANCE or t1 > TILT_TOLERANCE:  # a local minimum: start over
        q0 = q.copy()
        q0[sl] = rm.robot.default_joint_angles()[sl]
        q2, e2, t2 = sole_ik(rm, leg, p, n, q0)
        if (e2, t2) < (e1, t1):
            q1, e1, t1 = q2, e2, t2
    if len(cache) >= _LEG_REACH_CACHE_SIZE:
        cache.clear()
    cache[key] = (q1[sl].copy(), e1, t1)
    return q1[sl], e1, t1


def reach(rm: RobotModel, body: pin.SE3, tops: dict[str, np.ndarray],
          normals: dict[str, np.ndarray], q_start: np.ndarray,
          legs: tuple[str, ...] = LEG_NAMES, give_up: float | None = None) -> Reach | None:
    """:func:`sole_ik` of ``legs`` onto their hold tops [m, {S}] along their normals, from
    ``q_start`` (else from the default stance); the other legs keep their angles. With
    ``give_up`` [rad], None as soon as one leg misses its hold by more."""
    q = np.array(q_start, dtype=float)
    errors, tilts = {}, {}
    for leg in legs:
        p = body.actInv(pin.SE3(np.eye(3), tops[leg])).translation
        n = body.rotation.T @ normals[leg]
        sl = leg_slice(leg)
        q[sl], e1, t1 = _leg_reach(rm, leg, p, n, q)
        errors[leg], tilts[leg] = e1, t1
        if give_up is not None and (e1 > REACH_TOLERANCE or t1 > give_up):
            return None
    return Reach(q, errors, tilts)


def shifted_body(rm: RobotModel, body: pin.SE3, tops: dict[str, np.ndarray],
                 normals: dict[str, np.ndarray], q_start: np.ndarray, max_shift: float = 0.04,
                 steps: int = 2, tilt: float = HELD_TILT_TOLERANCE
                 ) -> tuple[pin.SE3, Reach] | None:
    """A body pose near ``body``, with its reach, from which every leg reaches its hold
    within ``tilt`` [rad], else None: legs that fall short pull the body in the wall's plane
    by their mean shortfall, at most ``steps`` times and ``max_shift`` [m] from ``body``."""
    R, n = body.rotation, body.rotation[:, 2]
    p = body.translation.copy()
    for k in range(steps + 1):
        b = pin.SE3(R, p)
        r = reach(rm, b, tops, normals, q_start, LEG_NAMES, tilt if k == steps else None)
        if r is None:
            return None
        if r.within(tilt):
            return b, r
        feet = foot_poses(rm, body_configuration(r.q))
        short = [tops[leg] - b.act(f.translation)
                 for leg, f in zip(LEG_NAMES, feet, strict=True)
                 if r.errors[leg] > REACH_TOLERANCE]
        if not short:
            return None
        d = np.mean(short, axis=0)
        off = p + d - body.translation
        off -= (off @ n) * n
        norm = float(np.linalg.norm(off))
        if norm > max_shift:
            off *= max_shift / norm
        p = body.translation + off
    return None


@dataclass(frozen=True)
class Support:
    """The wrench QP at one stance: whether it balances the body within every hold's limits
    and the servos' torques, the wrenches (4, 6) [N, N m] and each hold's gauge in its
    limits (0 for a swing leg)."""

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
    state = RobotState(body.translation, body.rotation, q_joints)
    qp = WrenchQP(limits, rm.tau_max)
    load = {leg: (0.0 if leg == swing else 1.0) for leg in LEG_NAMES}
    sol = qp.solve(statics.evaluate(state.q()), load)
    W = sol.F.reshape(len(LEG_NAMES), 6)
    gauges = np.array([0.0 if leg == swing else _box_gauge(lim, W[i])
                       for i, (leg, lim) in enumerate(zip(LEG_NAMES, limits, strict=True))])
    return Support(sol.status is WrenchStatus.OPTIMAL, W, gauges)
