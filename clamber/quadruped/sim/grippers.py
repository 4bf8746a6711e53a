"""Simulated grippers: MuJoCo weld constraints switched on at a grasp, off at a release or an
overload.

A gripper attaches only when commanded while its sole is on a hold (within the hold's capture
radius of the top centre, and within ``reach`` of the top along the normal); the weld then
fixes the gripper (or its sole pad) to the world at its current pose. Every physics step the
total wrench the rock applies on the gripper (weld plus footpad contacts, from MuJoCo's
``cfrc_ext``), in the sole frame, goes to the failure model of :mod:`.failure`: the gripper
breaks off (weld off) when that wrench has left the gripper's achievable wrench set (the
SPASAS kinetostatic model, combined loading, scaled per axis by the hold's
``capacity_factor``, see :class:`~clamber.quadruped.sim.world.RockSpec`) long enough for the
spines to slide off their asperities (0.5 mm; 6 ms at 15 N over the set, 20 ms at 1 N). The
controllers' conservative box lies inside the set (1.17 times the box fits; at the weakest
hold factor, 0.7, the box itself does not always).

Compliant sole (:class:`SoleCompliance`, default on in climbing scenes): a 5-DOF leg can
neither apply nor sense a moment about the gripper's x and y axes, so with a rigid weld any
misfit of the four-leg closure ends as a moment no controller sees. The real gripper gives
there (spine modules on preloaded springs, phalanges closing through tendons and torsion
springs, a rubber footpad), so the sole is a thin pad hung from the gripper on two
spring-damper hinges about x and y, and the weld and footpad contact act on the pad. Two
opposed phalanges at +-35 mm, each about 10 N/mm along the normal, give
2 x 1e4 N/m x 0.035^2 = 25 N m/rad. ``sole=None`` (``--sole-stiffness 0``) keeps the rigid
weld. The weld itself is as stiff as the physics step allows (:func:`weld_timeconst`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import mujoco
import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.model.description import foot_name
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim import failure_kernels as kernels
from clamber.quadruped.sim.failure import FailureClock, SpineSlip, WrenchSet
from clamber.quadruped.sim.world import Hold


@dataclass(frozen=True)
class SoleCompliance:
    """Passive compliance of the gripper's sole about its x and y axes.

    ``stiffness`` [N m/rad] and ``damping`` [N m s/rad] of each hinge, ``armature`` [kg m^2]
    (reflected inertia that keeps the light pad's own mode slow enough for the physics
    step), ``pad_mass`` [kg] taken from the gripper body, ``range`` [rad] of each hinge.
    """

    stiffness: float = 25.0
    damping: float = 0.3
    armature: float = 1e-3
    pad_mass: float = 0.03
    range: float = 0.3

    def __post_init__(self) -> None:
        check.numeric_fields(self, "sole", strict=True,
                             names=("stiffness", "damping", "pad_mass", "range"))
        check.non_negative("sole", "armature", self.armature)


def _seven(factor: np.ndarray) -> np.ndarray:
    """A hold's capacity factors as seven: the six axes and compression (``+f_z``; a hold of
    six factors scales compression like pull)."""
    f = np.asarray(factor, dtype=float)
    return f if f.shape == (7,) else np.append(f, f[2])


#: The default sole compliance of climbing scenes.
DEFAULT_SOLE = SoleCompliance()


def pad_name(leg: str) -> str:
    """Name of ``leg``'s compliant sole pad body in a climbing scene."""
    return f"{leg}_pad"


