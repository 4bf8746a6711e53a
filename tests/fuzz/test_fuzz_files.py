"""Fuzzing every loader through the command that reads it: a damaged solution, morphology,
settings, telemetry, trials or run file exits with rc 2 and one line, never a traceback."""

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
from fuzz_harness import assert_refused, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clamber.jumper.seed import SEED_PATH
from clamber.jumper.sim.telemetry import LOG_COLUMNS
from clamber.storage.runs import STORE_NAME

FUZZ = settings(max_examples=examples(60), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
#: Values that are never a number, a list of numbers or a table of the right kind.
NOT_A_NUMBER = st.one_of(st.text(max_size=6), st.booleans(), st.none(),
                         st.lists(st.text(max_size=3), max_size=3),
                         st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
#: Arrays whose every entry must be finite, and arrays that may hold NaN (detached grippers).
FINITE_ARRAYS = ("t", "phase", "q", "q_rear", "qd", "qdd", "tau", "points",
                 "phase_durations", "x")
FORCE_ARRAYS = ("f_front", "f_rear")
META_KEYS = ("morphology", "settings", "nodes", "status", "height", "front_anchor",
             "iterations", "solve_time_s", "build_time_s", "return_status")


def _scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="clamber-fuzz-"))


def _seed_copy(folder: Path) -> tuple[dict, dict, Path]:
    path = folder / "sol.npz"
    with np.load(SEED_PATH) as d:
        # C order, so that writing through ``reshape(-1)`` below damages the array itself
        # (some stored arrays are Fortran-ordered, where that view would be a copy).
        arrays = {k: np.array(d[k], dtype=float, order="C") for k in d.files}
    meta = json.loads(SEED_PATH.with_suffix(".json").read_text())
    return arrays, meta, path


def _write(path: Path, arrays: dict, meta: dict) -> Path:
    np.savez(path, **arrays)
    path.with_suffix(".json").write_text(json.dumps(meta))
    return path


@st.composite
def damaged_solution(draw):
    """One damage of a valid solution file: a non-finite entry, a missing or reshaped
    array, time run backwards, a non-positive phase, a missing or mistyped metadata field,
    or bytes that are no file of that kind."""
    folder = _scratch()
    arrays, meta, path = _seed_copy(folder)
    kind = draw(st.sampled_from(["nonfinite", "force_inf", "drop_array", "reshape", "reverse",
                                 "phase", "drop_key", "mistype", "settings", "morphology",
                                 "json_bytes", "npz_bytes"]))
    if kind == "nonfinite":
        name = draw(st.sampled_from(FINITE_ARRAYS))
        flat = arrays[name].reshape(-1)
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from([np.nan, np.inf,
                                                                          -np.inf]))
    elif kind == "force_inf":
        name = draw(st.sampled_from(FORCE_ARRAYS))
        flat = arrays[name].reshape(-1)
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from([np.inf, -np.inf]))
    elif kind == "drop_array":
        arrays.pop(draw(st.sampled_from(FINITE_ARRAYS + FORCE_ARRAYS)))
    elif kind == "reshape":
        name = draw(st.sampled_from([k for k in FINITE_ARRAYS + FORCE_ARRAYS if k != "x"]))
        cut = draw(st.integers(1, 3))
        arrays[name] = arrays[name][:-cut] if draw(st.booleans()) else arrays[name][..., None]
    elif kind == "reverse":
        k = draw(st.integers(1, len(arrays["t"]) - 1))
        arrays["t"][k] = arrays["t"][k - 1] - draw(st.floats(1e-6, 1.0))
    elif kind == "phase":
        arrays["phase_durations"][draw(st.integers(0, 4))] = draw(st.floats(-1.0, 0.0))
    elif kind == "drop_key":
        meta.pop(draw(st.sampled_from(META_KEYS)))
    elif kind == "mistype":
        key = draw(st.sampled_from([k for k in META_KEYS if k != "return_status"]))
        # An empty settings table is valid: settings a file leaves out take their defaults
        # (files written before a setting existed).
        meta[key] = draw(NOT_A_NUMBER.filter(lambda v: not (key == "settings" and v == {})
                                             and (not isinstance(v, str)
                                             or key not in ("status",) or v not in (
                                                 "converged", "acceptable", "failed",
                                                 "infeasible", "max_iterations"))))
    elif kind == "settings":
        key = draw(st.sampled_from(sorted(meta["settings"])))
        meta["settings"][key] = draw(NOT_A_NUMBER.filter(
            lambda v: not (key == "collocation" and v in ("trapezoidal", "hermite-simpson"))))
    elif kind == "morphology":
        key = draw(st.sampled_from(["lengths_m", "masses_kg"]))
        meta["morphology"][key] = draw(st.one_of(NOT_A_NUMBER, st.lists(
            st.one_of(st.booleans(), st.text(max_size=3)), min_size=1, max_size=5)))
    _write(path, arrays, meta)
    if kind == "json_bytes":
        path.with_suffix(".json").write_bytes(draw(st.binary(max_size=64)))
    elif kind == "npz_bytes":
        raw = path.read_bytes()
        path.write_bytes(raw[:draw(st.integers(0, len(raw) - 1))])
    return path


