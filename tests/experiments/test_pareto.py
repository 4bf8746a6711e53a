"""The co-design report's Pareto figure: every evaluated design's speed and ready rate."""

import json

import cheap

from clamber.experiments.codesign import CodesignSettings, run_codesign
from clamber.experiments.fitness import FitnessSettings
from clamber.report.codesign import landing_points, pareto_front
from clamber.report.html import write_codesign_outputs


def test_pareto_front_keeps_exactly_the_non_dominated_points():
    """A point survives unless another is at least as good in both coordinates and
    better in one (ties both survive)."""
    pts = [(0.1, 0.9), (0.5, 0.5), (0.4, 0.4), (0.9, 0.1), (0.5, 0.5), (0.2, 0.2)]
    assert pareto_front(pts) == [0, 1, 3, 4]


def test_robust_run_report_has_the_pareto_figure_of_every_design(tmp_path):
    """A co-design scored with a landing fitness writes pareto.png and puts it in
    report.html, plotting every converged design; the notes name the fitness."""
    cfg = CodesignSettings(generations=2, popsize=4, sigma0=0.8, seed=3,
                         fitness=FitnessSettings(landing_trials=5, landing_jumps=10))
    run = run_codesign(cfg, tmp_path / "run", fitness_fn=cheap.landing_fitness)
    summary = write_codesign_outputs(run)
    assert (tmp_path / "run" / "figures" / "pareto.png").stat().st_size > 1000
    html = (tmp_path / "run" / "report.html").read_text()
    assert "pareto" in html and "10-jump climbs" in html
    done = landing_points(run.trials)
    assert len(done) == sum(t.state.value == "complete" for t in run.trials) > 0
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["cpu_seconds_per_evaluation"] > 0
    assert summary["best_ready_rate"] == max(done, key=lambda t: t.fitness).info["ready_rate"]
