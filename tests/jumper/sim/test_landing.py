"""Landing: the event-triggered clock, foot pivots, motor limits, recorder, calibration."""

import math
from dataclasses import replace

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.experiments.calibration import HARDWARE, calibrate, inside_intervals, score
from clamber.experiments.robustness import FRONT_TOUCH_IMPULSE, robustness
from clamber.jumper.sim.control import EventTriggered, EventTriggeredSettings, OpenLoop
from clamber.jumper.sim.gripper import FootPivot, FootState
from clamber.jumper.sim.recorder import Recorder
from clamber.jumper.sim.robustness import Tolerances
from clamber.jumper.sim.settings import Realization, SimulationSettings
from clamber.jumper.sim.simulate import JumpTrial, simulate

PHASES = [0.0, 0.1, 0.15, 0.25, 0.3, 0.4]


def _run_clock(clock, switch_times, ticks=400, dt=0.002):
    """Reference times the clock sends when switches close at ``switch_times``."""
    out = []
    for k in range(ticks):
        t = (k + 1) * dt
        out.append(clock.advance(dt, tuple(t >= s for s in switch_times)))
    return np.array(out)


def test_event_triggered_clock_reflex_wait_and_settle():
    """A hook seen early starts the next phase at once; a missing hook holds the catch pose
    for at most front_wait; the stance is held settle_time between jumps; open loop just
    advances."""
    s = EventTriggeredSettings(front_wait=0.02, rear_wait=0.02, settle_time=0.03,
                               reflex_lead=0.03)
    early = _run_clock(EventTriggered(0.4, PHASES, 2, s), (0.24, 0.31))
    k = int(np.argmax(early >= 0.25 - 1e-12))
    assert early[k] == pytest.approx(0.25) and (k + 1) * 0.002 == pytest.approx(0.24)
    never = _run_clock(EventTriggered(0.4, PHASES, 2, s), (math.inf, math.inf))
    held = np.sum(np.isclose(never, 0.25))
    assert held == pytest.approx(0.02 / 0.002 + 1, abs=1)
    settle = np.sum(np.isclose(never, 0.4))
    assert settle == pytest.approx(0.03 / 0.002 + 1, abs=1)
    assert np.all(np.diff(never) >= -1e-12)
    plain = _run_clock(OpenLoop(0.4, PHASES, 2), (0.0, 0.0), ticks=10)
    np.testing.assert_allclose(plain, 0.002 * np.arange(1, 11))


def test_closed_loop_never_commands_beyond_the_motor_limits(coarse_solution):
    """Under event-triggered catching every commanded voltage is within the supply and
    every joint torque within the motor's torque-speed line |tau + c w| <= k_t V_s / R."""
    cfg = SimulationSettings(controller="closed-loop")
    res = simulate(coarse_solution, jumps=2, config=cfg)
    motor = cfg.motor
    for j in ("hip", "spine", "shoulder"):
        v, tau, w = res.column(f"v_{j}"), res.column(f"tau_{j}"), res.column(f"w_{j}")
        assert np.all(np.abs(v) <= motor.supply_voltage + 1e-9)
        assert np.all(np.abs(tau + motor.damping * w) <= motor.stall_torque + 1e-9)
    assert np.nanmax(res.column("ref_time")) > coarse_solution.phase_times[3]


def test_foot_flips_under_a_sharp_deceleration_and_the_spar_stops_it():
    """A pivot accelerating at 200 m/s^2 across the foot turns it; the stop bounds the turn;
    without acceleration the spring holds the sole flush with the wall."""
    pivot = FootPivot(spar_angle=0.3)
    foot = FootState(pivot, mass=0.01, rest_offset=math.pi, stop=pivot.spar_angle)
    for _ in range(200):
        foot.step(0.001, 0.0, 0.0, 0.0, -9.81)  # free fall: no net load on the foot
    assert foot.sole_angle < 1e-9
    for _ in range(50):
        foot.step(0.001, 0.0, 0.0, 0.0, 200.0)
    assert foot.sole_angle == pytest.approx(0.3)
    assert FootState(FootPivot(capture_angle=0.2), 0.01, math.pi, 1.0).faces_wall


def test_a_rear_spar_stops_the_rear_foot_at_the_front_spars_angle(coarse_solution):
    """``FootPivot.with_rear_spar`` gives the rear foot the front spar's stop; the simulator
    stops each foot at its own angle, so under the same sharp deceleration the rear foot
    turns only as far as the front one."""
    pivot = FootPivot()
    spar = pivot.with_rear_spar()
    assert spar.rear_stop_angle == pivot.spar_angle and spar.spar_angle == pivot.spar_angle
    stops = [[f.stop for f in JumpTrial(coarse_solution, 1, SimulationSettings(pivot=p), None,
                                        False).feet] for p in (pivot, spar)]
    assert stops == [[0.35, 1.2], [0.35, 0.35]]
    turned = []
    for stop in (pivot.rear_stop_angle, spar.rear_stop_angle):
        foot = FootState(spar, mass=0.01, rest_offset=math.pi, stop=stop)
        for _ in range(100):
            foot.step(0.001, 0.0, 0.0, 0.0, 400.0)
        turned.append(foot.sole_angle)
    assert turned[0] > 0.5 and turned[1] == pytest.approx(pivot.spar_angle)


def test_recorder_writes_by_name_and_grows():
    """Cells land in their named columns; rows beyond the initial size are kept."""
    rec = Recorder(("a", "b"), rows=2)
    rec.write(0, "a", 1.0)
    rec.write_many(5, ("b", "a"), (2.0, 3.0))
    arr = rec.array(6)
    assert arr.shape == (6, 2) and arr[0, 0] == 1.0 and arr[5, 1] == 2.0 and arr[5, 0] == 3.0
    assert np.isnan(arr[1]).all()
    with pytest.raises(ConfigError):
        Recorder(("a", "a"))


