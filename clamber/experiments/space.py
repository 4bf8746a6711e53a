r"""The feasible parametrization of the jump-climber's design space.

The optimizer works in unconstrained coordinates :math:`z \in \mathbb{R}^6`; every
:math:`z` decodes to a morphology inside the bounds, so no sample is ever clipped or
rejected:

* **Lengths** (4 coordinates) by a sine map,
  :math:`L_i = \bar L + \tfrac{1}{2}(L_{max} - L_{min}) \sin z_i` with
  :math:`\bar L` the middle of the range. It is smooth, bounded, and periodic, so it never
  saturates (a logistic map flattens out and stalls the search near a bound), and a
  bound is reached exactly at a finite :math:`z_i = \pm \pi/2`, where the paper's optimum
  puts its distal links. One unit of :math:`z_i` near the middle is 40 mm.
* **Inner masses** (2 coordinates) by a softmax onto the simplex above the minimum,
  :math:`m_j = m_{min} + (M - 3 m_{min})\,\mathrm{softmax}(V y)_j`, where the columns of
  :math:`V` (3x2) are an orthonormal basis of the zero-sum plane. Softmax is invariant
  to adding a constant to its input; :math:`V` removes that flat direction, so the two
  coordinates are symmetric in the three masses and all of them matter. One unit near
  the even split moves a mass by about 29 g (of 130 g that can move).

:math:`z = 0` is the paper's initial design (80 mm links, 83.3 g inner masses). The
inverse map (:meth:`DesignSpace.encode`) returns the principal branch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.morphology import DesignBounds, Morphology

#: Optimizer coordinates, in order.
COORDINATE_NAMES = ("z_L1", "z_L2", "z_L3", "z_L4", "y_mass1", "y_mass2")
#: Decoded design parameters, in order, with the units used in tables and figures.
PARAMETER_LABELS = ("L1 [mm]", "L2 [mm]", "L3 [mm]", "L4 [mm]", "m2 [g]", "m3 [g]", "m4 [g]")
DIMENSION = len(COORDINATE_NAMES)
#: Softmax inputs beyond this magnitude change nothing in double precision (exp underflows
#: relative to the largest term), so the mass coordinates are limited to it before the map
#: to keep ``inf`` out of the arithmetic; the decoded design is unaffected.
_SOFTMAX_SATURATION = 700.0
#: Orthonormal basis of {w in R^3 : sum(w) = 0}.
_ZERO_SUM_BASIS = np.array([
    [1.0 / math.sqrt(2.0), 1.0 / math.sqrt(6.0)],
    [-1.0 / math.sqrt(2.0), 1.0 / math.sqrt(6.0)],
    [0.0, -2.0 / math.sqrt(6.0)],
])


@dataclass(frozen=True)
class DesignSpace:
    """Maps optimizer coordinates to morphologies within ``bounds`` and back."""

    bounds: DesignBounds = field(default_factory=DesignBounds)

    @property
    def dimension(self) -> int:
        return DIMENSION

    def lengths(self, z: np.ndarray) -> np.ndarray:
        """The four link lengths [m] of coordinates ``z``."""
        b = self.bounds
        mid, half = 0.5 * (b.length_min + b.length_max), 0.5 * (b.length_max - b.length_min)
        L = mid + half * np.sin(np.asarray(z, dtype=float)[:4])
        return np.clip(L, b.length_min, b.length_max)  # only rounding: |sin| <= 1

    def inner_masses(self, z: np.ndarray) -> np.ndarray:
        """m2, m3, m4 [kg] of coordinates ``z``: each >= the minimum, summing to the total."""
        b = self.bounds
        y = np.clip(np.asarray(z, dtype=float)[4:6], -_SOFTMAX_SATURATION, _SOFTMAX_SATURATION)
        w = _ZERO_SUM_BASIS @ y
        e = np.exp(w - w.max())
        p = e / e.sum()
        free = b.inner_mass_total - 3 * b.inner_mass_min
        m = b.inner_mass_min + free * p
        k = int(np.argmax(m))
        fixed = m[k] + (b.inner_mass_total - m.sum())  # the sum exact to the last bit
        if fixed >= b.inner_mass_min:
            m[k] = fixed
        return m

    def decode(self, z: np.ndarray) -> Morphology:
        """The morphology of optimizer coordinates ``z`` (always feasible)."""
        z = self._check(z)
        return Morphology.from_design_vector(self.lengths(z), self.inner_masses(z), self.bounds)

    def encode(self, morphology: Morphology) -> np.ndarray:
        """Coordinates of a morphology (principal branch); ``decode(encode(m)) == m``."""
        b = self.bounds
        mid, half = 0.5 * (b.length_min + b.length_max), 0.5 * (b.length_max - b.length_min)
        s = np.clip((np.asarray(morphology.lengths) - mid) / half, -1.0, 1.0)
        free = b.inner_mass_total - 3 * b.inner_mass_min
        p = (np.asarray(morphology.masses[1:4]) - b.inner_mass_min) / free
        if np.any(p <= 0):
            raise ConfigError(
                "a morphology with an inner mass at its minimum has no finite mass coordinates"
            )
        w = np.log(p)
        return np.concatenate([np.arcsin(s), _ZERO_SUM_BASIS.T @ (w - w.mean())])

    def initial_mean(self) -> np.ndarray:
        """Coordinates of the paper's initial design (80 mm links, even inner masses)."""
        return np.zeros(DIMENSION)

    def design_vector(self, morphology: Morphology) -> np.ndarray:
        """(L1..L4 [mm], m2..m4 [g]): the parameters of ``PARAMETER_LABELS``."""
        return np.concatenate([np.asarray(morphology.lengths) * 1e3,
                               np.asarray(morphology.masses[1:4]) * 1e3])

    def _check(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        if z.shape != (DIMENSION,):
            raise ConfigError(f"design coordinates have shape {z.shape}; expected ({DIMENSION},)")
        if not np.all(np.isfinite(z)):
            raise ConfigError(f"design coordinates {z.tolist()} must be finite")
        return z


def paper_findings(morphology: Morphology) -> dict[str, bool]:
    """The three characteristics of the paper's optimum (its Fig. 6), checked on a design.

    * ``spine_mass_concentrated``: m3 > m2 and m3 > m4;
    * ``short_distal_links``: L1 and L4 are each shorter than both inner links L2, L3;
    * ``front_longer_than_rear``: L1 + L2 > L3 + L4.
    """
    L1, L2, L3, L4 = morphology.lengths
    _, m2, m3, m4, _ = morphology.masses
    return {
        "spine_mass_concentrated": bool(m3 > m2 and m3 > m4),
        "short_distal_links": bool(max(L1, L4) < min(L2, L3)),
        "front_longer_than_rear": bool(L1 + L2 > L3 + L4),
    }
