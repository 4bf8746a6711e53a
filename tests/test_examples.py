"""Every example runs in its fast mode and shows what it claims."""

import json
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(name: str) -> str:
    return subprocess.run([sys.executable, str(EXAMPLES / name), "--quick"], check=True,
                          capture_output=True, text=True, timeout=600).stdout


def test_quadruped_qwbc_example_runs():
    """The Q-WBC example finishes and prints its results."""
    assert _run("quadruped_qwbc.py").strip()


def test_robust_jump_with_closed_loop_catching_lands_more_often():
    """In the calibrated simulator the robust optimum with closed-loop catching lands ready
    more often than the default optimum played open loop (Wilson intervals disjoint), and
    pays for it in planned speed."""
    out = json.loads(_run("jumper_robust_landing.py").strip().splitlines()[-1])
    default, robust = out["default_open_loop"], out["robust_closed_loop"]
    assert robust["landing_interval"][0] > default["landing_interval"][1]
    assert robust["speed_mps"] < default["speed_mps"]
