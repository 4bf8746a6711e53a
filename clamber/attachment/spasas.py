"""Kinetostatics of the SPASAS spiny gripper: phalange loads to gripper-frame wrenches (Eqs. 6-11).

The gripper has two orthogonal *opposed clamping mechanisms* (OCMs), each a pair of mirrored
phalanges driven by one winch cable with the same driving torque ``tau_pha`` [N m]. Everything
here is expressed in the gripper frame: origin at the palm centre on the contact plane, ``z``
along the surface normal pointing out of the surface. OCM ``"x"`` lies in the x-z plane, OCM
``"y"`` is the same mechanism turned +90 deg about z (it lies in the y-z plane). Forces and
wrenches are those the substrate exerts *on the gripper*.

Planar model of one phalange (derivation of Eqs. 6 and 7)
---------------------------------------------------------
Take phalange 1 of OCM "x", on the ``-x`` side, with knuckle angle ``gamma``. Its spine array
has the unit tangent ``t = (cos g, -sin g)`` and unit normal ``n = (sin g, cos g)`` in (x, z);
the substrate loads the spines with ``F = f_T t + f_N n`` (``f_T`` hooks the spines against
the asperities, ``f_N`` presses the array). Phalange 2 is the mirror image (x -> -x). Summing
the x and z components of both phalanges gives the first two lines of Eq. (6).

The knuckle sits at ``K = (-d1, d2)`` and the equivalent pressure centre ``C`` of the spine
array at ``C = K + s_C t - h_C n``: ``s_C`` along the array, ``h_C`` across it (the spine tips
stand off the phalange axis). The moment of ``F`` about the knuckle is then
``-(s_C f_N + h_C f_T)`` about +y, which the cable torque balances::

    tau_pha = f_T h_C + f_N s_C   =>   f_N = (tau_pha - f_T h_C) / s_C        (Eq. 7)

The moment of the two contact forces about the gripper origin splits into their moment
about the knuckles plus the moments ``C_i - K_i`` x ``F_i``, which are ``-tau_pha`` for
phalange 1 and ``+tau_pha`` for its mirror. They cancel because one cable drives both
phalanges with the same torque, so the resultant ``tau_y`` is the moment of the phalange
forces placed at the knuckles: the third line of Eq. (6). (The printed Eq. (6) has
``f_N1 sin g2`` in its last term; the derivation gives ``f_N2 sin g2``, used here.)

Lateral friction and the torque about the normal (derivation of Eqs. 8-11)
--------------------------------------------------------------------------
At a spine tip the asperity face has the local slope ``phi``: ``f_T`` presses the tip against
the face, and the face carries the friction ``f_fri`` made of the in-plane component
``f_T sin(phi) + f_N cos(phi)`` and the lateral component ``f_L`` (out of the OCM plane),
Eq. (8). With ``phi`` close to pi/2 the in-plane component is ``f_N`` (Eq. 9), and the
friction limit ``f_fri <= mu f_T`` bounds the lateral force (Eq. 10)::

    f_fri = sqrt(f_N**2 + f_L**2) <= mu f_T                                   (Eqs. 8, 9)
    |f_L| <= sqrt((mu f_T)**2 - f_N**2)                                       (Eq. 10)

``f_L`` acts at ``C`` along the OCM's lateral axis, so it contributes ``x_C f_L`` to the
torque about the normal (Eq. 11; the paper writes the lever arm of its figure's geometry,
``s_C cos g + d1``; with our pressure-centre placement the lever is ``|x_C|``). Here every
phalange load becomes a full 3D point force at ``C``, so the lateral forces also enter the
tangential force and the tilting torques exactly.

Friction limit and admissible loads
-----------------------------------
A phalange state ``(f_T, s_C, f_L)`` is admissible when ``f_N`` from Eq. (7) satisfies
``|f_N| <= mu f_T`` and ``|f_L| <= sqrt((mu f_T)**2 - f_N**2)`` (the friction limit), when
``0 < f_T <= f_T,max`` (the spine array's strength) and when ``s_C`` lies on the spine array.
Because the array is many spines sharing the load, a convex combination of admissible
single-point states (each balancing the same ``tau_pha``) is again a physical loading of the
array: the achievable set of one phalange is the convex hull of its admissible states, and
the gripper's wrench space is the Minkowski sum of the four phalange sets. Elastic elements
are ignored, as in the paper. The compliant footpad at the palm centre, which the paper
keeps in contact during attachment and credits with enlarging the feasible loads, is a fifth
contact: a compressive force ``0 <= p <= p_max`` along +z with Coulomb friction
``|f_t| <= mu_pad p`` at the origin. Without it the spines alone cannot push (``f_z > 0``)
at usual knuckle angles, and no box around the zero wrench would fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clamber import _validate as v
from clamber.exceptions import ConfigError

#: Phalanges of the gripper as (OCM, side): side -1 is the phalange on the negative axis.
PHALANGES = (("x", -1), ("x", 1), ("y", -1), ("y", 1))

#: The paper's phalange driving torque at which the wrench box was fitted, in [N m].
PAPER_DRIVING_TORQUE = 1.75


@dataclass(frozen=True)
class SpasasGeometry:
    """Geometry and contact parameters of one SPASAS gripper (both OCMs identical).

    The paper gives no dimensions; the defaults are plausible values for a 0.4 kg gripper
    with 56 one-millimetre spines per phalange: knuckles 28 mm off the axis and 30 mm high,
    a 20 mm spine array starting 35 mm from the knuckle with tips 30 mm off the phalange
    axis, ``mu = 0.6`` for steel tips on basalt asperities, 85 N per phalange (about 1.5 N
    per spine, since not all spines engage) and a footpad bearing up to 100 N. The spine
    strength, friction and footpad load were picked within those ranges so that, at
    1.75 N m and 15 deg knuckles, the achievable set covers the paper's box with margin
    (the largest box of the paper's shape inside it is 1.17 times the paper's) and the
    largest-volume box comes out at about fx, fy +-43 N, fz +-52 N, tx, ty +-0.39 N m,
    tz +-1.55 N m (paper: 35, 35, 62 N, 0.25, 0.25, 1.4 N m). The largest-volume box
    trades the axes against each other, so its shape, not only its size, differs from the
    paper's hand-selected box.

    Attributes:
        knuckle_offset: ``d1``, distance of each knuckle from the gripper axis along the OCM,
            in [m].
        knuckle_height: ``d2``, height of the knuckles above the contact plane, in [m].
        spine_array_start: smallest ``s_C``, start of the spine array along the phalange from
            the knuckle, in [m].
        spine_array_end: largest ``s_C``, end of the spine array, in [m].
        spine_tip_offset: ``h_C``, stand-off of the spine tips from the phalange axis, in [m].
        friction_coefficient: ``mu`` of a spine tip on an asperity face, dimensionless.
        max_tangential_force: largest ``f_T`` one phalange's spine array carries before spines
            break loose, in [N].
        footpad_max_load: largest compressive load of the footpad, in [N].
        footpad_friction: Coulomb friction coefficient of the rubber footpad, dimensionless.
    """

    knuckle_offset: float = 0.028
    knuckle_height: float = 0.030
    spine_array_start: float = 0.035
    spine_array_end: float = 0.055
    spine_tip_offset: float = 0.030
    friction_coefficient: float = 0.6
    max_tangential_force: float = 85.0
    footpad_max_load: float = 100.0
    footpad_friction: float = 0.6

    def __post_init__(self) -> None:
        v.numeric_fields(self, "SpasasGeometry", strict=True)
        if self.spine_array_end <= self.spine_array_start:
            raise ConfigError(
                f"SpasasGeometry.spine_array_end must exceed spine_array_start "
                f"({self.spine_array_start}), got {self.spine_array_end}"
            )
        for name in ("friction_coefficient", "footpad_friction"):
            if getattr(self, name) > 2.0:
                raise ConfigError(
                    f"SpasasGeometry.{name} must be in (0, 2], got {getattr(self, name)}"
                )


@dataclass(frozen=True)
class PhalangeLoads:
    """Loads on the spine arrays of one or many phalange states, arrays of one shape.

    Attributes:
        f_t: tangential force ``f_T`` along the spine array, in [N].
        f_n: normal force ``f_N`` across the array (Eq. 7), in [N].
        f_l: lateral force ``f_L`` out of the OCM plane, in [N].
        s_c: pressure-centre distance ``s_C`` along the array from the knuckle, in [m].
    """

    f_t: np.ndarray
    f_n: np.ndarray
    f_l: np.ndarray
    s_c: np.ndarray

    def friction_margin(self, geometry: SpasasGeometry) -> np.ndarray:
        """``mu f_T - sqrt(f_N^2 + f_L^2)`` in [N]; >= 0 where the friction limit holds."""
        mu = geometry.friction_coefficient
        return mu * self.f_t - np.hypot(self.f_n, self.f_l)

    def take(self, index: np.ndarray) -> PhalangeLoads:
        """The states at ``index`` (any integer array), keeping its shape."""
        return PhalangeLoads(self.f_t[index], self.f_n[index], self.f_l[index], self.s_c[index])


def _check_torque(tau_pha: float) -> float:
    return v.positive("phalange", "tau_pha", tau_pha)


def normal_force(tau_pha: float, f_t: np.ndarray, s_c: np.ndarray, h_c: float) -> np.ndarray:
    """Eq. (7): ``f_N = (tau_pha - f_T h_C) / s_C`` in [N].

    Args:
        tau_pha: phalange driving torque in [N m].
        f_t: tangential spine force in [N].
        s_c: pressure-centre distance along the array in [m].
        h_c: spine tip stand-off in [m].
    """
    return (tau_pha - np.asarray(f_t, dtype=float) * h_c) / np.asarray(s_c, dtype=float)


def tangential_force_range(
    geometry: SpasasGeometry, tau_pha: float, s_c: float
) -> tuple[float, float] | None:
    """Admissible ``f_T`` interval in [N] at pressure centre ``s_c`` [m], or None if empty.

    From Eq. (7) and ``|f_N| <= mu f_T``: ``f_T >= tau/(h + mu s)`` and, when ``h > mu s``,
    ``f_T <= tau/(h - mu s)``; the spine strength caps ``f_T`` at ``max_tangential_force``.
    """
    tau = _check_torque(tau_pha)
    h, mu = geometry.spine_tip_offset, geometry.friction_coefficient
    lower = tau / (h + mu * s_c)
    upper = geometry.max_tangential_force
    if h > mu * s_c:
        upper = min(upper, tau / (h - mu * s_c))
    return (lower, upper) if lower <= upper else None


def lateral_force_limit(geometry: SpasasGeometry, f_t: np.ndarray, f_n: np.ndarray) -> np.ndarray:
    """Eq. (10): largest ``|f_L|`` in [N] the friction limit leaves, ``sqrt((mu f_T)^2 - f_N^2)``.

    Zero where the in-plane load already uses the whole friction cone.
    """
    mu = geometry.friction_coefficient
    return np.sqrt(np.maximum((mu * np.asarray(f_t)) ** 2 - np.asarray(f_n) ** 2, 0.0))


def spine_axes(gamma: np.ndarray, side: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit tangent ``t`` and normal ``n`` of a spine array in the OCM plane, shape (..., 2).

    Components are (along the OCM axis, along z). ``side`` is -1 for the phalange on the
    negative axis (phalange 1 of Eq. 6) and +1 for its mirror image (phalange 2).
    """
    g = np.asarray(gamma, dtype=float)
    c, s = np.cos(g), np.sin(g)
    t = np.stack([-side * c, -s], axis=-1)
    n = np.stack([-side * s, c], axis=-1)
    return t, n


