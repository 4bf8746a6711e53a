"""The clamber command: help everywhere, JSON summaries, clear errors."""

import json
import subprocess
import sys

import pytest

from clamber.cli import build_parser, main


@pytest.mark.parametrize("argv", [[], ["jumper"], ["jumper", "optimize"], ["demo"]])
def test_every_command_has_help_with_examples(argv, capsys):
    """`--help` exits 0 and shows an examples section."""
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args([*argv, "--help"])
    assert e.value.code == 0
    assert "examples:" in capsys.readouterr().out


def test_optimize_json_summary(tmp_path):
    """`clamber jumper optimize --json` prints one JSON object with the promised keys."""
    out = subprocess.run(
        [sys.executable, "-m", "clamber", "jumper", "optimize", "--resolution", "coarse",
         "--json", "--no-figures", "--out", str(tmp_path)],
        capture_output=True, text=True, check=True,
    ).stdout.strip().splitlines()
    summary = json.loads(out[-1])
    for key in ("status", "speed_mps", "speed_bl_per_s", "period_s", "height_m",
                "solve_time_s", "iterations", "solution_path"):
        assert key in summary
    assert summary["status"] in ("converged", "acceptable")
    assert (tmp_path / "solution.npz").exists() and (tmp_path / "solution.json").exists()


def test_bad_morphology_file_is_a_clear_error(tmp_path, capsys):
    """An invalid morphology exits 2 and names the offending field."""
    p = tmp_path / "bad.toml"
    p.write_text("lengths_m = [0.2, 0.08, 0.08, 0.08]\nmasses_kg = [0.01, 0.0833333333, "
                 "0.0833333333, 0.0833333334, 0.01]\n")
    assert main(["jumper", "optimize", "--morphology", str(p),
                 "--out", str(tmp_path / "out")]) == 2
    assert "L1" in capsys.readouterr().err
