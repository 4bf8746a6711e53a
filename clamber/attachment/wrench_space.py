"""Achievable wrench space of the SPASAS gripper, and the box and polytope fitted inside it.

The search samples the kinetostatics of :mod:`clamber.attachment.spasas` for one driving
torque and one set of knuckle angles; the conservative box and the tighter polytope are
returned as :class:`~clamber.attachment.wrench_limits.WrenchLimits` for the Q-WBC.

Why the achievable set is convex, and how it is represented
-----------------------------------------------------------
Each phalange's admissible loads form a convex set: the spine array shares its load, so any
convex combination of admissible single-point states (each balancing the same driving
torque, Eq. 7, inside its friction cone, Eqs. 8-10) is again a physical loading of the array
(see :mod:`~clamber.attachment.spasas`). The footpad's admissible loads are a friction cone
capped at its largest load: convex too. The gripper wrench is the sum of the five contact
wrenches, so the achievable set is the Minkowski sum of five convex sets and is convex.

The search keeps, for each contact, a finite set of admissible extreme wrenches (a grid over
the pressure centre and the tangential force with the lateral force at its friction limit,
and the footpad's loaded friction pyramid). The set ``W`` used here is the Minkowski sum of
their convex hulls: every point of ``W`` is achievable, so ``W`` is an *inner* approximation
of the achievable set. Its support function is exact and cheap, ``h_W(d) = sum_c max_k
d . w_ck``, and membership of a wrench is a small linear program (:func:`wrench_gauge`), so
``W`` is never converted to a facet list (a hull of thousands of samples in 6-D has 10^5
facets).

Fits, all inside ``W`` and thus conservative by construction:

* the box: largest-volume symmetric box, by cutting planes whose cuts are supporting
  hyperplanes of ``W`` returned by the membership LP, then scaled so that every one of its 64
  vertices is verified inside ``W``;
* the polytope: convex hull of the box's vertices and a greedily chosen handful of support
  points of ``W`` (each an exact sum of admissible contact loads), converted to an
  H-representation with a capped facet count. It contains the box and lies in ``W`` because
  ``W`` is convex.

Coordinates are scaled per axis by ``WRENCH_SCALE`` so forces and torques weigh alike.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, minimize
from scipy.sparse import csr_matrix, hstack, vstack
from scipy.spatial import ConvexHull, HalfspaceIntersection

from clamber import _validate as check
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

#: Sign patterns of the 64 vertices of a 6-D box, shape (64, 6).
BOX_SIGNS = np.array(np.meshgrid(*[[-1.0, 1.0]] * 6, indexing="ij")).reshape(6, -1).T


@dataclass(frozen=True)
class ContactWrenchSets:
    """Extreme admissible wrenches of each contact of one gripper, in the gripper frame.

    The achievable set ``W`` is the Minkowski sum of the convex hulls of ``contacts``.

    Attributes:
        contacts: one (n_c, 6) array per contact, the four phalanges (order of
            ``PHALANGES``) then the footpad, wrenches in [N, N m].
        states: the phalange states the phalange rows come from (same grid for all four).
        rows: for each phalange, the index into ``states`` of each of its rows.
        tau_pha: phalange driving torque in [N m].
        knuckle_angles: knuckle angle of each phalange (order of ``PHALANGES``) in [rad].
    """

    contacts: tuple[np.ndarray, ...]
    states: PhalangeLoads
    rows: tuple[np.ndarray, ...]
    tau_pha: float
    knuckle_angles: tuple[float, float, float, float]

    def scaled(self) -> tuple[np.ndarray, ...]:
        """The contact wrenches divided by ``WRENCH_SCALE`` (dimensionless)."""
        return tuple(c / WRENCH_SCALE for c in self.contacts)

    def support(self, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Support values and support points of ``W`` for directions in wrench units.

        Args:
            directions: (m, 6) directions ``d`` (any norm), applied as ``d . w`` with ``w``
                in [N, N m].

        Returns:
            ``(values, points)``: ``values[i] = max_{w in W} d_i . w`` and the (m, 6) wrench
            that attains it, a sum of one extreme load per contact.
        """
        d = np.atleast_2d(np.asarray(directions, dtype=float))
        values = np.zeros(d.shape[0])
        points = np.zeros((d.shape[0], 6))
        for contact in self.contacts:
            scores = d @ contact.T
            pick = np.argmax(scores, axis=1)
            values += scores[np.arange(d.shape[0]), pick]
            points += contact[pick]
        return values, points


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
    """The sampled wrench space with its conservative box and polytope.

    Attributes:
        sets: the contacts' extreme loads; their Minkowski sum ``W`` is the reference set.
        samples: wrenches for plotting, support points of ``W`` and random sums.
        box: largest-volume symmetric box inside ``W``, scaled by ``1 - margin``.
        polytope: H-representation of ``polytope_points``' convex hull; contains ``box``
            and lies inside ``W`` (both scaled by ``1 - margin``). Each row reads
            ``sum_j H_kj w_j <= h_k`` with ``w`` in [N, N m]; rows are unit vectors in
            coordinates scaled by ``WRENCH_SCALE``.
        polytope_points: (P, 6) V-representation of ``polytope``, wrenches in [N, N m]: the
            box's 64 vertices and the chosen support points of ``W``.
        volume_ratio: volume of ``polytope`` over volume of ``box`` (>= 1).
        margin: fraction by which ``W`` was shrunk toward the zero wrench before fitting.
        fit_time_s: wall time of sampling and fitting in [s].
    """

    sets: ContactWrenchSets
    samples: WrenchSpaceSamples
    box: WrenchLimits
    polytope: WrenchLimits
    polytope_points: np.ndarray
    volume_ratio: float
    margin: float
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


