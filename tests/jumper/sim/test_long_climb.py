"""Long-climb summaries: per-jump rate, height climbed, recovered misses, recorded hardware."""

import json
from pathlib import Path

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.calibration import calibrated_config, calibrated_tolerances
from clamber.experiments.robustness import robustness
from clamber.jumper.sim.gripper import FootPivot
from clamber.jumper.sim.settings import hardware_options, with_hardware
from clamber.jumper.solution import TrajectorySolution
from clamber.report.simulation import plot_height_climbed

DATA = Path(__file__).resolve().parents[3] / "docs" / "data"


@pytest.fixture(scope="module")
def design() -> TrajectorySolution:
    return TrajectorySolution.load(DATA / "landing_design_spar" / "solution.npz")


def test_long_climb_summary_counts_jumps_heights_and_recoveries(design):
    """The per-jump ready rate is the ready landings over the jumps played, inside its
    Wilson interval; the height quartiles are ordered and bound by the trials' own climbs;
    the recovered rear misses are the missed jumps that ended ready (forced here in jump
    1 of every trial, so each trial that reached it counts one miss)."""
    cfg = calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar(),
                            rear_miss_jumps=(1,))
    res = robustness(design, 4, seed=3, jumps=3, config=cfg, tolerances=calibrated_tolerances())
    s = res.summary()
    ready = sum(t.metrics["ready_jumps"] for t in res.trials)
    played = sum(t.metrics["jumps_completed"] for t in res.trials)
    assert s["jumps_played"] == played
    assert s["per_jump_ready_rate"] == pytest.approx(ready / played)
    low, high = s["per_jump_ready_interval"]
    assert low <= s["per_jump_ready_rate"] <= high
    h = s["height_climbed_m"]
    climbed = [t.metrics["climbed_m"] for t in res.trials]
    assert h["min"] <= h["q1"] <= h["median"] <= h["q3"] <= h["max"]
    assert h["min"] == pytest.approx(min(climbed)) and h["max"] == pytest.approx(max(climbed))
    reached = sum(t.metrics["jumps_completed"] >= 2 for t in res.trials)
    assert s["rear_misses"] >= reached > 0
    assert 0 < s["recovered_rear_misses"] <= s["rear_misses"]
    assert s["mean_recovery_time_s"] > 0
    json.dumps(s, allow_nan=False)  # strict JSON: undefined values are null


def test_hardware_options_survive_save_and_load_and_are_checked(design, tmp_path):
    """A solution records the hardware it needs in its history: the record survives a save
    and a load; unknown options or non-boolean values are refused by name."""
    assert hardware_options(design) == {}
    path = with_hardware(design, rear_spar=True).save(tmp_path / "s")
    assert hardware_options(TrajectorySolution.load(path)) == {"rear_spar": True}
    with pytest.raises(ConfigError, match="wings"):
        with_hardware(design, wings=True)
    with pytest.raises(ConfigError, match="rear_spar"):
        with_hardware(design, rear_spar=1)


def test_the_long_climb_design_applies_its_rear_spar_without_flags(tmp_path):
    """`clamber jumper robustness docs/data/long_climb/solution.npz` plays with the rear
    spar the solution records and the re-catch on; --no-recovery turns the latter off."""
    from clamber.cli.main import main

    sol = DATA / "long_climb" / "solution.npz"
    for extra, recovery in (([], True), (["--no-recovery"], False)):
        out = tmp_path / f"run{recovery}"
        code = main(["-q", "jumper", "robustness", str(sol), "--controller", "closed-loop",
                     "--jumps", "2", "--trials", "1", "--out", str(out), "--json", *extra])
        assert code == 0
        study = json.loads((out / "study.json").read_text())
        assert study["rear_spar"] is True and study["recovery"] is recovery


def test_height_climbed_figure_ends_at_the_finished_share():
    """The survival curve starts at 1 and its last step is the share of climbs that
    finished all their jumps."""
    counts = np.array([0, 3, 10, 10, 7])
    fig = plot_height_climbed({"x": (counts, 10)}, 0.2)
    line = fig.axes[0].lines[0]
    y = line.get_ydata()
    assert y[0] == 1.0 and y[-1] == pytest.approx(np.mean(counts >= 10))


def test_the_demo_shows_the_design_that_climbs_furthest(tmp_path, monkeypatch):
    """The demo's simulation step races its landing design against the stored long-climb
    design and shows the one that climbs higher on average before its first failed landing,
    with its long-climb figure; both designs' summaries are reported."""
    from clamber.cli import sim as sim_cli

    monkeypatch.setattr(sim_cli, "DEMO_CLIMBS", (3, 3))
    landing = DATA / "landing_design_spar" / "solution.npz"
    out, sections = sim_cli.demo_step(tmp_path, {"landing_solution": str(landing)}, True)
    assert set(out["long_climb"]) == {str(landing), str(sim_cli.LONG_CLIMB)}
    mean = {k: v["height_climbed_m"]["mean"] for k, v in out["long_climb"].items()}
    assert mean[out["simulated_solution"]] == max(mean.values())
    assert Path(out["simulation_figures"]["height_climbed"]).exists()
    assert sections and "climbs furthest" in sections[0].title


def test_miss_origins_count_every_trial_and_bound_the_areas(design):
    """Each one-jump trial lands ready, misses a gripper or fails otherwise, so the counts
    add up to at most the trials; every reported area under the ROC curve lies in [0, 1]
    and is listed from the most to the least separating feature."""
    from clamber.experiments.robustness import FLIGHT_FEATURES, ORIGIN_FEATURES, miss_origins

    cfg = calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar())
    out = miss_origins(design, 12, seed=1, config=cfg, tolerances=calibrated_tolerances(2.0))
    assert out["ready"] + out["front_misses"] + out["rear_misses"] <= out["trials"] == 12
    for name in ("front", "rear"):
        if f"{name}_auc" in out:
            auc = out[f"{name}_auc"]
            assert set(auc) == {*ORIGIN_FEATURES, *FLIGHT_FEATURES}
            assert all(0.0 <= a <= 1.0 for a in auc.values())
            spread = [abs(a - 0.5) for a in auc.values()]
            assert spread == sorted(spread, reverse=True)


def test_flight_features_of_the_nominal_jump_follow_the_plan(design):
    """Played on the nominal robot without tolerances, the jump takes off within 5 ms of the
    plan and its front foot makes its closest approach within 10 ms of the planned catch,
    within 15 mm of the planned catch point, moving into the wall: the features read the
    front foot from the logged state with the right kinematics."""
    from clamber.experiments.robustness import flight_features
    from clamber.jumper.sim.simulate import simulate

    cfg = calibrated_config(controller="closed-loop", pivot=FootPivot().with_rear_spar())
    res = simulate(design, 1, cfg)
    assert res.jumps[0].ready
    t = res.column("t")
    off = next(te for te, g, e in res.events if g == "rear" and e in ("release", "tear"))
    f = flight_features(res, design, int(np.searchsorted(t, off)))
    assert abs(f["takeoff_time_error_s"]) < 0.005 and abs(f["flight_time_error_s"]) < 0.010
    assert abs(f["front_gap_m"]) < 0.015 and abs(f["front_height_error_m"]) < 0.015
    assert f["front_normal_speed_mps"] > 0.3
