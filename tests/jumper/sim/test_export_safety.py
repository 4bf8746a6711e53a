"""The hardware export checks the robot's limits, never the solution's own, and refuses
solves that are not verified unless forced."""

import dataclasses
import json

import pytest

from clamber.cli import main
from clamber.jumper.seed import seed_solution
from clamber.jumper.solution import SolveStatus

#: A replay drift well inside the 5 mm tolerance: a solution "checked" for these tests.
CHECKED = {"max_position_drift_m": 0.001}


def _save(tmp_path, name, **changes):
    """The packaged seed with ``changes``, saved as ``name``.npz/.json; its path."""
    sol = dataclasses.replace(seed_solution(), **changes)
    return sol.save(tmp_path / name)


def _run(capsys, argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_limit_claimed_by_the_file_does_not_pass_the_export(tmp_path, capsys):
    """Torques four times the paper's 0.25 N m, in a file whose settings claim a 5 N m
    limit, are refused against the paper's motors (rc 2, one line naming the torque and
    the robot's limit) and nothing is written; a file claiming 1e300 N m is refused as
    out of range before anything is resampled."""
    base = seed_solution()
    big = _save(tmp_path, "bypass", tau=base.tau * 4.0, accuracy=CHECKED,
                settings=base.settings.with_(torque_limit=5.0))
    rc, out, err = _run(capsys, ["jumper", "export", big, "--supply-voltage", "48",
                                 "--out", tmp_path / "out"])
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "torque" in err and "+-0.25 N m" in err
    assert not (tmp_path / "out" / "reference.bin").exists()
    meta = json.loads(big.with_suffix(".json").read_text())
    meta["settings"]["torque_limit"] = 1e300
    big.with_suffix(".json").write_text(json.dumps(meta))
    rc, out, err = _run(capsys, ["jumper", "export", big, "--out", tmp_path / "out"])
    assert rc == 2 and "torque_limit" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "reference.bin").exists()


def test_a_hardware_description_sets_the_limits_and_the_json_names_them(tmp_path, capsys):
    """With a hardware description allowing 2 N m on 48 V the same torques export, and
    the JSON (and export.json) name the limits checked and where they came from."""
    base = seed_solution()
    big = _save(tmp_path, "strong", tau=base.tau * 4.0, accuracy=CHECKED)
    hw = tmp_path / "robot.toml"
    hw.write_text("torque_limit = 2.0\njoint_speed_limit = 40\n[motor]\n"
                  "supply_voltage = 48\n")
    rc, out, err = _run(capsys, ["jumper", "export", big, "--hardware", hw, "--json",
                                 "--out", tmp_path / "out"])
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["limits_checked"]["torque_nm"] == 2.0
    assert summary["limits_checked"]["feed_forward_voltage_v"] == 48.0
    assert summary["limits_source"] == str(hw)
    record = json.loads((tmp_path / "out" / "export.json").read_text())
    assert record["limits_checked"] == summary["limits_checked"]


@pytest.mark.parametrize("changes, why", [
    ({"status": SolveStatus.FAILED, "accuracy": CHECKED}, "failed"),
    ({"accuracy": {}}, "not checked"),
    ({"accuracy": {"max_position_drift_m": 0.02}}, "drift"),
])
def test_unverified_solves_need_force(tmp_path, capsys, changes, why):
    """A failed solve, one never replayed and one whose replay drifted are refused with
    rc 2 and nothing written; --force exports them and the record says it was forced."""
    path = _save(tmp_path, "sol", **changes)
    rc, out, err = _run(capsys, ["jumper", "export", path, "--out", tmp_path / "a"])
    assert rc == 2 and why in err and "--force" in err
    assert not (tmp_path / "a" / "reference.bin").exists()
    rc, out, err = _run(capsys, ["jumper", "export", path, "--force", "--json",
                                 "--out", tmp_path / "b"])
    assert rc == 0, err
    assert json.loads(out)["solution"].startswith("forced")


def test_a_bad_hardware_description_is_refused(tmp_path, capsys):
    """Unknown fields and absurd limits in a hardware description are rc 2, one line."""
    sol = _save(tmp_path, "sol", accuracy=CHECKED)
    for text, match in (("torque_limit = 1e300\n", "torque_limit"),
                        ("wheels = 4\n", "unknown"),
                        ("[motor]\nsupply_voltage = 1e300\n", "supply_voltage")):
        hw = tmp_path / "hw.toml"
        hw.write_text(text)
        rc, out, err = _run(capsys, ["jumper", "export", sol, "--hardware", hw,
                                     "--out", tmp_path / "o"])
        assert rc == 2 and match in err and len(err.strip().splitlines()) == 1, err


def test_an_output_that_is_a_link_is_not_written_through(tmp_path, capsys):
    """A reference.csv in the output folder that links elsewhere makes the export exit 2
    naming the link, and the file it points to keeps its content."""
    sol = _save(tmp_path, "sol", accuracy=CHECKED)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, ["jumper", "export", sol, "--out", out])
    assert rc == 0, err
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "reference.csv").unlink()
    (out / "reference.csv").symlink_to(victim)
    rc, _, err = _run(capsys, ["jumper", "export", sol, "--out", out])
    assert rc == 2 and "is a link" in err and len(err.strip().splitlines()) == 1
    assert victim.read_text() == "precious"