def direction_set(n_random: int, rng: np.random.Generator) -> np.ndarray:
    """Unit directions in scaled wrench coordinates: axes, axis pairs, box corners, random.

    Returns an array (12 + 60 + 64 + n_random, 6); divide by ``WRENCH_SCALE`` to apply it
    to wrenches in [N, N m].
    """
    eye = np.eye(6)
    axes = np.vstack([eye, -eye])
    pairs = []
    for i in range(6):
        for j in range(i + 1, 6):
            for si in (-1.0, 1.0):
                for sj in (-1.0, 1.0):
                    pairs.append((si * eye[i] + sj * eye[j]) / math.sqrt(2.0))
    corners = BOX_SIGNS / math.sqrt(6.0)
    random = rng.standard_normal((n_random, 6))
    random /= np.linalg.norm(random, axis=1, keepdims=True)
    return np.vstack([axes, np.array(pairs), corners, random])


def contact_wrench_sets(
    geometry: SpasasGeometry | None = None,
    tau_pha: float = PAPER_DRIVING_TORQUE,
    knuckle_angles: Sequence[float] = DEFAULT_KNUCKLE_ANGLES,
    n_positions: int = 9,
    n_tangential: int = 17,
    n_footpad: int = 16,
    n_prune: int = 20000,
) -> ContactWrenchSets:
    """Extreme admissible wrenches of the four phalanges and the footpad.

    Each phalange keeps only the grid states that maximize ``d . w`` for at least one of
    ``n_prune`` random scaled directions ``d``: the others are (nearly always) inside the
    hull of the kept ones, and dropping a state only shrinks ``W``, so the pruned ``W`` is
    still an inner approximation of the achievable set. Pruning makes the membership LPs
    about four times smaller.

    Args:
        geometry: gripper geometry; the default ``SpasasGeometry()`` when None.
        tau_pha: phalange driving torque in [N m].
        knuckle_angles: (gamma_1, gamma_2) for both OCMs, or one angle per phalange in the
            order of ``PHALANGES``, in [rad].
        n_positions: pressure-centre grid size over the spine array.
        n_tangential: tangential-force grid size over its admissible interval.
        n_footpad: directions of the footpad's friction pyramid.
        n_prune: random directions that select the kept states; 0 keeps every state.
    """
    geometry = SpasasGeometry() if geometry is None else geometry
    angles = _knuckle_angles(knuckle_angles)
    check.integer("", "n_prune", n_prune, low=0)
    states = admissible_phalange_loads(geometry, tau_pha, n_positions, n_tangential)
    directions = np.random.default_rng(0).standard_normal((n_prune, 6)) / WRENCH_SCALE
    phalanges, rows = [], []
    for (ocm, side), gamma in zip(PHALANGES, angles, strict=True):
        wrenches = phalange_wrench(geometry, ocm, side, gamma, states)
        keep = (np.unique(np.argmax(directions @ wrenches.T, axis=1)) if n_prune
                else np.arange(wrenches.shape[0]))
        phalanges.append(wrenches[keep])
        rows.append(keep)
    return ContactWrenchSets(
        contacts=(*phalanges, footpad_wrenches(geometry, n_footpad)),
        states=states,
        rows=tuple(rows),
        tau_pha=float(tau_pha),
        knuckle_angles=angles,
    )


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
    every one), the footpad its extreme loads. Two kinds of gripper wrenches are formed:

    * support samples: for a direction ``u`` (in wrench coordinates scaled by
      ``WRENCH_SCALE``) every contact picks its state maximizing ``u . w_i``; the sum is a
      boundary point of the Minkowski sum, so these trace the hull (``n_support`` random
      directions plus the 12 axis, 60 axis-pair and 64 corner directions);
    * random samples: every contact picks a random state (``n_random`` of them), the
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
    check.integer("", "n_support", n_support, low=0)
    check.integer("", "n_random", n_random, low=0)
    sets = contact_wrench_sets(geometry, tau_pha, knuckle_angles)
    rng = np.random.default_rng(seed)
    directions = direction_set(n_support, rng) / WRENCH_SCALE
    picks = [np.argmax(directions @ c.T, axis=1) for c in sets.contacts]
    random_picks = [rng.integers(0, c.shape[0], n_random) for c in sets.contacts]
    index = [np.concatenate([p, r]) for p, r in zip(picks, random_picks, strict=True)]
    wrenches = np.sum([c[k] for c, k in zip(sets.contacts, index, strict=True)], axis=0)
    return WrenchSpaceSamples(
        wrenches=wrenches,
        loads=tuple(sets.states.take(r[k]) for r, k in zip(sets.rows, index[:4], strict=True)),
        footpad=sets.contacts[4][index[4]],
        tau_pha=sets.tau_pha,
        knuckle_angles=sets.knuckle_angles,
    )


