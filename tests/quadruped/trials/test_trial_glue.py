"""The climbing trial's glue: a metric sample's errors against their NumPy and Pinocchio
definitions, the metric recorder's rows, and determinism (the same seed gives the same
climb, through releases, grasps and a gripper breaking off)."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial
from clamber.quadruped.trials.metric_kernels import load_ratio, rotation_angle, sample_row
from clamber.quadruped.trials.result import metric_recorder
from clamber.recorder import Recorder


def test_sample_row_holds_the_errors_by_their_definitions():
    """``sample_row`` writes the tracking error and power as given, ``|log3(R_ref^T
    R_true)|``, ``|p_est - p_true|`` and ``|log3(R_est^T R_true)|`` (Pinocchio, NumPy) to
    1e-12, on rotations from 1e-9 rad apart to 3 rad (near pi both forms lose digits)."""
    rng = np.random.default_rng(39)
    recorder = metric_recorder()
    want = []
    for k in range(500):
        R_true = pin.exp3(rng.standard_normal(3))
        Rs = [R_true @ pin.exp3(rng.standard_normal(3) * [1e-9, 1e-3, 1.0, 0.95][(k + i) % 4])
              for i in range(2)]
        p_est, p_true = rng.standard_normal(3), rng.standard_normal(3) * 1e-3
        err, power = float(rng.uniform(0, 0.05)), float(rng.uniform(0, 200))
        sample_row(recorder.next_row(), err, power, Rs[0], Rs[1], R_true, p_est, p_true)
        want.append((err, power, np.linalg.norm(pin.log3(Rs[0].T @ R_true)),
                     np.linalg.norm(p_est - p_true), np.linalg.norm(pin.log3(Rs[1].T @ R_true))))
    assert np.allclose(recorder.array(), want, rtol=0, atol=1e-12)


def test_rotation_angle_is_accurate_at_every_angle():
    """The angle of ``Ra^T Rb`` is the one it was built with, to 1e-12 rad from 1e-9 rad
    to 3.1 rad, and the load ratio is the largest wrench component over the box."""
    rng = np.random.default_rng(40)
    for angle in (1e-9, 1e-5, 0.1, 1.0, 3.0, 3.1):
        axis = rng.standard_normal(3)
        Ra = pin.exp3(rng.standard_normal(3))
        Rb = Ra @ pin.exp3(angle * axis / np.linalg.norm(axis))
        assert rotation_angle(Ra, Rb) == pytest.approx(angle, abs=1e-12)
    box = np.tile(PAPER_BOX_HALF_WIDTHS, 4)
    w = box * rng.uniform(-0.5, 0.5, 24)
    w[17] = -0.8 * box[17]
    assert load_ratio(w, box) == pytest.approx(0.8, rel=1e-15)


def test_next_row_is_the_row_append_writes():
    """Rows filled through ``next_row`` (past the first allocation, so the recorder grows)
    read back as the rows ``append`` writes, and count as written."""
    rng = np.random.default_rng(38)
    filled, appended = Recorder(("a", "b", "c"), rows=4), Recorder(("a", "b", "c"), rows=4)
    for _ in range(11):
        values = tuple(rng.standard_normal(3))
        filled.next_row()[:] = values
        appended.append(values)
        assert filled.rows == appended.rows
    assert np.array_equal(filled.array(), appended.array())


def _outcome(trial):
    """Everything a climb computed: result (timings left out), physics state, filter, metric
    samples and gripper events."""
    result, _ = trial.run()
    m, d = trial.sim.model, trial.sim.data
    state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    ekf = trial.ekf
    fields = {k: v for k, v in result.to_dict().items() if "wall" not in k and "setup" not in k}
    return fields, repr(trial.sim.grippers.events), [
        state, ekf.p, ekf.v, ekf.R, ekf.b_a, ekf.b_g, ekf.P, trial.samples.array()]


def test_the_same_seed_gives_the_same_climb():
    """Plain CLIK on the vertical wall (seed 0) settles, releases its first gripper and
    breaks another off; run twice in fresh trials it ends in exactly the same result,
    physics state, filter state, metric samples and gripper events."""
    settings = ClimbSettings(controller="clik-plain", incline_deg=90.0, time_limit=12.0)
    first, second = _outcome(ClimbTrial(settings, 0)), _outcome(ClimbTrial(settings, 0))
    assert "broke off" in first[0]["reason"]
    assert "'release'" in first[1] and "'break'" in first[1]
    assert first[0] == second[0] and first[1] == second[1]
    assert all(np.array_equal(a, b, equal_nan=True)
               for a, b in zip(first[2], second[2], strict=True))
