"""Simulated worlds: a climbing wall with seeded rock footholds, ground terrains, model mismatch.

World frame {S}: z up. A wall of inclination ``alpha`` (90 deg: vertical) contains the world
y axis; its frame {W} has columns ``u`` (up the slope), ``y`` (left), ``n`` (out). Holds are
convex rocks sized like the paper's basalt holds (about 18 cm across, 7 cm high).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.model.robot import LEG_NAMES, LegGeometry, Marcbot

#: Terrain names accepted by :func:`ground_terrain`.
TERRAINS = ("flat", "gravel", "grass", "mud", "stone")


def wall_rotation(incline_deg: float) -> np.ndarray:
    """Rotation of the wall frame {W} in {S}: columns up-slope, left, normal (3x3)."""
    if not 0.0 <= incline_deg <= 135.0:
        raise ConfigError(f"wall incline must lie in [0, 135] deg, got {incline_deg}")
    a = math.radians(incline_deg)
    u = np.array([math.cos(a), 0.0, math.sin(a)])
    n = np.array([-math.sin(a), 0.0, math.cos(a)])
    return np.column_stack([u, [0.0, 1.0, 0.0], n])


@dataclass(frozen=True)
class Hold:
    """One rock foothold: ``base``, top-face centre ``top`` and unit ``normal`` in {S} [m];
    convex-hull ``vertices`` in {W} relative to ``base``; ``capacity_factor`` (6,) or (7,)
    scales the gripper's true capacity (:func:`~clamber.quadruped.sim.failure.scaled_wrench`).
    """

    name: str
    base: np.ndarray
    top: np.ndarray
    normal: np.ndarray
    vertices: np.ndarray
    capture_radius: float
    capacity_factor: np.ndarray


@dataclass(frozen=True)
class WallLayout:
    """A wall and its holds: ``holds[leg][k]`` is leg ``leg``'s k-th foothold (k = 0 start)."""

    incline_deg: float
    rotation: np.ndarray
    holds: dict[str, list[Hold]]
    stride: float
    seed: int

    def all_holds(self) -> list[Hold]:
        """Every hold once (two legs may share one, see :func:`wall_layout`)."""
        return list({id(h): h for leg in LEG_NAMES for h in self.holds[leg]}.values())


@dataclass(frozen=True)
class RockSpec:
    """Rock sizes [m] (footprint ``radius``, mean ``height`` and its spread, flat
    ``top_radius``), the top's largest tilt [rad], placement jitter [m], and the per-axis
    capacity factor: log-normal (median ``capacity_mean``, log-spread ``capacity_spread``),
    clipped to ``[capacity_min, capacity_max]``."""

    radius: float = 0.09
    height: float = 0.07
    height_spread: float = 0.008
    top_radius: float = 0.045
    max_tilt: float = math.radians(6.0)
    placement_jitter: float = 0.015
    capture_radius: float = 0.035
    capacity_mean: float = 1.0
    capacity_spread: float = 0.15
    capacity_min: float = 0.7
    capacity_max: float = 1.3


def _rock_vertices(rng: np.random.Generator, spec: RockSpec, height: float,
                   tilt: np.ndarray) -> np.ndarray:
    """Convex-hull points [m] of one rock in {W}, base at the origin: a seven-sided footprint
    sunk 1 cm into the wall and a seven-sided top of ``top_radius`` tilted by ``tilt``
    (slopes along u and y) through ``(0, 0, height)``."""
    n_side = 7
    ang = np.linspace(0, 2 * np.pi, n_side, endpoint=False) + rng.uniform(-0.2, 0.2, n_side)
    r = spec.radius * rng.uniform(0.85, 1.0, n_side)
    r[0] = spec.radius
    base = np.column_stack([r * np.cos(ang), r * np.sin(ang), np.full(n_side, -0.01)])
    tang = ang + np.pi / n_side
    top_xy = np.column_stack([spec.top_radius * np.cos(tang), spec.top_radius * np.sin(tang)])
    top_z = height + top_xy @ tilt
    return np.vstack([base, np.column_stack([top_xy, top_z])])