def knuckle_point(geometry: SpasasGeometry, side: int) -> np.ndarray:
    """Knuckle position ``(side d1, d2)`` in the OCM plane, in [m]."""
    return np.array([side * geometry.knuckle_offset, geometry.knuckle_height])


def pressure_centre(
    geometry: SpasasGeometry, gamma: np.ndarray, side: int, s_c: np.ndarray
) -> np.ndarray:
    """Pressure centre ``C = K + s_C t - h_C n`` in the OCM plane, shape (..., 2), in [m]."""
    t, n = spine_axes(gamma, side)
    s = np.asarray(s_c, dtype=float)[..., None]
    return knuckle_point(geometry, side) + s * t - geometry.spine_tip_offset * n


def ocm_planar_wrench(
    geometry: SpasasGeometry,
    gamma_1: float,
    gamma_2: float,
    f_t1: np.ndarray,
    f_n1: np.ndarray,
    f_t2: np.ndarray,
    f_n2: np.ndarray,
) -> np.ndarray:
    """Eq. (6): planar resultant ``(f_x, f_z, tau_y)`` of one OCM in [N, N, N m], shape (..., 3).

    Knuckle form: exact when both phalanges carry the same driving torque (see module doc).
    """
    d1, d2 = geometry.knuckle_offset, geometry.knuckle_height
    c1, s1, c2, s2 = math.cos(gamma_1), math.sin(gamma_1), math.cos(gamma_2), math.sin(gamma_2)
    f_x = f_t1 * c1 - f_t2 * c2 + f_n1 * s1 - f_n2 * s2
    f_z = f_n1 * c1 + f_n2 * c2 - f_t1 * s1 - f_t2 * s2
    tau_y = (
        (f_n1 * c1 - f_t1 * s1) * d1
        + (f_t1 * c1 + f_n1 * s1) * d2
        + (f_t2 * s2 - f_n2 * c2) * d1
        - (f_t2 * c2 + f_n2 * s2) * d2
    )
    return np.stack(np.broadcast_arrays(f_x, f_z, tau_y), axis=-1)


