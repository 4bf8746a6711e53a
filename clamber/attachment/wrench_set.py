"""The achievable wrench set ``W`` of the SPASAS gripper: its contacts' extreme loads,
samples of it, and membership of a wrench (the gauge LP).

The search samples the kinetostatics of :mod:`clamber.attachment.spasas` for one driving
torque and one set of knuckle angles; :mod:`clamber.attachment.wrench_fit` fits the
conservative box and the tighter polytope inside ``W``.

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

Coordinates are scaled per axis by ``WRENCH_SCALE`` so forces and torques weigh alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
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


class GaugeProgram:
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


def check_contains_origin(sets: ContactWrenchSets) -> None:
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

    One small LP per wrench (see :class:`GaugeProgram`); ``inf`` where no positive multiple
    of ``W`` contains the wrench.
    """
    check_contains_origin(sets)
    program = GaugeProgram(sets.scaled())
    points = np.atleast_2d(np.asarray(wrenches, dtype=float)) / WRENCH_SCALE
    return np.array([program.solve(v)[0] for v in points])


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
