"""Telemetry logs are read as the csv module reads CSV, and a log that cannot come from a
DC motor on the robot is refused rather than fitted into absurd motor figures."""

import csv

import pytest

from clamber.exceptions import ConfigError, FileFormatError
from clamber.jumper.morphology import Morphology
from clamber.jumper.seed import seed_solution
from clamber.jumper.sim.simulate import simulate
from clamber.jumper.sim.telemetry import LOG_COLUMNS, load_and_analyze, read_csv, write_log


@pytest.fixture(scope="module")
def log_rows(tmp_path_factory):
    """Header and rows of a simulated one-jump log of the seed solution."""
    path = tmp_path_factory.mktemp("log") / "log.csv"
    write_log(simulate(seed_solution(), jumps=1), path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def _write(tmp_path, header, rows, *, bom=False, quote=csv.QUOTE_MINIMAL):
    path = tmp_path / "log.csv"
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        csv.writer(f, quoting=quote).writerows([header, *rows])
    return path


def test_a_byte_order_mark_and_quoted_fields_read_as_the_plain_log(tmp_path, log_rows):
    """A UTF-8 byte-order mark before the header and every field quoted give the same
    columns as the plain file."""
    header, rows = log_rows
    plain = read_csv(_write(tmp_path, header, rows), LOG_COLUMNS)
    other = read_csv(_write(tmp_path, header, rows, bom=True, quote=csv.QUOTE_ALL),
                     LOG_COLUMNS)
    assert plain.keys() == other.keys()
    for k in plain:
        assert (plain[k] == other[k]).all()


def test_a_nanosecond_time_step_is_refused(tmp_path, log_rows):
    """Time stamps 1 ns apart (a unit error) are a FileFormatError naming the line."""
    header, rows = log_rows
    it = header.index("t_s")
    fast = [[*r[:it], f"{k * 1e-9:.12g}", *r[it + 1:]] for k, r in enumerate(rows)]
    with pytest.raises(FileFormatError, match=r"line 3: time step 1e-09 s"):
        read_csv(_write(tmp_path, header, fast), LOG_COLUMNS)


def test_absurd_voltages_are_named_not_called_zero(tmp_path, log_rows):
    """1e300 V in a voltage column is refused naming the column and the +-48 V range (it
    used to be reported as voltages that are all zero)."""
    header, rows = log_rows
    j = header.index("v_hip_V")
    bad = [[*r[:j], "1e300", *r[j + 1:]] for r in rows]
    with pytest.raises(FileFormatError, match=r"v_hip_V = 1e\+300 is outside \+-48"):
        read_csv(_write(tmp_path, header, bad), LOG_COLUMNS)


def test_a_motor_fit_of_the_wrong_sign_is_flagged(tmp_path, log_rows, clamber_warnings):
    """Voltages of the wrong sign fit no DC motor (a negative gain or damping): the
    analysis warns naming the joint and the range, and marks that fit implausible."""
    header, rows = log_rows
    cols = [header.index(c) for c in ("v_hip_V", "v_spine_V", "v_shoulder_V")]
    flipped = [[str(-float(x)) if i in cols else x for i, x in enumerate(r)] for r in rows]
    fits = load_and_analyze(_write(tmp_path, header, flipped),
                            Morphology.nominal()).summary()["motor_fit"]
    assert not all(f["plausible"] for f in fits.values())
    assert any("motor fit." in r.getMessage() and "N m" in r.getMessage()
               for r in clamber_warnings)


def test_an_absurd_motor_fit_is_refused(tmp_path, log_rows):
    """Voltages logged a million times too small (a unit error) fit a gain beyond any DC
    motor's: a ConfigError naming the joint and the gain range, not a result."""
    header, rows = log_rows
    cols = [header.index(c) for c in ("v_hip_V", "v_spine_V", "v_shoulder_V")]
    tiny = [[repr(float(x) * 1e-6) if i in cols else x for i, x in enumerate(r)]
            for r in rows]
    with pytest.raises(ConfigError, match=r"motor fit of \w+: (gain|damping) = .* N m"):
        load_and_analyze(_write(tmp_path, header, tiny), Morphology.nominal())
