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
from clamber.quadruped.control.wbc_kernels import (
    BOX_LOWER,
    BOX_UPPER,
    IS_BOX,
    W2,
    W3,
    buffer_size,
    fill_problem,
)
from clamber.quadruped.model.robot import LEG_NAMES, N_JOINTS, N_LEGS
from clamber.quadruped.model.statics import N_WRENCH, Statics


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
    """Load factors (4,) in [0, 1] from an array (a float one is returned as is) or a
    ``{leg: factor}`` mapping."""
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
    """``min 1/2 F^T H F + f^T F`` s.t. ``lower <= [F, C F] <= upper``.

    ``lower`` and ``upper`` (24 + m,) stack the variable bounds (``lb``, ``ub``) and the row
    bounds (``lo``, ``up``), as DAQP takes them. Rows of ``C``: the 6 body-dynamics rows
    (equalities, only if ``hard``), then the polytope rows of non-box grippers, then the 20
    joint-torque rows. ``A`` (6, 24) and ``B`` (6,) are the body statics it was built from;
    ``swing`` (4,) the grippers of load 0, whose wrench is fixed to zero. Every array is the
    problem's own: no later build writes into it, and nothing writes into it once built.
    """

    H: np.ndarray
    f: np.ndarray
    C: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    A: np.ndarray
    B: np.ndarray
    hard: bool
    swing: np.ndarray = field(default_factory=lambda: np.zeros(N_LEGS, dtype=bool))

    @property
    def n_eq(self) -> int:
        """Number of equality rows (the body dynamics, first)."""
        return 6 if self.hard else 0

    @property
    def lb(self) -> np.ndarray:
        return self.lower[:N_WRENCH]

    @property
    def ub(self) -> np.ndarray:
        return self.upper[:N_WRENCH]

    @property
    def lo(self) -> np.ndarray:
        return self.lower[N_WRENCH:]

    @property
    def up(self) -> np.ndarray:
        return self.upper[N_WRENCH:]

    def residuals(self, F: np.ndarray) -> dict[str, float]:
        """Largest violation of each constraint group at ``F``: variable bounds, rows, and
        the body dynamics ``A F = B`` (a residual, not a violation, in the relaxed problem)."""
        CF = self.C @ F
        return {
            "bounds": float(max(0.0, np.max(self.lb - F), np.max(F - self.ub))),
            "rows": float(max(0.0, np.max(self.lo - CF), np.max(CF - self.up))),
            "dynamics": float(np.abs(self.A @ F - self.B).max()),
        }


class WrenchProblemBuilder:
    """Builds a fresh :class:`WrenchProblem` per cycle from the statics and load factors.

    ``limits`` are the four grippers' wrench limits (order of ``LEG_NAMES``); their shapes fix
    the row layout. ``torque_margin`` is the share of each servo's torque limit the QP may use;
    ``torque_rows=False`` leaves the joint-torque rows unbounded (an ablation).
    """

    def __init__(self, limits: list[WrenchLimits], tau_max: np.ndarray,
                 weights: QWBCWeights | None = None, torque_margin: float = 0.9,
                 torque_rows: bool = True) -> None:
        if len(limits) != N_LEGS or not all(isinstance(x, WrenchLimits) for x in limits):
            raise ConfigError(f"need {N_LEGS} WrenchLimits, one per leg ({', '.join(LEG_NAMES)})")
        if not 0 < torque_margin <= 1:
            raise ConfigError(f"torque_margin must lie in (0, 1], got {torque_margin}")
        self.torque_rows = torque_rows
        self.limits, self.weights = list(limits), weights or QWBCWeights()
        tau_max = _positive("tau_max", tau_max, N_JOINTS) * torque_margin
        #: The ``w1`` weights (6,) and the servos' torque limits (20,) the QP may use.
        self.per_row = np.r_[self.weights.w1, tau_max]
        self.tau_max = self.per_row[6:]
        self.boxes = [box_of(x) for x in limits]
        #: Per gripper and axis: the ``w2`` and ``w3`` weights, the box and whether there is
        #: one (rows of :func:`~clamber.quadruped.control.wbc_kernels.fill_problem`).
        self.per_variable = np.zeros((5, N_WRENCH))
        self.per_variable[W3] = np.tile(self.weights.w3, N_LEGS)
        poly = [i for i, b in enumerate(self.boxes) if b is None]
        #: The non-box grippers' rows (p, 26): ``H`` row in ``F``'s columns, ``h``, gripper.
        self.poly = np.zeros((sum(self.limits[i].H.shape[0] for i in poly), N_WRENCH + 2))
        r = 0
        for i in poly:
            H, h = self.limits[i].H, self.limits[i].h
            self.poly[r:r + len(h), 6 * i:6 * i + 6] = H
            self.poly[r:r + len(h), N_WRENCH], self.poly[r:r + len(h), N_WRENCH + 1] = h, i
            r += len(h)
        self.n_rows = {hard: (6 if hard else 0) + r + N_JOINTS for hard in (True, False)}
        #: Per-gripper multipliers (4, 6) of the ``w2`` weights (:meth:`set_limits`).
        self.leg_weights = np.ones((N_LEGS, 6))
        for leg in range(N_LEGS):
            self._set_variables(leg)

    def _set_variables(self, leg: int) -> None:
        """Gripper ``leg``'s columns of :attr:`per_variable` from its box and weights."""
        s, box = slice(6 * leg, 6 * leg + 6), self.boxes[leg]
        pv = self.per_variable
        pv[W2, s] = self.weights.w2 * self.leg_weights[leg]
        pv[IS_BOX, s] = box is not None
        pv[BOX_LOWER, s], pv[BOX_UPPER, s] = (0.0, 0.0) if box is None else box

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
        self._set_variables(leg)

    def build(self, statics: Statics, load: np.ndarray, F_prev: np.ndarray,
              hard: bool = True) -> WrenchProblem:
        """This cycle's problem in new arrays; ``load`` (4,) in [0, 1] (checked by the
        caller, :func:`check_load`), 0 = swing; ``F_prev`` (24,) the last wrench."""
        m = self.n_rows[hard]
        buf = np.zeros(buffer_size(m))
        fill_problem(buf, m, hard, self.torque_rows, statics.A, statics.B,
                     statics.leg_jacobians, statics.tau_bias, load, F_prev, self.per_variable,
                     self.per_row, self.poly)
        n2, c0 = N_WRENCH * N_WRENCH, N_WRENCH * (N_WRENCH + 1)
        c1 = c0 + m * N_WRENCH
        H, f, C = buf[:n2].reshape(N_WRENCH, N_WRENCH), buf[n2:c0], buf[c0:c1].reshape(m, -1)
        lower, upper = buf[c1:c1 + N_WRENCH + m], buf[c1 + N_WRENCH + m:]
        return WrenchProblem(H, f, C, lower, upper, statics.A.copy(), statics.B.copy(), hard,
                             load <= 0.0)
