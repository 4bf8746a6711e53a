"""Q-WBC wrench distribution: the :mod:`wbc_problem` QP solved by DAQP, warm-started.

DAQP (a dual active-set solver) is set up once per problem shape and then only updated, so a
cycle allocates no solver memory and starts from the previous active set. The nominal (hard
dynamics) problem is tried first; if DAQP proves it infeasible the relaxed problem gives the
wrench closest to balancing the body within every limit, with status ``RELAXED``. The answer
is never NaN: on a solver failure the zero wrench (always inside the limits) is returned.
"""

from __future__ import annotations

import enum
import math
import time
from dataclasses import dataclass

import daqp
import numpy as np

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control.qp_cycle_kernels import LIMIT_RTOL, LOAD_CHANGED, finish_hard_box
from clamber.quadruped.control.wbc_problem import (
    QWBCWeights,
    WrenchProblem,
    WrenchProblemBuilder,
    check_load,
)
from clamber.quadruped.model.robot import LEG_NAMES, N_LEGS
from clamber.quadruped.model.statics import N_WRENCH, Statics

#: DAQP's constraint flags: free inequality and equality.
_INEQ, _EQ = 0, 5
#: DAQP exit flags meaning a solution was found (optimal, soft optimal, cycling-but-optimal).
_OK = (1, 2)
_sum = np.add.reduce
_F64, _LOAD_SHAPE = np.dtype(np.float64), (N_LEGS,)
_SWING_BITS = (1 << N_LEGS) - 1
#: The last load factors before the first solve: unequal to any (NaN).
_NO_LOAD = np.full(N_LEGS, np.nan)


def _finite(x: np.ndarray) -> bool:
    """Whether every entry of ``x`` is finite (a finite sum proves it; the entries are
    tested only when the sum is not)."""
    return math.isfinite(_sum(x)) or bool(np.isfinite(x).all())


class WrenchStatus(enum.Enum):
    """How the wrench QP ended: ``OPTIMAL`` balanced the body wrench exactly within every
    gripper and torque limit; ``RELAXED``: the limits prevent balance, so the closest feasible
    wrench was returned; ``FAILED``: the solver failed and the zero wrench was returned."""

    OPTIMAL = "optimal"
    RELAXED = "relaxed"
    FAILED = "failed"


@dataclass(frozen=True)
class WrenchSolution:
    """Gripper wrenches ``F`` (24,) [N, N m], DAQP's multipliers and timings.

    A solution of the packed cycle also carries ``limit_check``: ``(builds, build, rtol,
    active)``, whether a stance gripper's wrench lay on a bound of its box when solved
    (:func:`~clamber.quadruped.control.variants.limits_active`), valid while the builder's count
    ``builds[0]`` is still ``build`` (no later build has overwritten the problem's arrays;
    like them, ``F`` is the solver's and is read, never written, by its users).
    """

    status: WrenchStatus
    F: np.ndarray
    duals: np.ndarray
    problem: WrenchProblem
    iterations: int
    solve_time_us: float

    @classmethod
    def trusted(cls, status: WrenchStatus, F: np.ndarray, duals: np.ndarray,
                problem: WrenchProblem, iterations: int, solve_time_us: float,
                limit_check: tuple | None = None) -> WrenchSolution:
        """A solution from the solver's own arrays, without the frozen dataclass's
        per-field set-up."""
        s = object.__new__(cls)
        s.__dict__.update(status=status, F=F, duals=duals, problem=problem,
                          iterations=iterations, solve_time_us=solve_time_us,
                          limit_check=limit_check)
        return s

    @property
    def found(self) -> bool:
        return self.status is not WrenchStatus.FAILED

    def wrench(self, leg: str) -> np.ndarray:
        """The wrench [f, tau] on ``leg``'s gripper in its gripper frame."""
        i = LEG_NAMES.index(leg)
        return self.F[6 * i:6 * i + 6]

    def kkt_residuals(self) -> dict[str, float]:
        """Stationarity, primal, dual and complementarity residuals of the solved QP.

        DAQP's multipliers are signed: ``> 0`` on an upper bound, ``< 0`` on a lower bound.
        """
        p, F = self.problem, self.F
        nb = N_WRENCH
        lam_b, lam_c = self.duals[:nb], self.duals[nb:]
        grad = p.H @ F + p.f + lam_b + p.C.T @ lam_c
        CF = p.C @ F
        slack_up_b, slack_lo_b = p.ub - F, F - p.lb
        slack_up_c, slack_lo_c = p.up - CF, CF - p.lo
        eq = np.zeros(lam_c.size, dtype=bool)
        eq[:p.n_eq] = True
        comp = np.concatenate([
            np.where(lam_b > 0, lam_b * slack_up_b, -lam_b * slack_lo_b),
            np.where(eq, 0.0, np.where(lam_c > 0, lam_c * slack_up_c, -lam_c * slack_lo_c)),
        ])
        return {
            "stationarity": float(np.abs(grad).max()),
            "primal": max(p.residuals(F)["bounds"], p.residuals(F)["rows"]),
            "complementarity": float(np.abs(comp).max()),
        }