def _ocm_rotation(ocm: str) -> np.ndarray:
    """Rotation from OCM "x" coordinates to the gripper frame (OCM "y" is +90 deg about z)."""
    if ocm == "x":
        return np.eye(3)
    if ocm == "y":
        return np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    raise ConfigError(f"OCM must be 'x' or 'y', got {ocm!r}")


def phalange_wrench(
    geometry: SpasasGeometry, ocm: str, side: int, gamma: float, loads: PhalangeLoads
) -> np.ndarray:
    """Gripper-frame wrench ``[f; C x f]`` of phalange loads, shape (..., 6), [N, N m].

    The spine load is a point force at the pressure centre ``C``: in-plane
    ``f_T t + f_N n`` plus ``f_L`` along the OCM's lateral axis. The drive torque is internal
    and cancels with the mirror phalange's (module doc), so summing this over a phalange pair
    gives the pair's external wrench.

    Args:
        geometry: gripper geometry.
        ocm: "x" or "y", the OCM the phalange belongs to.
        side: -1 or +1, which phalange of the pair.
        gamma: knuckle angle in [rad].
        loads: spine loads (arrays of one shape).
    """
    if side not in (-1, 1):
        raise ConfigError(f"phalange side must be -1 or +1, got {side!r}")
    t, n = spine_axes(gamma, side)
    planar = loads.f_t[..., None] * t + loads.f_n[..., None] * n
    force_local = np.stack([planar[..., 0], loads.f_l, planar[..., 1]], axis=-1)
    c2d = pressure_centre(geometry, gamma, side, loads.s_c)
    point_local = np.stack([c2d[..., 0], np.zeros_like(c2d[..., 0]), c2d[..., 1]], axis=-1)
    rot = _ocm_rotation(ocm)
    force = force_local @ rot.T
    point = point_local @ rot.T
    return np.concatenate([force, np.cross(point, force)], axis=-1)


