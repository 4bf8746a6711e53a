"""When a simulated gripper lets go: its wrench leaves the achievable wrench set long enough.

Failure set. A gripper holds a wrench ``w`` (rock on gripper, gripper frame, [N, N m]) iff
``w`` lies in the achievable set ``W`` of the SPASAS model (:mod:`clamber.attachment.spasas`,
combined loading, no per-axis box), scaled per axis by the hold's ``capacity_factor`` (a
seventh factor scales compression alone: :func:`scaled_wrench`). Membership is the gauge
``g(w) = min {t : w in t W} <= 1``, an LP (DAQP, HiGHS as fallback). Every physics step the
gauge is bracketed first: an inner polytope of ``W`` bounds it from above, supporting
half-spaces in 1136 directions from below; a wrench the bracket leaves undecided may still
be certified by sublinearity from the last LP-measured wrench ``w_0`` of its gripper,
``g(w) <= g(w_0) + g_inner(w - w_0)``, accepted only 1e-6 below the boundary (the LP's
tolerance is 1e-9), so every decision is the LP's.

Spine slip. A wrench outside ``W`` drags the spines across their asperities: its excess
``e = w (1 - 1/g)`` accelerates the gripper's mass ``m`` with the force ``|e_f| + |e_tau| /
r`` (moments act on the spine ring of radius ``r``), and the gripper breaks off once the
slide exceeds the engagement depth ``d`` (``t = sqrt(2 d m / F)`` under a constant force:
6 ms at 15 N over, 20 ms at 1 N). Back inside ``W`` the slide resets. The slide is a
failure clock only: the gripper does not move before it breaks off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import daqp
import numpy as np

from clamber import _validate as check
from clamber.attachment.wrench_fit import fit_box, fit_polytope
from clamber.attachment.wrench_limits import WrenchLimits
from clamber.attachment.wrench_set import (
    WRENCH_SCALE,
    ContactWrenchSets,
    GaugeProgram,
    contact_wrench_sets,
    direction_set,
)
from clamber.exceptions import ConfigError
from clamber.quadruped.sim import failure_kernels as kernels

#: DAQP exit flags meaning an optimum was found.
_DAQP_OK = (1, 2)
#: How far [gauge] the bound on a step's lower bound must stay below a peak for
#: :func:`.failure_kernels.certify` to skip forming it (round-off is about 1e-15).
_LOWER_MARGIN = 1e-9
#: Largest gauge bound accepted as a certificate of membership without an LP: 1e-6 below
#: the boundary, far outside the LP's tolerance (1e-9), so that it never decides otherwise.
CERTIFIED = 1.0 - 1e-6


@dataclass(frozen=True)
class SpineSlip:
    """The failure clock: ``engagement_depth`` [m] a hooked spine tip travels up an asperity
    face before it rides off, ``spine_radius`` [m] the lever of a moment on the spine ring
    (pressure centres 30-40 mm from the axis), ``mass`` [kg] of the sliding gripper."""

    engagement_depth: float = 5e-4
    spine_radius: float = 0.035
    mass: float = 0.4

    def __post_init__(self) -> None:
        check.numeric_fields(self, "spine slip", strict=True,
                             names=("engagement_depth", "spine_radius", "mass"))


def _rows(w: np.ndarray) -> np.ndarray:
    """Wrenches as a C-contiguous float array (n, 6) (any leading dimensions flattened)."""
    return np.ascontiguousarray(w, dtype=float).reshape(-1, 6)


def scaled_wrench(w: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Wrenches (..., 6) [N, N m] over their holds' factors (..., 6) or (..., 7): ``w /
    factor`` per axis, ``f_z`` over the seventh where it pushes; the gauge of ``w`` in the
    held set is that of the scaled wrench in ``W``."""
    w, f = np.asarray(w, dtype=float), np.asarray(factor, dtype=float)
    lead = np.broadcast_shapes(w.shape[:-1], f.shape[:-1])
    rows = _rows(np.broadcast_to(w, (*lead, 6)))
    out = np.empty_like(rows)
    kernels.scale_into(rows, np.ascontiguousarray(
        np.broadcast_to(f, (*lead, f.shape[-1]))).reshape(-1, f.shape[-1]), out)
    return out.reshape(*lead, 6)