def hold_rng(first: np.random.Generator, seed: int, leg: int, k: int,
             stream: int = 0) -> np.random.Generator:
    """The generator of hold ``k`` of leg number ``leg``: ``first`` for ``k <= 1``, else one
    keyed by ``(seed, leg, k, stream)``, so adding strides never changes earlier holds."""
    return first if k <= 1 else np.random.default_rng([seed, leg, k, stream])


def wall_layout(incline_deg: float, stance: dict[str, np.ndarray], stride: float = 0.22,
                n_steps: int = 1, seed: int = 0, spec: RockSpec | None = None,
                start: np.ndarray | None = None, heading_deg: float = 0.0) -> WallLayout:
    """Seeded holds for ``n_steps`` strides of every leg: leg ``leg``'s k-th at ``start +
    stance[leg] + k stride u`` [m, (u, y) in {W}] plus jitter (``start``: 0.4 m up the
    slope), the climb turned ``heading_deg`` about the wall normal. More strides keep the
    rocks of fewer (:func:`hold_rng`); nearby holds of different legs are shared
    (:func:`_share_rocks`).
    """
    spec = spec or RockSpec()
    if stride <= 0 or n_steps < 1:
        raise ConfigError(f"stride must be > 0 and n_steps >= 1, got {stride}, {n_steps}")
    if not -90.0 <= heading_deg <= 90.0:
        raise ConfigError(f"heading must lie in [-90, 90] deg, got {heading_deg}")
    h = math.radians(heading_deg)
    R = wall_rotation(incline_deg) @ np.array([[math.cos(h), -math.sin(h), 0.0],
                                                [math.sin(h), math.cos(h), 0.0],
                                                [0.0, 0.0, 1.0]])
    first = np.random.default_rng(seed)
    start = np.array([0.4, 0.0]) if start is None else np.asarray(start, dtype=float)[:2]
    holds: dict[str, list[Hold]] = {}
    for i, leg in enumerate(LEG_NAMES):
        holds[leg] = []
        for k in range(n_steps + 1):
            rng = hold_rng(first, seed, i, k)
            xy = start + np.asarray(stance[leg], dtype=float)[:2] + np.array([k * stride, 0.0])
            xy = xy + rng.uniform(-1, 1, 2) * spec.placement_jitter
            height = spec.height + rng.uniform(-1, 1) * spec.height_spread
            tilt = np.tan(rng.uniform(-1, 1, 2) * spec.max_tilt / math.sqrt(2))
            verts = _rock_vertices(rng, spec, height, tilt)
            n_w = np.array([-tilt[0], -tilt[1], 1.0])
            n_w /= np.linalg.norm(n_w)
            factor = np.clip(spec.capacity_mean * np.exp(rng.normal(0.0, spec.capacity_spread, 6)),
                             spec.capacity_min, spec.capacity_max)
            base = R @ np.array([xy[0], xy[1], 0.0])
            holds[leg].append(Hold(f"{leg}_hold{k}", base, base + R @ np.array([0, 0, height]),
                                   R @ n_w, verts, spec.capture_radius, factor))
    _share_rocks(holds, spec.radius)
    return WallLayout(incline_deg, R, holds, stride, seed)


def _share_rocks(holds: dict[str, list[Hold]], radius: float) -> None:
    """From the third hold on, a hold within ``radius`` [m] of another leg's earlier hold
    becomes that hold (in place): a rear foot steps onto the rock its front foot left."""
    for k in range(2, max(len(v) for v in holds.values())):
        for leg in LEG_NAMES:
            if k >= len(holds[leg]):
                continue
            here = holds[leg][k]
            earlier = [holds[o][j] for o in LEG_NAMES if o != leg
                       for j in range(min(k, len(holds[o])))]
            dist = [float(np.linalg.norm(h.base - here.base)) for h in earlier]
            i = int(np.argmin(dist))
            if dist[i] < radius:
                holds[leg][k] = earlier[i]


