"""The command line on bad input: rc 2 and one line on stderr; strict JSON on stdout;
--resume and --out exclusive; the demo keeps to its own folder; -q silences progress."""

import json
import math
import sqlite3

import pytest

from clamber.cli import main
from clamber.cli.options import strict_json
from clamber.jumper.seed import SEED_PATH
from clamber.storage.runs import STORE_NAME

SEED = str(SEED_PATH)


def _fails_with(capsys, argv, match):
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert match in err, err


@pytest.mark.parametrize("argv, match", [
    (["quadruped", "climb", "--rate", "nan"], "--rate"),
    (["quadruped", "climb", "--rate", "inf"], "--rate"),
    (["quadruped", "compare", "--workers", "-1"], "--workers"),
    (["quadruped", "climb", "--wall", "rock", "--seat-tolerance", "-5"], "--seat-tolerance"),
    (["quadruped", "climb", "--wall", "rock", "--replace-missed", "9"], "--replace-missed"),
    (["quadruped", "climb", "--wall", "rock", "--map-frame", "camera"], "--map-frame"),
    (["jumper", "robustness", SEED, "--length-tol", "1"], "--length-tol"),
    (["jumper", "export", SEED, "--supply-voltage", "1e30"], "(0, 48] V"),
    (["jumper", "simulate", SEED, "--foot-radius", "1e6"], "--foot-radius"),
    (["jumper", "optimize", "--seed", "-3"], "--seed"),
    (["jumper", "codesign", "--seed", "-1"], "--seed"),
    (["jumper", "optimize", "--torque-limit", "nan"], "--torque-limit"),
    (["jumper", "export", "nowhere.npz"], "missing"),
    (["jumper", "simulate", "."], "folder, expected a file"),
    (["jumper", "optimize", "--morphology", "."], "folder, expected a file"),
    (["jumper", "optimize", "--settings", "no/such.toml"], "does not exist"),
])
def test_bad_options_exit_2_with_one_line(capsys, argv, match):
    """Non-finite, out-of-range or negative numbers and folders given as files are refused
    before any work, with rc 2 and one line naming the option."""
    _fails_with(capsys, argv, match)


def test_an_existing_file_as_out_is_refused(capsys, tmp_path):
    """`--out FILE` (and an --out under a file) is rc 2, one line, for every command."""
    f = tmp_path / "file"
    f.write_text("x")
    for argv in (["jumper", "export", SEED], ["jumper", "model"],
                 ["jumper", "safe-region"], ["quadruped", "climb"], ["demo"]):
        _fails_with(capsys, [*argv, "--out", str(f)], "is a file")
        _fails_with(capsys, [*argv, "--out", str(f / "sub")], "is a file")


def test_resume_with_out_is_an_error(capsys, tmp_path):
    """`--resume X --out Y` would silently ignore --out: it is refused."""
    run = tmp_path / "run"
    run.mkdir()
    _fails_with(capsys, ["jumper", "robustness", "--resume", str(run), "--out",
                         str(tmp_path / "y"), "--workers", "0"], "drop --out")


def test_strict_json_writes_null_for_non_finite_values():
    """NaN and infinities become null, NumPy values plain numbers; the text parses strictly."""
    import numpy as np

    text = strict_json({"a": math.nan, "b": [np.float64(np.inf), np.int64(3)],
                        "c": np.array([1.0, np.nan])})
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == {
        "a": None, "b": [None, 3], "c": [1.0, None]}


def test_simulate_json_is_strict_and_quiet_mode_silences_progress(capsys, tmp_path):
    """A failed landing has no height gain: --json prints null, never NaN; -q leaves
    stderr empty, the default prints progress there (also with --json)."""
    argv = ["jumper", "simulate", SEED, "--jumps", "1", "--no-figures", "--json",
            "--foot-radius", "0.04", "--out", str(tmp_path)]
    assert main(argv) == 0
    cap = capsys.readouterr()
    summary = json.loads(cap.out, parse_constant=lambda c: pytest.fail(c))
    assert summary["jumps"][0]["height_gain"] is None
    assert "simulating" in cap.err
    assert main(["-q", *argv]) == 0
    assert capsys.readouterr().err == ""


