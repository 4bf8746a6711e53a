"""A seeded rock wall: a fractal surface carrying knobs and ledges, at a given incline.

Heights ``z(u, y)`` [m] in the wall frame {W} (:func:`~clamber.quadruped.sim.world.
wall_rotation`): a band-limited fractional-Brownian layer (:mod:`.surface`) plus
cosine-squared knobs at Poisson spots, some cut by a downhill step (ledges). A wall point
in {S} is ``origin + R [u, y, z]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.ndimage import correlate

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.quadruped.rock.surface import RoughnessSpectrum, fbm_surface
from clamber.quadruped.sim.world import wall_rotation

#: RMS asperity roughness R_q [m] of the paper's basalt holds.
PAPER_MICRO_RMS = 570e-6
#: Asperity wavelengths a spine tip engages [m] (tip radius to spine travel).
SPINE_WAVELENGTHS = (0.5e-3, 5e-3)


@dataclass(frozen=True)
class RockWallSpec:
    """Size and texture of a generated wall (lengths [m], density [1/m^2]): grid, fractal
    ``spectrum``, knobs (uniform heights and radii; a share are ledges cut at ``ledge_cut``
    of their radius), and ``asperity_rms`` [m], the roughness in ``SPINE_WAVELENGTHS``, far
    below the grid, stated rather than extrapolated (default: the paper's basalt)."""

    length: float = 2.8
    width: float = 1.2
    spacing: float = 0.01
    spectrum: RoughnessSpectrum = field(default_factory=RoughnessSpectrum)
    knob_density: float = 20.0
    knob_height: tuple[float, float] = (0.02, 0.07)
    knob_radius: tuple[float, float] = (0.05, 0.09)
    ledge_fraction: float = 0.3
    ledge_cut: float = 0.3
    asperity_rms: float = PAPER_MICRO_RMS

    def __post_init__(self) -> None:
        check.numeric_fields(self, "rock wall", strict=True,
                             names=("length", "width", "spacing", "asperity_rms"))
        if self.spacing * 16 > min(self.length, self.width):
            raise ConfigError("rock wall must span at least 16 grid cells each way")
        check.non_negative("rock wall", "knob_density", self.knob_density)
        for name in ("knob_height", "knob_radius"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi:
                raise ConfigError(f"{name} must be 0 < low <= high, got {(lo, hi)}")
        if not 0.0 <= self.ledge_fraction <= 1.0 or not 0.0 < self.ledge_cut < 1.0:
            raise ConfigError("ledge_fraction must lie in [0, 1] and ledge_cut in (0, 1)")


@dataclass(frozen=True)
class Knob:
    """One protrusion: centre ``(u, y)`` [m], height [m], radius [m], ledge or dome."""

    u: float
    y: float
    height: float
    radius: float
    ledge: bool


@dataclass(frozen=True)
class RockWall:
    """Heights ``z`` (n_u, n_y) [m] on the grid ``u`` (n_u,), ``y`` (n_y,) [m], placed in
    {S} by ``rotation`` (columns u, y, n) and ``origin`` [m]; ``fractal`` is the spectral
    layer alone (for checking the spectrum), ``micro_rms`` [m] the asperity roughness."""

    spec: RockWallSpec
    incline_deg: float
    seed: int
    u: np.ndarray
    y: np.ndarray
    z: np.ndarray
    fractal: np.ndarray
    knobs: tuple[Knob, ...]
    rotation: np.ndarray
    origin: np.ndarray
    micro_rms: float

    @property
    def spacing(self) -> float:
        return self.spec.spacing

    def to_world(self, u: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
        """World points (..., 3) [m] of wall coordinates."""
        p = np.stack(np.broadcast_arrays(u, y, z), axis=-1)
        return self.origin + p @ self.rotation.T

    def to_wall(self, p: np.ndarray) -> np.ndarray:
        """Wall coordinates (..., 3) ``(u, y, z)`` of world points [m]."""
        return (np.asarray(p, dtype=float) - self.origin) @ self.rotation



def _knob_heights(knobs: list[Knob], U: np.ndarray, Y: np.ndarray, cut: float) -> np.ndarray:
    """The knob layer: the highest knob at each grid point [m]."""
    out = np.zeros_like(U)
    for k in knobs:
        du, dy = U - k.u, Y - k.y
        r = np.hypot(du, dy)
        dome = np.where(r < k.radius, k.height * np.cos(0.5 * np.pi * r / k.radius) ** 2, 0.0)
        if k.ledge:
            dome = np.where(du >= -cut * k.radius, dome, 0.0)
        out = np.maximum(out, dome)
    return out


def generate_wall(incline_deg: float, seed: int, spec: RockWallSpec | None = None
                  ) -> RockWall:
    """The seeded wall at ``incline_deg`` (70: slab, 90: vertical, > 90: overhang)."""
    spec = spec or RockWallSpec()
    R = wall_rotation(incline_deg)
    rng = np.random.default_rng(seed)
    n_u = int(round(spec.length / spec.spacing)) + 1
    n_y = int(round(spec.width / spec.spacing)) + 1
    u = np.arange(n_u) * spec.spacing
    y = (np.arange(n_y) - (n_y - 1) / 2) * spec.spacing
    fractal = fbm_surface(spec.spectrum, (n_u, n_y), spec.spacing, rng)
    n_knobs = rng.poisson(spec.knob_density * spec.length * spec.width)
    knobs = [Knob(float(rng.uniform(0, spec.length)),
                  float(rng.uniform(-spec.width / 2, spec.width / 2)),
                  float(rng.uniform(*spec.knob_height)), float(rng.uniform(*spec.knob_radius)),
                  bool(rng.random() < spec.ledge_fraction)) for _ in range(n_knobs)]
    U, Y = np.meshgrid(u, y, indexing="ij")
    z = fractal + _knob_heights(knobs, U, Y, spec.ledge_cut)
    return RockWall(spec, float(incline_deg), int(seed), u, y, z, fractal, tuple(knobs), R,
                    np.zeros(3), spec.asperity_rms)


@dataclass(frozen=True)
class SurfaceFeatures:
    """Local geometry from a quadratic fit over a disc: unit ``normal`` (..., 3) in {W},
    ``convexity`` [1/m] (minus the mean curvature), ``step`` [m] (the fit's RMS residual:
    edges and steps) and the fitted height ``top`` [m]."""

    normal: np.ndarray
    convexity: np.ndarray
    step: np.ndarray
    top: np.ndarray


def _fit_stencil(radius: float, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """Disc mask and design matrix (m, 6) of ``z = a + b u + c y + d u^2 + e u y + f y^2``
    over the disc's cells (offsets from the centre in [m])."""
    r = int(math.floor(radius / spacing))
    if r < 2:
        raise ConfigError(f"fit radius {radius} m must span at least 2 cells of {spacing} m")
    o = np.arange(-r, r + 1) * spacing
    du, dy = np.meshgrid(o, o, indexing="ij")
    mask = np.hypot(du, dy) <= radius + 1e-12
    a, b = du[mask], dy[mask]
    return mask, np.column_stack([np.ones_like(a), a, b, a * a, a * b, b * b])


def surface_features(z: np.ndarray, spacing: float, radius: float) -> SurfaceFeatures:
    """:class:`SurfaceFeatures` of a heightfield at every grid point, fitted over a disc of
    ``radius`` [m] (the grid's edge values are replicated outward)."""
    mask, X = _fit_stencil(radius, spacing)
    pinv = np.linalg.pinv(X)
    coeffs = []
    for row in pinv:
        kernel = np.zeros(mask.shape)
        kernel[mask] = row
        coeffs.append(correlate(z, kernel, mode="nearest"))
    C = np.stack(coeffs, axis=-1)
    m = float(X.shape[0])
    mean_sq = correlate(z * z, mask.astype(float), mode="nearest") / m
    # The fit is an orthogonal projection: residual^2 = |z|^2 - |X c|^2 over the disc.
    fitted_sq = np.einsum("...i,ij,...j->...", C, X.T @ X / m, C)
    step = np.sqrt(np.maximum(mean_sq - fitted_sq, 0.0))
    a, b, c, d, _, f = coeffs
    n = np.stack([-b, -c, np.ones_like(b)], axis=-1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return SurfaceFeatures(n, -(d + f), step, a)
