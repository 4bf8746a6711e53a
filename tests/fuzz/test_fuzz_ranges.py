"""Fuzzing what a value may be: every settings quantity, hardware description, gains file,
run-record schema, telemetry dialect and solution scale either is refused with one
clamber error or yields a result whose inputs lie within the stated ranges
(clamber._validate.RANGES); no case raises anything else or runs past its time limit."""

import contextlib
import csv
import io
import json
import math
import signal
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fuzz_harness import examples, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clamber import _validate as v
from clamber.exceptions import ClamberError, ConfigError, FileFormatError
from clamber.jumper.seed import SEED_PATH

FUZZ = settings(max_examples=examples(60), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
#: Any float a user could type, from denormals to 1e308, with both signs and non-finite.
ANY_FLOAT = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                      st.integers(-300, 300).map(lambda k: 10.0 ** k),
                      st.integers(-300, 300).map(lambda k: -(10.0 ** k)))


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail the case (a hang) if it runs longer than ``seconds``."""
    def hang(*_):
        raise TimeoutError(f"still running after {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _within(value: float, quantity: str) -> bool:
    r = v.RANGES[quantity]
    return (math.isfinite(value)
            and (r.low is None or (value > r.low if r.low_open else value >= r.low))
            and (r.high is None or (value < r.high if r.high_open else value <= r.high)))


@FUZZ
@given(st.data())
def test_settings_are_in_range_or_refused(data):
    """A numeric setting set to any float is a ConfigError naming it, or accepted and
    within its quantity's range."""
    from clamber.jumper.settings import QUANTITIES, OptimizationSettings

    name = data.draw(st.sampled_from(sorted(QUANTITIES)))
    value = data.draw(ANY_FLOAT if name != "max_iterations"
                      else st.integers(-2**70, 2**70))
    with time_limit(10):
        try:
            s = OptimizationSettings(**{name: value})
        except ConfigError as e:
            assert name in str(e)
            return
    assert _within(float(getattr(s, name)), QUANTITIES[name])


@FUZZ
@given(st.dictionaries(
    st.sampled_from(["joint_angle_limit", "torque_limit", "joint_speed_limit", "motor",
                     "wheels"]),
    st.one_of(ANY_FLOAT, st.text(max_size=3), st.dictionaries(
        st.sampled_from(["supply_voltage", "resistance", "torque_constant",
                         "back_emf_constant", "viscous_friction", "gear"]),
        st.one_of(ANY_FLOAT, st.booleans()), max_size=3)), max_size=4))
def test_hardware_descriptions_are_in_range_or_refused(data):
    """A hardware description is a ConfigError, or every limit it sets lies within the
    joint and motor ranges the export checks against."""
    from clamber.jumper.sim.export import ExportLimits, Hardware

    try:
        hw = Hardware.from_dict(data, source="fuzz")
    except ConfigError:
        return
    limits = ExportLimits.from_hardware(hw)
    assert _within(limits.torque, "joint_torque")
    assert _within(limits.speed, "joint_speed")
    assert _within(limits.joint_angle, "joint_angle")
    assert _within(limits.voltage, "supply_voltage")


JSON = st.recursive(st.one_of(st.none(), st.booleans(), ANY_FLOAT.filter(math.isfinite),
                              st.text(max_size=5)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(st.text(max_size=8), inner,
                                                            max_size=3)), max_leaves=12)


@st.composite
def gains_documents(draw):
    """A gains file: any JSON, or the shipped gains with one value or key replaced."""
    if draw(st.booleans()):
        return draw(JSON)
    doc = json.loads((Path(__file__).parents[2] / "docs" / "quadruped_gains.json")
                     .read_text())
    controller = draw(st.sampled_from(sorted(doc["gains"])))
    key = draw(st.one_of(st.sampled_from(sorted(doc["gains"][controller])),
                         st.text(max_size=6)))
    doc["gains"][controller][key] = draw(st.one_of(ANY_FLOAT.filter(math.isfinite), JSON))
    return doc


@FUZZ
@given(gains_documents())
def test_gains_files_are_in_range_or_refused(doc):
    """`evaluate --gains`: a ConfigError, or tuned controllers only with every multiplier
    within the gain multiplier range."""
    from clamber.cli.quadruped_compare import _read_gains
    from clamber.quadruped.control.variants import GAINS

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "gains.json"
        path.write_text(json.dumps(doc))
        try:
            gains = _read_gains(path)
        except ConfigError:
            return
    for controller, values in gains.items():
        assert controller in GAINS and {k for k, _ in values} == set(GAINS[controller])
        assert all(_within(x, "gain_multiplier") for _, x in values)