def test_calibration_is_reproducible_and_scores_the_hardware_counts(coarse_solution):
    """The same grid on the same seeds gives identical counts; the score is zero exactly
    at the hardware rates and the hardware point lies in its own Wilson interval."""
    traj = {"optimized": coarse_solution, "tuned": coarse_solution}
    grid = {"hook_timeconst": (0.004,), "tolerance_scale": (1.0,)}
    a = calibrate(traj, grid, trials=3, check_trials=3, seed=2)
    b = calibrate(traj, grid, trials=3, check_trials=3, seed=2)
    assert a.grid == b.grid and a.check == b.check
    exact = {k: v[0] * 10 for k, v in HARDWARE.items()} | {"trials": 300}
    assert score(exact) == pytest.approx(0.0)
    assert all(inside_intervals(exact).values())
    far = {k: 0 for k in HARDWARE} | {"trials": 300}
    assert score(far) > 10 and not all(inside_intervals(far).values())


def test_robustness_reports_ready_and_climb_figures(coarse_solution):
    """The summary carries the landing figures with an interval bracketing the rate."""
    res = robustness(coarse_solution, 3, jumps=2, tolerances=Tolerances().scaled(0.5))
    s = res.summary()
    for key in ("ready_rate", "ready_interval", "climb_success_rate", "expected_speed_mps",
                "front_misses_after_touch"):
        assert key in s
    assert s["ready_interval"][0] <= s["ready_rate"] <= s["ready_interval"][1]
    assert s["climb_success_rate"] <= s["ready_rate"] + 1e-12


def test_front_foot_touch_is_measured_when_a_longer_front_link_hits_the_wall(coarse_solution):
    """The free front foot's wall impulse before its catch stays below the touch threshold
    for the nominal robot (its swing at most grazes the wall) and exceeds it for a robot
    whose front link is 2 mm longer (the same swing then strikes the wall)."""
    cfg = SimulationSettings(controller="closed-loop")
    touch = []
    for extra in (0.0, 0.002):
        real = Realization.nominal(coarse_solution, cfg)
        p = real.parameters.copy()
        p[0] += extra  # L1 [m]
        res = simulate(coarse_solution, 1, cfg, replace(real, parameters=p), record=False)
        touch.append(res.jumps[0].front_touch_impulse)
    assert 0.0 <= touch[0] < FRONT_TOUCH_IMPULSE < touch[1]


@pytest.mark.parametrize("tuned", ["clearance", "edits"])
def test_tuned_jump_is_the_papers_edits_with_the_take_off_clearance(monkeypatch, tuned):
    """The tuned jump applies the paper's two edits; by default it is then solved again
    with the take-off clearance scenarios, warm-started from that optimum; 'edits' skips
    that solve, and an unknown reproduction is refused."""
    import clamber.experiments.calibration as cal
    import clamber.jumper.robust as robust
    import clamber.jumper.solve as solve_mod
    from clamber.jumper.morphology import Morphology

    class Sol:
        def __init__(self, tag):
            self.tag, self.history = tag, [{}]
            self.status = type("S", (), {"success": True})()

    seen = {}

    def fake_optimize(morph, settings):
        return Sol("tuned" if settings.phase_duration_min[3] == 0.120 else "optimized")

    def fake_clearance(morph, first, settings, scenarios):
        seen["warm"], seen["settings"], seen["scenarios"] = first.tag, settings, scenarios
        out = Sol("clearance")
        out.history = [{"scenarios": "MassScenarios(...)"}]
        return out

    monkeypatch.setattr(solve_mod, "optimize", fake_optimize)
    monkeypatch.setattr(robust, "with_clearance_scenarios", fake_clearance)
    out = cal.hardware_trajectories(Morphology.nominal(), tuned=tuned)
    assert out["optimized"].tag == "optimized"
    if tuned == "clearance":
        assert out["tuned"].tag == "clearance" and seen["warm"] == "tuned"
        assert seen["settings"].torque_rate_weight == cal.TUNED_CHANGES["torque_rate_weight"]
        assert seen["scenarios"] == robust.TUNED_SCENARIOS  # fixed, not the calibrated rule
    else:
        assert out["tuned"].tag == "tuned" and not seen
    with pytest.raises(ConfigError, match="allowed"):
        cal.hardware_trajectories(Morphology.nominal(), tuned="by-hand")


def test_calibrated_point_lies_on_the_default_grid():
    """The calibrated values are a point of the grid that `clamber jumper calibrate`
    searches, so its one command can find them again."""
    from clamber.experiments.calibration import CALIBRATED, DEFAULT_GRID, PARAMETERS

    assert set(CALIBRATED) == set(PARAMETERS)
    assert all(CALIBRATED[k] in DEFAULT_GRID[k] for k in PARAMETERS)


@pytest.mark.slow
def test_calibration_command_finds_the_calibrated_point_inside_all_hardware_intervals():
    """`clamber jumper calibrate` (fine stage, 100 trials per point, 200-trial check on
    fresh seeds) ends at CALIBRATED with every hardware count inside its Wilson interval."""
    from clamber.experiments.calibration import CALIBRATED, PARAMETERS, hardware_trajectories

    res = calibrate(hardware_trajectories())
    assert {k: res.best[k] for k in PARAMETERS} == CALIBRATED
    assert all(res.check["inside_wilson_95"].values())