@dataclass(frozen=True)
class GroundTerrain:
    """A ground for trotting: ``friction``, MuJoCo contact softness (``timeconst`` [s],
    ``dampratio``), height ``roughness`` [m] (std; 0: a plane) and its ``correlation`` [m].
    """

    name: str
    friction: float
    timeconst: float
    dampratio: float
    roughness: float
    correlation: float


_TERRAINS = {
    "flat": GroundTerrain("flat", 1.0, 0.005, 1.0, 0.0, 0.05),
    "gravel": GroundTerrain("gravel", 0.7, 0.006, 1.0, 0.008, 0.04),
    "grass": GroundTerrain("grass", 0.6, 0.03, 1.0, 0.006, 0.10),
    "mud": GroundTerrain("mud", 0.35, 0.06, 1.5, 0.004, 0.15),
    "stone": GroundTerrain("stone", 0.9, 0.004, 1.0, 0.012, 0.12),
}


def ground_terrain(name: str) -> GroundTerrain:
    """The named terrain (one of ``TERRAINS``)."""
    try:
        return _TERRAINS[name]
    except KeyError:
        raise ConfigError(f"unknown terrain {name!r}; terrains are {', '.join(TERRAINS)}") \
            from None


def height_field(terrain: GroundTerrain, size: float, n: int, seed: int) -> np.ndarray:
    """Heights (n, n) [m] of a seeded rough field: white noise smoothed over ``correlation``,
    zero mean and ``roughness`` standard deviation (zeros for a plane)."""
    if terrain.roughness == 0.0:
        return np.zeros((n, n))
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(seed)
    z = gaussian_filter(rng.normal(size=(n, n)), sigma=terrain.correlation / (2 * size / n),
                        mode="wrap")
    z -= z.mean()
    return z * terrain.roughness / max(z.std(), 1e-12)


@dataclass(frozen=True)
class ModelMismatch:
    """How the simulated robot differs from the controller's model (uniform, seeded):
    masses scale by ``1 + U(-mass, mass)``, link lengths by ``1 + U(-length, length)``,
    and known hold tops are off by up to ``foothold`` [m] per axis."""

    mass: float = 0.05
    length: float = 0.02
    foothold: float = 0.005
    rng_offset: int = field(default=7919, repr=False)

    def __post_init__(self) -> None:
        for name in ("mass", "length", "foothold"):
            check.number("mismatch", name, getattr(self, name), low=0.0, high=0.5,
                         high_open=True)

    def perturb(self, robot: Marcbot, seed: int) -> Marcbot:
        """The simulated robot for trial ``seed``."""
        rng = np.random.default_rng(seed + self.rng_offset)

        def s(tol: float, size: int | None = None):
            return 1.0 + rng.uniform(-tol, tol, size)

        g = robot.leg
        leg = LegGeometry(hip=g.hip * s(self.length), thigh=g.thigh * s(self.length),
                          calf=g.calf * s(self.length),
                          ankle_forward=g.ankle_forward * s(self.length),
                          ankle_down=g.ankle_down * s(self.length),
                          gripper_height=g.gripper_height)
        masses = tuple(float(m) for m in np.asarray(robot.link_masses) * s(self.mass, 5))
        return replace(robot, body_mass=robot.body_mass * float(s(self.mass)), leg=leg,
                       link_masses=masses)

    def known_holds(self, layout: WallLayout, seed: int) -> dict[str, list[np.ndarray]]:
        """Hold tops as the planner knows them [m, {S}]: true tops plus a uniform error."""
        key = seed + 2 * self.rng_offset
        first = np.random.default_rng(key)
        known: dict[int, np.ndarray] = {}  # a hold two legs share is known once
        out = {}
        for i, leg in enumerate(LEG_NAMES):
            out[leg] = []
            for k, h in enumerate(layout.holds[leg]):
                if id(h) not in known:
                    error = hold_rng(first, key, i, k, 1).uniform(-1, 1, 3) * self.foothold
                    known[id(h)] = h.top + error
                out[leg].append(known[id(h)])
        return out
