"""Tests of the SPASAS gripper kinetostatics and its fitted wrench space."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.spatial import ConvexHull

from clamber.attachment.spasas import (
    PHALANGES,
    PhalangeLoads,
    SpasasGeometry,
    admissible_phalange_loads,
    footpad_wrenches,
    knuckle_point,
    normal_force,
    ocm_planar_wrench,
    phalange_wrench,
    pressure_centre,
    spine_axes,
)
from clamber.attachment.wrench_fit import fit_box, fit_wrench_space
from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.attachment.wrench_set import (
    BOX_SIGNS,
    WRENCH_SCALE,
    box_volume,
    contact_wrench_sets,
    direction_set,
    polytope_vertices,
    sample_wrench_space,
    wrench_gauge,
)
from clamber.exceptions import ConfigError

GEOMETRY = SpasasGeometry()
TAU = 1.75


@pytest.fixture(scope="module")
def fit():
    return fit_wrench_space(GEOMETRY, TAU, n_support=100, n_random=200, seed=1)


def random_pair_loads(rng, n):
    """Admissible-looking loads for both phalanges of a pair with the same driving torque."""
    s = rng.uniform(GEOMETRY.spine_array_start, GEOMETRY.spine_array_end, (2, n))
    f_t = rng.uniform(10.0, 60.0, (2, n))
    f_n = normal_force(TAU, f_t, s, GEOMETRY.spine_tip_offset)
    f_l = rng.uniform(-5.0, 5.0, (2, n))
    return [PhalangeLoads(f_t[i], f_n[i], f_l[i], s[i]) for i in range(2)]


def test_each_phalange_balances_the_driving_torque():
    """Eq. 7 is moment balance: the contact force's moment about the knuckle is -+tau_pha."""
    rng = np.random.default_rng(0)
    loads = random_pair_loads(rng, 50)
    gamma = 0.3
    for side, load in zip((-1, 1), loads, strict=True):
        t, n = spine_axes(gamma, side)
        force = load.f_t[:, None] * t + load.f_n[:, None] * n
        arm = pressure_centre(GEOMETRY, gamma, side, load.s_c) - knuckle_point(GEOMETRY, side)
        moment = arm[:, 1] * force[:, 0] - arm[:, 0] * force[:, 1]
        np.testing.assert_allclose(moment, side * TAU, atol=1e-12)


def test_point_force_resultant_matches_eq6_knuckle_form():
    """Summing 3D point forces at the pressure centres gives Eq. 6 (forces at the knuckles).

    The two computations agree only because the equal driving torques cancel, so this checks
    the geometry, Eq. 7 and the sign conventions together.
    """
    rng = np.random.default_rng(1)
    loads = random_pair_loads(rng, 100)
    g1, g2 = 0.2, 0.45
    total = phalange_wrench(GEOMETRY, "x", -1, g1, loads[0]) + phalange_wrench(
        GEOMETRY, "x", 1, g2, loads[1]
    )
    eq6 = ocm_planar_wrench(
        GEOMETRY, g1, g2, loads[0].f_t, loads[0].f_n, loads[1].f_t, loads[1].f_n
    )
    np.testing.assert_allclose(total[:, [0, 2, 4]], eq6, atol=1e-9)
    np.testing.assert_allclose(total[:, 1], loads[0].f_l + loads[1].f_l, atol=1e-12)


def test_phalange_wrench_matches_independent_cross_product():
    """The wrench of phalange 3 (OCM y) equals [f, r x f] built by hand in 3D."""
    rng = np.random.default_rng(2)
    load = random_pair_loads(rng, 20)[0]
    gamma = 0.25
    w = phalange_wrench(GEOMETRY, "y", -1, gamma, load)
    c, s = math.cos(gamma), math.sin(gamma)
    d1, d2, h = GEOMETRY.knuckle_offset, GEOMETRY.knuckle_height, GEOMETRY.spine_tip_offset
    for k in range(20):
        # Phalange on the -y side: array tangent (0, cos, -sin), normal (0, sin, cos).
        t = np.array([0.0, c, -s])
        n = np.array([0.0, s, c])
        lateral = np.array([-1.0, 0.0, 0.0])  # OCM x's +y turned +90 deg about z
        point = np.array([0.0, -d1, d2]) + load.s_c[k] * t - h * n
        force = load.f_t[k] * t + load.f_n[k] * n + load.f_l[k] * lateral
        np.testing.assert_allclose(w[k], np.concatenate([force, np.cross(point, force)]),
                                   atol=1e-12)