class WrenchQP:
    """Builds and solves the Q-WBC QP each cycle; holds the warm-started DAQP workspaces."""

    def __init__(self, limits: list[WrenchLimits], tau_max: np.ndarray,
                 weights: QWBCWeights | None = None, torque_margin: float = 0.9,
                 torque_rows: bool = True) -> None:
        self.builder = WrenchProblemBuilder(limits, tau_max, weights, torque_margin, torque_rows)
        self.F_prev = np.zeros(N_WRENCH)
        self._models: dict[bool, daqp.Model] = {}
        #: The swing legs (as bits, :func:`_swing_bits`) each model was last set up or
        #: updated with.
        self._swing: dict[bool, int] = {}
        self._last_load: np.ndarray | None = None

    def reset(self) -> None:
        """Forget the previous wrench (the smoothing term's anchor)."""
        self.F_prev[:] = 0.0

    def set_limits(self, leg: int, limits: WrenchLimits,
                   weights: np.ndarray | None = None) -> None:
        """New limits and weight multipliers of gripper ``leg``
        (:meth:`WrenchProblemBuilder.set_limits`); the next solve rebuilds the Hessian."""
        self.builder.set_limits(leg, limits, weights)
        self._last_load = None

    def _sense(self, p: WrenchProblem) -> np.ndarray:
        s = np.full(N_WRENCH + p.C.shape[0], _INEQ, dtype=np.int32)
        s[:N_WRENCH][np.repeat(p.swing, 6)] = _EQ
        s[N_WRENCH:N_WRENCH + p.n_eq] = _EQ
        return s

    def _solve(self, p: WrenchProblem, load_changed: bool
               ) -> tuple[int, np.ndarray, np.ndarray, int, float]:
        up = np.concatenate([p.ub, p.up]) if p.upper is None else p.upper
        lo = np.concatenate([p.lb, p.lo]) if p.lower is None else p.lower
        model = self._models.get(p.hard)
        swing = _swing_bits(p.swing)
        t0 = time.perf_counter()
        if model is None:
            model = daqp.Model()
            model.setup(p.H, p.f, p.C, up, lo, self._sense(p))
            self._models[p.hard] = model
            self._swing[p.hard] = swing
        elif self._swing[p.hard] != swing:
            model.update(H=p.H, f=p.f, A=p.C, bupper=up, blower=lo, sense=self._sense(p))
            self._swing[p.hard] = swing
        elif p.hard and not load_changed:
            model.update(f=p.f, A=p.C, bupper=up, blower=lo)
        else:
            model.update(H=p.H, f=p.f, A=p.C, bupper=up, blower=lo)
        x, _, flag, info = model.solve()
        dt = (time.perf_counter() - t0) * 1e6
        return flag, np.asarray(x), np.asarray(info["lam"]), int(info["iterations"]), dt

    def solve(self, statics: Statics, load) -> WrenchSolution:
        """Distribute the body wrench over the grippers with load factors ``load``.

        ``load`` is (4,) or ``{leg: factor}`` with 1 = stance, 0 = swing (wrench fixed to
        zero) and values in between = the pre-swing unloading ramp.
        """
        if self.builder.packed:
            if not (type(load) is np.ndarray and load.dtype == _F64
                    and load.shape == _LOAD_SHAPE):
                load = check_load(load)
            return self._solve_packed(statics, load)
        return self.solve_plain(statics, load)

    def solve_plain(self, statics: Statics, load) -> WrenchSolution:
        """:meth:`solve` step by step in NumPy (the reference of the packed cycle)."""
        load = check_load(load)
        changed = self._last_load is None or load.tolist() != self._last_load.tolist()
        p = self.builder.build(statics, load, self.F_prev, hard=True)
        flag, x, lam, its, dt = self._solve(p, changed)
        if flag not in _OK or not _finite(x):
            return self._relaxed(statics, load, its, dt)
        return self._accept(WrenchStatus.OPTIMAL, p, x, lam, its, dt, load)

    def _solve_packed(self, statics: Statics, load: np.ndarray) -> WrenchSolution:
        """:meth:`solve_plain` with the hard box problem filled, its load factors checked
        and compared, and an optimal solution taken in two compiled calls: the same numbers
        (its solution also knows whether a gripper limit is active)."""
        b = self.builder
        last = self._last_load
        code, p = b.build_packed(statics, load, _NO_LOAD if last is None else last,
                                 self.F_prev)
        if p is None:
            check_load(load)  # raises on the factor the kernel refused
            raise ConfigError(f"load factors must be 4 numbers in [0, 1], got {load}")
        swing, changed = code & _SWING_BITS, code >= LOAD_CHANGED
        model = self._models.get(True)
        if model is not None and self._swing[True] == swing:
            # _solve's update and solve for an unchanged swing pattern, inline.
            t0 = time.perf_counter()
            if changed:
                model.update(H=p.H, f=p.f, A=p.C, bupper=p.upper, blower=p.lower)
            else:
                model.update(f=p.f, A=p.C, bupper=p.upper, blower=p.lower)
            x, _, flag, info = model.solve()
            dt = (time.perf_counter() - t0) * 1e6
            x, lam, its = np.asarray(x), np.asarray(info["lam"]), int(info["iterations"])
        else:
            flag, x, lam, its, dt = self._solve(p, changed)
        if flag in _OK:
            active = finish_hard_box(x, self.F_prev, b._arrays[True]["buf"], swing)
            if active >= 0:
                self._last_load = load
                builds = b.builds
                return WrenchSolution.trusted(WrenchStatus.OPTIMAL, x, lam, p, its, dt,
                                              (builds, builds[0], LIMIT_RTOL, active == 1))
        return self._relaxed(statics, load, its, dt)

    def _relaxed(self, statics: Statics, load: np.ndarray, its: int,
                 dt: float) -> WrenchSolution:
        """The relaxed problem's solution after the hard one failed (``its`` iterations in
        ``dt`` microseconds), or the zero wrench if that fails too."""
        status = WrenchStatus.RELAXED
        p = self.builder.build(statics, load, self.F_prev, hard=False)
        flag, x, lam, its2, dt2 = self._solve(p, True)
        its, dt = its + its2, dt + dt2
        if flag not in _OK or not _finite(x):
            status, x, lam = WrenchStatus.FAILED, np.zeros(N_WRENCH), np.zeros_like(lam)
        return self._accept(status, p, x, lam, its, dt, load)

    def _accept(self, status: WrenchStatus, p: WrenchProblem, x: np.ndarray,
                lam: np.ndarray, its: int, dt: float, load: np.ndarray) -> WrenchSolution:
        if self._swing[p.hard]:  # p's swing legs, as _solve saw them
            x[p.swing.repeat(6)] = 0.0  # exact zeros, not DAQP's 1e-30 round-off
        self.F_prev[:] = x
        self._last_load = load
        # DAQP returns new arrays from every solve (and the failure path makes its own), so
        # the solution owns x and lam without copies.
        return WrenchSolution.trusted(status, x, lam, p, its, dt)


def _swing_bits(swing: np.ndarray) -> int:
    """The swing grippers (4,) as bits (bit ``i``: gripper ``i`` swings)."""
    return sum(1 << i for i, s in enumerate(swing.tolist()) if s)