def add_compliant_soles(spec: mujoco.MjSpec, gripper_height: float,
                        compliance: SoleCompliance) -> None:
    """Hang a pad body from each gripper's sole on two spring-damper hinges (x and y).

    The pad carries the footpad contact box (the lowest centimetre of the gripper); the
    gripper's own box is shortened by as much and keeps colliding above it. The pad's mass
    is taken from the gripper body (whose centre of mass stays put, 2 mm from the exact
    split), so the robot weighs the same.
    """
    c = compliance
    pad_half = 0.005
    for leg in LEG_NAMES:
        gripper = spec.body(f"{leg}_gripper")
        box = spec.geom(f"{leg}_gripper_geom")
        half = np.array(box.size, dtype=float)
        box.size = [half[0], half[1], half[2] - pad_half]
        box.pos = [box.pos[0], box.pos[1], -gripper_height + 2 * pad_half + half[2] - pad_half]
        scale = (gripper.mass - c.pad_mass) / gripper.mass
        gripper.mass -= c.pad_mass
        gripper.inertia = np.asarray(gripper.inertia) * scale
        pad = gripper.add_body()
        pad.name = pad_name(leg)
        pad.pos = [0.0, 0.0, -gripper_height]
        pad.mass = c.pad_mass
        pad.ipos = [0.0, 0.0, pad_half]
        side = 2 * half[0]
        pad.inertia = [c.pad_mass * side**2 / 12] * 2 + [c.pad_mass * side**2 / 6]
        pad.explicitinertial = True
        for axis, tag in (([1.0, 0.0, 0.0], "x"), ([0.0, 1.0, 0.0], "y")):
            j = pad.add_joint()
            j.name, j.type, j.axis = f"{leg}_sole_{tag}", mujoco.mjtJoint.mjJNT_HINGE, axis
            j.stiffness = [c.stiffness, 0.0, 0.0]
            j.damping = [c.damping, 0.0, 0.0]
            j.armature = c.armature
            j.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            j.range = [-c.range, c.range]
        g = pad.add_geom()
        g.name, g.type = f"{leg}_pad_geom", mujoco.mjtGeom.mjGEOM_BOX
        g.size = [half[0], half[1], pad_half]
        g.pos = [0.0, 0.0, pad_half]
        g.rgba = [0.1, 0.1, 0.1, 1.0]
        s = pad.add_site()
        s.name = f"{leg}_pad_site"


class GripperState(enum.Enum):
    OPEN = "open"
    ATTACHED = "attached"
    BROKEN = "broken"


def weld_name(leg: str) -> str:
    """Name of ``leg``'s gripper weld in the scene."""
    return f"{leg}_weld"


#: Impedance of the grasp welds (MuJoCo's ``solimp``): 0.99 at rest rising to 0.999 within
#: 1 mm of violation (MuJoCo's default, 0.9-0.95, lets a weld give way about as much as the
#: 25 N m/rad sole tilts).
WELD_SOLIMP = (0.99, 0.999, 0.001, 0.5, 2.0)


def weld_timeconst(physics_dt: float) -> float:
    """Time constant [s] of the grasp welds at the physics step ``physics_dt`` [s]: two steps,
    the stiffest MuJoCo integrates stably (and the least it accepts), so the weld tends to a
    rigid grasp as the step shrinks and the sole hinges carry the gripper's compliance."""
    return 2.0 * physics_dt


def add_welds(spec: mujoco.MjSpec, compliant: bool = False) -> None:
    """Add one inactive weld per gripper (to the world) to a model spec: on the gripper body,
    or on its sole pad when the scene has compliant soles (:func:`add_compliant_soles`); as
    stiff as the spec's timestep allows (:func:`weld_timeconst`), so set that first."""
    for leg in LEG_NAMES:
        eq = spec.add_equality()
        eq.name = weld_name(leg)
        eq.type = mujoco.mjtEq.mjEQ_WELD
        eq.objtype = mujoco.mjtObj.mjOBJ_BODY
        eq.name1 = pad_name(leg) if compliant else f"{leg}_gripper"
        eq.solref = [weld_timeconst(spec.option.timestep), 1.0]
        eq.solimp = list(WELD_SOLIMP)
        eq.active = False


@dataclass(frozen=True)
class GripperEvent:
    """Something that happened to a gripper at time ``t`` [s]: attach, release, break, miss."""

    t: float
    leg: str
    kind: str
    detail: str = ""


