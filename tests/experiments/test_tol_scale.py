"""Robustness as a design target: the co-design's landing fitness at a tolerance scale."""

from pathlib import Path

import pytest

from clamber.cli.codesign import codesign_config
from clamber.cli.main import build_parser
from clamber.exceptions import ConfigError
from clamber.experiments.fitness import FitnessSettings
from clamber.experiments.landing_fitness import landing_fitness
from clamber.jumper.solution import TrajectorySolution

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "data" / "long_climb" / "solution.npz"


def test_codesign_takes_the_tolerance_scale_and_records_it():
    """`codesign --fitness robust --tol-scale 1.5` sets the landing fitness's scale, which
    the run's stored configuration keeps (and leaves out at the default 1)."""
    args = build_parser().parse_args(["jumper", "codesign", "--fitness", "robust",
                                      "--tol-scale", "1.5"])
    fitness = codesign_config(args).fitness
    assert fitness.landing_tol_scale == 1.5
    assert fitness.to_dict()["landing_tol_scale"] == 1.5
    assert "landing_tol_scale" not in FitnessSettings().to_dict()
    with pytest.raises(ConfigError, match="landing_tol_scale"):
        FitnessSettings(landing_tol_scale=-1.0)


def test_landing_fitness_at_zero_tolerance_plays_one_robot():
    """At tolerance scale 0 every trial draws the nominal robot with exact timing, so all
    trials end alike (the rate is 0 or 1); the scale is reported."""
    sol = TrajectorySolution.load(DESIGN)
    out = landing_fitness(sol, 3, jumps=2, rear_spar=True, tol_scale=0.0)
    assert out["tol_scale"] == 0.0
    assert out["climb_success_rate"] in (0.0, 1.0) and out["ready_rate"] in (0.0, 1.0)
