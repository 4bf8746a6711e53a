r"""The Q-WBC attachment-wrench QP as named terms, built into reusable arrays.

Decision variable: ``F`` (24,), the four gripper wrenches ``[f, tau]`` in their gripper frames.

Objective (paper Eq. 1):
:math:`(AF-B)^T W_1 (AF-B) + F^T W_2 F + (F - F^*_{prev})^T W_3 (F - F^*_{prev})`.

Terms:

* **body dynamics** ``A F = B`` (Eq. 5). *Hard* in the nominal problem: it is Newton-Euler
  for the body, and any residual is a wrench the servos' compliance takes up uncontrolled.
  Under the equality the ``W_1`` term is identically zero, so it is left out of the Hessian
  there: keeping it only makes ``H`` badly scaled (a heavily weighted soft copy of a hard
  equality is what stops first-order solvers such as OSQP 15-19 N from the optimum) without
  changing the minimizer. When the equality cannot be met inside the limits the *relaxed*
  problem drops it and keeps ``W_1`` as a soft term, so ``W_1`` defines "closest feasible".
* **wrench norm** ``W_2`` per gripper, divided by ``load^2`` so that a gripper being unloaded
  before it swings costs more (its share moves to the others ahead of time).
* **smoothing** ``W_3`` toward the previous cycle's wrench.
* **gripper limits** ``H_i F_i <= load_i h_i`` in the gripper frame: a box becomes simple
  bounds, any other polytope general rows. Shrinking with ``load`` is the pre-swing ramp.
* **swing** grippers (load 0): ``F_i = 0``.
* **joint torques** ``|tau_bias - T F| <= margin * tau_max`` on the stance legs, so the
  distributed wrench never asks a servo for more than it has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control.qp_cycle_kernels import (
    BAD_LOAD,
    BOX_ROWS,
    INF,
    MIN_LOAD,
    PARAMETER_SIZE,
    buffer_views,
    fill_hard_box,
    parameter_views,
)
from clamber.quadruped.control.wbc_kernels import fill_box_problem
from clamber.quadruped.model.robot import JOINTS_PER_LEG, LEG_NAMES, N_JOINTS, N_LEGS
from clamber.quadruped.model.statics import N_WRENCH, Statics

#: Attributes whose rebinding takes the builder off the packed one-call cycle
#: (:attr:`WrenchProblemBuilder.packed`): they are views into its packed arrays, or the
#: build a caller replaced.
_PACKED_NAMES = frozenset({"tau_max", "leg_weights", "_w3", "_box_lower", "_box_upper",
                           "limits", "boxes", "build", "_arrays", "params"})


#: Swing masks (4,) by their bits (bit ``i``: gripper ``i`` swings), copied per problem.
_SWING = tuple(np.array([bool(code >> i & 1) for i in range(N_LEGS)])
               for code in range(1 << N_LEGS))
_new = object.__new__


def _positive(name: str, x, n: int = 6) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ConfigError(f"{name} must be {n} positive finite weights, got {a}")
    return a


@dataclass(frozen=True)
class QWBCWeights:
    """Diagonal weights of Eq. 1, per wrench axis ``(fx, fy, fz, tx, ty, tz)``.

    ``w1`` weighs the body-wrench residual [1/N^2, 1/(N m)^2] (relaxed problem only);
    ``w2`` each gripper's wrench, by default ``1/half_width^2`` of the paper's box so all axes
    count as fractions of their limit; ``w3`` the change from the previous cycle.
    """

    w1: np.ndarray = field(default_factory=lambda: 1e4 / np.array(
        [50.0, 50.0, 50.0, 10.0, 10.0, 10.0]) ** 2)
    w2: np.ndarray = field(default_factory=lambda: 1.0 / PAPER_BOX_HALF_WIDTHS**2)
    w3: np.ndarray = field(default_factory=lambda: 0.1 / PAPER_BOX_HALF_WIDTHS**2)

    def __post_init__(self) -> None:
        for name in ("w1", "w2", "w3"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))


def box_of(limits: WrenchLimits) -> tuple[np.ndarray, np.ndarray] | None:
    """``(lower, upper)`` if ``limits`` is an axis-aligned box, else None."""
    H, h = limits.H, limits.h
    lower, upper = np.full(6, -np.inf), np.full(6, np.inf)
    for row, b in zip(H, h, strict=True):
        nz = np.flatnonzero(row)
        if nz.size != 1:
            return None
        k, c = nz[0], row[nz[0]]
        if c > 0:
            upper[k] = min(upper[k], b / c)
        else:
            lower[k] = max(lower[k], b / c)
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        return None
    return lower, upper


def check_load(load) -> np.ndarray:
    """Load factors (4,) in [0, 1] from an array or a ``{leg: factor}`` mapping."""
    if type(load) is np.ndarray and load.dtype == np.float64 and load.shape == (N_LEGS,):
        # The controllers' case, tested entry by entry (a NaN fails both comparisons).
        a, b, c, d = load.tolist()
        if 0.0 <= a <= 1.0 and 0.0 <= b <= 1.0 and 0.0 <= c <= 1.0 and 0.0 <= d <= 1.0:
            return load
        raise ConfigError(f"load factors must be 4 numbers in [0, 1], got {load}")
    if isinstance(load, dict):
        unknown = set(load) - set(LEG_NAMES)
        if unknown:
            raise ConfigError(f"unknown legs {sorted(unknown)}; legs are {', '.join(LEG_NAMES)}")
        load = [load.get(leg, 0.0) for leg in LEG_NAMES]
    a = np.asarray(load, dtype=float)
    # min and max are NaN if an entry is (a NaN fails both comparisons, an infinity one).
    if a.shape != (N_LEGS,) or not (0.0 <= np.minimum.reduce(a)
                                    and np.maximum.reduce(a) <= 1.0):
        raise ConfigError(f"load factors must be 4 numbers in [0, 1], got {a}")
    return a


@dataclass
class WrenchProblem:
    """``min 1/2 F^T H F + f^T F`` s.t. ``lb <= F <= ub``, ``lo <= C F <= up``.

    Rows of ``C``: the 6 body-dynamics rows (equalities, only if ``hard``), then the polytope
    rows of non-box grippers, then the 20 joint-torque rows. The arrays belong to the
    builder and are overwritten by its next ``build``; ``lower`` and ``upper``, when given,
    are ``[lb, lo]`` and ``[ub, up]`` stacked (the bounds are views into them).
    """

    H: np.ndarray
    f: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    C: np.ndarray
    lo: np.ndarray
    up: np.ndarray
    hard: bool
    n_eq: int
    swing: np.ndarray
    statics: Statics
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None

    def residuals(self, F: np.ndarray) -> dict[str, float]:
        """Largest violation of each constraint group at ``F``."""
        CF = self.C @ F
        return {
            "bounds": float(max(0.0, np.max(self.lb - F), np.max(F - self.ub))),
            "rows": float(max(0.0, np.max(self.lo - CF), np.max(CF - self.up))),
            "dynamics": float(np.abs(self.statics.A @ F - self.statics.B).max()),
        }


class WrenchProblemBuilder:
    """Builds :class:`WrenchProblem` instances into arrays allocated once.

    ``limits`` are the four grippers' wrench limits (order of ``LEG_NAMES``); their shapes fix
    the row layout. ``torque_margin`` is the share of each servo's torque limit the QP may use;
    ``torque_rows=False`` leaves the joint-torque rows unbounded (an ablation).
    """

    def __init__(self, limits: list[WrenchLimits], tau_max: np.ndarray,
                 weights: QWBCWeights | None = None, torque_margin: float = 0.9,
                 torque_rows: bool = True) -> None:
        self.torque_rows = torque_rows
        if len(limits) != N_LEGS or not all(isinstance(x, WrenchLimits) for x in limits):
            raise ConfigError(f"need {N_LEGS} WrenchLimits, one per leg ({', '.join(LEG_NAMES)})")
        if not 0 < torque_margin <= 1:
            raise ConfigError(f"torque_margin must lie in (0, 1], got {torque_margin}")
        self.limits, self.weights = list(limits), weights or QWBCWeights()
        self.tau_max = _positive("tau_max", tau_max, N_JOINTS) * torque_margin
        self.boxes = [box_of(x) for x in limits]
        self.poly_rows = [(0 if b is not None else x.H.shape[0])
                          for b, x in zip(self.boxes, limits, strict=True)]
        n_poly = sum(self.poly_rows)
        self.n_rows = {True: 6 + n_poly + N_JOINTS, False: n_poly + N_JOINTS}
        self._arrays = {hard: self._allocate(hard) for hard in (True, False)}
        leg, joint, axis = np.meshgrid(np.arange(N_LEGS), np.arange(JOINTS_PER_LEG),
                                       np.arange(6), indexing="ij")
        # The per-cycle parameters live in one packed array (views below), so that the hard
        # box problem is filled in one compiled call of few arguments.
        self.params = np.zeros(PARAMETER_SIZE)
        views = parameter_views(self.params)
        self._w3 = views["w3"]
        self._w3[:] = np.tile(self.weights.w3, N_LEGS)
        tau = views["tau_max"]
        tau[:] = self.tau_max
        self.tau_max = tau
        #: Lower and upper box bounds (24,) when every gripper's limits are a box, else None.
        self._box_lower = self._box_upper = None
        if all(b is not None for b in self.boxes):
            self._box_lower, self._box_upper = views["box_lower"], views["box_upper"]
            self._box_lower[:] = np.concatenate([b[0] for b in self.boxes])
            self._box_upper[:] = np.concatenate([b[1] for b in self.boxes])
        #: Per-gripper multipliers (4, 6) of the ``w2`` weights (:meth:`set_limits`).
        self.leg_weights = views["leg_weights"]
        self.leg_weights[:] = 1.0
        self._jt_rows = (JOINTS_PER_LEG * leg + joint).reshape(-1)
        self._jt_cols = (6 * leg + axis).reshape(-1)
        #: Flat indices into C of the joint-torque rows' entries, per first row.
        self._jt_flat: dict[int, np.ndarray] = {}
        #: Builds so far, counted in place (a one-entry list): a problem's arrays hold its
        #: numbers only while no later build has overwritten them.
        self.builds = [0]
        #: Whether the hard problem can be filled by :func:`fill_hard_box` (every gripper a
        #: box, the packed views in place); rebinding one of them turns this off for good.
        self.packed = (self._box_lower is not None
                       and self.n_rows[True] == BOX_ROWS)

    def __setattr__(self, name: str, value) -> None:
        if name in _PACKED_NAMES and "packed" in self.__dict__:
            object.__setattr__(self, "packed", False)
        object.__setattr__(self, name, value)

    def __setstate__(self, state: dict) -> None:
        """A copy or pickle takes the views into its own buffers and packed parameters
        again (copied one by one, views would no longer share their numbers)."""
        self.__dict__.update(state)
        self.__dict__["_arrays"] = {hard: self._problem_views(a["buf"], hard)
                                    for hard, a in self._arrays.items()}
        if self.packed:  # every packed name is still the view it was made
            views = parameter_views(self.params)
            self.__dict__.update(_w3=views["w3"], tau_max=views["tau_max"],
                                 _box_lower=views["box_lower"],
                                 _box_upper=views["box_upper"],
                                 leg_weights=views["leg_weights"])

    def set_limits(self, leg: int, limits: WrenchLimits,
                   weights: np.ndarray | None = None) -> None:
        """Give gripper ``leg`` (index in ``LEG_NAMES``) new limits, e.g. its hold's
        capacity, and multiply its ``w2`` weights by ``weights`` (6,) (default 1). A box
        replaces a box only: the row layout is fixed."""
        box = box_of(limits)
        if box is None or self.boxes[leg] is None:
            raise ConfigError("set_limits replaces a box by a box")
        wl = np.ones(6) if weights is None else _positive("weights", weights)
        self.limits[leg], self.boxes[leg] = limits, box
        self.leg_weights[leg] = wl
        if self._box_lower is not None:  # the cached stacked box follows the new limits
            self._box_lower[6 * leg:6 * leg + 6] = box[0]
            self._box_upper[6 * leg:6 * leg + 6] = box[1]

    def _allocate(self, hard: bool) -> dict[str, np.ndarray]:
        m = self.n_rows[hard]
        # Every array is a view into one buffer (the compiled fill writes them all through
        # it). The variable bounds and the row bounds of each side share one array, as the
        # solver takes them: the bounds are written in place, so no cycle stacks them anew.
        a = self._problem_views(np.zeros(N_WRENCH * (N_WRENCH + 1 + m + 2) + 2 * m), hard)
        C, r = a["C"], 6 if hard else 0
        for i, x in enumerate(self.limits):
            if self.boxes[i] is None:
                C[r:r + x.H.shape[0], 6 * i:6 * i + 6] = x.H
                r += x.H.shape[0]
        return a

    def _problem_views(self, buf: np.ndarray, hard: bool) -> dict:
        """The problem's arrays (and the fields of a problem on them) as views into
        ``buf``."""
        a = buffer_views(buf, self.n_rows[hard])
        C, lower, upper = a["C"], a["lower"], a["upper"]
        a.update(lb=lower[:N_WRENCH], ub=upper[:N_WRENCH], lo=lower[N_WRENCH:],
                 up=upper[N_WRENCH:], buf=buf)
        # The fields of a problem on these arrays, in the dataclass's order (swing and
        # statics are the cycle's).
        a["problem"] = {"H": a["H"], "f": a["f"], "lb": a["lb"], "ub": a["ub"], "C": C,
                        "lo": a["lo"], "up": a["up"], "hard": hard, "n_eq": 6 if hard else 0,
                        "swing": None, "statics": None, "lower": lower, "upper": upper}
        return a

    def build(self, statics: Statics, load: np.ndarray, F_prev: np.ndarray,
              hard: bool = True) -> WrenchProblem:
        """Fill the problem for this cycle; ``load`` (4,) in [0, 1], 0 = swing."""
        w, a = self.weights, self._arrays[hard]
        swing = load <= 0.0
        self.builds[0] += 1
        if hard and self._box_lower is not None:  # the common case, in one compiled call
            fill_box_problem(a["H"], a["f"], a["lb"], a["ub"], a["C"], a["lo"], a["up"],
                             statics.A, statics.B, statics.leg_jacobians, statics.tau_bias,
                             load, F_prev, w.w2, self.leg_weights, self._w3,
                             self._box_lower, self._box_upper, self.tau_max, MIN_LOAD,
                             self.torque_rows, INF)
            return WrenchProblem(a["H"], a["f"], a["lb"], a["ub"], a["C"], a["lo"], a["up"],
                                 True, 6, swing, statics, a["lower"], a["upper"])
        return self._build_numpy(statics, load, F_prev, hard, swing)

    def build_packed(self, statics: Statics, load: np.ndarray, last_load: np.ndarray,
                     F_prev: np.ndarray) -> tuple[int, WrenchProblem | None]:
        """:meth:`build` of the hard problem when :attr:`packed`, with the load check, in one
        compiled call: ``(code, problem)`` with :func:`fill_hard_box`'s code (the swing
        grippers' bits, whether ``load`` differs from ``last_load``), ``(BAD_LOAD, None)``
        if a load factor is NaN or outside [0, 1]."""
        a = self._arrays[True]
        code = fill_hard_box(a["buf"], statics.A, statics.B, statics.leg_jacobians,
                             statics.tau_bias, load, last_load, F_prev, self.params,
                             self.weights.w2, self.torque_rows)
        if code == BAD_LOAD:
            return code, None
        self.builds[0] += 1
        p = _new(WrenchProblem)
        p.__dict__.update(a["problem"], swing=_SWING[code & 15].copy(), statics=statics)
        return code, p

    def _build_numpy(self, statics: Statics, load: np.ndarray, F_prev: np.ndarray,
                     hard: bool, swing: np.ndarray) -> WrenchProblem:
        """:meth:`build` in NumPy: every layout (the reference of the compiled box case)."""
        w, a = self.weights, self._arrays[hard]
        lam = np.maximum(load, MIN_LOAD)
        w2 = (w.w2[None, :] * self.leg_weights / lam[:, None] ** 2).reshape(-1)
        w3 = self._w3
        H, f = a["H"], a["f"]
        if hard:
            # Only the diagonal is ever written in the hard problem's H (zeros elsewhere).
            H.reshape(-1)[::N_WRENCH + 1] = 2.0 * (w2 + w3)
            f[:] = -2.0 * w3 * F_prev
        else:
            AW = statics.A.T * w.w1
            H[:] = 2.0 * AW @ statics.A
            H.flat[::N_WRENCH + 1] += 2.0 * (w2 + w3)
            f[:] = -2.0 * (AW @ statics.B + w3 * F_prev)
        lb, ub, C, lo, up = a["lb"], a["ub"], a["C"], a["lo"], a["up"]
        r = 0
        if hard:
            C[:6] = statics.A
            lo[:6] = statics.B
            up[:6] = statics.B
            r = 6
        if self._box_lower is not None:
            # Every gripper a box: each bound is its box times the load (0 swinging), as the
            # loop below writes them one gripper at a time.
            swing6 = swing.repeat(6)
            load6 = load.repeat(6)
            np.multiply(self._box_lower, load6, out=lb)
            np.multiply(self._box_upper, load6, out=ub)
            lb[swing6] = 0.0
            ub[swing6] = 0.0
        for i, x in enumerate(self.limits if self._box_lower is None else ()):
            s = slice(6 * i, 6 * i + 6)
            box = self.boxes[i]
            if swing[i]:
                lb[s], ub[s] = 0.0, 0.0
            elif box is not None:
                lb[s], ub[s] = box[0] * load[i], box[1] * load[i]
            else:
                lb[s], ub[s] = -INF, INF
            if box is None:
                n = x.H.shape[0]
                up[r:r + n] = x.h * (1.0 if swing[i] else load[i])
                lo[r:r + n] = -INF
                r += n
        # Joint-torque rows: block diagonal of the legs' J^T, one fancy-indexed write.
        flat = self._jt_flat.get(r)
        if flat is None:
            flat = self._jt_flat[r] = (r + self._jt_rows) * N_WRENCH + self._jt_cols
        C.reshape(-1)[flat] = statics.leg_jacobians.transpose(0, 2, 1).reshape(-1)
        free = (swing | (not self.torque_rows)).repeat(JOINTS_PER_LEG)
        lo[r:] = np.where(free, -INF, statics.tau_bias - self.tau_max)
        up[r:] = np.where(free, INF, statics.tau_bias + self.tau_max)
        return WrenchProblem(H, f, lb, ub, C, lo, up, hard, 6 if hard else 0, swing, statics,
                             a["lower"], a["upper"])
