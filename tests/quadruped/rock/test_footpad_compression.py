"""Compression on a gripper is borne by its footpad: its capacity on a rock patch is lowered
by the seat alone, pull by spines, seat and wrap (``footpad_push``)."""

import numpy as np
import pytest

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS
from clamber.quadruped.rock.holding import GripperSurfaceModel, hold_limits, push_factor
from clamber.quadruped.rock.wall import PAPER_MICRO_RMS
from clamber.quadruped.sim.failure import default_wrench_set, scaled_wrench

PUSH = GripperSurfaceModel(footpad_push=True)
SCALED = GripperSurfaceModel()


def test_compression_factor_is_the_seat_alone():
    """With ``footpad_push`` the seventh factor is the seat share at every convexity and
    asperity roughness, and the six axes' factors are those of the model without it."""
    kappa = np.linspace(-20, 40, 31)[:, None] * np.ones((1, 11))
    step = np.linspace(0, 0.01, 11)[None, :] * np.ones((31, 1))
    for micro in (0.2 * PAPER_MICRO_RMS, PAPER_MICRO_RMS):
        f7 = PUSH.capacity_factor(kappa, step, micro)
        f6 = SCALED.capacity_factor(kappa, step, micro)
        assert f7.shape == (31, 11, 7) and f6.shape == (31, 11, 6)
        np.testing.assert_array_equal(f7[..., :6], f6)
        np.testing.assert_allclose(f7[..., 6], np.clip(1 - step / PUSH.seat_step, 0, 1))
        np.testing.assert_array_equal(push_factor(f7), f7[..., 6])
        np.testing.assert_array_equal(push_factor(f6), f6[..., 2])


def test_hold_limits_bound_compression_by_its_own_factor():
    """The Q-WBC box on a patch of seven factors reaches ``+62 N`` times the compression
    factor along ``f_z`` and ``-62 N`` times the pull factor; six factors keep it symmetric."""
    f = np.array([0.6, 0.6, 0.25, 0.5, 0.5, 0.6, 0.9])
    lim = hold_limits(f)
    z = np.eye(6)[2]
    assert lim.contains(62.0 * 0.9 * z) and not lim.contains(62.0 * 0.91 * z)
    assert lim.contains(-62.0 * 0.25 * z) and not lim.contains(-62.0 * 0.26 * z)
    sym = hold_limits(f[:6])
    assert sym.contains(62.0 * 0.25 * z) and not sym.contains(62.0 * 0.26 * z)
    assert lim.contains(PAPER_BOX_HALF_WIDTHS * f[:6] * np.array([1, 1, -1, 1, 1, 1]))


def test_truth_scales_push_and_pull_separately():
    """In the failure check, a pushing wrench's ``f_z`` is divided by the compression factor
    and a pulling one's by the pull factor; with six factors both by the ``f_z`` factor. A
    50 N push with 10 N of shear breaks a hold of pull factor 0.3 when compression is
    scaled like pull (50/0.3 N is past the set's 144 N of compression), and is held when
    the footpad bears it (factor 1)."""
    f6 = np.array([0.6, 0.6, 0.3, 0.5, 0.5, 0.6])
    f7 = np.append(f6, 1.0)
    push = np.array([10.0, 0.0, 50.0, 0.0, 0.0, 0.0])
    pull = push * np.array([1, 1, -1, 1, 1, 1])
    np.testing.assert_allclose(scaled_wrench(push, f7),
                               push / np.array([0.6, 0.6, 1.0, 0.5, 0.5, 0.6]))
    np.testing.assert_allclose(scaled_wrench(pull, f7), pull / f6)
    np.testing.assert_allclose(scaled_wrench(push, f6), push / f6)
    both = np.vstack([push, pull])
    np.testing.assert_allclose(scaled_wrench(both, np.vstack([f7, f7])),
                               np.vstack([scaled_wrench(push, f7), scaled_wrench(pull, f7)]))
    ws = default_wrench_set()
    assert ws.exact(scaled_wrench(push, f6)) > 1.0
    assert ws.exact(scaled_wrench(push, f7)) < 1.0
    assert ws.exact(scaled_wrench(pull, f7)) == pytest.approx(ws.exact(pull / f6))


