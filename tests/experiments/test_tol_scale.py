"""Robustness as a design target: `optimize --robust` and `codesign --fitness robust` at a
tolerance scale, the scatter that scale draws, and its record in the saved solution."""

import json
from pathlib import Path

import numpy as np
import pytest

from clamber.cli.codesign import codesign_config
from clamber.cli.main import build_parser, main
from clamber.cli.optimize import robust_scenarios
from clamber.exceptions import ConfigError
from clamber.experiments.fitness import FitnessSettings
from clamber.experiments.landing_fitness import landing_fitness, landing_study
from clamber.jumper.robust import ROBUST_SCENARIOS, design_tol_scale, with_design_tol_scale
from clamber.jumper.sim.robustness import sample_realization
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
    for bad in (-1.0, 0.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="landing_tol_scale"):
            FitnessSettings(landing_tol_scale=bad)


@pytest.mark.parametrize("argv", [
    ["jumper", "optimize", "--robust", "--tol-scale", "0"],
    ["jumper", "optimize", "--robust", "--tol-scale", "-1"],
    ["jumper", "optimize", "--robust", "--tol-scale", "nan"],
    ["jumper", "optimize", "--robust", "--tol-scale", "inf"],
    ["jumper", "optimize", "--robust", "--tol-scale", "4.5"],
    ["jumper", "optimize", "--robust", "--tol-scale", "wide"],
    ["jumper", "optimize", "--tol-scale", "1.5"],
    ["jumper", "codesign", "--fitness", "robust", "--tol-scale", "0"],
    ["jumper", "codesign", "--fitness", "robust", "--tol-scale", "nan"],
    ["jumper", "codesign", "--fitness", "fine", "--tol-scale", "1.5"],
])
def test_a_tolerance_scale_that_cannot_be_held_is_refused(argv, tmp_path, capsys):
    """A scale that is not finite, not above 0, past 4, or given without the robust
    objective it sets: exit status 2, one line naming --tol-scale, no solution written."""
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--tol-scale" in err[0]
    assert not list(out.glob("*.npz")) and not list(out.glob("*.db"))


def test_landing_fitness_at_a_wider_scale_draws_wider_scatter():
    """The robust fitness's robots at scale 1.5 scatter 1.5 times as far from the nominal
    masses, lengths and initial angles as at 1 (same seeds): the scale reaches the draws."""
    sol = TrajectorySolution.load(DESIGN)
    nominal = sol.morphology.parameters()

    def spread(scale: float) -> np.ndarray:
        study = landing_study(sol, 20, jumps=1, rear_spar=True, tol_scale=scale)
        cond = study.conditions[0]
        draws = [sample_realization(sol, cond.config, cond.tolerances, s) for s in study.seeds]
        mass = np.array([r.parameters[4:9] / nominal[4:9] - 1 for r in draws])
        length = np.array([r.parameters[0:4] - nominal[0:4] for r in draws])
        angle = np.array([r.q0_offset[2:6] for r in draws])
        return np.array([np.abs(mass).max(), np.abs(length).max(), np.abs(angle).max()])

    ratio = spread(1.5) / spread(1.0)
    np.testing.assert_allclose(ratio, 1.5, rtol=1e-6)


def test_robust_clearance_scenario_widens_with_the_scale():
    """`optimize --robust --tol-scale X` lightens the scenario's shoulder motor by twice the
    mass tolerance robustness draws at X: at 1 the documented 12.5 %, at 1.5 more."""
    assert robust_scenarios(1.0) == ROBUST_SCENARIOS
    m2 = {x: robust_scenarios(x).scales[0][1] for x in (1.0, 1.5)}
    assert m2[1.0] == pytest.approx(0.875)
    assert m2[1.5] == pytest.approx(1 - 2 * 1.5 * 0.0625) and m2[1.5] < m2[1.0]


def test_optimize_robust_records_its_scale_and_robustness_reports_it(tmp_path, monkeypatch,
                                                                     capsys):
    """`optimize --robust --tol-scale 1.5` solves with the 1.5x clearance scenario and
    saves a solution that records 1.5; `robustness` on that file reports it next to the
    scale it drew robots from (the optimizer is replaced by a stored optimum)."""
    stored = TrajectorySolution.load(DESIGN)
    seen = {}

    def fake_optimize_robust(morph, settings, resolution, guess, seed, scenarios):
        seen["scenarios"] = scenarios
        return stored

    monkeypatch.setattr("clamber.jumper.robust.optimize_robust", fake_optimize_robust)
    out = tmp_path / "robust"
    assert main(["-q", "jumper", "optimize", "--robust", "--tol-scale", "1.5", "--no-figures",
                 "--out", str(out), "--json"]) in (0, 1)
    summary = json.loads(capsys.readouterr().out)
    assert seen["scenarios"] == robust_scenarios(1.5)
    assert summary["design_tol_scale"] == 1.5
    saved = TrajectorySolution.load(out / "solution.npz")
    assert design_tol_scale(saved) == 1.5
    assert design_tol_scale(stored) is None
    assert main(["-q", "jumper", "robustness", str(out / "solution.npz"), "--trials", "1",
                 "--tol-scale", "1.2", "--workers", "0", "--out", str(tmp_path / "r"),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["design_tol_scale"] == 1.5 and report["tol_scale"] == 1.2


def test_a_bad_recorded_scale_is_a_clear_error(tmp_path):
    """A solution file whose history records a scale out of range is refused by name."""
    sol = with_design_tol_scale(TrajectorySolution.load(DESIGN), 1.5)
    sol.history[-1]["design_tol_scale"] = -2.0
    with pytest.raises(ConfigError, match="design_tol_scale"):
        design_tol_scale(sol)


def test_landing_fitness_at_zero_tolerance_plays_one_robot():
    """At tolerance scale 0 every trial draws the nominal robot with exact timing, so all
    trials end alike (the rate is 0 or 1); the scale is reported."""
    sol = TrajectorySolution.load(DESIGN)
    out = landing_fitness(sol, 3, jumps=2, rear_spar=True, tol_scale=0.0)
    assert out["tol_scale"] == 0.0
    assert out["climb_success_rate"] in (0.0, 1.0) and out["ready_rate"] in (0.0, 1.0)


def test_margin_pareto_figure_joins_exactly_the_non_dominated_designs():
    """Each panel of the speed-against-climbs figure joins the designs no other beats in
    both expected speed and ten-jump climbs at that scale, in order of speed."""
    from clamber.report.codesign import plot_margin_pareto

    def point(speed, rate):
        return {"expected_speed_mps": speed, "landing_rate": rate,
                "landing_interval": [max(rate - 0.1, 0.0), min(rate + 0.1, 1.0)]}

    points = {"fast": {"1": point(0.55, 0.6), "1.5": point(0.50, 0.2)},
              "safe": {"1": point(0.45, 0.9), "1.5": point(0.44, 0.6)},
              "worse": {"1": point(0.44, 0.5), "1.5": point(0.52, 0.3)}}
    fig = plot_margin_pareto(points)
    joined = [[tuple(xy) for xy in ax.lines[0].get_xydata()] for ax in fig.axes]
    assert joined == [[(0.45, 0.9), (0.55, 0.6)], [(0.44, 0.6), (0.52, 0.3)]]
    assert [ax.get_title() for ax in fig.axes] == ["tolerances x1", "tolerances x1.5"]
