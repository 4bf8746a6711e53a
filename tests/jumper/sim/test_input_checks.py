"""Hand-off and analysis refuse what they cannot use: NaN references, empty or reversed
jumps, motor fits without voltage, unstable simulations."""

import dataclasses

import numpy as np
import pytest

from clamber.exceptions import ConfigError, ExportError, FileFormatError
from clamber.experiments.robustness import RobustnessCondition, robustness_trial
from clamber.experiments.study import TrialTask
from clamber.failures import FailureReason
from clamber.jumper.seed import seed_solution
from clamber.jumper.sim.export import export_reference
from clamber.jumper.sim.robustness import Tolerances
from clamber.jumper.sim.settings import SimulationSettings
from clamber.jumper.sim.simulate import simulate
from clamber.jumper.sim.telemetry import LOG_COLUMNS, load_and_analyze, write_log
from clamber.sim_stability import UnstableSimulation


def _with(**changes):
    return dataclasses.replace(seed_solution(), **changes)


@pytest.mark.parametrize("array, index", [("q", (10, 4)), ("tau", (30, 1)), ("qd", (5, 3))])
def test_export_refuses_nan_samples_and_writes_nothing(tmp_path, array, index):
    """A NaN joint angle, torque or speed in the solution is an ExportError (NaN > limit is
    False, so a plain limit test lets it through) and no file is written."""
    a = getattr(seed_solution(), array).copy()
    a[index] = np.nan
    with pytest.raises(ExportError, match=r"nan .* not within the limit"):
        export_reference(_with(**{array: a}), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_export_refuses_empty_and_time_reversed_jumps(tmp_path):
    """Zero or negative phase durations and time running backwards are refused."""
    sol = seed_solution()
    with pytest.raises(ExportError, match="phase durations"):
        export_reference(_with(phase_durations=np.zeros(5)), tmp_path / "a")
    with pytest.raises(ExportError, match="phase durations"):
        export_reference(_with(phase_durations=-sol.phase_durations), tmp_path / "b")
    with pytest.raises(ExportError, match="time"):
        export_reference(_with(t=sol.t[::-1].copy()), tmp_path / "c")
    assert not any((tmp_path / n).exists() for n in "abc")


def test_an_unstable_simulation_is_an_error():
    """A 1 km gripper makes MuJoCo diverge (BADQACC, after which MuJoCo resets the state and
    carries on): the playback raises UnstableSimulation, while the nominal one passes."""
    sol = seed_solution()
    with pytest.raises(UnstableSimulation, match="unstable .*BADQACC"):
        simulate(sol, config=SimulationSettings(foot_radius=1e3))
    assert simulate(sol, record=False).jumps


def test_an_unstable_jump_is_an_unstable_trial():
    """A robustness trial whose simulation diverges (a 1 km gripper) fails with the reason
    UNSTABLE and no finished jump, instead of counting as a missed catch; the nominal
    robot's trial does not."""
    sol = seed_solution()
    bad = RobustnessCondition(sol, SimulationSettings(foot_radius=1e3), Tolerances(), jumps=1)
    out = robustness_trial(TrialTask(0, 0, 0, bad))
    assert not out.success and out.failure is FailureReason.UNSTABLE
    assert "BADQACC" in out.detail and out.metrics["jumps_completed"] == 0
    assert not out.metrics["first_caught"]
    good = RobustnessCondition(sol, SimulationSettings(), Tolerances(), jumps=1)
    out = robustness_trial(TrialTask(0, 0, 0, good))
    assert out.failure is not FailureReason.UNSTABLE and out.metrics["jumps_completed"] == 1


def test_motor_fit_on_zero_voltages_is_refused(tmp_path):
    """A log whose ESC voltages are all zero cannot identify tau = a V - c omega: the
    analysis refuses instead of returning a fit."""
    res = simulate(seed_solution(), jumps=1)
    log = tmp_path / "log.csv"
    write_log(res, log)
    data = np.loadtxt(log, delimiter=",", skiprows=1)
    for c in ("v_hip_V", "v_spine_V", "v_shoulder_V"):
        data[:, LOG_COLUMNS.index(c)] = 0.0
    np.savetxt(log, data, delimiter=",", header=",".join(LOG_COLUMNS), comments="")
    with pytest.raises(ConfigError, match=r"v_hip_V: voltages .* all zero"):
        load_and_analyze(log, seed_solution().morphology)


def test_telemetry_files_that_are_not_text_or_repeat_columns_are_refused(tmp_path):
    """Binary junk, a folder and a repeated column are FileFormatErrors naming the file."""
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xff")
    with pytest.raises(FileFormatError, match="not a UTF-8"):
        load_and_analyze(junk, seed_solution().morphology)
    with pytest.raises(FileFormatError, match="folder"):
        load_and_analyze(tmp_path, seed_solution().morphology)
    twice = tmp_path / "twice.csv"
    twice.write_text(",".join([*LOG_COLUMNS, "t_s"]) + "\n")
    with pytest.raises(FileFormatError, match=r"\['t_s'\] appear more than once"):
        load_and_analyze(twice, seed_solution().morphology)