def test_admissible_states_satisfy_eq7_and_friction_limit():
    """Every sampled phalange state obeys Eq. 7, the friction limit and the spine strength."""
    states = admissible_phalange_loads(GEOMETRY, TAU, n_interior=100,
                                       rng=np.random.default_rng(3))
    np.testing.assert_allclose(
        states.f_t * GEOMETRY.spine_tip_offset + states.f_n * states.s_c, TAU, rtol=1e-12
    )
    assert np.all(states.friction_margin(GEOMETRY) >= -1e-9)
    assert np.all(states.f_t > 0) and np.all(states.f_t <= GEOMETRY.max_tangential_force)


def test_wrench_samples_are_sums_of_admissible_phalange_loads(fit):
    """Each wrench sample is the sum of its four phalange wrenches and footpad, all admissible."""
    samples = fit.samples
    total = samples.footpad.copy()
    for (ocm, side), gamma, loads in zip(PHALANGES, samples.knuckle_angles, samples.loads,
                                         strict=True):
        assert np.all(loads.friction_margin(GEOMETRY) >= -1e-9)
        total += phalange_wrench(GEOMETRY, ocm, side, gamma, loads)
    np.testing.assert_allclose(total, samples.wrenches, atol=1e-9)
    pad = samples.footpad
    assert np.all(pad[:, 2] >= 0) and np.all(pad[:, 2] <= GEOMETRY.footpad_max_load + 1e-12)
    assert np.all(np.hypot(pad[:, 0], pad[:, 1]) <= GEOMETRY.footpad_friction * pad[:, 2] + 1e-9)


def achievable(points, knuckle_angles):
    """Whether each wrench is a sum over contacts of convex combinations of admissible states.

    Independent of the fit's machinery: the full, unpruned state grid plus random interior
    states, and the primal membership LP (the fit uses the dual).
    """
    states = admissible_phalange_loads(GEOMETRY, TAU, n_interior=200,
                                       rng=np.random.default_rng(4))
    sets = [phalange_wrench(GEOMETRY, ocm, side, g, states)
            for (ocm, side), g in zip(PHALANGES, knuckle_angles, strict=True)]
    sets.append(footpad_wrenches(GEOMETRY))
    sizes = [s.shape[0] for s in sets]
    a_eq = np.zeros((6 + len(sets), sum(sizes)))
    a_eq[:6] = np.hstack([s.T for s in sets])
    start = 0
    for k, size in enumerate(sizes):
        a_eq[6 + k, start:start + size] = 1.0
        start += size
    result = []
    for point in points:
        lp = linprog(np.zeros(a_eq.shape[1]), A_eq=a_eq,
                     b_eq=np.concatenate([point, np.ones(len(sets))]),
                     bounds=(0, None), method="highs")
        result.append(lp.status == 0)
    return np.array(result)


def test_box_vertices_are_achievable_by_phalange_loads(fit):
    """Every box vertex is a convex combination, per contact, of admissible states (LP)."""
    vertices = BOX_SIGNS * fit.box.h[:6]
    assert np.all(achievable(vertices, fit.samples.knuckle_angles))


def test_box_is_largest_volume_in_its_neighbourhood(fit):
    """Tight fit: growing the box by 1% along any axis pushes a vertex out of W."""
    assert np.all(fit.box.h[:6] > 0)
    np.testing.assert_allclose(fit.box.h[:6], fit.box.h[6:])
    for axis in range(6):
        grown = fit.box.h[:6].copy()
        grown[axis] *= 1.01
        assert np.max(wrench_gauge(fit.sets, BOX_SIGNS * grown)) > 1.0 + 1e-7, axis


def test_polytope_contains_box_and_lies_in_the_achievable_set(fit):
    """The polytope's H-representation contains the box; its vertices are achievable."""
    box_vertices = BOX_SIGNS * fit.box.h[:6]
    assert np.all(fit.polytope.contains(box_vertices, tol=1e-9))
    assert np.all(fit.polytope.contains(fit.polytope_points, tol=1e-9))
    vertices = polytope_vertices(fit.polytope)
    assert 64 < vertices.shape[0] <= fit.polytope_points.shape[0]
    assert np.max(wrench_gauge(fit.sets, vertices)) <= 1.0 + 1e-6
    assert np.all(achievable(vertices, fit.samples.knuckle_angles))
    assert 12 < fit.polytope.H.shape[0] <= 150