SCHEMA_CHANGES = st.sampled_from([
    "CREATE TRIGGER t{n} AFTER INSERT ON trials BEGIN DELETE FROM trials; END",
    "CREATE TRIGGER t{n} BEFORE UPDATE ON meta BEGIN SELECT 1; END",
    "CREATE VIEW v{n} AS SELECT * FROM trials",
    "CREATE TABLE x{n} (a)", "CREATE INDEX i{n} ON trials (state)",
    "ALTER TABLE trials ADD COLUMN c{n} TEXT", "ALTER TABLE generations ADD COLUMN c{n}",
    "DROP TABLE generations",
])


@FUZZ
@given(st.lists(SCHEMA_CHANGES, min_size=1, max_size=3))
def test_run_records_with_another_schema_are_refused(changes):
    """Any trigger, view, table, index or column beyond the format's schema makes the
    record a FileFormatError on open: nothing in it is run or trusted."""
    from clamber.storage.runs import STORE_NAME, RunStore

    with tempfile.TemporaryDirectory() as d:
        run = Path(d) / "run"
        RunStore.create(run, "codesign", {"a": 1}).close()
        db = sqlite3.connect(run / STORE_NAME)
        with db:
            for n, sql in enumerate(changes):
                with contextlib.suppress(sqlite3.OperationalError):
                    db.execute(sql.format(n=n))
        db.close()
        with pytest.raises(FileFormatError, match="schema"):
            RunStore.open(run, "codesign", {"a": 1})


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.booleans(), st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL,
                                       csv.QUOTE_NONNUMERIC]),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_telemetry_dialects_read_alike(telemetry_log, bom, quoting, newline, padded):
    """A log written with a byte-order mark, any quoting, CRLF line ends or spaces around
    the header names reads to the same columns as the plain log."""
    from clamber.jumper.sim.telemetry import LOG_COLUMNS, read_csv

    plain = read_csv(telemetry_log, LOG_COLUMNS)
    with open(telemetry_log, newline="") as f:
        rows = list(csv.reader(f))
    if padded:
        rows[0] = [f" {h} " for h in rows[0]]
    if quoting == csv.QUOTE_NONNUMERIC:
        rows = [rows[0], *([float(x) for x in r] for r in rows[1:])]
    buf = io.StringIO()
    csv.writer(buf, quoting=quoting, lineterminator=newline).writerows(rows)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "log.csv"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode())
        other = read_csv(path, LOG_COLUMNS)
    assert plain.keys() == other.keys()
    for k in plain:
        np.testing.assert_array_equal(plain[k], other[k])


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["t", "phase_durations", "q", "qd", "tau"]),
       st.integers(-300, 300), st.sampled_from(["export", "simulate"]))
def test_scaled_solutions_are_refused_or_exported_within_range(array, exponent, command):
    """A solution whose times, phases, angles, speeds or torques are scaled by 10^k is
    refused with rc 2 and one line, or (export) written having checked limits within the
    hardware ranges; simulate is only asked to refuse, so accepted scales are not run."""
    with np.load(SEED_PATH) as d:
        arrays = {k: np.array(d[k], dtype=float) for k in d.files}
    meta = json.loads(SEED_PATH.with_suffix(".json").read_text())
    meta["accuracy"] = {"max_position_drift_m": 0.001}
    factor = 10.0 ** exponent
    arrays[array] = arrays[array] * factor
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sol.npz"
        np.savez(path, **arrays)
        path.with_suffix(".json").write_text(json.dumps(meta))
        if command == "simulate":
            from clamber.cli.sim import _load

            with time_limit(20):
                try:
                    sol = _load(path)
                except ClamberError:
                    return
            assert all(_within(x, "phase_duration") for x in sol.phase_durations)
            assert np.abs(sol.q[:, 3:]).max() <= v.RANGES["joint_angle"].high
            assert np.abs(sol.qd[:, 3:]).max() <= v.RANGES["joint_speed"].high
            return
        with time_limit(30):
            rc, out, err = run_cli(["jumper", "export", path, "--json", "--out",
                                    Path(d) / "out"])
    assert "Traceback" not in err
    if rc == 2:
        assert len(err.strip().splitlines()) == 1
        return
    assert rc == 0, err
    checked = json.loads(out)["limits_checked"]
    assert _within(checked["torque_nm"], "joint_torque")
    assert _within(checked["feed_forward_voltage_v"], "supply_voltage")