def test_rock_climb_carries_the_compression_factor_to_truth_planner_and_qwbc():
    """In a rock climb with ``footpad_push`` (the default) the simulated holds, the
    planner's holds and the Q-WBC's limits all carry compression's own factor: the Q-WBC
    box reaches ``+62 N`` times it along ``f_z`` and ``-62 N`` times the pull factor; with
    ``footpad_push=False`` the box is symmetric as before."""
    from clamber.quadruped.model.robot import LEG_NAMES
    from clamber.quadruped.trials.climb import ClimbSettings
    from clamber.quadruped.trials.rock_climb import (
        MIN_FACTOR,
        RockClimbSettings,
        RockClimbTrial,
    )

    for push in (True, False):
        settings = RockClimbSettings(climb=ClimbSettings(incline_deg=70.0), distance=0.05,
                                     footpad_push=push)
        trial = RockClimbTrial(settings, 0)
        boxes = trial.ctrl.qp.builder.boxes
        for i, leg in enumerate(LEG_NAMES):
            believed = np.asarray(trial.planner.start[leg].factor)
            true = np.asarray(trial.layout.holds[leg][0].capacity_factor)
            assert believed.shape == true.shape == ((7,) if push else (6,))
            f = np.maximum(believed, MIN_FACTOR)
            assert boxes[i][1][2] == pytest.approx(62.0 * (f[6] if push else f[2]))
            assert boxes[i][0][2] == pytest.approx(-62.0 * f[2])
        assert trial.sim.grippers._factors.shape == (4, 7 if push else 6)


def test_anchor_ekf_alongside_a_rock_climb_changes_nothing_and_reports_its_drift():
    """The anchor EKF run alongside a rock climb (``anchor_ekf``) leaves the climb as it
    was (same distance and controller estimate to the bit) and reports a finite final
    error and RMS, within 2 cm over the first 8 s (placement and the first unload)."""
    from clamber.quadruped.trials.climb import ClimbSettings
    from clamber.quadruped.trials.rock_climb import RockClimbSettings, run_rock_climb

    out = {}
    for anchor in (False, True):
        settings = RockClimbSettings(climb=ClimbSettings(incline_deg=90.0), distance=0.05,
                                     anchor_ekf=anchor)
        out[anchor] = run_rock_climb(settings, 0, time_limit=8.0)[0]
    assert out[True].distance_m == out[False].distance_m
    assert out[True].estimation_drift_m == out[False].estimation_drift_m
    assert np.isnan(out[False].anchor_drift_m)
    assert 0 < out[True].anchor_drift_m < 0.02 and 0 < out[True].anchor_rms_mm < 20


def test_the_controller_can_run_on_the_anchor_ekf_and_the_setting_is_checked():
    """With ``estimator="anchor"`` the controller sees the anchor EKF's body estimate: the
    climb is no longer the odometry-fed one to the bit, yet stays on its holds over the
    first 8 s with the anchor EKF's error within 2 cm; the estimator needs the anchor EKF
    and must be one of the named ones."""
    from clamber.exceptions import ConfigError
    from clamber.quadruped.trials.climb import ClimbSettings
    from clamber.quadruped.trials.rock_climb import RockClimbSettings, run_rock_climb

    out = {}
    for estimator in ("odometry", "anchor"):
        settings = RockClimbSettings(climb=ClimbSettings(incline_deg=90.0), distance=0.05,
                                     anchor_ekf=True, estimator=estimator)
        out[estimator] = run_rock_climb(settings, 0, time_limit=8.0)[0]
    assert out["anchor"].estimation_drift_m != out["odometry"].estimation_drift_m
    assert out["anchor"].reason == out["odometry"].reason == "time limit"
    assert 0 < out["anchor"].anchor_drift_m < 0.02
    with pytest.raises(ConfigError, match="anchor_ekf"):
        RockClimbSettings(estimator="anchor")
    with pytest.raises(ConfigError, match="must be one of odometry, anchor"):
        RockClimbSettings(anchor_ekf=True, estimator="truth")
