"""Q-WBC wrench distribution: the :mod:`wbc_problem` QP solved by DAQP, warm-started.

DAQP (a dual active-set solver) is set up once per problem shape and then only updated, so a
cycle allocates no solver memory and starts from the previous active set. The nominal (hard
dynamics) problem is tried first; if DAQP proves it infeasible the relaxed problem gives the
wrench closest to balancing the body within every limit, with status ``RELAXED``. The answer
is never NaN: on a solver failure the zero wrench (always inside the limits) is returned.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

import daqp
import numpy as np

from clamber.attachment.wrench_limits import WrenchLimits
from clamber.quadruped.control.wbc_kernels import accept, limit_active
from clamber.quadruped.control.wbc_problem import (
    QWBCWeights,
    WrenchProblem,
    WrenchProblemBuilder,
    check_load,
)
from clamber.quadruped.model.statics import N_WRENCH, Statics

#: DAQP's constraint flags: free inequality and equality.
_INEQ, _EQ = 0, 5
#: DAQP exit flags meaning a solution was found (optimal, soft optimal).
_OK = (1, 2)


class WrenchStatus(enum.Enum):
    """How the wrench QP ended: ``OPTIMAL`` balanced the body wrench exactly within every
    gripper and torque limit; ``RELAXED``: the limits prevent balance, so the closest feasible
    wrench was returned; ``FAILED``: the solver failed and the zero wrench was returned."""

    OPTIMAL = "optimal"
    RELAXED = "relaxed"
    FAILED = "failed"


@dataclass(frozen=True)
class WrenchSolution:
    """Gripper wrenches ``F`` (24,) [N, N m], DAQP's multipliers ``duals`` (24 + m,), the
    problem solved (its own arrays) and the solver's iterations and time [us]."""

    status: WrenchStatus
    F: np.ndarray
    duals: np.ndarray
    problem: WrenchProblem
    iterations: int
    solve_time_us: float

    def limit_active(self, rtol: float = 1e-6) -> bool:
        """Whether a stance gripper's wrench lies on a bound of its limits (within
        ``rtol * (|ub| + 1)``): the QP traded the body's wrench against a gripper's."""
        p = self.problem
        return limit_active(self.F, p.lower, p.upper, p.swing, rtol)

    def kkt_residuals(self) -> dict[str, float]:
        """Stationarity, primal and complementarity residuals of the solved QP.

        DAQP's multipliers are signed: ``> 0`` on an upper bound, ``< 0`` on a lower bound.
        """
        p, F = self.problem, self.F
        lam_b, lam_c = self.duals[:N_WRENCH], self.duals[N_WRENCH:]
        grad = p.H @ F + p.f + lam_b + p.C.T @ lam_c
        CF = p.C @ F
        eq = np.zeros(lam_c.size, dtype=bool)
        eq[:p.n_eq] = True
        comp = np.concatenate([
            np.where(lam_b > 0, lam_b * (p.ub - F), -lam_b * (F - p.lb)),
            np.where(eq, 0.0, np.where(lam_c > 0, lam_c * (p.up - CF), -lam_c * (CF - p.lo))),
        ])
        r = p.residuals(F)
        return {"stationarity": float(np.abs(grad).max()),
                "primal": max(r["bounds"], r["rows"]),
                "complementarity": float(np.abs(comp).max())}


class WrenchQP:
    """Builds and solves the Q-WBC QP each cycle; holds the warm-started DAQP workspaces."""

    def __init__(self, limits: list[WrenchLimits], tau_max: np.ndarray,
                 weights: QWBCWeights | None = None, torque_margin: float = 0.9,
                 torque_rows: bool = True) -> None:
        self.builder = WrenchProblemBuilder(limits, tau_max, weights, torque_margin, torque_rows)
        self.F_prev = np.zeros(N_WRENCH)
        self._models: dict[bool, daqp.Model] = {}
        #: The swing pattern each model was last set up or updated with.
        self._swing: dict[bool, tuple[bool, ...]] = {}
        #: The load factors of the last solve (None: the Hessian must be sent again).
        self._last_load: list[float] | None = None

    def set_limits(self, leg: int, limits: WrenchLimits,
                   weights: np.ndarray | None = None) -> None:
        """New limits and weight multipliers of gripper ``leg``
        (:meth:`WrenchProblemBuilder.set_limits`); the next solve sends the Hessian again."""
        self.builder.set_limits(leg, limits, weights)
        self._last_load = None

    def _solve(self, p: WrenchProblem, load_changed: bool
               ) -> tuple[int, np.ndarray, np.ndarray, int, float]:
        """DAQP on ``p``: set up once per problem kind, then updated with what changed (the
        Hessian depends only on the load factors, the constraint kinds on the swing)."""
        model = self._models.get(p.hard)
        swing = tuple(p.swing.tolist())
        t0 = time.perf_counter()
        if model is None or self._swing[p.hard] != swing:
            sense = np.full(p.lower.size, _INEQ, dtype=np.int32)
            sense[:N_WRENCH][p.swing.repeat(6)] = _EQ
            sense[N_WRENCH:N_WRENCH + p.n_eq] = _EQ
            if model is None:
                model = self._models[p.hard] = daqp.Model()
                model.setup(p.H, p.f, p.C, p.upper, p.lower, sense)
            else:
                model.update(H=p.H, f=p.f, A=p.C, bupper=p.upper, blower=p.lower, sense=sense)
            self._swing[p.hard] = swing
        elif p.hard and not load_changed:
            model.update(f=p.f, A=p.C, bupper=p.upper, blower=p.lower)
        else:
            model.update(H=p.H, f=p.f, A=p.C, bupper=p.upper, blower=p.lower)
        x, _, flag, info = model.solve()
        dt = (time.perf_counter() - t0) * 1e6
        return flag, np.asarray(x), np.asarray(info["lam"]), int(info["iterations"]), dt

    def solve(self, statics: Statics, load) -> WrenchSolution:
        """Distribute the body wrench over the grippers with load factors ``load``.

        ``load`` is (4,) or ``{leg: factor}`` with 1 = stance, 0 = swing (wrench fixed to
        zero) and values in between = the pre-swing unloading ramp. The hard problem first;
        if DAQP finds it infeasible, the relaxed one; if that fails too, the zero wrench.
        """
        load = check_load(load)
        factors = load.tolist()
        p = self.builder.build(statics, load, self.F_prev, hard=True)
        flag, x, lam, its, dt = self._solve(p, factors != self._last_load)
        status = WrenchStatus.OPTIMAL
        if not (flag in _OK and accept(x, p.swing, self.F_prev)):
            status = WrenchStatus.RELAXED
            p = self.builder.build(statics, load, self.F_prev, hard=False)
            flag, x, lam, its2, dt2 = self._solve(p, True)
            its, dt = its + its2, dt + dt2
            if not (flag in _OK and accept(x, p.swing, self.F_prev)):
                status, x, lam = WrenchStatus.FAILED, np.zeros(N_WRENCH), np.zeros_like(lam)
                self.F_prev[:] = 0.0
        self._last_load = factors
        # DAQP returns new arrays from every solve, so the solution owns x and lam.
        return WrenchSolution(status, x, lam, p, its, dt)