class _GaugeProgram:
    """The LP ``max d . v  s.t.  h_W(d) <= 1`` in scaled coordinates, reused for many ``v``.

    Its optimum is the gauge (Minkowski functional) of ``W`` at ``v``: ``<= 1`` exactly for
    ``v`` in ``W`` (LP duality, ``W`` convex with the zero wrench inside). The maximizer
    ``d`` gives the supporting half-space ``d . w <= 1`` of ``W`` that ``v`` violates most.
    Variables are ``d`` (6) and one ``u_c`` per contact with ``Q_c d <= u_c`` and
    ``sum_c u_c <= 1``.
    """

    def __init__(self, scaled_contacts: Sequence[np.ndarray]) -> None:
        n_c = len(scaled_contacts)
        blocks = []
        for c, q in enumerate(scaled_contacts):
            pick = np.zeros((q.shape[0], n_c))
            pick[:, c] = -1.0
            blocks.append(hstack([csr_matrix(q), csr_matrix(pick)]))
        total = csr_matrix(np.concatenate([np.zeros(6), np.ones(n_c)])[None, :])
        self.a_ub = vstack([*blocks, total]).tocsr()
        self.b_ub = np.concatenate([np.zeros(self.a_ub.shape[0] - 1), [1.0]])
        self.n_c = n_c

    def solve(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """Gauge of the scaled point ``v`` and the maximizing direction ``d`` (scaled)."""
        cost = -np.concatenate([v, np.zeros(self.n_c)])
        result = linprog(cost, A_ub=self.a_ub, b_ub=self.b_ub, bounds=(None, None),
                         method="highs-ds")
        if result.status == 3:  # unbounded: v is outside the cone of W
            return math.inf, np.zeros(6)
        if result.status != 0:
            raise ConfigError(f"wrench-space gauge LP failed: {result.message}")
        return -float(result.fun), np.asarray(result.x[:6])


def _check_contains_origin(sets: ContactWrenchSets) -> None:
    directions = direction_set(0, np.random.default_rng(0)) / WRENCH_SCALE
    values, _ = sets.support(directions)
    if np.any(values <= 1e-9 * np.abs(directions).sum(axis=1).max()):
        raise ConfigError(
            "the achievable wrench space does not contain the zero wrench in its interior; "
            "no symmetric box fits (try other knuckle angles, a larger friction coefficient "
            "or footpad load)"
        )


def wrench_gauge(sets: ContactWrenchSets, wrenches: np.ndarray) -> np.ndarray:
    """Gauge of ``W`` at each wrench (N, 6) [N, N m]: ``<= 1`` exactly for wrenches in ``W``.

    One small LP per wrench (see :class:`_GaugeProgram`); ``inf`` where no positive multiple
    of ``W`` contains the wrench.
    """
    _check_contains_origin(sets)
    program = _GaugeProgram(sets.scaled())
    points = np.atleast_2d(np.asarray(wrenches, dtype=float)) / WRENCH_SCALE
    return np.array([program.solve(v)[0] for v in points])


def _max_volume_box(cuts: np.ndarray, shape: np.ndarray | None = None) -> np.ndarray:
    """Largest symmetric box ``|x_j| <= b_j`` with ``|cuts| b <= 1``, returns ``b``.

    A box lies in ``{d . x <= 1}`` iff its worst vertex does, ``|d| . b <= 1``. With
    ``shape`` the box is ``t shape`` with the largest ``t`` (closed form); without, it
    maximizes the volume, ``sum(log b)``, a small convex program solved in ``y = log b``.
    """
    abs_c = np.abs(cuts)
    if shape is not None:
        return shape / float(np.max(abs_c @ shape))
    y0 = np.full(6, math.log(0.999 / np.max(abs_c.sum(axis=1))))
    result = minimize(
        lambda y: -float(np.sum(y)),
        y0,
        jac=lambda y: -np.ones(6),
        method="SLSQP",
        constraints=[{
            "type": "ineq",
            "fun": lambda y: 1.0 - abs_c @ np.exp(y),
            "jac": lambda y: -abs_c * np.exp(y)[None, :],
        }],
        options={"maxiter": 500, "ftol": 1e-12},
    )
    b = np.exp(result.x) if result.success else np.exp(y0)
    return b / max(1.0, float(np.max(abs_c @ b)))


def fit_box(
    sets: ContactWrenchSets,
    shape: np.ndarray | None = None,
    n_pool: int = 2000,
    max_rounds: int = 40,
    tol: float = 1e-6,
) -> tuple[WrenchLimits, np.ndarray]:
    """Largest-volume (or given-shape) symmetric box inside ``W``, by cutting planes.

    Cuts are supporting half-spaces ``d . x <= h_W(d)`` of ``W`` (scaled coordinates). The
    rounds start from the axis, axis-pair and corner directions and fit the best box to the
    current cuts; each round adds, for every box vertex, the most violated cut of a pool of
    ``n_pool`` random supporting half-spaces (vectorised), or, once the pool has none, the
    supporting half-space the vertex violates most, found by LP (:class:`_GaugeProgram`).
    Finally the box is scaled by its largest vertex gauge so that every vertex is verified
    inside ``W`` by LP (and hence, by convexity, the whole box).

    Args:
        sets: the contacts' extreme loads.
        shape: (6,) positive half-widths in [N, N m]; when given, the box is the largest
            multiple of this box inside ``W`` instead of the largest-volume one (with the
            paper's box as shape, a result >= the paper's box says ``W`` covers it).
        n_pool: random directions of the pool of cheap cuts.
        max_rounds: cutting-plane rounds.
        tol: relative gauge tolerance that ends the rounds.

    Returns:
        The box as :class:`WrenchLimits` (named "box") and its 64 vertices (64, 6) in
        [N, N m].
    """
    _check_contains_origin(sets)
    if shape is not None:
        shape = check.finite_array("box", "shape", shape, (6,))
        if np.any(shape <= 0):
            raise ConfigError(f"box.shape = {shape.tolist()}: half-widths must be > 0")
        shape = shape / WRENCH_SCALE
    directions = direction_set(n_pool, np.random.default_rng(0))
    values, _ = sets.support(directions / WRENCH_SCALE)
    all_cuts = directions / values[:, None]
    n_structured = directions.shape[0] - n_pool
    cuts = all_cuts[:n_structured]
    pool = all_cuts[n_structured:]
    program = _GaugeProgram(sets.scaled())
    gauges = np.full(64, math.inf)
    half = np.zeros(6)
    for _ in range(max_rounds):
        half = _max_volume_box(cuts, shape)
        vertices = BOX_SIGNS * half
        pool_gauge = vertices @ pool.T
        worst = np.argmax(pool_gauge, axis=1)
        violated = pool_gauge[np.arange(64), worst] > 1.0 + tol
        if np.any(violated):
            cuts = np.vstack([cuts, pool[np.unique(worst[violated])]])
            continue
        new_cuts = []
        for k, v in enumerate(vertices):
            gauges[k], d = program.solve(v)
            if gauges[k] > 1.0 + tol:
                new_cuts.append(d)
        if not new_cuts:
            break
        cuts = np.vstack([cuts, new_cuts])
    else:
        gauges = np.array([program.solve(v)[0] for v in BOX_SIGNS * half])
    half = half / max(1.0, float(np.max(gauges))) * (1.0 - 1e-9)
    half_wrench = half * WRENCH_SCALE
    box = WrenchLimits.box(half_wrench)
    return WrenchLimits(box.H, box.h, name="box"), BOX_SIGNS * half_wrench


def _hull_inequalities(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Facets ``(A, b)``, ``A x <= b`` with unit rows, and volume of the hull of scaled points.

    Qhull triangulates facets in 6-D; coplanar pieces share a normal and are merged into
    one row. Offsets are the points' support values, so every point satisfies every row.
    """
    hull = ConvexHull(points)
    normals = hull.equations[:, :6]
    _, first = np.unique(np.round(normals, 9), axis=0, return_index=True)
    normals = normals[np.sort(first)]
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return normals, np.max(points @ normals.T, axis=0), float(hull.volume)


def fit_polytope(
    sets: ContactWrenchSets,
    box_vertices: np.ndarray,
    max_facets: int = 150,
    max_points: int = 40,
    n_trials: int = 24,
    n_candidates: int = 3000,
    seed: int = 0,
) -> tuple[WrenchLimits, np.ndarray]:
    """Inner polytope: convex hull of the box's vertices and chosen support points of ``W``.

    The candidates are support points of ``W`` in ``n_candidates`` random and all structured
    scaled directions; each is an exact sum of admissible contact loads, hence in ``W``.
    Each greedy step tries the ``n_trials`` candidates farthest outside the current hull
    (scaled distance beyond its most violated facet) and adds the one with the largest
    volume gain per added facet among those that keep at most ``max_facets`` facets; it
    stops when none does or every candidate is inside. The result contains the box and lies
    in ``W`` because ``W`` is convex.

    Args:
        sets: the contacts' extreme loads.
        box_vertices: (64, 6) vertices of a box inside ``W`` in [N, N m].
        max_facets: largest number of inequality rows.
        max_points: largest number of support points added to the box's vertices.
        n_trials: candidates tried per step.
        n_candidates: random support directions searched for candidates.
        seed: seed of the random directions.

    Returns:
        The polytope as :class:`WrenchLimits` (named "polytope", rows unit vectors in scaled
        coordinates) and its V-representation (P, 6) in [N, N m].
    """
    check.integer("polytope", "max_facets", max_facets, low=12)
    directions = direction_set(n_candidates, np.random.default_rng(seed)) / WRENCH_SCALE
    _, support_points = sets.support(directions)
    candidates = np.unique(np.round(support_points / WRENCH_SCALE, 12), axis=0)
    points = np.asarray(box_vertices, dtype=float) / WRENCH_SCALE
    a, b, volume = _hull_inequalities(points)
    for _ in range(max_points):
        distance = np.max(candidates @ a.T - b, axis=1)
        order = np.argsort(-distance)[:n_trials]
        order = order[distance[order] > 1e-6]
        best = None
        best_score = 0.0
        for k in order:
            trial = np.vstack([points, candidates[k]])
            a_trial, b_trial, v_trial = _hull_inequalities(trial)
            if a_trial.shape[0] > max_facets:
                continue
            score = v_trial - volume
            if score > best_score:
                best, best_score = (trial, a_trial, b_trial, v_trial), score
        if best is None:
            break
        points, a, b, volume = best
    limits = WrenchLimits(H=a / WRENCH_SCALE, h=b, name="polytope")
    return limits, points * WRENCH_SCALE


def polytope_vertices(limits: WrenchLimits) -> np.ndarray:
    """Vertices (V, 6) of a bounded ``WrenchLimits`` with the zero wrench in its interior.

    Qhull reports a vertex where more than six facets meet once per simplicial piece; the
    duplicates are removed.
    """
    halfspaces = np.hstack([limits.H, -limits.h[:, None]])
    corners = HalfspaceIntersection(halfspaces, np.zeros(6)).intersections
    scale = np.max(np.abs(corners), axis=0) + 1e-300
    _, first = np.unique(np.round(corners / scale, 8), axis=0, return_index=True)
    return corners[np.sort(first)]


def gauge(limits: WrenchLimits, points: np.ndarray) -> np.ndarray:
    """Minkowski gauge ``max_k (H_k w / h_k)``: <= 1 exactly for points inside ``limits``.

    Needs ``h > 0`` (the zero wrench strictly inside); vectorised over ``points`` (N, 6).
    """
    return np.max(np.asarray(points, dtype=float) @ limits.H.T / limits.h, axis=-1)


def box_volume(box: WrenchLimits) -> float:
    """Volume of a box ``WrenchLimits`` in coordinates scaled by ``WRENCH_SCALE``."""
    return float(np.prod((box.h[:6] + box.h[6:]) / WRENCH_SCALE))


def points_volume(points: np.ndarray) -> float:
    """Volume of the convex hull of wrenches (P, 6) in coordinates scaled by ``WRENCH_SCALE``."""
    return float(ConvexHull(np.asarray(points) / WRENCH_SCALE).volume)


def fit_wrench_space(
    geometry: SpasasGeometry | None = None,
    tau_pha: float = PAPER_DRIVING_TORQUE,
    knuckle_angles: Sequence[float] = DEFAULT_KNUCKLE_ANGLES,
    margin: float = 0.0,
    max_facets: int = 150,
    n_support: int = 800,
    n_random: int = 1000,
    seed: int = 0,
) -> WrenchSpaceFit:
    """Search the wrench space and fit the conservative box and the inner polytope.

    Args:
        geometry: gripper geometry; the default ``SpasasGeometry()`` when None.
        tau_pha: phalange driving torque in [N m].
        knuckle_angles: as in :func:`sample_wrench_space`, in [rad].
        margin: in [0, 1): ``W`` is shrunk by ``1 - margin`` toward the zero wrench before
            fitting, keeping both fits that far from the boundary (the paper's reliability
            argument); 0 fits ``W`` itself.
        max_facets: largest number of polytope rows.
        n_support: random support directions of the plotted samples.
        n_random: random-combination plotted samples.
        seed: seed of the random generator.
    """
    check.number("", "margin", margin, low=0.0, high=1.0, high_open=True)
    start = time.perf_counter()
    sets = contact_wrench_sets(geometry, tau_pha, knuckle_angles)
    shrunk = ContactWrenchSets(
        contacts=tuple(c * (1.0 - margin) for c in sets.contacts),
        states=sets.states,
        rows=sets.rows,
        tau_pha=sets.tau_pha,
        knuckle_angles=sets.knuckle_angles,
    )
    box, box_vertices = fit_box(shrunk)
    polytope, points = fit_polytope(shrunk, box_vertices, max_facets=max_facets, seed=seed)
    samples = sample_wrench_space(geometry, tau_pha, knuckle_angles, n_support, n_random, seed)
    return WrenchSpaceFit(
        sets=sets,
        samples=samples,
        box=box,
        polytope=polytope,
        polytope_points=points,
        volume_ratio=points_volume(points) / box_volume(box),
        margin=float(margin),
        fit_time_s=time.perf_counter() - start,
    )
