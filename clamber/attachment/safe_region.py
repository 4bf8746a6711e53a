"""Safe region of a spined gripper: linear inequalities on the 2D wall contact force.

Convention (used everywhere in clamber's planar jumper): the wall is the plane x = 0,
the robot lives at x > 0, gravity is -y. ``f = [f_x, f_y]`` is the force the wall
exerts *on the gripper* in [N]. ``f_x < 0`` is adhesion (the spines pull the gripper
toward the wall), ``f_x > 0`` is the wall pushing back, ``f_y > 0`` holds the robot up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from clamber import _validate as v
from clamber.exceptions import ConfigError

#: Default half-angle of the adhesion sector, measured from the wall (+y) toward
#: adhesion (-x), in [deg]. The spines hold a pull that leans at most this far off the wall.
DEFAULT_SECTOR_ANGLE_DEG = 30.0
#: Default largest wall-tangential load the spines hold, in [N] (about 6x the weight of
#: a 270 g robot; the paper's hanging-weight trials held up to 2 kg on one gripper).
DEFAULT_MAX_LOAD_N = 15.0
#: Default friction coefficient of a gripper pushed onto the wall, [-]. When the wall pushes
#: (f_x > 0) nothing hooks: spines point down the wall and engage only under an upward
#: pull, so a downward load is carried by the foot pad's friction alone. 0.3 is a
#: pad-on-carpet Coulomb coefficient, kept low for margin (the simulator's free, dragging
#: gripper meets the carpet with ``Geometry.wall_friction``); 0 is the strict reading of
#: the paper's spines, ``f_y >= 0`` everywhere.
DEFAULT_PUSH_FRICTION = 0.3


@dataclass(frozen=True)
class SafeRegion:
    """Convex polygon ``A f <= b`` of contact forces a gripper holds reliably.

    The first rows with ``b == 0`` form a cone through the origin (the sector);
    rows with ``b > 0`` cap the load. Impulses are constrained by the cone rows only.
    """

    A: np.ndarray
    b: np.ndarray
    labels: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        A = v.finite_array("safe region", "A", np.atleast_2d(_numbers(self.A)), (None, 2))
        b = v.finite_array("safe region", "b", np.atleast_1d(_numbers(self.b)),
                           (A.shape[0],))
        if np.any(b < 0):
            raise ConfigError(f"safe region b must be >= 0 so that f = 0 is safe, got {b}")
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        labels = tuple(self.labels) or tuple(f"row{i}" for i in range(A.shape[0]))
        if len(labels) != A.shape[0]:
            raise ConfigError(f"safe region needs {A.shape[0]} labels, got {len(labels)}")
        object.__setattr__(self, "labels", labels)

    @classmethod
    def sector(
        cls,
        angle_deg: float = DEFAULT_SECTOR_ANGLE_DEG,
        max_load_n: float = DEFAULT_MAX_LOAD_N,
    ) -> SafeRegion:
        """The paper's two inequalities: adhesion within ``angle_deg`` of the wall, load cap.

        Row 1 (sector): ``-f_x <= tan(angle) f_y``, i.e. ``-f_x - tan(angle) f_y <= 0``.
        Row 2 (spine strength): ``f_y <= max_load_n``.
        """
        v.number("sector", "angle_deg", angle_deg, low=0.0, high=90.0, low_open=True,
                 high_open=True)
        v.positive("sector", "max_load_n", max_load_n)
        t = math.tan(math.radians(angle_deg))
        return cls(
            A=np.array([[-1.0, -t], [0.0, 1.0]]),
            b=np.array([0.0, max_load_n]),
            labels=("sector", "max_load"),
        )

    @classmethod
    def spined(
        cls,
        angle_deg: float = DEFAULT_SECTOR_ANGLE_DEG,
        max_load_n: float = DEFAULT_MAX_LOAD_N,
        push_friction: float = DEFAULT_PUSH_FRICTION,
    ) -> SafeRegion:
        """The paper's sector closed on its pushing side by a stated friction limit.

        The sector alone has no lower bound on ``f_y``: with ``f_x > 0`` it admits
        ``f_y`` down to ``-f_x / tan(angle)`` (an implied friction coefficient of 1.7 at
        30 deg), so an optimum may pull a gripper *down* the wall by friction that spines
        on carpet do not give. Row 3 (push friction): ``-push_friction f_x - f_y <= 0``,
        i.e. ``f_y >= -mu f_x``; with ``f_x < 0`` the sector row is the stricter one, so
        the row only cuts the pushing side. ``push_friction = 0`` is ``f_y >= 0``.
        Default 0.3: see :data:`DEFAULT_PUSH_FRICTION`.
        """
        if not (math.isfinite(push_friction) and 0.0 <= push_friction):
            raise ConfigError(f"push_friction={push_friction!r} must be finite and >= 0")
        base = cls.sector(angle_deg, max_load_n)
        return cls(A=np.vstack([base.A, [[-push_friction, -1.0]]]), b=np.r_[base.b, 0.0],
                   labels=(*base.labels, "push_friction"))

    @property
    def cone(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows through the origin (``b == 0``): the scale-free part that also bounds impulses."""
        mask = self.b == 0.0
        return self.A[mask], self.b[mask]

    def margins(self, f: np.ndarray) -> np.ndarray:
        """``b - A f`` for each row and each force; negative means outside. Shape (..., m)."""
        f = np.asarray(f, dtype=float)
        return self.b - f @ self.A.T

    def violation(self, f: np.ndarray) -> np.ndarray:
        """Largest amount [N] by which any row is violated, 0 inside. Shape (...)."""
        return np.maximum(0.0, -self.margins(f).min(axis=-1))

    def contains(self, f: np.ndarray, tol: float = 0.0) -> np.ndarray:
        """Whether each force lies in the region up to ``tol`` [N]."""
        return self.violation(f) <= tol

    def to_dict(self) -> dict:
        return {"A": self.A.tolist(), "b": self.b.tolist(), "labels": list(self.labels)}

    @classmethod
    def from_dict(cls, d: dict) -> SafeRegion:
        """From ``{"A": [[.., ..], ..], "b": [..], "labels": [..]}`` (labels optional)."""
        if not isinstance(d, dict):
            raise ConfigError(f"safe region = {d!r}: must be a table with A and b")
        unknown = set(d) - {"A", "b", "labels"}
        if unknown:
            raise ConfigError(f"unknown safe region keys {sorted(unknown)}; allowed: A, b, labels")
        missing = [k for k in ("A", "b") if k not in d]
        if missing:
            raise ConfigError(f"safe region is missing {missing}")
        labels = d.get("labels", ())
        if not isinstance(labels, list | tuple) or not all(isinstance(x, str) for x in labels):
            raise ConfigError(f"safe region labels = {labels!r}: must be a list of strings")
        return cls(A=d["A"], b=d["b"], labels=tuple(labels))


def _numbers(x: object) -> np.ndarray:
    """A nested list of real numbers as a float array; booleans and strings refused."""
    a = np.asarray(x, dtype=object)
    if a.dtype == object and a.size and not all(v.is_real(e) for e in a.ravel()):
        raise ConfigError(f"safe region = {x!r}: must hold numbers only")
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"safe region = {x!r}: must hold numbers only") from None
