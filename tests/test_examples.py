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


def test_longer_phase_four_lands_more_often():
    """With a 120 ms minimum phase 4 the seeded study lands ready more often than the
    default optimum, at some cost in speed (the paper's hand-tuning, reproduced)."""
    out = json.loads(_run("jumper_landing_margin.py").strip().splitlines()[-1])
    default, longer = out["default_phase4"], out["phase4_min_120ms"]
    assert longer["landing_rate"] > default["landing_rate"]
    assert longer["speed_mps"] < default["speed_mps"]
