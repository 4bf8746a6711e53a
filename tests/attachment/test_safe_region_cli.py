"""`clamber jumper safe-region`: trial files in, a fitted region and figures out."""

import json

import pytest

from clamber.cli import main
from clamber.cli.gripper import read_trials, run
from clamber.exceptions import FileFormatError


def test_fit_from_a_trial_file_excludes_every_failed_trial(tmp_path):
    """A fitted region from a CSV contains no failed trial and is written with its plots."""
    p = tmp_path / "trials.csv"
    p.write_text("load,angle_deg,held\n0.4,0,1\n0.8,0,1\n2.0,0,1\n0.8,20,1\n0.8,60,0\n"
                 "2.0,30,0\n0.4,120,0\n")
    summary = run(p, "kg", tmp_path / "out")
    assert summary["trials"] == 7
    assert summary["failed_inside"] == 0
    assert summary["held_inside"] >= 3
    region = json.loads((tmp_path / "out" / "safe_region.json").read_text())
    assert len(region["A"]) == 2 and region["labels"] == ["sector", "max_load"]
    for path in summary["figures"].values():
        assert (tmp_path / "out" / path.split("/")[-1]).stat().st_size > 0


@pytest.mark.parametrize("text, where", [
    ("mass,angle,held\n1,0,1\n", ":1:"),
    ("load,angle_deg,held\n1,0,1\n1,zero,1\n", ":3:"),
    ("load,angle_deg,held\n1,0,maybe\n", ":2:"),
    ("load,angle_deg,held\n1,0\n", ":2:"),
    ("load,angle_deg,held\n", "no trials"),
])
def test_malformed_trial_files_name_the_line(tmp_path, text, where):
    """Bad headers, fields and flags raise FileFormatError naming the line."""
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(FileFormatError, match=where):
        read_trials(p, "kg")


def test_cli_json_summary(tmp_path, capsys):
    """With no file the command fits synthetic trials and prints one JSON object."""
    assert main(["jumper", "safe-region", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["failed_inside"] == 0 and 0 < summary["sector_angle_deg"] < 90
