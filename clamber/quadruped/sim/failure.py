"""When a simulated gripper lets go: its wrench leaves the achievable wrench set long enough.

Failure set. The gripper holds a wrench ``w`` (rock on gripper, gripper frame, [N, N m])
exactly when ``w`` lies in the achievable set ``W`` of this project's SPASAS kinetostatic
model (:mod:`clamber.attachment.spasas`, Eqs. 6-11, at the paper's driving torque and 15 deg
knuckles): the Minkowski sum of the four phalanges' and the footpad's admissible loads, with
every combination of axes (combined loading) and no per-axis box. A hold's
``capacity_factor`` (6,) scales ``W`` per axis (``w`` is held on that hold iff
``w / factor`` is in ``W``); a seventh factor, where a hold has one, scales compression
(``+f_z``) alone, which the footpad bears (:func:`scaled_wrench`). Membership is the gauge
``g(w) = min {t : w in t W}``, ``<= 1`` inside
(:func:`clamber.attachment.wrench_set.wrench_gauge`'s LP). Evaluated every physics step, the
gauge is bracketed cheaply first: an inner polytope of ``W`` (the fitted polytope; gauge
above the true one) and supporting half-spaces of ``W`` in 1136 directions (gauge below it,
by a median 16 % on random wrenches). Only a wrench the bracket leaves undecided, or one
outside, goes to the LP (solved by DAQP, with scipy's HiGHS as fallback), so the decision is
the LP's. Before the LP, an undecided wrench gets a second certificate from the last wrench
whose gauge an LP measured on the same gripper: the gauge is sublinear (``W`` is convex with
the origin inside), so ``g(w) <= g(w_0) + g(w - w_0)``, and the inner polytope bounds
``g(w - w_0)`` from above. Wrenches move little in a 4 ms step, so this certifies most wrenches
the inner polytope leaves undecided (it is loosest, by about a factor two, on the moments
CLIK's grippers carry) without an LP; a certificate is accepted only 1e-6 below the
boundary, far outside the LP's 1e-9 tolerance, so every decision is the one the LP makes.

Time filter (spine slip). Spines hold by hooking asperities; a wrench outside ``W`` is not
an instant detachment but an unbalanced load that drags the spines across their asperities
until they ride off. The part of the wrench beyond the set along its ray,
``e = w (1 - 1/g)``, is that unbalanced load; the spines slide as a rigid body of the
gripper's mass ``m`` under the equivalent force ``|e_f| + |e_tau| / r`` (a moment acts on
the spine ring of radius ``r`` as a force couple). The gripper breaks off when the slide
exceeds the asperity engagement depth ``d``: for a constant excess force ``F`` after
``t = sqrt(2 d m / F)`` (0.5 mm, 0.4 kg: 6 ms at 15 N over, 20 ms at 1 N). Back inside ``W``
the spines re-seat (the hooks' elastic deflection returns) and the slide resets. The slide
is a failure clock only: the gripper does not move on the rock before it breaks off.
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
    """The failure clock's parameters.

    ``engagement_depth`` [m]: slide of the spines along their asperities before they ride
    off (spine tips of 10-50 um radius on asperities of a similar size; 0.5 mm is the depth a
    hooked tip travels up an asperity face). ``spine_radius`` [m]: lever of a moment on the
    spine ring (the pressure centres sit 30-40 mm from the gripper axis). ``mass`` [kg]: the
    sliding gripper (the simulated gripper weighs 0.4 kg).
    """

    engagement_depth: float = 5e-4
    spine_radius: float = 0.035
    mass: float = 0.4

    def __post_init__(self) -> None:
        check.numeric_fields(self, "spine slip", strict=True,
                             names=("engagement_depth", "spine_radius", "mass"))

    def time_to_fail(self, excess_force: float) -> float:
        """Time [s] a constant equivalent excess force [N] needs to break a gripper off."""
        if excess_force <= 0:
            return math.inf
        return math.sqrt(2.0 * self.engagement_depth * self.mass / excess_force)


def _rows(w: np.ndarray) -> np.ndarray:
    """Wrenches as a C-contiguous float array (n, 6) (any leading dimensions flattened)."""
    return np.ascontiguousarray(w, dtype=float).reshape(-1, 6)


def scaled_wrench(w: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Wrenches (..., 6) [N, N m] over their holds' factors (..., 6) or (..., 7): ``w /
    factor`` per axis, and ``f_z`` over the seventh factor where it pushes (``f_z > 0``).

    The held set is ``W`` stretched per axis, ``f_z`` by one factor on each side of zero (a
    star-shaped set: the gauge of ``w`` in it is the gauge of the scaled wrench in ``W``,
    and every bound of this module is taken on scaled wrenches).
    """
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

    def bounds(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds (n,) of the gauge of wrenches ``w`` (n, 6) [N, N m]."""
        return self.lower(w), self.upper(w)

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
        out = self.bounds(w)[1]
        for i in np.flatnonzero(out > 1.0):
            out[i] = self.exact(w[i])
        return out

    def contains(self, w: np.ndarray) -> np.ndarray:
        """Whether each wrench (n, 6) [N, N m] lies in ``W``."""
        return self.gauge(w) <= 1.0


@lru_cache(maxsize=1)
def default_wrench_set() -> WrenchSet:
    """The SPASAS gripper's achievable set at the paper's driving torque (built once, ~2 s)."""
    return WrenchSet()


class FailureClock:
    """Per-gripper spine-slip state: advanced every physics step, reset on re-attachment.

    ``wrench_set`` is ``W``; ``slip`` the clock's parameters. The peak load of each gripper
    is kept as the wrench with the largest lower gauge bound (supporting half-spaces, within
    some 20 % of the gauge) and made exact by one LP when read (:meth:`peaks`); above 1
    every gauge is exact. Each gripper keeps the last wrench an LP measured and its gauge,
    the reference of the sublinearity certificate (see the module docstring).
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
        #: Per gripper: the last wrench (over the factors) whose lower bound was formed, and
        #: that bound (the reference of the peaks' skip test in :func:`.failure_kernels.certify`).
        self._lo_wrench = np.zeros((n, 6))
        self._lo_gauge = np.full(n, np.inf)
        #: :func:`.failure_kernels.certify`'s arguments after ``rows``, before ``g``: the
        #: wrench set's planes, the margins and the clocks' arrays (updated in place).
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
        on holds of capacity factors ``factor`` (k, 6) or (k, 7) (:func:`scaled_wrench`).

        Returns the gauges (k,) (exact above 1, else an upper bound <= 1) and which
        grippers' slides passed the engagement depth. Where every wrench is certified
        inside its set, one compiled call (:func:`.failure_kernels.certify`) does it all;
        otherwise a wrench the inner polytope leaves undecided is certified by the
        sublinearity bound when it can be, else measured by LP.
        """
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
        wrench: ``w`` (k, 6) the wrenches, ``ws`` the same over the holds' factors, ``g`` its
        upper bounds (k,) of their gauges."""
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
