"""Headroom on the motor line: the optimum keeps |tau + k w| <= (1 - h) tau_max where asked,
out-of-range headrooms are refused, and `optimize --motor-headroom` plans with it."""

import json
import math

import numpy as np
import pytest

from clamber.cli.main import main
from clamber.exceptions import ConfigError
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.settings_file import settings_from_mapping
from clamber.jumper.solution import TrajectorySolution
from clamber.jumper.solve import solve

#: A speed line so the slope term is exercised too [rad/s].
NO_LOAD_SPEED = 120.0
H = 0.15


def _line(sol: TrajectorySolution) -> np.ndarray:
    """|tau + k w| per node and joint [N m], from the solution's own arrays."""
    s = sol.settings
    k = s.torque_limit / s.no_load_speed if s.no_load_speed > 0 else 0.0
    return np.abs(sol.tau + k * sol.qd[:, 3:6])


@pytest.fixture(scope="module")
def full_line(nominal_coarse):
    sol = solve(Morphology.nominal(), OptimizationSettings(no_load_speed=NO_LOAD_SPEED),
                "coarse", nominal_coarse)
    assert sol.status.success, sol.return_status
    return sol


@pytest.mark.parametrize("phases", [(1, 2), (1, 2, 3, 4, 5)])
def test_optimum_with_headroom_keeps_the_tightened_line_at_every_node(full_line, phases):
    """Warm-started from the full-line optimum, the solve with headroom H in ``phases``
    keeps |tau + k w| <= (1 - H) tau_max at every node of those phases (and the plain line
    elsewhere); the full-line optimum breaks that bound, so the headroom is what holds it,
    and it binds (the jump slows)."""
    s = full_line.settings
    tight = (1 - H) * s.torque_limit
    chosen = np.isin(full_line.phase, phases)
    assert _line(full_line)[chosen].max() > tight + 1e-3  # the test can fail
    sol = solve(Morphology.nominal(), s.with_(motor_headroom=H, motor_headroom_phases=phases),
                "coarse", full_line)
    assert sol.status.success, sol.return_status
    line = _line(sol)
    assert line[chosen].max() <= tight + 1e-6
    assert np.all(line[~chosen] <= s.torque_limit + 1e-6)
    assert line[chosen].max() == pytest.approx(tight, abs=1e-4)  # active, not slack
    assert sol.active_bounds["active_inequalities"]["motor_line"] > 0
    assert sol.speed < full_line.speed - 1e-3


def test_headroom_rows_stay_when_duplicate_rows_are_dropped(nominal_coarse):
    """Without a speed line the motor-line rows repeat the torque bound and
    ``drop_duplicate_rows`` leaves them out; with headroom they are tighter than the bound,
    so they stay and hold."""
    s = OptimizationSettings(drop_duplicate_rows=True, motor_headroom=0.1,
                             motor_headroom_phases=(2,))
    sol = solve(Morphology.nominal(), s, "coarse", nominal_coarse)
    assert sol.status.success, sol.return_status
    assert np.abs(sol.tau[sol.phase == 2]).max() <= 0.9 * s.torque_limit + 1e-6
    assert np.abs(sol.tau[sol.phase != 2]).max() <= s.torque_limit + 1e-6
    assert np.abs(nominal_coarse.tau[nominal_coarse.phase == 2]).max() > \
        0.9 * s.torque_limit + 1e-3


@pytest.mark.parametrize("bad", [-0.01, 0.5, 0.7, 1.0, math.nan, math.inf, True, "0.1", None])
def test_a_headroom_outside_zero_to_one_half_is_refused(bad):
    with pytest.raises(ConfigError, match="motor_headroom"):
        OptimizationSettings(motor_headroom=bad)


@pytest.mark.parametrize("bad", [(), (0,), (6,), (1, 1), (1.0,), "1,2", 2])
def test_headroom_phases_must_be_distinct_phase_numbers(bad):
    with pytest.raises(ConfigError, match="motor_headroom_phases"):
        OptimizationSettings(motor_headroom_phases=bad)


def test_headroom_settings_round_trip_and_default_to_the_full_line():
    """Kept through the solution file's settings and a settings file; left out of the
    record at 0, so files written before the option load as before."""
    s = OptimizationSettings(motor_headroom=0.1, motor_headroom_phases=(2, 1))
    assert s.motor_headroom_phases == (1, 2)
    assert (s.motor_line_limit(1), s.motor_line_limit(3)) == pytest.approx((0.225, 0.25))
    back = OptimizationSettings.from_dict(json.loads(json.dumps(s.to_dict())))
    assert (back.motor_headroom, back.motor_headroom_phases) == (0.1, (1, 2))
    assert "motor_headroom" not in OptimizationSettings().to_dict()
    assert OptimizationSettings().motor_line_limit(1) == 0.25
    f = settings_from_mapping({"motor_headroom": 0.2, "motor_headroom_phases": [1, 2, 3]})
    assert (f.motor_headroom, f.motor_headroom_phases) == (0.2, (1, 2, 3))
    with pytest.raises(ConfigError, match="motor_headroom"):
        settings_from_mapping({"motor_headroom": 0.6})


def test_optimize_cli_plans_with_the_headroom(tmp_path, monkeypatch):
    """`clamber jumper optimize --motor-headroom 0.1 --motor-headroom-phases 2` records the
    setting and its optimum keeps 90 % of the torque limit in phase 2 (the replay check,
    not under test here, is skipped)."""

    def no_replay(sol):
        sol.accuracy = {"max_position_drift_m": 0.0}
        return sol

    monkeypatch.setattr("clamber.jumper.verify.attach_accuracy", no_replay)
    out = tmp_path / "run"
    assert main(["jumper", "optimize", "--resolution", "coarse", "--guess", "deterministic",
                 "--motor-headroom", "0.1", "--motor-headroom-phases", "2", "--no-figures",
                 "--out", str(out)]) == 0
    sol = TrajectorySolution.load(out / "solution.npz")
    assert (sol.settings.motor_headroom, sol.settings.motor_headroom_phases) == (0.1, (2,))
    assert _line(sol)[sol.phase == 2].max() <= 0.9 * sol.settings.torque_limit + 1e-6


@pytest.mark.parametrize("value", ["0.5", "-0.1", "nan", "much"])
def test_optimize_cli_refuses_a_headroom_out_of_range(value, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["jumper", "optimize", "--motor-headroom", value, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--motor-headroom" in err[0]
    assert not (out / "solution.npz").exists()