@FUZZ
@given(damaged_solution(), st.sampled_from(["export", "simulate", "robustness", "telemetry"]))
def test_damaged_solution_files_are_refused(path, command):
    """Every command that reads a solution refuses a damaged one with rc 2, one line."""
    out = path.parent / "out"
    argv = {"export": ["jumper", "export", path, "--out", out],
            "simulate": ["jumper", "simulate", path, "--out", out, "--no-figures"],
            "robustness": ["jumper", "robustness", path, "--out", out, "--workers", "0",
                           "--trials", "1", "--no-progress"],
            "telemetry": ["jumper", "telemetry", path.with_suffix(".csv"), "--solution", path,
                          "--no-figures"]}[command]
    if command == "telemetry":
        path.with_suffix(".csv").write_text("t_s\n")
    assert_refused(argv)
    shutil.rmtree(path.parent, ignore_errors=True)


GOOD_MORPHOLOGY = {"lengths_m": [0.08, 0.08, 0.08, 0.08],
                   "masses_kg": [0.01, 0.08, 0.09, 0.08, 0.01]}


@st.composite
def bad_morphology_text(draw):
    """A morphology TOML with one bad value, or bytes that are no morphology at all."""
    import tomli_w

    kind = draw(st.sampled_from(["value", "entry", "table", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=80))
    d = json.loads(json.dumps(GOOD_MORPHOLOGY))
    if kind == "value":
        d[draw(st.sampled_from(sorted(d)))] = draw(NOT_A_NUMBER.filter(lambda v: v is not None))
    elif kind == "entry":
        key = draw(st.sampled_from(sorted(d)))
        d[key][draw(st.integers(0, 3))] = draw(st.one_of(
            st.text(max_size=4), st.booleans(), st.sampled_from([float("nan"), float("inf"),
                                                                 -0.05, 5.0])))
    else:
        d[draw(st.sampled_from(["links", "bounds"]))] = draw(st.one_of(
            st.integers(), st.text(max_size=4), st.lists(st.integers(), max_size=2),
            st.dictionaries(st.sampled_from(["mass_kg", "length_min", "x"]),
                            st.one_of(st.text(max_size=3), st.booleans()), min_size=1)))
    return tomli_w.dumps(d).encode()


@FUZZ
@given(bad_morphology_text())
def test_bad_morphology_files_are_refused(raw):
    """`jumper model --morphology` (and every reader of morphology TOML) refuses bad files."""
    folder = _scratch()
    (folder / "m.toml").write_bytes(raw)
    assert_refused(["jumper", "model", "--morphology", folder / "m.toml", "--out",
                    folder / "model"])
    shutil.rmtree(folder, ignore_errors=True)


def _not_toml(raw: bytes) -> bool:
    """Whether ``raw`` is no TOML as a settings file is read: text mode, so a lone CR is a
    line break ('\r#v' is a comment line)."""
    import io
    import tomllib

    try:
        tomllib.loads(io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    return False


@st.composite
def bad_settings_text(draw):
    """A settings TOML with a mistyped field, an unknown field or a broken region."""
    import tomli_w

    from clamber.jumper.settings import OptimizationSettings

    kind = draw(st.sampled_from(["type", "unknown", "region", "bytes"]))
    if kind == "bytes":  # junk that is not TOML at all ('#' alone is an empty, valid file)
        return draw(st.binary(min_size=1, max_size=60).filter(_not_toml))
    if kind == "unknown":
        key = draw(st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
            lambda k: k not in OptimizationSettings.__dataclass_fields__))
        return tomli_w.dumps({key: 1}).encode()
    if kind == "region":
        value = draw(st.one_of(
            st.fixed_dictionaries({"angle_deg": st.sampled_from([0, 90, -5, 400])}),
            st.fixed_dictionaries({"A": st.lists(st.lists(st.integers(), max_size=3),
                                                 max_size=3), "b": st.just([1, 2, 3, 4])}),
            st.text(min_size=1, max_size=8).filter(lambda s: "\x00" not in s),
            st.integers()))
        return tomli_w.dumps({draw(st.sampled_from(["safe_region_front",
                                                    "safe_region_rear"])): value}).encode()
    from clamber.jumper.settings import BACKENDS, COLLOCATIONS

    key = draw(st.sampled_from(sorted(OptimizationSettings.__dataclass_fields__)))
    flag = isinstance(getattr(OptimizationSettings(), key), bool)
    valid = {"collocation": COLLOCATIONS, "backend": BACKENDS}.get(key, ())
    # a switch given true or false, or a named choice, is a valid file: never drawn
    value = draw(st.one_of(st.text(max_size=5), st.booleans(),
                           st.lists(st.text(max_size=2), min_size=1, max_size=2)).filter(
        lambda v: not (flag and isinstance(v, bool)) and v not in valid))
    return tomli_w.dumps({key: value}).encode()


@FUZZ
@given(bad_settings_text(), st.sampled_from(["optimize", "codesign"]))
def test_bad_settings_files_are_refused(raw, command):
    """`--settings` of optimize and codesign refuses a bad file before any solve."""
    folder = _scratch()
    (folder / "s.toml").write_bytes(raw)
    extra = ["--workers", "0", "--no-progress"] if command == "codesign" else []
    assert_refused(["jumper", command, "--settings", folder / "s.toml", "--out",
                    folder / "run", *extra])
    shutil.rmtree(folder, ignore_errors=True)


@st.composite
def bad_log_text(draw):
    """A telemetry log with one bad field, a dropped field, a time step backwards, or junk."""
    kind = draw(st.sampled_from(["token", "drop", "time", "junk", "header"]))
    if kind == "junk":
        return draw(st.binary(max_size=100))
    rows = [[f"{0.006 * k:.3f}"] + ["0.1"] * (len(LOG_COLUMNS) - 1) for k in range(15)]
    header = list(LOG_COLUMNS)
    r = draw(st.integers(0, len(rows) - 1))
    if kind == "token":
        rows[r][draw(st.integers(0, len(header) - 1))] = draw(st.one_of(
            st.sampled_from(["nan", "inf", "-inf", "", "x"]),
            st.text("abc,;'\"", min_size=1, max_size=4)))
    elif kind == "drop":
        rows[r].pop(draw(st.integers(0, len(header) - 1)))
    elif kind == "time":
        rows[r][0] = rows[max(r - 1, 0)][0] if r else "1.0"
    else:
        header[draw(st.integers(0, len(header) - 1))] = draw(st.text("xyz", max_size=3))
    return "\n".join(",".join(x) for x in [header, *rows]).encode()


@FUZZ
@given(bad_log_text(), st.booleans())
def test_bad_telemetry_logs_are_refused(raw, as_forces):
    """`jumper telemetry` refuses a bad joint log or force-plate file with rc 2, one line."""
    folder = _scratch()
    (folder / "bad.csv").write_bytes(raw)
    if as_forces:
        good = folder / "log.csv"
        rows = [[f"{0.006 * k:.3f}"] + ["0.1"] * (len(LOG_COLUMNS) - 1) for k in range(15)]
        good.write_text("\n".join(",".join(x) for x in [list(LOG_COLUMNS), *rows]))
        argv = ["jumper", "telemetry", good, "--forces", folder / "bad.csv"]
    else:
        argv = ["jumper", "telemetry", folder / "bad.csv"]
    assert_refused([*argv, "--no-figures"])
    shutil.rmtree(folder, ignore_errors=True)


@st.composite
def bad_trials_text(draw):
    """A hanging-weight trials CSV with one impossible trial, a broken line or junk."""
    kind = draw(st.sampled_from(["load", "angle", "held", "fields", "junk", "header"]))
    rows = [["0.4", "0", "1"], ["2.0", "120", "0"], ["0.8", "30", "1"]]
    header = "load,angle_deg,held"
    r = draw(st.integers(0, 2))
    if kind == "junk":
        return draw(st.binary(max_size=60))
    if kind == "load":
        rows[r][0] = draw(st.one_of(st.sampled_from(["0", "-1", "nan", "inf", "x", ""]),
                                    st.floats(max_value=0).map(repr)))
    elif kind == "angle":
        rows[r][1] = draw(st.one_of(st.sampled_from(["nan", "-inf", "x"]),
                                    st.floats(min_value=180, exclude_min=True,
                                              allow_infinity=False).map(repr)))
    elif kind == "held":
        rows[r][2] = draw(st.text("abcxyz2-", min_size=1, max_size=4).filter(
            lambda s: s not in ("n", "y", "no", "yes")))
    elif kind == "fields":
        rows[r] = rows[r][:draw(st.integers(1, 2))]
    else:
        header = draw(st.text("load,angle", max_size=12).filter(lambda h: h != header))
    return "\n".join([header, *(",".join(x) for x in rows)]).encode()


@FUZZ
@given(bad_trials_text())
def test_bad_safe_region_trials_are_refused(raw):
    """`jumper safe-region FILE` refuses a bad trials file naming the line."""
    folder = _scratch()
    (folder / "trials.csv").write_bytes(raw)
    assert_refused(["jumper", "safe-region", folder / "trials.csv", "--out", folder / "o"])
    shutil.rmtree(folder, ignore_errors=True)


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=200).map(lambda b: ("file", b)),
                 st.one_of(st.text(max_size=30), st.binary(max_size=30)).map(
                     lambda r: ("record", r)),
                 st.tuples(st.sampled_from(["trials", "jumps", "seed", "supply_voltage",
                                            "mass_tol"]),
                           st.one_of(NOT_A_NUMBER.filter(lambda v: v is not None),
                                     st.sampled_from([-1, -0.5, 1e9, 1e300]))).map(
                     lambda kv: ("study", kv))))
def test_damaged_run_folders_are_refused(robustness_run, damage):
    """`--resume` of a recorded study whose run.sqlite is junk, whose trials table holds a
    record that is not one (corrupt bytes included), or whose stored options are out of
    range or not numbers, is rc 2 with one line."""
    folder = _scratch()
    run = folder / "run"
    shutil.copytree(robustness_run, run)
    what, payload = damage
    if what == "file":
        (run / STORE_NAME).write_bytes(payload)
    elif what == "study":  # the options stored for the resume
        name, value = payload
        study = json.loads((run / "study.json").read_text())
        study[name] = value
        (run / "study.json").write_text(json.dumps(study))
    else:
        db = sqlite3.connect(run / STORE_NAME)
        with db:
            db.execute("UPDATE trials SET record = ?", (payload,))
        db.close()
    assert_refused(["jumper", "robustness", "--resume", run, "--workers", "0",
                    "--no-progress"])
    shutil.rmtree(folder, ignore_errors=True)