def admissible_phalange_loads(
    geometry: SpasasGeometry,
    tau_pha: float,
    n_positions: int = 9,
    n_tangential: int = 17,
    n_interior: int = 0,
    rng: np.random.Generator | None = None,
) -> PhalangeLoads:
    """Admissible single-point phalange states, flattened to 1D arrays.

    A grid over the pressure centre ``s_C`` (``n_positions`` values over the spine array) and
    ``f_T`` (``n_tangential`` values over its admissible interval) with ``f_L`` at both ends
    of its friction limit (the extreme states whose convex hull is the phalange's achievable
    set), plus ``n_interior`` states drawn uniformly inside (``rng`` required then).
    """
    tau = _check_torque(tau_pha)
    if n_positions < 2 or n_tangential < 2 or n_interior < 0:
        raise ConfigError(
            "need n_positions >= 2, n_tangential >= 2 and n_interior >= 0, got "
            f"{n_positions}, {n_tangential}, {n_interior}"
        )
    h = geometry.spine_tip_offset
    s_grid = np.linspace(geometry.spine_array_start, geometry.spine_array_end, n_positions)
    f_t_parts, s_parts = [], []
    for s in s_grid:
        interval = tangential_force_range(geometry, tau, float(s))
        if interval is None:
            continue
        f_t_parts.append(np.linspace(interval[0], interval[1], n_tangential))
        s_parts.append(np.full(n_tangential, s))
    if not f_t_parts:
        raise ConfigError(
            f"no admissible phalange load at driving torque {tau} N m: raise "
            f"max_tangential_force ({geometry.max_tangential_force} N) or friction_coefficient"
        )
    f_t = np.concatenate(f_t_parts)
    s_c = np.concatenate(s_parts)
    f_n = normal_force(tau, f_t, s_c, h)
    f_l = lateral_force_limit(geometry, f_t, f_n)
    f_t, f_n, s_c, f_l = (np.concatenate([a, a]) for a in (f_t, f_n, s_c, f_l))
    f_l[: f_l.size // 2] *= -1.0
    if n_interior:
        if rng is None:
            raise ConfigError("admissible_phalange_loads needs rng when n_interior > 0")
        s_i = rng.uniform(geometry.spine_array_start, geometry.spine_array_end, n_interior)
        ranges = [tangential_force_range(geometry, tau, float(s)) for s in s_i]
        keep = np.array([r is not None for r in ranges])
        lo = np.array([r[0] for r in ranges if r is not None])
        hi = np.array([r[1] for r in ranges if r is not None])
        s_i = s_i[keep]
        f_t_i = rng.uniform(lo, hi)
        f_n_i = normal_force(tau, f_t_i, s_i, h)
        f_l_i = rng.uniform(-1.0, 1.0, s_i.size) * lateral_force_limit(geometry, f_t_i, f_n_i)
        f_t = np.concatenate([f_t, f_t_i])
        f_n = np.concatenate([f_n, f_n_i])
        f_l = np.concatenate([f_l, f_l_i])
        s_c = np.concatenate([s_c, s_i])
    return PhalangeLoads(f_t=f_t, f_n=f_n, f_l=f_l, s_c=s_c)


def footpad_wrenches(geometry: SpasasGeometry, n_directions: int = 16) -> np.ndarray:
    """Extreme wrenches of the footpad contact, shape (n_directions + 1, 6), [N, N m].

    The unloaded pad (zero wrench) and the fully loaded pad ``p = footpad_max_load`` with
    its friction at the limit in ``n_directions`` tangential directions: the vertices of an
    inscribed pyramid of the pad's friction cone (an inner approximation).
    """
    if n_directions < 3:
        raise ConfigError(f"footpad friction needs n_directions >= 3, got {n_directions}")
    p = geometry.footpad_max_load
    angle = np.linspace(0.0, 2.0 * np.pi, n_directions, endpoint=False)
    loaded = np.zeros((n_directions, 6))
    loaded[:, 0] = geometry.footpad_friction * p * np.cos(angle)
    loaded[:, 1] = geometry.footpad_friction * p * np.sin(angle)
    loaded[:, 2] = p
    return np.vstack([np.zeros((1, 6)), loaded])
