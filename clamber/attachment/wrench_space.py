"""Achievable wrench space of the SPASAS gripper, and the box and polytope fitted inside it.

The search samples the kinetostatics of :mod:`clamber.attachment.spasas` for one driving
torque and one set of knuckle angles; the conservative box and the tighter polytope are
returned as :class:`~clamber.attachment.wrench_limits.WrenchLimits` for the Q-WBC.

Approximations, from outside in:

* the achievable set is the convex hull of admissible phalange states summed over the four
  phalanges (convex because the spines share the load, see :mod:`~clamber.attachment.spasas`);
* the search keeps a finite set of those sums, so the hull of the samples is an *inner*
  approximation of the achievable set (every sample is achievable);
* the box and the polytope are fitted inside the hull of the samples, hence inside the
  achievable set: conservative by construction.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError

from clamber.attachment.spasas import (
    PAPER_DRIVING_TORQUE,
    PHALANGES,
    PhalangeLoads,
    SpasasGeometry,
    admissible_phalange_loads,
    footpad_wrenches,
    phalange_wrench,
)
from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError

#: Default knuckle angles (gamma_1, gamma_2) of both OCMs, in [rad] (15 deg: a flat rock).
DEFAULT_KNUCKLE_ANGLES = (math.radians(15.0), math.radians(15.0))

#: Scale of each wrench axis used to balance directions (the paper's box), [N, N, N, N m x3].
WRENCH_SCALE = PAPER_BOX_HALF_WIDTHS


@dataclass(frozen=True)
class WrenchSpaceSamples:
    """Sampled achievable gripper wrenches and the phalange loads that produce them.

    Attributes:
        wrenches: (N, 6) gripper-frame wrenches [fx, fy, fz, tx, ty, tz] in [N, N m].
        loads: one :class:`PhalangeLoads` per phalange (order of ``PHALANGES``), arrays (N,):
            ``wrenches[k]`` is the sum of the four phalange wrenches of ``loads[i].take(k)``
            and ``footpad[k]``.
        footpad: (N, 6) wrench of the footpad contact in each sample, [N, N m].
        tau_pha: phalange driving torque in [N m].
        knuckle_angles: knuckle angle of each phalange (order of ``PHALANGES``) in [rad].
    """

    wrenches: np.ndarray
    loads: tuple[PhalangeLoads, ...]
    footpad: np.ndarray
    tau_pha: float
    knuckle_angles: tuple[float, float, float, float]


@dataclass(frozen=True)
class WrenchSpaceFit:
    """The sampled wrench space with its hull, box and polytope.

    Attributes:
        samples: the search's samples.
        hull: H-representation of the samples' convex hull (many facets; a reference, not
            meant for a QP).
        box: largest-volume symmetric box inside the hull.
        polytope: inner polytope with few facets, containing ``box``, inside the hull.
        fit_time_s: wall time of sampling and fitting in [s].
    """

    samples: WrenchSpaceSamples
    hull: WrenchLimits
    box: WrenchLimits
    polytope: WrenchLimits
    fit_time_s: float


def _knuckle_angles(knuckle_angles: Sequence[float]) -> tuple[float, float, float, float]:
    angles = tuple(float(a) for a in knuckle_angles)
    if len(angles) == 2:
        angles = angles + angles
    if len(angles) != 4:
        raise ConfigError(
            "knuckle_angles must have 2 entries (gamma_1, gamma_2 of both OCMs) or 4 "
            f"(one per phalange), got {len(angles)}"
        )
    for a in angles:
        if not (math.isfinite(a) and 0.0 <= a < math.pi / 2):
            raise ConfigError(f"knuckle angles must lie in [0, pi/2) rad, got {angles}")
    return angles  # type: ignore[return-value]


def _direction_set(n_random: int, rng: np.random.Generator) -> np.ndarray:
    """Unit directions in scaled wrench coordinates: axes, axis pairs, then random ones."""
    eye = np.eye(6)
    axes = np.vstack([eye, -eye])
    pairs = []
    for i in range(6):
        for j in range(i + 1, 6):
            for si in (-1.0, 1.0):
                for sj in (-1.0, 1.0):
                    pairs.append((si * eye[i] + sj * eye[j]) / math.sqrt(2.0))
    random = rng.standard_normal((n_random, 6))
    random /= np.linalg.norm(random, axis=1, keepdims=True)
    return np.vstack([axes, np.array(pairs), random])


def sample_wrench_space(
    geometry: SpasasGeometry | None = None,
    tau_pha: float = PAPER_DRIVING_TORQUE,
    knuckle_angles: Sequence[float] = DEFAULT_KNUCKLE_ANGLES,
    n_support: int = 800,
    n_random: int = 1000,
    seed: int = 0,
) -> WrenchSpaceSamples:
    """Search the achievable wrench space for one driving torque and set of knuckle angles.

    Each phalange gets a set of admissible states (Eq. 7 and the friction limit hold for
    every one), the footpad its extreme loads. Two kinds of gripper wrenches are formed from them:

    * support samples: for a direction ``u`` (in wrench coordinates scaled by
      ``WRENCH_SCALE``) every phalange picks its state maximizing ``u . w_i``; the sum is a
      boundary point of the Minkowski sum (phalanges and footpad), so these trace the hull
      (``n_support`` random directions plus the 12 axis and 60 axis-pair directions);
    * random samples: every phalange picks a random state (``n_random`` of them), the
      interior of the space as a naive search sees it.

    Args:
        geometry: gripper geometry; the default ``SpasasGeometry()`` when None.
        tau_pha: phalange driving torque in [N m].
        knuckle_angles: (gamma_1, gamma_2) for both OCMs, or one angle per phalange in the
            order of ``PHALANGES``, in [rad].
        n_support: number of random support directions.
        n_random: number of random-combination samples.
        seed: seed of the random generator; equal seeds give equal samples.
    """
    geometry = SpasasGeometry() if geometry is None else geometry
    angles = _knuckle_angles(knuckle_angles)
    if n_support < 0 or n_random < 0:
        raise ConfigError(f"sample counts must be >= 0, got {n_support}, {n_random}")
    rng = np.random.default_rng(seed)
    states = admissible_phalange_loads(geometry, tau_pha, n_interior=200, rng=rng)
    per_phalange = [
        phalange_wrench(geometry, ocm, side, gamma, states)
        for (ocm, side), gamma in zip(PHALANGES, angles, strict=True)
    ]
    directions = _direction_set(n_support, rng) / WRENCH_SCALE
    pad = footpad_wrenches(geometry)
    contacts = [*per_phalange, pad]
    picks = [np.argmax(w @ directions.T, axis=0) for w in contacts]
    random_picks = [rng.integers(0, w.shape[0], n_random) for w in contacts]
    index = [np.concatenate([p, r]) for p, r in zip(picks, random_picks, strict=True)]
    wrenches = sum(w[k] for w, k in zip(contacts, index, strict=True))
    loads = tuple(states.take(k) for k in index[:4])
    return WrenchSpaceSamples(
        wrenches=np.asarray(wrenches),
        loads=loads,
        footpad=pad[index[4]],
        tau_pha=float(tau_pha),
        knuckle_angles=angles,
    )


def hull_limits(wrenches: np.ndarray) -> WrenchLimits:
    """H-representation of the convex hull of wrench samples (must contain zero inside).

    Rows are the hull's facets with unit normals, from Qhull.
    """
    points = np.asarray(wrenches, dtype=float)
    if points.ndim != 2 or points.shape[1] != 6 or points.shape[0] < 7:
        raise ConfigError(f"need at least 7 wrench samples of shape (N, 6), got {points.shape}")
    unique = np.unique(np.round(points / WRENCH_SCALE, 9), axis=0)
    try:
        hull = ConvexHull(unique)
    except QhullError:
        hull = ConvexHull(unique, qhull_options="QJ")
    normals = hull.equations[:, :6] / WRENCH_SCALE
    offsets = -hull.equations[:, 6]
    if np.any(offsets <= 0):
        raise ConfigError(
            "the sampled wrench space does not contain the zero wrench in its interior; "
            "no symmetric box fits (try other knuckle angles or a larger friction coefficient)"
        )
    norms = np.linalg.norm(normals, axis=1)
    return WrenchLimits(H=normals / norms[:, None], h=offsets / norms, name="hull")


def fit_box(hull: WrenchLimits) -> WrenchLimits:
    """Largest-volume symmetric box ``|w_j| <= b_j`` inside ``hull``.

    The box lies in ``{H w <= h}`` iff ``|H| b <= h`` (each facet's worst vertex), so
    maximizing ``sum(log b)`` is a small convex program, solved here in ``log b``.
    """
    abs_h = np.abs(hull.H)
    start = np.full(6, np.min(hull.h / (abs_h @ WRENCH_SCALE))) * WRENCH_SCALE * 0.999
    y0 = np.log(start)
    result = minimize(
        lambda y: -float(np.sum(y)),
        y0,
        jac=lambda y: -np.ones(6),
        method="SLSQP",
        constraints=[{
            "type": "ineq",
            "fun": lambda y: hull.h - abs_h @ np.exp(y),
            "jac": lambda y: -abs_h * np.exp(y)[None, :],
        }],
        options={"maxiter": 300, "ftol": 1e-12},
    )
    half = np.exp(result.x) if result.success else start
    # Guard against solver tolerance: shrink uniformly until every facet holds exactly.
    worst = np.max(abs_h @ half / hull.h)
    if worst > 1.0:
        half = half / worst
    box = WrenchLimits.box(half * (1.0 - 1e-9))
    return WrenchLimits(box.H, box.h, name="box")


def polytope_vertices(limits: WrenchLimits) -> np.ndarray:
    """Vertices (V, 6) of a bounded ``WrenchLimits`` with the zero wrench in its interior."""
    halfspaces = np.hstack([limits.H, -limits.h[:, None]])
    return HalfspaceIntersection(halfspaces, np.zeros(6)).intersections


def gauge(hull: WrenchLimits, points: np.ndarray) -> np.ndarray:
    """Minkowski gauge ``max_k (H_k w / h_k)``: <= 1 exactly for points inside ``hull``."""
    return np.max(np.asarray(points) @ hull.H.T / hull.h, axis=-1)


def _polytope_directions() -> np.ndarray:
    """Facet normals of the polytope: box axes and axis pairs, in scaled coordinates."""
    return _direction_set(0, np.random.default_rng(0))


def fit_polytope(
    hull: WrenchLimits,
    box: WrenchLimits,
    points: np.ndarray | None = None,
    max_iterations: int = 20,
    tol: float = 1e-9,
) -> WrenchLimits:
    """Inner polytope with at most 72 facets: inside ``hull``, containing ``box``.

    The facet normals are fixed: the 12 box axes and the 60 axis-pair diagonals (in
    coordinates scaled by ``WRENCH_SCALE``). The offsets start at the hull's support values
    (an outer approximation) and shrink until every vertex lies inside the hull:

    1. enumerate the polytope's vertices; find those outside the hull (gauge > 1);
    2. scale the offsets of the facets active at each such vertex by ``1 / gauge``, which
       moves that vertex onto the hull boundary, never below the box's support value;
    3. repeat; if vertices still stick out, blend all offsets toward the box's supports by
       bisection (the blend at zero is the box itself, which lies inside the hull).

    Facets no vertex touches are dropped at the end.

    Args:
        hull: H-representation of the sampled wrench space.
        box: a box inside ``hull`` the polytope must contain.
        points: the samples ``hull`` was built from (N, 6), for its support values; the
            hull's vertices are enumerated when None.
        max_iterations: rounds of step 2.
        tol: tolerance of the inside/active tests, relative.
    """
    normals = _polytope_directions() / WRENCH_SCALE
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    hull_vertices = polytope_vertices(hull) if points is None else np.asarray(points)
    support_hull = np.max(hull_vertices @ normals.T, axis=0)
    half = box.h[:6]
    support_box = np.abs(normals) @ half
    offsets = support_hull.copy()
    for _ in range(max_iterations):
        vertices = polytope_vertices(WrenchLimits(normals, offsets))
        g = gauge(hull, vertices)
        outside = g > 1.0 + tol
        if not np.any(outside):
            break
        new_offsets = offsets.copy()
        for v, gv in zip(vertices[outside], g[outside], strict=True):
            active = np.abs(normals @ v - offsets) <= tol * (1.0 + np.abs(offsets))
            shrunk = np.maximum(support_box[active], offsets[active] / gv)
            new_offsets[active] = np.minimum(new_offsets[active], shrunk)
        offsets = new_offsets
    else:
        offsets = _blend_inside(hull, normals, offsets, support_box)
    vertices = polytope_vertices(WrenchLimits(normals, offsets))
    if np.max(gauge(hull, vertices)) > 1.0 + tol:
        offsets = _blend_inside(hull, normals, offsets, support_box)
        vertices = polytope_vertices(WrenchLimits(normals, offsets))
    slack = offsets[None, :] - vertices @ normals.T
    used = np.any(slack <= 1e-7 * (1.0 + np.abs(offsets)), axis=0)
    return WrenchLimits(H=normals[used], h=offsets[used], name="polytope")


def _blend_inside(
    hull: WrenchLimits, normals: np.ndarray, offsets: np.ndarray, support_box: np.ndarray
) -> np.ndarray:
    """Offsets ``box + a (offsets - box)`` with the largest ``a`` in [0, 1] inside ``hull``."""
    lo, hi = 0.0, 1.0
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        trial = support_box + mid * (offsets - support_box)
        vertices = polytope_vertices(WrenchLimits(normals, trial))
        if np.max(gauge(hull, vertices)) <= 1.0:
            lo = mid
        else:
            hi = mid
    return support_box + lo * (offsets - support_box)


def fit_wrench_space(
    geometry: SpasasGeometry | None = None,
    tau_pha: float = PAPER_DRIVING_TORQUE,
    knuckle_angles: Sequence[float] = DEFAULT_KNUCKLE_ANGLES,
    n_support: int = 800,
    n_random: int = 1000,
    seed: int = 0,
) -> WrenchSpaceFit:
    """Sample the wrench space and fit its hull, conservative box and inner polytope.

    Arguments are those of :func:`sample_wrench_space`.
    """
    start = time.perf_counter()
    samples = sample_wrench_space(geometry, tau_pha, knuckle_angles, n_support, n_random, seed)
    hull = hull_limits(samples.wrenches)
    box = fit_box(hull)
    polytope = fit_polytope(hull, box, samples.wrenches)
    return WrenchSpaceFit(
        samples=samples,
        hull=hull,
        box=box,
        polytope=polytope,
        fit_time_s=time.perf_counter() - start,
    )
