"""The box and the polytope fitted inside the achievable wrench set ``W``
(:mod:`clamber.attachment.wrench_set`), returned as
:class:`~clamber.attachment.wrench_limits.WrenchLimits` for the Q-WBC.

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
from scipy.optimize import minimize
from scipy.spatial import ConvexHull

from clamber import _validate as check
from clamber.attachment.spasas import PAPER_DRIVING_TORQUE, SpasasGeometry
from clamber.attachment.wrench_limits import WrenchLimits
from clamber.attachment.wrench_set import (
    BOX_SIGNS,
    DEFAULT_KNUCKLE_ANGLES,
    WRENCH_SCALE,
    ContactWrenchSets,
    GaugeProgram,
    WrenchSpaceSamples,
    box_volume,
    check_contains_origin,
    contact_wrench_sets,
    direction_set,
    points_volume,
    sample_wrench_space,
)
from clamber.exceptions import ConfigError


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
    supporting half-space the vertex violates most, found by LP (:class:`GaugeProgram`).
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
    check_contains_origin(sets)
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
    program = GaugeProgram(sets.scaled())
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
        knuckle_angles: as in :func:`~clamber.attachment.wrench_set.sample_wrench_space`, in [rad].
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
