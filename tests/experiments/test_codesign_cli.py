"""`clamber jumper codesign` and `sweep`: help, clear errors, JSON summaries."""

import json

import pytest

from clamber.cli import build_parser, main


@pytest.mark.parametrize("cmd", ["codesign", "sweep"])
def test_help_has_examples(cmd, capsys):
    """Both commands document themselves with examples."""
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["jumper", cmd, "--help"])
    assert e.value.code == 0
    assert "examples:" in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["codesign", "--popsize", "1", "--workers", "0"], "popsize"),
    (["codesign", "--generations", "0", "--workers", "0"], "generations"),
    (["codesign", "--workers", "-1"], "workers"),
    (["sweep", "--samples", "0", "--workers", "0"], "samples"),
    (["codesign", "--resume", "no/such/run", "--workers", "0"], "no run record"),
])
def test_bad_options_exit_2_with_the_option_named(argv, match, capsys, tmp_path):
    """Invalid options are ConfigErrors: exit code 2, message names the option."""
    assert main(["jumper", *argv, "--out", str(tmp_path / "o")]) == 2
    assert match in capsys.readouterr().err


def test_sweep_json_on_a_cheap_fitness(tmp_path, capsys, monkeypatch):
    """`sweep --json` ends with one JSON summary; the CSV has one row per sample."""
    import cheap

    from clamber.experiments import sweep

    monkeypatch.setattr(sweep, "evaluate_candidate", cheap.cheap_fitness)
    monkeypatch.setattr(sweep.run_sweep, "__defaults__",
                        (None, False, cheap.cheap_fitness, None))
    out = tmp_path / "sw"
    assert main(["jumper", "sweep", "--samples", "16", "--workers", "0", "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["samples"] == 16 and 0 < summary["convergence_rate"] < 1
    rows = (out / "sweep.csv").read_text().strip().splitlines()
    assert len(rows) == 17 and rows[0].startswith("sample,L1_mm")
    assert (out / "report.html").exists() and (out / "figures" / "sweep_trends.png").exists()


def test_results_page_embeds_every_section_and_figure(tmp_path):
    """write_page puts each section's table and figures (PNG and GIF) on one page, in
    order."""
    import matplotlib.pyplot as plt

    from clamber.report.html import Section, write_page

    fig, ax = plt.subplots()
    ax.plot([0, 1])
    png = tmp_path / "f.png"
    fig.savefig(png)
    plt.close(fig)
    gif = tmp_path / "a.gif"
    gif.write_bytes(b"GIF89a fake")
    page = write_page(tmp_path / "report.html", "demo",
                      [Section("Jump", {"speed": 0.6}, {"tracking": png}),
                       Section("Simulation", {"ready landings": 2}, {"climb": gif})])
    text = page.read_text()
    assert text.index("Jump") < text.index("Simulation")
    assert text.count("data:image/png;base64,") == 1 and "ready landings" in text
    assert text.count("data:image/gif;base64,") == 1


def test_robust_fitness_options_and_their_read_back(tmp_path):
    """--fitness robust sets the robust options, ten-jump climbs, one start, racing and the
    'jumps' score; --starts overrides the starts, --no-race the racing, --landing-score
    the score; a stored run's fitness reads back with the same fields."""
    import argparse

    from clamber.cli.codesign import _fitness_from_dict, codesign_config

    ns = argparse.Namespace(resume=None, fitness="robust", torque_limit=None, settings=None,
                            starts=None, generations=1, popsize=2, sigma0=None, seed=None,
                            cma_option=[], no_race=False, landing_score=None,
                            rear_spar=False)
    cfg = codesign_config(ns)
    f = cfg.fitness
    assert (f.landing_trials, f.landing_jumps, f.starts, f.landing_race) == (30, 10, 1, True)
    assert f.landing_score == "jumps"
    assert f.settings.release_force_max == 0.5 and f.settings.phase_duration_min[3] >= 0.1
    assert _fitness_from_dict(f.to_dict()).to_dict() == f.to_dict()
    ns.starts = 3
    assert codesign_config(ns).fitness.starts == 3
    ns.landing_score = "climbs"
    climbs = codesign_config(ns).fitness
    assert climbs.landing_score == "climbs"
    assert _fitness_from_dict(climbs.to_dict()).to_dict() == climbs.to_dict()
    assert not climbs.landing_rear_spar and "landing_rear_spar" not in climbs.to_dict()
    ns.landing_score, ns.rear_spar = "measured", True
    measured = codesign_config(ns).fitness
    assert measured.landing_score == "measured" and measured.landing_rear_spar
    assert _fitness_from_dict(measured.to_dict()).to_dict() == measured.to_dict()
    ns.landing_score, ns.rear_spar = None, False
    ns.no_race = True
    assert codesign_config(ns).fitness.landing_race is False
    ns.no_race = False
    ns.fitness, ns.starts = "fine", None
    assert codesign_config(ns).fitness.landing_trials == 0
