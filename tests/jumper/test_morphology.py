"""Morphology validation, design space and TOML round trips."""

import math

import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.morphology import DesignBounds, Morphology


def test_nominal_is_the_papers_starting_design():
    """80 mm links, 10 g grippers, 250 g split evenly over the inner masses."""
    m = Morphology.nominal()
    assert m.lengths == pytest.approx((0.08,) * 4)
    assert m.masses[0] == m.masses[4] == pytest.approx(0.010)
    assert m.masses[1:4] == pytest.approx((0.25 / 3,) * 3)
    assert m.total_mass == pytest.approx(0.27)


@pytest.mark.parametrize("kwargs, field", [
    ({"lengths": (0.03, 0.08, 0.08, 0.08)}, "L1"),
    ({"lengths": (0.08, 0.08, 0.08, 0.13)}, "L4"),
    ({"masses": (0.01, 0.03, 0.11, 0.11, 0.01)}, "m2"),
    ({"masses": (0.01, 0.1, 0.1, 0.1, 0.01)}, "m2 + m3 + m4"),
    ({"masses": (0.02, 0.25 / 3, 0.25 / 3, 0.25 / 3, 0.01)}, "m1"),
    ({"lengths": (0.08, math.nan, 0.08, 0.08)}, "lengths[1]"),
    ({"link_mass": (-0.01, 0, 0, 0)}, "link_mass[0]"),
    ({"lengths": (0.08, 0.08, 0.08)}, "lengths"),
])
def test_invalid_values_name_the_field(kwargs, field):
    """Out-of-bounds, unbalanced, NaN, negative or mis-shaped values raise ConfigError."""
    with pytest.raises(ConfigError, match=field.replace("+", r"\+").replace("[", r"\[")):
        Morphology(**kwargs)


def test_bounds_are_configurable():
    """A wider design space admits what the default one rejects."""
    wide = DesignBounds(length_max=0.2)
    Morphology(lengths=(0.15, 0.08, 0.08, 0.08), bounds=wide)
    with pytest.raises(ConfigError):
        Morphology(lengths=(0.15, 0.08, 0.08, 0.08))


def test_toml_round_trip(tmp_path):
    """Saving and loading returns an equal morphology, CAD link bodies included."""
    m = Morphology(lengths=(0.05, 0.1, 0.09, 0.06), masses=(0.01, 0.05, 0.14, 0.06, 0.01),
                   link_mass=(0.004, 0.012, 0.01, 0.006), link_com=(0.02, 0.05, 0.03, 0.02),
                   link_inertia=(2e-6, 8e-6, 6e-6, 3e-6))
    assert Morphology.load(m.save(tmp_path / "m.toml")) == m


def test_unknown_keys_and_bad_files_are_rejected(tmp_path):
    """Unknown keys, missing files and broken TOML give ConfigError with the reason."""
    p = tmp_path / "m.toml"
    p.write_text('lengths_m = [0.08, 0.08, 0.08, 0.08]\nmasses_kg = [0.01, 0.08, 0.08, 0.08, '
                 '0.01]\ncolour = "red"\n')
    with pytest.raises(ConfigError, match="colour"):
        Morphology.load(p)
    with pytest.raises(ConfigError, match="does not exist"):
        Morphology.load(tmp_path / "nope.toml")
    p.write_text("lengths_m = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Morphology.load(p)
