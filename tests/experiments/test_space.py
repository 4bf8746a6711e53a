"""The design-space parametrization: every coordinate vector is a feasible morphology."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.space import DIMENSION, DesignSpace, paper_findings
from clamber.experiments.sweep import sobol_designs
from clamber.jumper.morphology import DesignBounds, Morphology

EXTREMES = [np.full(DIMENSION, v) for v in (1e308, -1e308, 1e6, -1e6, 710.0, -710.0)] + [
    np.array([np.pi / 2, -np.pi / 2, 3 * np.pi / 2, 0.0, 1e300, -1e300]),
    np.array([0.0, 0.0, 0.0, 0.0, 800.0, 0.0]),
    np.array([0.0, 0.0, 0.0, 0.0, 0.0, -800.0]),
]


def _assert_feasible(m: Morphology, b: DesignBounds) -> None:
    assert all(b.length_min <= L <= b.length_max for L in m.lengths)
    inner = np.array(m.masses[1:4])
    assert np.all(inner >= b.inner_mass_min)
    assert abs(inner.sum() - b.inner_mass_total) <= 1e-15
    assert m.masses[0] == m.masses[4] == b.distal_mass


@pytest.mark.parametrize("bounds", [DesignBounds(),
                                    DesignBounds(length_min=0.03, length_max=0.2,
                                                 inner_mass_min=0.05, inner_mass_total=0.2)])
def test_random_and_extreme_coordinates_are_feasible(bounds):
    """Random coordinates at any scale and extreme ones decode to designs inside the
    bounds, with inner masses summing to the total to the last bit (no clipping needed)."""
    space = DesignSpace(bounds)
    rng = np.random.default_rng(0)
    samples = [rng.standard_normal(DIMENSION) * s
               for s in (0.1, 1.0, 10.0, 1e3) for _ in range(200)]
    for z in samples + EXTREMES:
        _assert_feasible(space.decode(z), bounds)


def test_bounds_are_reached_at_finite_coordinates():
    """Each length bound is attained exactly at z = -+pi/2 and each mass reaches its floor
    when the softmax saturates: the optimizer can put the design on any bound."""
    space = DesignSpace()
    m = space.decode(np.array([-np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0, 0.0]))
    assert m.lengths[0] == pytest.approx(0.04, abs=1e-15)
    assert m.lengths[1] == pytest.approx(0.12, abs=1e-15)
    m = space.decode(np.array([0, 0, 0, 0, 0, -60.0]))
    assert min(m.masses[1:4]) == pytest.approx(0.04, abs=1e-12)
    assert max(m.masses[1:4]) > 0.1


def test_origin_is_the_paper_initial_design_and_encode_inverts_decode():
    """z = 0 is 80 mm links with 83.3 g inner masses; encode(decode(z)) = z on the
    principal branch."""
    space = DesignSpace()
    m = space.decode(space.initial_mean())
    assert m.lengths == pytest.approx((0.08,) * 4, abs=1e-15)
    assert m.masses[1:4] == pytest.approx((0.25 / 3,) * 3, abs=1e-15)
    rng = np.random.default_rng(1)
    for _ in range(50):
        z = np.r_[rng.uniform(-1.5, 1.5, 4), rng.normal(size=2)]
        np.testing.assert_allclose(space.encode(space.decode(z)), z, atol=1e-9)


def test_mass_coordinates_have_no_flat_direction():
    """Moving either mass coordinate changes the masses: softmax's invariance to a common
    shift is removed, so every coordinate matters to the search."""
    space = DesignSpace()
    base = space.inner_masses(np.zeros(DIMENSION))
    for k in (4, 5):
        z = np.zeros(DIMENSION)
        z[k] = 0.1
        assert np.max(np.abs(space.inner_masses(z) - base)) > 1e-3


def test_bad_coordinates_are_config_errors():
    """Wrong shapes and NaN raise ConfigError naming the problem."""
    space = DesignSpace()
    with pytest.raises(ConfigError, match="shape"):
        space.decode(np.zeros(5))
    with pytest.raises(ConfigError, match="finite"):
        space.decode(np.r_[np.zeros(5), np.nan])


def test_sobol_designs_are_feasible_and_cover_the_space():
    """Sobol samples are feasible, reproducible for a seed, and spread over the ranges."""
    designs = sobol_designs(128, seed=4)
    for m in designs:
        _assert_feasible(m, m.bounds)
    L = np.array([m.lengths for m in designs])
    M = np.array([m.masses[1:4] for m in designs])
    assert L.min() < 0.045 and L.max() > 0.115
    assert M.min() < 0.045 and M.max() > 0.15
    assert [m.lengths for m in sobol_designs(128, seed=4)] == [m.lengths for m in designs]


def test_paper_findings_on_the_paper_style_design():
    """A design with the paper's traits passes all three checks; the nominal passes none."""
    good = Morphology.from_design_vector([0.05, 0.11, 0.09, 0.045], [0.05, 0.15, 0.05])
    assert paper_findings(good) == {"spine_mass_concentrated": True,
                                    "short_distal_links": True,
                                    "front_longer_than_rear": True}
    assert not any(paper_findings(Morphology.nominal()).values())
