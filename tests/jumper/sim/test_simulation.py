"""Playback, robustness and telemetry on the coarse nominal jump."""

import json

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError, FileFormatError
from clamber.experiments.calibration import calibrated_config
from clamber.experiments.robustness import robustness
from clamber.jumper.mjcf import load_scene
from clamber.jumper.morphology import Morphology
from clamber.jumper.sim.gripper import CaptureWindow, FootPivot
from clamber.jumper.sim.motor import MotorParameters
from clamber.jumper.sim.robustness import Tolerances
from clamber.jumper.sim.settings import SimulationSettings
from clamber.jumper.sim.simulate import simulate
from clamber.jumper.sim.telemetry import LOG_COLUMNS, load_and_analyze, true_work, write_log
from clamber.parallel.dask import DaskEvaluator

#: A forgiving gripper on the calibrated simulator, so that the coarse jump's log holds
#: one whole jump.
FORGIVING = calibrated_config(capture=CaptureWindow(distance=0.01, tear_margin=100.0,
                                                   max_speed=10.0, max_normal_speed=10.0,
                                                   max_angle_deg=180.0), catch_timeout=0.1,
                             pivot=FootPivot(capture_angle=np.pi))


def test_pin_forces_read_from_the_constraints_carry_the_weight_at_rest():
    """Both grippers pinned and the joints held still: the wall forces the simulator reads
    (equality rows of efc_force, front first) sum to the robot's weight."""
    morph = Morphology.nominal()
    m = load_scene(morph)
    d = mujoco.MjData(m)
    hold = np.array([1.2, 1.0, 0.4])
    d.qpos[:] = [0.01, 0.0, -0.2, *hold]
    mujoco.mj_forward(m, d)
    for name, site in (("front_hook", "front_gripper"), ("rear_hook", "rear_gripper")):
        m.eq_data[m.equality(name).id, 3:6] = d.site_xpos[m.site(site).id]
        d.eq_active[m.equality(name).id] = 1
    for _ in range(3000):
        d.ctrl[:] = 5.0 * (hold - d.qpos[3:6]) - 0.05 * d.qvel[3:6]
        mujoco.mj_step(m, d)
    f = d.efc_force[:6].reshape(2, 3)[:, :2].sum(axis=0)
    np.testing.assert_allclose(f, [0.0, morph.total_mass * 9.81], atol=0.02 * 9.81 * 0.27)


def test_playback_tracks_the_stance_and_is_deterministic(coarse_solution):
    """With both grippers hooked (phase 1) the ESC tracks the optimized angles within
    0.06 rad (quantized encoders, filtered speed); two runs agree exactly and
    record=False changes no outcome."""
    a = simulate(coarse_solution, jumps=1)
    b = simulate(coarse_solution, jumps=1, record=False)
    np.testing.assert_equal([r.to_dict() for r in a.jumps], [r.to_dict() for r in b.jumps])
    t = a.column("t")
    stance = t < coarse_solution.phase_times[1]
    opt = np.column_stack([np.interp(t[stance], coarse_solution.t, coarse_solution.q[:, 3 + j])
                           for j in range(3)])
    sim = np.column_stack([a.column(n)[stance] for n in ("hip", "spine", "shoulder")])
    assert np.abs(sim - opt).max() < 0.06
    assert np.all(np.abs(a.column("v_hip")) <= MotorParameters().supply_voltage + 1e-9)


def test_a_dead_supply_makes_the_robot_fall(coarse_solution):
    """With a 0.5 V supply the motors cannot push off: the front gripper misses and the
    jump is recorded as a fall, not ready."""
    cfg = SimulationSettings(motor=MotorParameters(supply_voltage=0.5))
    res = simulate(coarse_solution, jumps=2, config=cfg, record=False)
    assert len(res.jumps) == 1
    assert not res.jumps[0].ready and not res.jumps[0].front_catch


def _comparable(trials):
    """A trial's record without the measured CPU time (the only field allowed to differ)."""
    return [{k: v for k, v in json.loads(t.to_json()).items() if k != "wall_time_s"}
            for t in trials]


def test_robustness_parallel_equals_serial(coarse_solution):
    """Two Dask worker processes return exactly the serial trial records (seeded per
    trial)."""
    tol = Tolerances(mass_rel=0.1)
    serial = robustness(coarse_solution, 4, seed=3, config=FORGIVING, tolerances=tol)
    with DaskEvaluator(n_workers=2) as evaluator:
        parallel = robustness(coarse_solution, 4, seed=3, config=FORGIVING, tolerances=tol,
                              evaluator=evaluator)
    assert _comparable(serial.trials) == _comparable(parallel.trials)
    assert 0.0 <= serial.catch.low <= serial.catch.rate <= serial.catch.high <= 1.0
    with pytest.raises(ConfigError):
        robustness(coarse_solution, 0)


def test_telemetry_recovers_motor_constants_and_work_from_simulated_logs(coarse_solution,
                                                                         tmp_path):
    """From a 167 Hz log of a simulated jump (with force plate) the fit recovers
    k_t / R within 15 % and the damping within 35 % on every joint, and the positive work
    per joint within 20 % of the simulator's 1 kHz truth."""
    res = simulate(coarse_solution, jumps=1, config=FORGIVING)
    log, plate = tmp_path / "log.csv", tmp_path / "plate.csv"
    write_log(res, log, plate)
    analysis = load_and_analyze(log, coarse_solution.morphology, plate)
    motor = MotorParameters()
    for fit in analysis.fits:
        assert fit.gain == pytest.approx(motor.gain, rel=0.15), fit
        assert fit.damping == pytest.approx(motor.damping, rel=0.35), fit
    truth = true_work(res)
    assert analysis.work_positive.shape == truth.shape == (1, 3)
    np.testing.assert_allclose(analysis.work_positive, truth, rtol=0.20)


def test_malformed_and_truncated_logs_name_the_line(tmp_path):
    """A non-numeric field, a truncated last line and a missing column each raise
    FileFormatError naming the line."""
    head = ",".join(LOG_COLUMNS)
    rows = [",".join(["%g" % (0.006 * k)] + ["0.1"] * (len(LOG_COLUMNS) - 1)) for k in range(20)]
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([head, *rows[:5], rows[5].replace("0.1", "x", 1), *rows[6:]]))
    with pytest.raises(FileFormatError, match="line 7: non-numeric"):
        load_and_analyze(bad, Morphology.nominal())
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join([head, *rows, rows[0][:9]]))
    with pytest.raises(FileFormatError, match=r"line 22: expected 12 fields, found \d+ "
                                              r"\(truncated"):
        load_and_analyze(cut, Morphology.nominal())
    nohead = tmp_path / "nohead.csv"
    nohead.write_text("\n".join([head.replace("hip_rad", "hip"), *rows]))
    with pytest.raises(FileFormatError, match="line 1: header lacks"):
        load_and_analyze(nohead, Morphology.nominal())