def test_corrupt_trials_table_is_a_clean_error(capsys, tmp_path):
    """Undecodable bytes inside a recorded trial make --resume fail with rc 2, one line."""
    run = tmp_path / "run"
    assert main(["jumper", "robustness", SEED, "--trials", "2", "--workers", "0",
                 "--no-progress", "--out", str(run), "--json"]) == 0
    capsys.readouterr()
    db = sqlite3.connect(run / STORE_NAME)
    with db:
        db.execute("UPDATE trials SET record = CAST(x'7b22ff' AS TEXT)")
    db.close()
    _fails_with(capsys, ["jumper", "robustness", "--resume", str(run), "--workers", "0",
                         "--no-progress"], "trial")


def test_the_demo_refuses_a_folder_it_did_not_write(capsys, tmp_path):
    """`clamber demo --out DIR` on a non-empty folder without the demo's mark is refused and
    nothing there is touched (the co-design's own out/codesign stays)."""
    (tmp_path / "codesign").mkdir()
    (tmp_path / "codesign" / "run.sqlite").write_text("someone's run")
    _fails_with(capsys, ["demo", "--out", str(tmp_path)], "did not write")
    assert (tmp_path / "codesign" / "run.sqlite").read_text() == "someone's run"


@pytest.mark.parametrize("text", ["x = 1\n", "[1, 2]", '{"address": 5}', "", "{" * 5000])
def test_a_non_scheduler_file_fails_fast(tmp_path, text):
    """A --scheduler-file that is not a Dask scheduler file (TOML, a JSON list, no
    address, empty, deeply nested) is a ConfigError within a second, not a 40 s wait."""
    import time

    from clamber.exceptions import ConfigError
    from clamber.parallel.dask import DaskEvaluator

    path = tmp_path / "scheduler.json"
    path.write_text(text)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="not a Dask scheduler file"):
        DaskEvaluator(scheduler_file=path)
    assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize("text, match", [
    ("[1, 2, 3]", "object \"gains\""),
    ('{"gains": {"pid": {"kp": 1}}}', "not a tuned controller"),
    ('{"gains": {"qwbc": {"body_kp": 1}}}', "exactly"),
    ('{"gains": {"qwbc": {"body_kp": 1e300, "body_kd": 1, "clik_gain": 1}}}', "body_kp"),
    ('{"gains": {"qwbc": {"body_kp": 1e-9, "body_kd": 1, "clik_gain": 1}}}', "body_kp"),
    ('{"gains": {"qwbc": {"body_kp": "x", "body_kd": 1, "clik_gain": 1}}}', "number"),
    ("[" * 100000, "not valid JSON"),
])
def test_a_gains_file_is_checked(tmp_path, text, match):
    """`compare --gains`: a JSON list, an unknown controller, missing gains, huge, tiny or
    non-numeric multipliers and absurdly nested JSON are ConfigErrors naming the field."""
    from clamber.cli.quadruped_compare import _read_gains
    from clamber.exceptions import ConfigError

    path = tmp_path / "gains.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        _read_gains(path)


def test_the_documented_gains_file_reads():
    """The gains the docs ship (docs/quadruped_gains.json) pass the same checks."""
    from pathlib import Path

    from clamber.cli.quadruped_compare import _read_gains

    gains = _read_gains(Path(__file__).parents[1] / "docs" / "quadruped_gains.json")
    assert set(gains) == {"qwbc", "vmc", "clik"}


def test_a_link_inside_an_output_folder_is_refused(tmp_path, capsys):
    """An output folder clamber wrote, holding a link planted since, is refused (rc 2, one
    line) before anything is written, and the file the link points to is untouched."""
    out = tmp_path / "model"
    assert main(["jumper", "model", "--out", str(out)]) == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "scene.xml").unlink()
    (out / "scene.xml").symlink_to(victim)
    capsys.readouterr()
    assert main(["jumper", "model", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "is a link" in err and len(err.strip().splitlines()) == 1
    assert victim.read_text() == "precious"
