r"""Static equilibrium of a spined gripper: spine hook force plus spar push against the load.

Frame (shared with :mod:`clamber.attachment.safe_region`): the wall is the plane ``x = 0``,
the robot lives at ``x > 0``, gravity is ``-y``. All lengths are in [m], forces in [N],
angles in [deg]. The origin of the foot frame is where the spine tips meet the wall.

Sketch of the foot in its plane (wall on the left)::

            wall
             |
    hook  o--+ (-d, 0)      F_spine = (-A, S_y)   spines hook the substrate, d = spine_depth
             |\
             | \ foot
             |  \
             |   * P = (x_p, -y_p)                load F_load applied here by the robot;
             |  /                                 the pivot is frictionless (no torque)
    spar  ---+ (0, -y_s)     F_spar = (N, 0), N >= 0   the spar only pushes off the wall
             |
        y ^
          +--> x       gravity -y

In the paper's sign convention the load is counted positive *away from the wall*
(``L_x``) and *downward* (``L_y``): a weight of ``W`` newtons hanging at ``theta``
degrees from the vertical pulls with ``L_x = W sin(theta)``, ``L_y = W cos(theta)``,
i.e. ``F_load = (L_x, -L_y)`` in the wall frame. ``A`` is the adhesion the spines must
supply (their pull toward the wall, ``A > 0`` is adhesion) and ``N`` the spar force.

Derivation. The wall contact force ``f = F_spine + F_spar`` balances the load,
``f = -F_load``. Horizontal and vertical force balance:

.. math::

    A = L_x + N, \qquad S_y = L_y.

Moments about the pivot ``P`` (the pivot carries no torque, so the wall forces alone
must have zero moment about it), with ``M = (r - P)_x F_y - (r - P)_y F_x``:

.. math::

    \underbrace{-(x_p + d) L_y + y_p A}_{\text{spines at } (-d, 0)}
    + \underbrace{(y_s - y_p) N}_{\text{spar at } (0, -y_s)} = 0 .

Substituting ``A = L_x + N``:

.. math::

    N = \frac{(x_p + d) L_y - y_p L_x}{y_s}, \qquad
    A = L_x \Big(1 - \frac{y_p}{y_s}\Big) + \frac{(x_p + d) L_y}{y_s}.

Trends (for a downward load, ``L_y > 0``): ``dA/dx_p = L_y / y_s > 0`` (a pivot closer
to the wall needs less adhesion), ``dA/dy_p = -L_x / y_s < 0`` (a lower pivot needs
less), ``dA/dy_s = -N / y_s <= 0`` (a longer spar needs less). All of these hold while
the spar touches the wall. When the formula gives ``N < 0`` the spar would have to pull,
which it cannot: it lifts off, ``N = 0``, the spines carry the load alone (``A = L_x``)
and the moment about the pivot is no longer balanced, so the foot pitches about the
spine tips. That happens when ``(x_p + d) L_y < y_p L_x``, i.e. beyond the load angle
``theta* = atan2(x_p + d, y_p)`` from the vertical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clamber import _validate as v
from clamber.attachment.safe_region import SafeRegion
from clamber.exceptions import ConfigError

#: Standard gravity [m/s^2], to convert hanging masses in [kg] to loads in [N].
STANDARD_GRAVITY = 9.80665


@dataclass(frozen=True)
class SpineGripperGeometry:
    """Geometry of a spined foot, measured from the spine tips on the wall.

    Attributes:
        x_p: Distance of the wrist pivot from the wall in [m], > 0.
        y_p: How far below the spine tips the pivot sits in [m], positive downward
            (a negative value puts the pivot above the spine tips).
        y_s: How far below the spine tips the spar touches the wall in [m], > 0; the spar
            is the protrusion at the back of the foot, so this is its effective length.
        spine_depth: How deep in the substrate the spines hook, in [m], >= 0; the hook
            point sits at ``(-spine_depth, 0)`` and lengthens the spines' moment arm.
    """

    x_p: float = 0.012
    y_p: float = 0.004
    y_s: float = 0.030
    spine_depth: float = 0.0

    def __post_init__(self) -> None:
        v.positive("geometry", "x_p", self.x_p)  # pivot distance from the wall [m]
        v.number("geometry", "y_p", self.y_p)  # pivot drop below the spine tips [m]
        v.positive("geometry", "y_s", self.y_s)  # spar length below the spine tips [m]
        v.non_negative("geometry", "spine_depth", self.spine_depth)  # hook depth [m]

    @property
    def pitch_angle_deg(self) -> float:
        """Load angle from the vertical [deg] beyond which the spar lifts off the wall."""
        return math.degrees(math.atan2(self.x_p + self.spine_depth, self.y_p))

    def points(self) -> dict[str, np.ndarray]:
        """Named points of the foot in the wall frame [m]: ``hook``, ``pivot``, ``spar``."""
        return {
            "hook": np.array([-self.spine_depth, 0.0]),
            "pivot": np.array([self.x_p, -self.y_p]),
            "spar": np.array([0.0, -self.y_s]),
        }


def hanging_load(load_n: np.ndarray | float, angle_deg: np.ndarray | float) -> np.ndarray:
    """Force ``F_load`` [N] a hanging weight applies on the gripper, in the wall frame.

    Args:
        load_n: Weight magnitude in [N], >= 0.
        angle_deg: Angle of the pull from the vertical in [deg]: 0 pulls straight down
            along the wall, 90 straight away from it, 135 away and up.

    Returns:
        Array of shape ``broadcast(load_n, angle_deg).shape + (2,)``:
        ``W (sin(theta), -cos(theta))``.
    """
    w = np.asarray(load_n, dtype=float)
    th = np.radians(np.asarray(angle_deg, dtype=float))
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(th))):
        raise ConfigError("load_n and angle_deg must be finite")
    if np.any(w < 0.0):
        raise ConfigError(f"load_n must be >= 0 N, got min {float(np.min(w))!r}")
    w, th = np.broadcast_arrays(w, th)
    return np.stack([w * np.sin(th), -w * np.cos(th)], axis=-1)


@dataclass(frozen=True)
class GripperStatics:
    """Equilibrium forces of a spined foot for one or many loads (leading shape ``...``).

    Attributes:
        geometry: The foot this was solved for.
        load_force: ``F_load`` on the gripper at the pivot, wall frame, shape (..., 2) [N].
        spine_force: ``F_spine`` on the gripper at the hook point, shape (..., 2) [N].
        spar_force: Spar push ``N >= 0`` along +x, shape (...) [N].
        pitches: True where the spar would have to pull (``N < 0`` clipped to 0): the foot
            rotates about the spine tips and the equilibrium below is not a static one.
    """

    geometry: SpineGripperGeometry
    load_force: np.ndarray
    spine_force: np.ndarray
    spar_force: np.ndarray
    pitches: np.ndarray

    @property
    def wall_force(self) -> np.ndarray:
        """Total wall force ``f = F_spine + F_spar`` on the gripper, shape (..., 2) [N]."""
        f = self.spine_force.copy()
        f[..., 0] += self.spar_force
        return f

    @property
    def adhesion_n(self) -> np.ndarray:
        """Adhesion the spines must supply [N]: their pull toward the wall, ``-F_spine,x``.

        Negative values mean the foot is pressed onto the wall and needs no adhesion.
        """
        return -self.spine_force[..., 0]

    def moment_about_pivot(self) -> np.ndarray:
        """Moment [N m] of the wall forces about the pivot; zero wherever the foot is static."""
        pts = self.geometry.points()
        r_hook = pts["hook"] - pts["pivot"]
        r_spar = pts["spar"] - pts["pivot"]
        m_spine = r_hook[0] * self.spine_force[..., 1] - r_hook[1] * self.spine_force[..., 0]
        m_spar = -r_spar[1] * self.spar_force
        return m_spine + m_spar


def solve_statics(geometry: SpineGripperGeometry, load_force: np.ndarray) -> GripperStatics:
    """Spine and spar forces that hold ``load_force`` [N] (wall frame, shape (..., 2)).

    Implements the closed form derived in the module docstring; where the spar would
    pull, it is set to zero and ``pitches`` is flagged.
    """
    load = np.asarray(load_force, dtype=float)
    if load.shape[-1:] != (2,):
        raise ConfigError(f"load_force must have shape (..., 2), got {load.shape}")
    if not np.all(np.isfinite(load)):
        raise ConfigError("load_force must be finite")
    l_x = load[..., 0]  # away from the wall
    l_y = -load[..., 1]  # downward
    arm = geometry.x_p + geometry.spine_depth
    spar_raw = (arm * l_y - geometry.y_p * l_x) / geometry.y_s
    pitches = spar_raw < 0.0
    spar = np.where(pitches, 0.0, spar_raw)
    spine = np.stack([-(l_x + spar), l_y], axis=-1)
    return GripperStatics(geometry, load, spine, spar, pitches)


def required_adhesion(
    geometry: SpineGripperGeometry,
    load_n: np.ndarray | float,
    angle_deg: np.ndarray | float,
) -> np.ndarray:
    """Adhesion [N] the spines must supply to hold a weight ``load_n`` [N] at ``angle_deg``.

    ``A = L_x (1 - y_p / y_s) + (x_p + d) L_y / y_s`` while the spar touches the wall,
    ``A = L_x`` once it lifts off (see :func:`solve_statics` for the ``pitches`` flag).
    """
    return solve_statics(geometry, hanging_load(load_n, angle_deg)).adhesion_n


@dataclass(frozen=True)
class SpineLimits:
    """What the spines themselves hold: a hook cone and a shear cap, at the hook point.

    A spine hooked on an asperity holds a force that leans at most ``cone_angle_deg``
    away from the wall direction (+y) toward adhesion, and at most ``max_shear_n`` along
    the wall. A foot that pitches holds or slips unpredictably (the paper's pivot
    position 3); ``pitched_hold_probability`` is the chance it holds anyway.

    Attributes:
        cone_angle_deg: Hook cone half-angle from the wall [deg], in (0, 90).
        max_shear_n: Largest wall-tangential spine force [N], > 0.
        pitched_hold_probability: Chance a pitching foot holds, in [0, 1].
    """

    cone_angle_deg: float = 40.0
    max_shear_n: float = 15.0
    pitched_hold_probability: float = 0.5

    def __post_init__(self) -> None:
        v.number("limits", "cone_angle_deg", self.cone_angle_deg, low=0.0, high=90.0,
                 low_open=True, high_open=True)
        v.positive("limits", "max_shear_n", self.max_shear_n)
        v.number("limits", "pitched_hold_probability", self.pitched_hold_probability,
                 low=0.0, high=1.0)

    def spines_hold(
        self, statics: GripperStatics, strength: np.ndarray | float = 1.0
    ) -> np.ndarray:
        """Whether the spine force lies in the hook cone and under the (scaled) shear cap.

        ``strength`` scales the shear cap per load (1 = nominal), to model trial scatter.
        Pitching is not considered here.
        """
        s = statics.spine_force
        in_cone = -s[..., 0] <= math.tan(math.radians(self.cone_angle_deg)) * s[..., 1]
        return in_cone & (s[..., 1] <= self.max_shear_n * np.asarray(strength, dtype=float))


def predicted_safe_region(geometry: SpineGripperGeometry, limits: SpineLimits) -> SafeRegion:
    """The two-inequality safe region the statics predict for a foot and its spines.

    While the spar touches the wall, the hook cone ``A <= tan(alpha) L_y`` reads
    ``L_x (1 - y_p/y_s) <= (tan(alpha) - (x_p + d)/y_s) L_y``: a sector of load angles
    ``theta <= beta`` with ``beta = atan2(tan(alpha) - (x_p + d)/y_s, 1 - y_p/y_s)``.
    Reliable holding also needs the spar in contact, ``theta <= theta*``
    (:attr:`SpineGripperGeometry.pitch_angle_deg`). The shear cap is ``f_y <= max_shear``
    since ``F_spine,y = f_y``. Returns ``SafeRegion.sector(min(beta, theta*), max_shear)``,
    exact for pulls away from the wall (load angles in [0, 180) deg).

    Raises:
        ConfigError: If the geometry leaves no adhesion sector (the pivot is so far from
            the wall that even a vertical pull overloads the hook cone).
    """
    tan_a = math.tan(math.radians(limits.cone_angle_deg))
    arm = geometry.x_p + geometry.spine_depth
    c_load = tan_a - arm / geometry.y_s
    if c_load <= 0.0:
        raise ConfigError(
            f"x_p + spine_depth = {arm!r} m over y_s = {geometry.y_s!r} m exceeds "
            f"tan(cone_angle_deg) = {tan_a:.3g}: no load angle is held; allowed: a ratio below it"
        )
    beta = math.degrees(math.atan2(c_load, 1.0 - geometry.y_p / geometry.y_s))
    return SafeRegion.sector(min(beta, geometry.pitch_angle_deg), limits.max_shear_n)
