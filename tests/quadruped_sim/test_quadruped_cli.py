"""The `clamber quadruped` command: help and JSON summaries."""

import json
import subprocess
import sys

import pytest

from clamber.cli import build_parser


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clamber", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("sub", [[], ["climb"], ["trot"], ["compare"]])
def test_help(sub, capsys):
    """Every quadruped subcommand prints its help with examples."""
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["quadruped", *sub, "--help"])
    assert e.value.code == 0
    assert "examples:" in capsys.readouterr().out


def test_climb_json(tmp_path):
    """`climb --json` prints one JSON object with the success rate and its interval."""
    p = _run("quadruped", "climb", "--controller", "vmc", "--incline", "70", "--trials", "1",
             "--no-figures", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    for key in ("success_rate", "success_ci95", "max_tracking_error_mm", "mean_power_w",
                "peak_power_w", "cost_of_transport"):
        assert key in s
    assert (tmp_path / "trials.csv").exists()


def test_trot_json(tmp_path):
    """`trot --json` reports attitude error and power for each feet type."""
    p = _run("quadruped", "trot", "--terrain", "flat", "--feet", "both", "--cycles", "2",
             "--no-figures", "--json", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert set(s["results"]) == {"gripper@flat", "rubber@flat"}
    assert all(r["mean_power_w"] > 0 for r in s["results"].values())


def test_bad_input_is_a_clean_error():
    """An unknown controller is refused by argparse with exit status 2."""
    p = _run("quadruped", "climb", "--controller", "pid")
    assert p.returncode == 2 and "invalid choice" in p.stderr