def test_polytope_is_larger_than_box(fit):
    """The polytope has vertices strictly outside the box and a larger volume."""
    vertices = polytope_vertices(fit.polytope)
    assert np.any(~fit.box.contains(vertices, tol=1e-3))
    volume = ConvexHull(vertices / WRENCH_SCALE).volume
    np.testing.assert_allclose(volume / box_volume(fit.box), fit.volume_ratio, rtol=1e-6)
    assert fit.volume_ratio > 1.5


def test_gauge_matches_support_function():
    """Support points of W lie on its boundary (gauge 1); scaled copies have scaled gauges."""
    sets = contact_wrench_sets(GEOMETRY, TAU)
    directions = direction_set(5, np.random.default_rng(5))[-5:] / WRENCH_SCALE
    values, points = sets.support(directions)
    np.testing.assert_allclose(np.sum(directions * points, axis=1), values, rtol=1e-12)
    np.testing.assert_allclose(wrench_gauge(sets, points), 1.0, rtol=1e-6)
    np.testing.assert_allclose(wrench_gauge(sets, 0.4 * points), 0.4, rtol=1e-6)
    beyond = 1.05 * points[0]
    assert wrench_gauge(sets, beyond[None, :])[0] > 1.04


def test_paper_shaped_box_and_coverage_of_the_paper_box():
    """A box of the paper's shape scales the paper's half-widths and is tight in W."""
    sets = contact_wrench_sets(GEOMETRY, TAU)
    box, vertices = fit_box(sets, shape=PAPER_BOX_HALF_WIDTHS)
    ratio = box.h[:6] / PAPER_BOX_HALF_WIDTHS
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
    gauges = wrench_gauge(sets, vertices)
    assert np.max(gauges) <= 1.0 + 1e-9
    assert np.max(gauges) > 1.0 - 1e-5
    paper = BOX_SIGNS * WrenchLimits.paper_box().h[:6]
    assert (np.max(wrench_gauge(sets, paper)) <= 1.0) == (ratio[0] >= 1.0)


def test_wrench_space_is_homogeneous_in_driving_torque_without_strength_cap():
    """Without the spine-strength and footpad caps binding, doubling tau_pha doubles the space.

    Eq. 7 and the friction limit are positively homogeneous in (tau_pha, forces).
    """
    geometry = SpasasGeometry(max_tangential_force=1e6, footpad_max_load=1e6,
                              friction_coefficient=0.5, spine_tip_offset=0.04)
    a = admissible_phalange_loads(geometry, 1.0)
    b = admissible_phalange_loads(geometry, 2.0)
    np.testing.assert_allclose(b.f_t, 2.0 * a.f_t, rtol=1e-12)
    np.testing.assert_allclose(b.f_l, 2.0 * a.f_l, rtol=1e-12)


def test_sampling_is_reproducible():
    """Equal seeds give equal samples."""
    a = sample_wrench_space(GEOMETRY, TAU, n_support=50, n_random=50, seed=7).wrenches
    b = sample_wrench_space(GEOMETRY, TAU, n_support=50, n_random=50, seed=7).wrenches
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("field", "value"), [("knuckle_offset", -0.01),
                                              ("friction_coefficient", 3.0),
                                              ("spine_array_end", 0.01),
                                              ("max_tangential_force", math.inf)])
def test_bad_geometry_raises_config_error(field, value):
    """Invalid geometry raises ConfigError naming the field."""
    with pytest.raises(ConfigError, match=field):
        SpasasGeometry(**{field: value})


def test_bad_knuckle_angles_and_torque_raise():
    """Wrong knuckle-angle count, out-of-range angles or a non-positive torque raise."""
    with pytest.raises(ConfigError):
        sample_wrench_space(GEOMETRY, TAU, knuckle_angles=(0.1, 0.2, 0.3))
    with pytest.raises(ConfigError):
        sample_wrench_space(GEOMETRY, TAU, knuckle_angles=(2.0, 0.2))
    with pytest.raises(ConfigError):
        sample_wrench_space(GEOMETRY, -1.0)
    with pytest.raises(ConfigError, match="margin"):
        fit_wrench_space(GEOMETRY, TAU, margin=1.0)
    with pytest.raises(ConfigError, match="shape"):
        fit_box(contact_wrench_sets(GEOMETRY, TAU), shape=np.array([1.0, 1.0, -1.0, 1, 1, 1]))
