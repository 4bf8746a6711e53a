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
from clamber.quadruped.robot import LEG_NAMES
from clamber.quadruped.statics import N_WRENCH, Statics
from clamber.quadruped.wbc_problem import (
    QWBCWeights,
    WrenchProblem,
    WrenchProblemBuilder,
    check_load,
)

#: DAQP's constraint flags: free inequality and equality.
_INEQ, _EQ = 0, 5
#: DAQP exit flags meaning a solution was found (optimal, soft optimal, cycling-but-optimal).
_OK = (1, 2)
_sum = np.add.reduce


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
    """Gripper wrenches ``F`` (24,) [N, N m], DAQP's multipliers and timings."""

    status: WrenchStatus
    F: np.ndarray
    duals: np.ndarray
    problem: WrenchProblem
    iterations: int
    solve_time_us: float

    @classmethod
    def trusted(cls, status: WrenchStatus, F: np.ndarray, duals: np.ndarray,
                problem: WrenchProblem, iterations: int,
                solve_time_us: float) -> WrenchSolution:
        """A solution from the solver's own arrays, without the frozen dataclass's
        per-field set-up."""
        s = object.__new__(cls)
        s.__dict__.update(status=status, F=F, duals=duals, problem=problem,
                          iterations=iterations, solve_time_us=solve_time_us)
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
        #: The swing legs (a list of 4 bools) each model was last set up or updated with.
        self._swing: dict[bool, list[bool]] = {}
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
        swing = p.swing.tolist()
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
        load = check_load(load)
        changed = self._last_load is None or load.tolist() != self._last_load.tolist()
        status = WrenchStatus.OPTIMAL
        p = self.builder.build(statics, load, self.F_prev, hard=True)
        flag, x, lam, its, dt = self._solve(p, changed)
        if flag not in _OK or not _finite(x):
            status = WrenchStatus.RELAXED
            p = self.builder.build(statics, load, self.F_prev, hard=False)
            flag, x, lam, its2, dt2 = self._solve(p, True)
            its, dt = its + its2, dt + dt2
            if flag not in _OK or not _finite(x):
                status, x, lam = WrenchStatus.FAILED, np.zeros(N_WRENCH), np.zeros_like(lam)
        if True in self._swing[p.hard]:  # p's swing legs, as _solve saw them
            x[p.swing.repeat(6)] = 0.0  # exact zeros, not DAQP's 1e-30 round-off
        self.F_prev[:] = x
        self._last_load = load
        # DAQP returns new arrays from every solve (and the failure path makes its own), so
        # the solution owns x and lam without copies.
        return WrenchSolution.trusted(status, x, lam, p, its, dt)