class WrenchSet:
    """The achievable wrench set ``W`` of a gripper with an exact, fast gauge.

    ``sets`` are the contacts' extreme loads (default: the SPASAS model at the paper's
    driving torque); ``n_directions`` the supporting half-spaces of the lower bound.
    """

    def __init__(self, sets: ContactWrenchSets | None = None, n_directions: int = 1000) -> None:
        self.sets = sets or contact_wrench_sets()
        scaled = self.sets.scaled()
        directions = direction_set(n_directions, np.random.default_rng(1)) / WRENCH_SCALE
        values, _ = self.sets.support(directions)
        if np.any(values <= 0):
            raise ConfigError("the wrench set must contain the zero wrench in its interior")
        #: Supporting half-spaces ``cuts @ w <= 1`` of ``W`` (wrench units).
        self.cuts = directions / values[:, None]
        box, vertices = fit_box(self.sets)
        inner: WrenchLimits = fit_polytope(self.sets, vertices)[0]
        #: Inner polytope ``inner @ w <= 1`` (wrench units).
        self.inner = inner.H / inner.h[:, None]
        self.box = box
        self._inner_t = self.inner.T.copy()
        self._cuts_t = self.cuts.T.copy()
        self._program = GaugeProgram(scaled)
        n_c = len(scaled)
        blocks = []
        for c, q in enumerate(scaled):
            pick = np.zeros((q.shape[0], n_c))
            pick[:, c] = -1.0
            blocks.append(np.hstack([q, pick]))
        blocks.append(np.concatenate([np.zeros(6), np.ones(n_c)])[None, :])
        self._A = np.vstack(blocks)
        m = self._A.shape[0]
        self._up = np.zeros(m)
        self._up[-1] = 1.0
        self._lo = np.full(m, -1e30)
        self._H = np.zeros((6 + n_c, 6 + n_c))
        self._sense = np.zeros(m, dtype=np.int32)
        self._n_c = n_c
        #: LPs solved (for profiling).
        self.lp_count = 0

    def lower(self, w: np.ndarray) -> np.ndarray:
        """The supporting half-spaces' gauge (n,) of wrenches (n, 6): a lower bound."""
        return kernels.polytope_gauges(_rows(w), self._cuts_t)

    def upper(self, w: np.ndarray) -> np.ndarray:
        """The inner polytope's gauge (n,) of wrenches (n, 6): an upper bound."""
        return kernels.polytope_gauges(_rows(w), self._inner_t)

    def exact(self, w: np.ndarray) -> float:
        """Gauge of one wrench (6,) [N, N m] by LP: ``<= 1`` exactly inside ``W``."""
        self.lp_count += 1
        v = np.asarray(w, dtype=float) / WRENCH_SCALE
        f = -np.concatenate([v, np.zeros(self._n_c)])
        x, fval, flag, _ = daqp.solve(self._H, f, self._A, self._up, self._lo, self._sense,
                                      primal_tol=1e-9)
        if flag in _DAQP_OK and math.isfinite(fval):
            return max(0.0, -float(fval))
        return max(0.0, self._program.solve(v)[0])

    def gauge(self, w: np.ndarray) -> np.ndarray:
        """Exact gauges (n,) of wrenches (n, 6): LP only where the bracket is not decisive
        about ``<= 1`` (returns the bracket's upper bound where it certifies ``<= 1``)."""
        w = np.atleast_2d(w)
        out = self.upper(w)
        for i in np.flatnonzero(out > 1.0):
            out[i] = self.exact(w[i])
        return out


@lru_cache(maxsize=1)
def default_wrench_set() -> WrenchSet:
    """The SPASAS gripper's achievable set at the paper's driving torque (built once, ~2 s)."""
    return WrenchSet()


