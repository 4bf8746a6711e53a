"""The shared field checks: one rule set, one message style."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from clamber import _validate as v
from clamber.exceptions import ConfigError

NOT_NUMBERS = st.one_of(st.booleans(), st.text(max_size=5), st.none(), st.lists(st.integers()))


@given(NOT_NUMBERS)
def test_booleans_strings_and_containers_are_never_numbers(x):
    """Whatever is not a real number is refused, with the field named in the message."""
    with pytest.raises(ConfigError, match=r"robot\.mass"):
        v.number("robot", "mass", x)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_positive_accepts_exactly_the_finite_positive_floats(x):
    """positive() returns x for finite x > 0 and refuses everything else."""
    if math.isfinite(x) and x > 0:
        assert v.positive("o", "f", x) == x
    else:
        with pytest.raises(ConfigError, match="must be finite and > 0"):
            v.positive("o", "f", x)


@given(st.integers(-5, 5))
def test_integer_bounds_are_inclusive(n):
    """integer() accepts low <= n <= high, refuses floats and booleans."""
    if 0 <= n <= 3:
        assert v.integer("o", "n", n, low=0, high=3) == n
    else:
        with pytest.raises(ConfigError, match=r"in \[0, 3\]"):
            v.integer("o", "n", n, low=0, high=3)
    with pytest.raises(ConfigError):
        v.integer("o", "n", float(n))
    with pytest.raises(ConfigError):
        v.integer("o", "n", True)


def test_arrays_are_checked_for_shape_and_finiteness():
    """finite_array() names the expected shape and refuses NaN."""
    assert v.finite_array("s", "q", [[1, 2]], (None, 2)).shape == (1, 2)
    with pytest.raises(ConfigError, match="shape nx3"):
        v.finite_array("s", "q", np.zeros((2, 2)), (None, 3))
    with pytest.raises(ConfigError, match="NaN"):
        v.finite_array("s", "q", [1.0, math.nan])
    with pytest.raises(ConfigError, match="one of 'a', 'b'"):
        v.choice("s", "mode", "c", ("a", "b"))


def test_a_file_name_holding_a_nul_character_is_refused_as_bad_input(tmp_path):
    """No file can be named with a NUL: the reader says so in the caller's error, where the
    operating system's call would raise a bare ValueError."""
    with pytest.raises(ConfigError, match="NUL character"):
        v.read_text(tmp_path / "region\x00.json", "safe-region file", ConfigError)


def test_read_text_reads_a_utf8_file_and_refuses_a_missing_one(tmp_path):
    """The plain cases around it: the text of a file, an error naming a missing one."""
    (tmp_path / "a.txt").write_text("héllo", encoding="utf-8")
    assert v.read_text(tmp_path / "a.txt") == "héllo"
    with pytest.raises(ConfigError, match="does not exist"):
        v.read_text(tmp_path / "b.txt", "settings file", ConfigError)


@pytest.mark.parametrize("field, value, unit", [
    ("torque_limit", 1e300, "N m"), ("joint_angle_limit", 100.0, "rad"),
    ("foot_radius", 10.0, " m"), ("torque_rate_weight", 1e300, "m/s"),
    ("joint_speed_limit", 1e6, "rad/s"), ("max_iterations", 10**29, "100000"),
])
def test_absurd_settings_are_refused_with_their_range(field, value, unit):
    """A setting outside its physical range in RANGES is a ConfigError naming the field,
    the value and the range with its unit (the values the issue found accepted)."""
    from clamber.jumper.settings import OptimizationSettings

    with pytest.raises(ConfigError, match=rf"settings\.{field} = .*{unit}"):
        OptimizationSettings(**{field: value})


def test_every_settings_quantity_has_a_range_and_defaults_lie_inside():
    """Each numeric setting maps to a RANGES entry and the default settings satisfy it,
    so the table cannot drift from the settings it checks."""
    from clamber.jumper.settings import QUANTITIES, OptimizationSettings

    s = OptimizationSettings()
    for name, quantity in QUANTITIES.items():
        r = v.RANGES[quantity]
        value = getattr(s, name)
        if value is not None:
            assert (r.low is None or value >= r.low) and (r.high is None or value <= r.high)


def test_safe_regions_too_thin_or_too_strong_are_refused():
    """A safe region whose load cap exceeds the gripper load range, or that has no force
    force_margin inside every row (a thin wedge), is refused; the paper's region passes."""
    from clamber.attachment.safe_region import SafeRegion
    from clamber.jumper.settings import OptimizationSettings

    OptimizationSettings(safe_region_front=SafeRegion.spined())
    with pytest.raises(ConfigError, match="load range"):
        OptimizationSettings(safe_region_front=SafeRegion.sector(30, 9.8e299))
    thin = SafeRegion(A=[[-1.0, -1e-4], [1.0, -1e-4], [0.0, 1.0]], b=[0.0, 0.0, 15.0])
    with pytest.raises(ConfigError, match="too thin"):
        OptimizationSettings(safe_region_rear=thin)


def test_a_settings_file_with_a_byte_order_mark_is_read(tmp_path):
    """A UTF-8 byte-order mark (as some editors write) is valid UTF-8: the file is read."""
    from clamber.jumper.settings_file import load_settings

    p = tmp_path / "s.toml"
    p.write_bytes(b"\xef\xbb\xbftorque_limit = 0.3\n")
    assert load_settings(p).torque_limit == 0.3


def test_a_morphology_beyond_a_climber_is_refused(tmp_path, capsys):
    """`jumper model` of a morphology file whose own bounds allow 33 kg links exits 2 with
    one line naming the mass and its range; the nominal robot passes the same check."""
    from clamber.cli import main
    from clamber.jumper.morphology import Morphology

    v.morphology_in_range(Morphology.nominal())
    path = tmp_path / "heavy.toml"
    path.write_text("lengths_m = [0.08, 0.08, 0.08, 0.08]\n"
                    "masses_kg = [0.01, 33.0, 33.0, 34.0, 0.01]\n"
                    "[bounds]\ninner_mass_total = 100.0\n")
    rc = main(["jumper", "model", "--morphology", str(path), "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "masses[1] = 33.0" in err and "kg" in err