class GripperBank:
    """The four grippers of a climbing scene; owns the welds' activation and their checks.

    ``wrench_set`` is the gripper's achievable wrench set the holds' factors scale (default
    :func:`~.failure.default_wrench_set`), ``slip`` the failure clock's parameters;
    ``reach`` [m] the largest distance of the sole from a hold top along its normal at which
    a grasp still closes.
    """

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData,
                 wrench_set: WrenchSet | None = None, slip: SpineSlip | None = None,
                 reach: float = 0.02) -> None:
        check.positive("grippers", "reach", reach)
        self.model, self.data = model, data
        #: What the wrenches are formed from: views into MjData's buffers (which never move).
        self._sources = (data.cfrc_ext, data.subtree_com, data.site_xpos, data.site_xmat)
        self.reach = reach
        self.clock = FailureClock(len(LEG_NAMES), wrench_set, slip)
        self.eq = {leg: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_EQUALITY, weld_name(leg))
                   for leg in LEG_NAMES}
        if min(self.eq.values()) < 0:
            raise ConfigError("the scene has no gripper welds; build it with add_welds")
        #: Whether the soles are compliant pads (the weld then holds the pad).
        self.compliant = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY,
                                           pad_name(LEG_NAMES[0])) >= 0
        self.gripper_body = {leg: model.body(f"{leg}_gripper").id for leg in LEG_NAMES}
        self.body = ({leg: model.body(pad_name(leg)).id for leg in LEG_NAMES}
                     if self.compliant else self.gripper_body)
        self.site = {leg: model.site(foot_name(leg)).id for leg in LEG_NAMES}
        #: Frame of the wrench check: the pad's (the spines') when compliant, else the sole.
        self.wrench_site = ({leg: model.site(f"{leg}_pad_site").id for leg in LEG_NAMES}
                            if self.compliant else self.site)
        #: Geoms of each gripper that touch the rock (its box, and its pad when compliant).
        self.geoms = {leg: (model.geom(f"{leg}_gripper_geom").id,)
                      + ((model.geom(f"{leg}_pad_geom").id,) if self.compliant else ())
                      for leg in LEG_NAMES}
        self.state = dict.fromkeys(LEG_NAMES, GripperState.OPEN)
        self.hold: dict[str, Hold | None] = dict.fromkeys(LEG_NAMES)
        #: Latest gauge of each gripper's wrench (rows in ``LEG_NAMES`` order): exact above 1
        #: (outside), else an upper bound <= 1 (the certificate that held it inside).
        self.gauges = np.zeros(len(LEG_NAMES))
        self.events: list[GripperEvent] = []
        #: Per tuple of legs: index rows (5, k) (see :meth:`_index`).
        self._indices: dict[tuple[str, ...], np.ndarray] = {}
        #: Attached legs, their index rows and their holds' capacity factors (k, 6) or
        #: (k, 7), kept with ``state``.
        self._attached: tuple[str, ...] = ()
        self._attached_index = np.zeros((5, 0), dtype=np.int64)
        self._factors = np.zeros((0, 6))
        #: :meth:`check`'s work arrays: wrenches (k, 6), over the factors, gauge bounds (k,),
        #: and :func:`.failure_kernels.check_step`'s arguments (all kept with ``state``).
        self._work = (np.zeros((0, 6)), np.zeros((0, 6)), np.zeros(0))
        self._check_args: tuple = ()
        #: While False (the robot being placed on the wall), overloads are recorded, not fatal.
        self.breakable = True

    @property
    def attached(self) -> tuple[str, ...]:
        return self._attached

    def _set_state(self, leg: str, state: GripperState, hold: Hold | None) -> None:
        """The one place a gripper's state changes (keeps the attached legs' cache)."""
        self.state[leg], self.hold[leg] = state, hold
        self._attached = tuple(g for g in LEG_NAMES if self.state[g] is GripperState.ATTACHED)
        factors = [np.asarray(self.hold[g].capacity_factor, dtype=float)
                   for g in self._attached]
        if any(f.shape == (7,) for f in factors):
            factors = [_seven(f) for f in factors]
        self._factors = np.array(factors, dtype=float) if factors else np.zeros((0, 6))
        self._attached_index = self._index(self._attached)
        k = len(self._attached)
        self._work = (np.empty((k, 6)), np.empty((k, 6)), np.empty(k))
        self._check_args = (*self._sources, self._attached_index, self.compliant,
                            self._factors, *self._work, *self.clock.certify_args, self.gauges)

    def peak_loads(self) -> dict[str, float]:
        """Largest gauge of each gripper's wrench since :meth:`reset_peaks`."""
        return dict(zip(LEG_NAMES, self.clock.peaks().tolist(), strict=True))

    def reset_peaks(self) -> None:
        self.clock.reset_peaks()

    def penetration(self) -> dict[str, float]:
        """Per leg whose gripper (box or pad) is in the rock, its deepest contact's depth [m],
        from the last ``mj_forward``."""
        depth: dict[str, float] = {}
        con = self.data.contact[:self.data.ncon]
        for leg, ids in self.geoms.items():
            hit = np.isin(con.geom1, ids) | np.isin(con.geom2, ids)
            if np.any(hit & (con.dist < 0.0)):
                depth[leg] = float(-con.dist[hit].min())
        return depth

    def on_hold(self, leg: str, hold: Hold) -> bool:
        """Whether ``leg``'s sole is within the hold's capture radius and reach."""
        d = self.data.site_xpos[self.site[leg]] - hold.top
        along = float(d @ hold.normal)
        lateral = float(np.linalg.norm(d - along * hold.normal))
        return lateral <= hold.capture_radius and abs(along) <= self.reach

    def attach(self, leg: str, hold: Hold) -> bool:
        """Close ``leg``'s gripper on ``hold``; False (and a "miss" event) if not on it."""
        if self.state[leg] is GripperState.ATTACHED:
            raise ConfigError(f"gripper {leg} is already attached")
        if not self.on_hold(leg, hold):
            self.events.append(GripperEvent(self.data.time, leg, "miss", hold.name))
            return False
        eq, b = self.eq[leg], self.body[leg]
        data = np.zeros(self.model.eq_data.shape[1])
        data[0:3] = self.data.xpos[b]
        data[6:10] = self.data.xquat[b] * np.array([1.0, -1.0, -1.0, -1.0])
        data[10] = 1.0
        self.model.eq_data[eq] = data
        self.data.eq_active[eq] = 1
        self._set_state(leg, GripperState.ATTACHED, hold)
        self.clock.reset(LEG_NAMES.index(leg))
        self.events.append(GripperEvent(self.data.time, leg, "attach", hold.name))
        return True

    def release(self, leg: str) -> None:
        """Open ``leg``'s gripper (no effect on an open one)."""
        if self.state[leg] is GripperState.ATTACHED:
            self.events.append(GripperEvent(self.data.time, leg, "release",
                                            self.hold[leg].name))
        self.data.eq_active[self.eq[leg]] = 0
        self._set_state(leg, GripperState.OPEN, None)

    def wrenches(self, legs: tuple[str, ...]) -> np.ndarray:
        """Total wrenches [f, tau] (len(legs), 6) the rock applies on the grippers of ``legs``
        (weld plus footpad contacts), in each sole (pad) frame.

        MuJoCo's ``cfrc_ext`` (after ``mj_rnePostConstraint``) holds every body's external
        wrench from contacts and equality constraints as ``[torque, force]`` about the
        subtree centre of mass; the gripper's and its pad's are summed (same reference
        point), shifted to the sole and rotated into the sole (pad) frame
        (:func:`.failure_kernels.sole_wrenches`).
        """
        legs = tuple(legs)
        out = np.empty((len(legs), 6))
        if legs:
            mujoco.mj_rnePostConstraint(self.model, self.data)
            kernels.sole_wrenches(*self._sources, self._index(legs), self.compliant, out)
        return out

    def _index(self, legs: tuple[str, ...]) -> np.ndarray:
        """Index rows (5, k) of ``legs`` (cached per tuple): the bodies the welds hold, the
        gripper bodies, the wrench sites, the root bodies and the rows in ``LEG_NAMES``."""
        idx = self._indices.get(legs)
        if idx is None:
            bodies = [self.body[leg] for leg in legs]
            idx = self._indices[legs] = np.array(
                [bodies, [self.gripper_body[leg] for leg in legs],
                 [self.wrench_site[leg] for leg in legs], self.model.body_rootid[bodies],
                 [LEG_NAMES.index(leg) for leg in legs]], dtype=np.int64).reshape(5, -1)
        return idx

    def check(self, dt: float) -> list[str]:
        """Advance the failure clocks of the attached grippers by ``dt`` [s] (one physics
        step) under their present wrenches (:meth:`wrenches`); break off those whose spines
        slid off. Where every wrench is certified inside its set this is one compiled call
        (:func:`.failure_kernels.check_step`), else :meth:`.FailureClock.uncertified`.

        Returns the legs that broke off in this call.
        """
        legs = self._attached
        if not legs:
            return []
        mujoco.mj_rnePostConstraint(self.model, self.data)
        if kernels.check_step(*self._check_args):
            return []
        w, ws, g = self._work
        rows = self._attached_index[4]
        g, failed = self.clock.uncertified(rows, w, ws, g, dt)
        self.gauges[rows] = g
        if not (failed.any() and self.breakable):
            return []
        broken: list[str] = []
        for i in np.flatnonzero(failed):
            leg = legs[i]
            self.events.append(GripperEvent(self.data.time, leg, "break",
                                            f"gauge {g[i]:.2f}, wrench {w[i].round(2)}"))
            self.data.eq_active[self.eq[leg]] = 0
            self._set_state(leg, GripperState.BROKEN, self.hold[leg])
            broken.append(leg)
        return broken