class FailureClock:
    """Per-gripper spine-slip state: advanced every physics step, reset on re-attachment.

    Each gripper's peak load is kept as the wrench of largest lower gauge bound, made exact
    by one LP when read (:meth:`peaks`); each keeps the last wrench an LP measured and its
    gauge, the reference of the sublinearity certificate.
    """

    def __init__(self, n: int, wrench_set: WrenchSet | None = None,
                 slip: SpineSlip | None = None) -> None:
        self.set = wrench_set or default_wrench_set()
        self.slip = slip or SpineSlip()
        self.slide = np.zeros(n)
        self.speed = np.zeros(n)
        self._peak_lo = np.zeros(n)
        self._peak_wrench = np.zeros((n, 6))
        #: Per gripper: the last wrench (over the hold's factors) an LP measured, its gauge.
        self._ref_wrench = np.zeros((n, 6))
        self._ref_gauge = np.full(n, np.inf)
        #: Per gripper: the last wrench whose lower bound was formed, and that bound.
        self._lo_wrench = np.zeros((n, 6))
        self._lo_gauge = np.full(n, np.inf)
        #: :func:`.failure_kernels.certify`'s arguments between ``rows`` and ``g``.
        self.certify_args = (self.set._inner_t, self.set._cuts_t, CERTIFIED, _LOWER_MARGIN,
                             self._ref_wrench, self._ref_gauge, self._peak_lo,
                             self._peak_wrench, self._lo_wrench, self._lo_gauge, self.slide,
                             self.speed)

    def reset(self, i: int) -> None:
        """Gripper ``i`` grasped anew: no slide."""
        self.slide[i] = self.speed[i] = 0.0

    def reset_peaks(self) -> None:
        self._peak_lo[:] = 0.0
        self._peak_wrench[:] = 0.0

    def peaks(self) -> np.ndarray:
        """Largest gauge (n,) per gripper since :meth:`reset_peaks` (>= 1: it failed)."""
        return np.array([max(lo, self.set.exact(w)) if lo > 0 else 0.0
                         for lo, w in zip(self._peak_lo, self._peak_wrench, strict=True)])

    def _measured(self, i: int, ws: np.ndarray) -> float:
        """Exact gauge of gripper ``i``'s wrench ``ws`` (6,) over its hold's factors, by LP;
        kept as the gripper's certificate reference."""
        g = self.set.exact(ws)
        self._ref_wrench[i] = ws
        self._ref_gauge[i] = g
        return g

    def advance(self, rows: np.ndarray, w: np.ndarray, factor: np.ndarray,
                dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Advance the grippers ``rows`` by ``dt`` [s] under wrenches ``w`` (k, 6) [N, N m]
        on holds of capacity ``factor`` (k, 6) or (k, 7). Returns the gauges (k,) (exact
        above 1, else an upper bound <= 1) and which grippers broke off."""
        w = _rows(w)
        ws = np.empty_like(w)
        kernels.scale_into(w, np.ascontiguousarray(factor, dtype=float), ws)
        g = np.empty(len(rows))
        if kernels.certify(ws, rows, *self.certify_args, g):
            return g, np.zeros(len(rows), dtype=bool)
        return self.uncertified(rows, w, ws, g, dt)

    def uncertified(self, rows: np.ndarray, w: np.ndarray, ws: np.ndarray, g: np.ndarray,
                    dt: float) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`advance` where :func:`.failure_kernels.certify` did not certify every
        wrench (``ws``: ``w`` over the factors, ``g``: upper bounds of their gauges)."""
        failed = np.zeros(len(rows), dtype=bool)
        # The lower bound can only raise a peak where the upper bound is above it.
        if (g > self._peak_lo[rows]).any():
            lo = self.set.lower(ws)
            higher = lo > self._peak_lo[rows]
            self._peak_lo[rows[higher]] = lo[higher]
            self._peak_wrench[rows[higher]] = ws[higher]
        s = self.slip
        bound = self._ref_gauge[rows] + self.set.upper(ws - self._ref_wrench[rows])
        for k in np.flatnonzero(g > 1.0):
            g[k] = bound[k] if bound[k] <= CERTIFIED else self._measured(rows[k], ws[k])
        for k, i in enumerate(rows):
            if g[k] > 1.0:
                e = w[k] * (1.0 - 1.0 / g[k])
                accel = (math.hypot(*e[:3]) + math.hypot(*e[3:]) / s.spine_radius) / s.mass
                self.speed[i] += accel * dt
                self.slide[i] += self.speed[i] * dt
                failed[k] = self.slide[i] > s.engagement_depth
                if g[k] > self._peak_lo[i]:
                    self._peak_lo[i], self._peak_wrench[i] = g[k], ws[k]
            elif self.slide[i] > 0.0:
                self.slide[i] = self.speed[i] = 0.0
        return g, failed
