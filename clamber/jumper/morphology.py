"""Morphology of the planar 5-mass / 4-link jump-climber and its design space.

Numbering follows the paper: mass 1 is the front gripper, 5 the rear gripper, 2 the
shoulder, 3 the spine, 4 the hip. Link ``L_i`` joins mass ``i`` and mass ``i + 1``.
All values are SI: lengths in [m], masses in [kg], inertias in [kg m^2].
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import tomli_w

from clamber import _validate as v
from clamber._validate import read_text
from clamber.exceptions import ConfigError

N_LINKS = 4
N_MASSES = 5
#: Order of the symbolic parameter vector shared by every CasADi function.
PARAMETER_NAMES = (
    [f"L{i}" for i in range(1, 5)]
    + [f"m{i}" for i in range(1, 6)]
    + [f"link_mass{i}" for i in range(1, 5)]
    + [f"link_com{i}" for i in range(1, 5)]
    + [f"link_inertia{i}" for i in range(1, 5)]
)
N_PARAMETERS = len(PARAMETER_NAMES)
_SUM_TOL_KG = 1e-6


@dataclass(frozen=True)
class DesignBounds:
    """The design space searched by co-design (the paper's by default)."""

    length_min: float = 0.040
    """Shortest link [m]: motor packaging."""
    length_max: float = 0.120
    """Longest link [m]: avoids a long robot full of structural mass."""
    distal_mass: float = 0.010
    """Fixed gripper masses m1 = m5 [kg]."""
    inner_mass_min: float = 0.040
    """Smallest inner mass m2, m3, m4 [kg]: one motor."""
    inner_mass_total: float = 0.250
    """m2 + m3 + m4 [kg]."""

    def __post_init__(self) -> None:
        v.numeric_fields(self, "bounds", strict=True)
        if self.length_min >= self.length_max:
            raise ConfigError(
                f"bounds.length_min = {self.length_min} must be below "
                f"length_max = {self.length_max}"
            )
        if 3 * self.inner_mass_min > self.inner_mass_total + _SUM_TOL_KG:
            raise ConfigError(
                f"bounds.inner_mass_total = {self.inner_mass_total} cannot hold three inner "
                f"masses of at least inner_mass_min = {self.inner_mass_min}"
            )


@dataclass(frozen=True)
class Morphology:
    """Link lengths, point masses and (optionally) CAD-refined link bodies.

    ``link_mass``, ``link_com`` and ``link_inertia`` describe distributed link bodies of
    the Stage-3 CAD model: mass [kg], centre-of-mass distance from the link's rear end
    (the end nearer the rear gripper) [m], and rotational inertia about that centre
    [kg m^2]. They default to zero: the paper's point-mass model.
    """

    lengths: tuple[float, float, float, float] = (0.08, 0.08, 0.08, 0.08)
    masses: tuple[float, float, float, float, float] = (0.010, 0.25 / 3, 0.25 / 3, 0.25 / 3, 0.010)
    link_mass: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    link_com: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    link_inertia: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    bounds: DesignBounds = field(default_factory=DesignBounds)

    def __post_init__(self) -> None:
        for name, n in (("lengths", 4), ("masses", 5), ("link_mass", 4), ("link_com", 4),
                        ("link_inertia", 4)):
            value = getattr(self, name)
            if isinstance(value, str | bytes | dict) or not hasattr(value, "__len__") \
                    or len(value) != n:
                raise ConfigError(f"{name} = {value!r}: must be a list of {n} numbers")
            arr = tuple(v.non_negative("", f"{name}[{i}]", x) for i, x in enumerate(value))
            object.__setattr__(self, name, arr)
        self._check_bounds()

    def _check_bounds(self) -> None:
        b = self.bounds
        for i, L in enumerate(self.lengths, start=1):
            if not (b.length_min - 1e-12 <= L <= b.length_max + 1e-12):
                raise ConfigError(
                    f"L{i} = {L * 1e3:.3f} mm is outside the allowed "
                    f"[{b.length_min * 1e3:.1f}, {b.length_max * 1e3:.1f}] mm"
                )
        m1, m2, m3, m4, m5 = self.masses
        for name, m in (("m1", m1), ("m5", m5)):
            if abs(m - b.distal_mass) > _SUM_TOL_KG:
                raise ConfigError(
                    f"{name} = {m * 1e3:.3f} g: gripper masses are fixed at "
                    f"{b.distal_mass * 1e3:.1f} g"
                )
        for name, m in (("m2", m2), ("m3", m3), ("m4", m4)):
            if m < b.inner_mass_min - _SUM_TOL_KG:
                raise ConfigError(
                    f"{name} = {m * 1e3:.3f} g is below the minimum inner mass "
                    f"{b.inner_mass_min * 1e3:.1f} g"
                )
        if abs(m2 + m3 + m4 - b.inner_mass_total) > _SUM_TOL_KG:
            raise ConfigError(
                f"m2 + m3 + m4 = {(m2 + m3 + m4) * 1e3:.3f} g must equal "
                f"{b.inner_mass_total * 1e3:.1f} g"
            )
        for i, (L, c) in enumerate(zip(self.lengths, self.link_com, strict=True), start=1):
            if c > L + 1e-12:
                raise ConfigError(f"link_com[{i - 1}] = {c} m lies beyond link L{i} = {L} m")

    # --- derived quantities -------------------------------------------------------------
    @property
    def total_mass(self) -> float:
        """[kg]"""
        return float(sum(self.masses) + sum(self.link_mass))

    @property
    def body_length(self) -> float:
        """Sum of link lengths [m]; climbing speed in body lengths/s divides by this."""
        return float(sum(self.lengths))

    def parameters(self) -> np.ndarray:
        """The numeric parameter vector in ``PARAMETER_NAMES`` order."""
        return np.array(
            [*self.lengths, *self.masses, *self.link_mass, *self.link_com, *self.link_inertia]
        )

    @classmethod
    def nominal(cls, bounds: DesignBounds | None = None) -> Morphology:
        """The paper's starting design: 80 mm links, inner masses split evenly."""
        b = bounds or DesignBounds()
        inner = b.inner_mass_total / 3
        mid = 0.5 * (b.length_min + b.length_max)
        return cls(lengths=(mid,) * 4, masses=(b.distal_mass, inner, inner, inner, b.distal_mass),
                   bounds=b)

    @classmethod
    def from_design_vector(cls, lengths: np.ndarray, inner_masses: np.ndarray,
                           bounds: DesignBounds | None = None) -> Morphology:
        """Build from 4 lengths [m] and the 3 inner masses [kg] (m1 = m5 from the bounds)."""
        b = bounds or DesignBounds()
        m2, m3, m4 = (float(v) for v in inner_masses)
        return cls(lengths=tuple(float(v) for v in lengths),
                   masses=(b.distal_mass, m2, m3, m4, b.distal_mass), bounds=b)

    # --- TOML ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = {
            "lengths_m": list(self.lengths),
            "masses_kg": list(self.masses),
        }
        if any(self.link_mass) or any(self.link_inertia):
            d["links"] = {
                "mass_kg": list(self.link_mass),
                "com_m": list(self.link_com),
                "inertia_kg_m2": list(self.link_inertia),
            }
        d["bounds"] = asdict(self.bounds)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Morphology:
        """From the TOML layout of :meth:`to_dict`; every table and number checked."""
        if not isinstance(d, dict):
            raise ConfigError(f"morphology = {d!r}: must be a table")
        allowed = {"lengths_m", "masses_kg", "links", "bounds"}
        unknown = set(d) - allowed
        if unknown:
            raise ConfigError(
                f"unknown morphology keys {sorted(unknown)}; allowed: {sorted(allowed)}"
            )
        for key in ("lengths_m", "masses_kg"):
            if key not in d:
                raise ConfigError(f"morphology is missing '{key}'")
        bounds_d = _table(d, "bounds")
        allowed_b = {f.name for f in fields(DesignBounds)}
        unknown_b = set(bounds_d) - allowed_b
        if unknown_b:
            raise ConfigError(
                f"unknown bounds keys {sorted(unknown_b)}; allowed: {sorted(allowed_b)}"
            )
        links = _table(d, "links")
        allowed_l = {"mass_kg", "com_m", "inertia_kg_m2"}
        unknown_l = set(links) - allowed_l
        if unknown_l:
            raise ConfigError(
                f"unknown links keys {sorted(unknown_l)}; allowed: {sorted(allowed_l)}"
            )
        zeros = (0.0,) * 4
        return cls(
            lengths=d["lengths_m"],
            masses=d["masses_kg"],
            link_mass=links.get("mass_kg", zeros),
            link_com=links.get("com_m", zeros),
            link_inertia=links.get("inertia_kg_m2", zeros),
            bounds=DesignBounds(**bounds_d),
        )

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(tomli_w.dumps(self.to_dict()))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Morphology:
        """Read a morphology TOML; errors name the file, the field and the value."""
        path = Path(path)
        text = read_text(path, "morphology file", ConfigError)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"morphology file {path} is not valid TOML: {e}") from None
        try:
            return cls.from_dict(data)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None


def _table(d: dict, key: str) -> dict:
    value = d.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key} = {value!r}: must be a table ([{key}])")
    return value
