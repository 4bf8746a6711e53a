"""Every bound and weight of the jumper trajectory optimization, in one documented place.

Bounds decide the answer: the shortest allowed phase, the torque and speed limits and the
clearances all bind at the optimum. They are stated as physical quantities (phase
durations in seconds, not time steps), so refining the grid keeps the same problem.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace
from functools import cache

from clamber import _validate as check
from clamber.attachment.safe_region import SafeRegion
from clamber.exceptions import ConfigError

COLLOCATIONS = ("trapezoidal", "hermite-simpson")
BACKENDS = ("compiled", "reference")
#: IPOPT's ``mumps_scaling`` values (MUMPS ICNTL(8)) accepted here: none, diagonal, column,
#: row and column, iterative, iterative with column, automatic.
MUMPS_SCALINGS = (0, 1, 3, 4, 7, 8, 77)
#: The physical quantity (a key of :data:`clamber._validate.RANGES`) of each numeric
#: setting: its range is stated there, once for every command and file.
QUANTITIES = {
    "torque_limit": "joint_torque", "joint_speed_limit": "joint_speed",
    "no_load_speed": "no_load_speed", "joint_angle_limit": "joint_angle",
    "foot_radius": "foot_radius", "motor_radius": "motor_radius",
    "torque_rate_weight": "torque_rate_weight", "catch_approach_speed": "approach_speed",
    "start_joint_speed_max": "joint_speed", "release_force_max": "release_force",
    "min_height_gain": "height_gain", "speed_margin": "fraction",
    "clearance_margin": "clearance_margin", "release_clearance": "release_clearance",
    "force_margin": "force_margin",
    "max_iterations": "ipopt_iterations", "tolerance": "ipopt_tolerance",
    "warm_bound_push": "bound_push",
}


@dataclass(frozen=True)
class OptimizationSettings:
    """Tuning guide for :func:`clamber.jumper.solve.optimize` (units in brackets)."""

    torque_limit: float = 0.25
    """|tau| bound per joint [N m]; the paper's robot peaked at 0.25 N m in push-off."""
    joint_speed_limit: float = 40.0
    """|d theta/dt| bound per joint [rad/s]."""
    no_load_speed: float = 0.0
    """If > 0, enforce the motor line |tau| <= torque_limit (1 - |w| / no_load_speed) [rad/s]."""
    motor_headroom: float = 0.0
    """Share h of the motor line kept free in the phases of ``motor_headroom_phases``, in
    [0, 0.5) [-]: there ``|tau + k w| <= (1 - h) torque_limit`` (``k = torque_limit /
    no_load_speed``, 0 without a speed line). ``tau + k w`` is the line's voltage in units
    of torque, so h is the share of it the plan leaves to feedback; with ``no_load_speed``
    0 it is the share of the torque (the current, and the voltage it takes) the plan may
    not use. 0 (default) plans on the full line. On the long-climb design it lost climbs
    at every share tried (docs/results/long_climbs.md, "Headroom on the motor line")."""
    motor_headroom_phases: tuple[int, ...] = (1, 2)
    """Phases (1-5) whose motor-line rows keep ``motor_headroom`` [-]; default the two
    stance phases of the push-off, where the take-off is decided."""
    joint_angle_limit: float = 2.6
    """|theta_i| bound on the relative joint angles [rad] (about 149 deg)."""
    phase_duration_min: tuple[float, ...] = (0.090, 0.045, 0.075, 0.045, 0.060)
    """Shortest duration of each phase [s] (5 ms per coarse interval)."""
    phase_duration_max: tuple[float, ...] = (0.270, 0.135, 0.225, 0.135, 0.180)
    """Longest duration of each phase [s] (15 ms per coarse interval: longer steps let the
    optimizer exploit discretization error)."""
    foot_radius: float = 0.010
    """r_foot [m]: a gripper is a disc; attached its centre sits at x = r_foot, free x >= r_foot."""
    motor_radius: float = 0.015
    """Inner joints (shoulder, spine, hip) stay this far from the wall [m]."""
    safe_region_front: SafeRegion = field(default_factory=SafeRegion.spined)
    """Wall forces the front gripper holds [N]. Default: the paper's 30 deg sector and
    15 N cap, closed on the pushing side by friction 0.3 (:meth:`SafeRegion.spined`); the
    bare sector let the optimum drag a pushed gripper down the wall with an implied
    friction coefficient of 1.7."""
    safe_region_rear: SafeRegion = field(default_factory=SafeRegion.spined)
    """Same for the rear gripper [N]."""
    torque_rate_weight: float = 1e-2
    """Penalty on torque changes between nodes, sum((dtau / torque_limit)^2) / N, in
    units of the objective [m/s]; makes the reference trackable and the optimum smooth
    enough to interpolate onto a finer grid (0 turns it off)."""
    catch_approach_speed: float = 0.0
    """Least speed [m/s] at which a catching gripper moves into the wall just before its
    catch; 0 allows catches that only graze the wall, which perturbations turn into misses."""
    start_joint_speed_max: float | None = None
    """|d theta/dt| bound on every joint at the jump's start [rad/s], hence (periodicity)
    at its end; None leaves it free. Small values make a gait that comes to rest in the
    stance, so a later jump starts from the state the landing leaves rather than from
    the optimum's moving start (the landing's residual motion is what it can settle)."""
    release_force_max: float | None = None
    """|f_x|, |f_y| bound [N] on a gripper's wall force at the node where it is released
    (the front at the end of phase 1, the rear at the end of phase 2); None leaves it
    free. A gripper released under load kicks the robot off its planned take-off."""
    min_height_gain: float = 0.0
    """Lower bound on the height gained per jump [m]."""
    speed_margin: float = 0.1
    """Fraction of ``joint_speed_limit`` kept free at the nodes [-]: the speed peaks
    between nodes (an independent replay of the default optimum overshot the node
    limit by 3.3 rad/s, 8 %, without it)."""
    clearance_margin: float = 0.001
    """Extra clearance of the joints' motors at the nodes [m]. Free grippers get none: a
    released gripper starts on the wall, so a margin there is infeasible; the replay
    dips about 0.5 mm into the foot clearance next to releases and catches."""
    release_clearance: float = 0.0
    """Distance a free gripper keeps from the wall between its release and its catch [m],
    on top of its radius: the bound grows linearly over the first phase the gripper is
    free and falls back linearly over the last (it leaves and reaches the wall touching
    it). 0 (default, the stored designs) lets a released gripper slide along the wall,
    where a perturbed robot's gripper drags and stalls its joint; the long-climb design
    re-optimized with 3 and 6 mm lost in the simulator (docs/results/long_climbs.md, "A
    front gripper that drags on the wall")."""
    force_margin: float = 0.15
    """Distance [N] kept from every safe-region row at the nodes (the replay's forces
    left the region by up to 0.12 N between nodes without it, by none with it)."""
    collocation: str = "trapezoidal"
    """'trapezoidal' (the paper's) or 'hermite-simpson' (4th order, adds midpoints)."""
    max_iterations: int = 1500
    """IPOPT iteration budget; running out is the status MAX_ITERATIONS, not an error."""
    tolerance: float = 1e-6
    """IPOPT's optimality tolerance (scaled NLP error); constraints always hold to 1e-6."""
    warm_bound_push: float = 0.01
    """IPOPT's ``bound_push`` and ``bound_frac`` for warm starts from the seed or another
    design's solution [-, relative]: how far the start is pushed inside its bounds. 1e-2
    took 30 % fewer coarse iterations than 1e-5 on 7 morphologies (see
    docs/results/jumper_trajopt.md). Refinement of the same robot keeps 1e-5
    (``clamber.jumper.solve.REFINE_BOUND_PUSH``); cold starts keep IPOPT's default."""
    mumps_scaling: int = 77
    """IPOPT's ``mumps_scaling`` (MUMPS ICNTL(8), one of :data:`MUMPS_SCALINGS`) for solves
    from the seed, a designed guess or another design's solution: how MUMPS scales each
    KKT matrix before factorizing it. 77 (automatic) is IPOPT's default; 0 (none) took
    1.1x less time on the coarse grid and reached the reference optimum on 16 of 17
    morphologies, but its coarse solution differs by rounding and the nominal robot's
    refinement from it then ends on another optimum (0.570 instead of 0.573 m/s), so it
    is not the default here; the co-design fitness uses 0
    (:func:`clamber.experiments.fitness.fitness_settings`; docs/results/jumper_codesign.md)."""
    refine_mumps_scaling: int = 0
    """``mumps_scaling`` when refining a solution of the same robot: 0 (none) took 1.5x
    less time than 77 on the nominal refinement, to the same optimum (fewer delayed
    pivots, backsolves and factorizations; see docs/results/jumper_trajopt.md)."""
    fast_step_computation: bool = False
    """IPOPT's ``fast_step_computation`` for solves from the seed, a designed guess or
    another design's solution (as ``mumps_scaling``): each Newton step from one MUMPS
    backsolve, its residual not checked (about 40 % less backsolve time). Refinement of
    the same robot keeps checked steps (fast ones took more iterations there). Off here,
    so single solves keep the published optimum; the co-design fitness turns it on (see
    docs/results/jumper_codesign.md, "Throughput")."""
    drop_duplicate_rows: bool = False
    """Leave out the constraint rows that only repeat a simple bound: the motor-line rows
    when ``no_load_speed`` and ``motor_headroom`` are 0 (``|tau| <= torque_limit`` is then
    the torque bound itself). Same feasible set, a KKT system 8 % smaller; a new
    structure, compiled once (see docs/results/jumper_trajopt.md, "Where a solve's time goes")."""
    backend: str = "compiled"
    """How the NLP's functions are evaluated: 'compiled' (generated C, cached on disk; falls
    back to 'reference' without a C compiler) or 'reference' (CasADi's SX virtual machine).
    Same optimum, different speed: see docs/results/jumper_trajopt.md."""

    def __post_init__(self) -> None:
        headroom = check.in_range("settings", "motor_headroom", self.motor_headroom,
                                  "motor_headroom")
        object.__setattr__(self, "motor_headroom", headroom)
        object.__setattr__(self, "motor_headroom_phases",
                           _phase_list("motor_headroom_phases", self.motor_headroom_phases))
        check.numeric_fields(self, "settings", names=[
            f.name for f in fields(self) if check.is_real(getattr(self, f.name))])
        check.numeric_fields(self, "settings", strict=True,
                             names=("torque_limit", "joint_speed_limit", "joint_angle_limit",
                                    "foot_radius", "tolerance", "warm_bound_push"))
        for name in ("start_joint_speed_max", "release_force_max"):  # optional bounds
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, float | int)
                                  or not math.isfinite(v) or v < 0):
                raise ConfigError(f"settings.{name} = {v!r}: must be a number >= 0 or unset")
        for name, quantity in QUANTITIES.items():
            if getattr(self, name) is not None and name != "max_iterations":
                check.in_range("settings", name, getattr(self, name), quantity)
        if self.speed_margin >= 1:
            raise ConfigError(f"settings.speed_margin = {self.speed_margin}: must be < 1")
        if self.collocation not in COLLOCATIONS:
            raise ConfigError(
                f"settings.collocation = {self.collocation!r}; allowed: {COLLOCATIONS}"
            )
        for name in ("drop_duplicate_rows", "fast_step_computation"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"settings.{name} = {getattr(self, name)!r}: "
                                  "must be True or False")
        if self.backend not in BACKENDS:
            raise ConfigError(f"settings.backend = {self.backend!r}; allowed: {BACKENDS}")
        bounds = []
        for name in ("phase_duration_min", "phase_duration_max"):
            value = getattr(self, name)
            if isinstance(value, str | bytes | dict) or not hasattr(value, "__len__") \
                    or len(value) != 5:
                raise ConfigError(f"settings.{name} = {value!r}: must be a list of 5 "
                                  "durations [s], one per phase")
            bounds.append(tuple(check.number("settings", f"{name}[{i}]", x)
                                for i, x in enumerate(value)))
        lo, hi = bounds
        for i, (a, b) in enumerate(zip(lo, hi, strict=True), start=1):
            if not (0 < a < b) or not math.isfinite(b):
                raise ConfigError(
                    f"phase {i}: duration bounds [{a}, {b}] s must satisfy 0 < min < max < inf"
                )
            check.in_range("settings", f"phase_duration_min[{i - 1}]", a, "phase_duration")
            check.in_range("settings", f"phase_duration_max[{i - 1}]", b, "phase_duration")
        object.__setattr__(self, "phase_duration_min", lo)
        object.__setattr__(self, "phase_duration_max", hi)
        r = check.RANGES["ipopt_iterations"]
        check.integer("settings", "max_iterations", self.max_iterations, low=int(r.low),
                      high=int(r.high))
        for name in ("safe_region_front", "safe_region_rear"):
            check_safe_region(f"settings.{name}", getattr(self, name), self.force_margin)
        for name in ("mumps_scaling", "refine_mumps_scaling"):
            check.integer("settings", name, getattr(self, name))
            check.choice("settings", name, getattr(self, name), MUMPS_SCALINGS)

    def motor_line_limit(self, phase: int) -> float:
        """Right-hand side [N m] of ``|tau + k w| <= ...`` in ``phase`` (1-5): the torque
        limit less the ``motor_headroom`` share where that phase keeps it."""
        if phase in self.motor_headroom_phases:
            return self.torque_limit * (1.0 - self.motor_headroom)
        return self.torque_limit

    def with_(self, **changes) -> OptimizationSettings:
        """A copy with some fields changed (validated)."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise ConfigError(f"unknown settings {sorted(unknown)}")
        return replace(self, **changes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["safe_region_front"] = self.safe_region_front.to_dict()
        d["safe_region_rear"] = self.safe_region_rear.to_dict()
        d["phase_duration_min"] = list(self.phase_duration_min)
        d["phase_duration_max"] = list(self.phase_duration_max)
        d["motor_headroom_phases"] = list(self.motor_headroom_phases)
        for name in ("drop_duplicate_rows", "fast_step_computation"):
            if not d[name]:  # left out at their default: older runs resume
                del d[name]
        if self.motor_headroom == 0.0:  # left out without headroom: older runs resume
            del d["motor_headroom"], d["motor_headroom_phases"]
        if self.release_clearance == 0.0:  # likewise
            del d["release_clearance"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> OptimizationSettings:
        if not isinstance(d, dict):
            raise ConfigError(f"settings = {d!r}: must be a table of settings")
        allowed = {f.name for f in fields(cls)}
        unknown = set(d) - allowed
        if unknown:
            raise ConfigError(
                f"unknown settings keys {sorted(unknown)}; allowed: {sorted(allowed)}"
            )
        d = dict(d)
        for key in ("safe_region_front", "safe_region_rear"):
            if key in d and isinstance(d[key], dict):
                d[key] = SafeRegion.from_dict(d[key])
        for key in ("phase_duration_min", "phase_duration_max", "motor_headroom_phases"):
            if isinstance(d.get(key), list):
                d[key] = tuple(d[key])
        return cls(**d)


def _phase_list(name: str, value: object) -> tuple[int, ...]:
    """A non-empty list of distinct phase numbers 1-5, as a sorted tuple."""
    if isinstance(value, str | bytes | dict) or not hasattr(value, "__iter__"):
        raise ConfigError(f"settings.{name} = {value!r}: must be a list of phase numbers 1-5")
    phases = tuple(check.integer("settings", f"{name}[{i}]", p, low=1, high=5)
                   for i, p in enumerate(value))
    if not phases or len(set(phases)) != len(phases):
        raise ConfigError(f"settings.{name} = {value!r}: must name each phase (1-5) at "
                          "most once, at least one")
    return tuple(sorted(phases))


@cache
def _inscribed_radius(A_bytes: bytes, b_bytes: bytes, rows: int) -> float:
    """Radius [N] of the largest disc inside ``A f <= b`` (its Chebyshev ball), inf when
    unbounded; an LP, cached per region."""
    import numpy as np
    from scipy.optimize import linprog

    A = np.frombuffer(A_bytes).reshape(rows, 2)
    b = np.frombuffer(b_bytes)
    norms = np.linalg.norm(A, axis=1)
    res = linprog([0.0, 0.0, -1.0], A_ub=np.column_stack([A, norms]), b_ub=b,
                  bounds=[(None, None), (None, None), (0, None)], method="highs")
    if res.status == 3:  # unbounded: the region holds arbitrarily large discs
        return math.inf
    return float(res.x[2]) if res.status == 0 else 0.0


def check_safe_region(what: str, region: SafeRegion, force_margin: float) -> None:
    """A safe region the optimizer can use: its load cap (largest ``b_i / |a_i|``) within
    ``RANGES['gripper_load']`` and room inside for a force ``force_margin`` [N] from every
    row (the margin the nodes keep); a thinner region leaves the NLP without a feasible
    force and IPOPT searching until its budget runs out."""
    import numpy as np

    if not isinstance(region, SafeRegion):
        raise ConfigError(f"{what} = {region!r}: must be a safe region (a table of A and b "
                          "or of angle_deg and max_load_n)")
    A, b = np.asarray(region.A, dtype=float), np.asarray(region.b, dtype=float)
    norms = np.linalg.norm(A, axis=1)
    if np.any(norms == 0):
        raise ConfigError(f"{what}: a row of A is zero")
    cap = check.RANGES["gripper_load"].high
    loads = b / norms
    if np.any(loads > cap):
        raise ConfigError(f"{what}: a load bound of {loads.max():.4g} N is outside the "
                          f"gripper load range {check.range_text('gripper_load')}")
    radius = _inscribed_radius(np.ascontiguousarray(A).tobytes(),
                               np.ascontiguousarray(b).tobytes(), A.shape[0])
    if radius <= force_margin:
        raise ConfigError(f"{what}: too thin: no force lies {force_margin:g} N "
                          f"(force_margin) inside every row (widest margin "
                          f"{radius:.3g} N); widen the sector or raise its load cap")
