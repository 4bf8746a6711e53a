"""Short climbs in the loop: Q-WBC keeps its grippers within capacity where plain CLIK does not."""

from dataclasses import replace

import numpy as np
import pytest

from clamber.experiments.quadruped import summarize
from clamber.experiments.record import StudyTrial, TrialOutcome
from clamber.experiments.statistics import wilson_interval
from clamber.experiments.study import TrialTask
from clamber.failures import FailureReason
from clamber.quadruped.gaits import ClimbPhase
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial, run_climb
from clamber.storage.runs import TrialState


def test_qwbc_keeps_grippers_within_capacity():
    """On the vertical wall (seed 1) the Q-WBC settles, unloads, releases and swings its
    first leg for 12 s: its planned wrenches stay in the conservative box, every gripper's
    true wrench stays below its true capacity and the body within 5 mm of its reference."""
    result, log = run_climb(ClimbSettings(controller="qwbc", incline_deg=90.0), 1, log=True,
                            time_limit=12.0)
    assert result.reason == "time limit", result.reason
    assert result.planned_load <= 1.0 + 1e-6
    assert result.peak_gripper_load < 1.0
    assert result.max_tracking_error_mm < 5.0
    assert result.estimation_rms_mm < 5.0
    assert any(name == "transfer" for _, _, name, _ in log.bands)


def test_plain_clik_overloads_a_gripper_at_release():
    """The same wall and robot with CLIK without integral action or feed-forward: releasing
    the first gripper drives another out of its wrench set, and the trial says where."""
    result, _ = run_climb(ClimbSettings(controller="clik-plain", incline_deg=90.0), 0,
                          time_limit=12.0)
    assert result.failure_phase.startswith("release")
    assert not result.success and "broke off" in result.reason
    assert result.peak_gripper_load > 1.0
    # Where: the first gait cycle, before the body has moved up (it sags 15 mm); why: the
    # broken gripper's gauge over 1 (outside its set) and its wrench.
    assert result.failure_cycle == 1 and abs(result.failure_distance_m) < 0.03
    assert result.failure_time_s == pytest.approx(result.sim_time_s, abs=0.021)
    leg = result.reason.split()[1]
    assert result.failure_detail.startswith(f"{leg} gauge 1.")
    assert float(result.failure_detail.split()[2].rstrip(",")) > 1.0


def test_a_failure_reports_its_gait_cycle():
    """A two-cycle climb stopped in its second cycle (Q-WBC on a gait with every phase
    shortened, so that a cycle takes about 40 s; stopped at 44 s) says so: cycle 2, a
    phase of the gait, the time it stopped and the height up the wall it had reached (one
    stride, 0.22 m, after the first cycle)."""
    settings = ClimbSettings(controller="qwbc", incline_deg=90.0, breakable=False)
    fast = replace(settings.gait, cycles=2, settle_time=1.0, unload_time=0.5, release_time=1.0,
                   lift_time=1.0, transfer_time=1.5, grasp_time=1.0, reload_time=0.5,
                   body_time=1.5)
    result, _ = run_climb(replace(settings, gait=fast), 0, time_limit=44.0)
    assert result.reason == "time limit" and result.failure_cycle == 2
    assert result.failure_phase.split()[0] in {p.value for p in ClimbPhase}
    assert result.failure_time_s == pytest.approx(44.0, abs=0.021)
    assert 0.18 < result.failure_distance_m < 0.26


def test_wilson_interval_and_summary():
    """The Wilson interval contains the rate and matches a known value; summaries count
    trials, successes and failure reasons by name, and say how far each trial climbed."""
    iv = wilson_interval(5, 5)
    assert np.isclose(iv.low, 0.5655, atol=1e-4) and iv.high == 1.0
    iv = wilson_interval(0, 20)
    assert iv.low == 0.0 and np.isclose(iv.high, 0.1611, atol=1e-4)
    task = TrialTask(0, 0, 0, ClimbSettings(controller="vmc", incline_deg=70.0))
    r, _ = run_climb(task.condition, 0, time_limit=0.5)
    assert r.failure is FailureReason.TIME_LIMIT
    trial = StudyTrial(0, 0, 0, TrialState.COMPLETE,
                       TrialOutcome(r.success, r.failure, r.reason, r.to_dict()))
    s = summarize([trial, trial])
    assert s["trials"] == 2 and s["successes"] == 0 and s["success_interval"][0] == 0.0
    assert s["failures"] == {"time_limit": 2}
    assert s["distances_m"] == [round(r.distance_m, 3)] * 2
    assert s["distance_m"] == s["distance_median_m"] == s["distance_max_m"] == r.distance_m


def test_climb_trial_stepped_by_hand_equals_run_climb():
    """A ClimbTrial stepped cycle by cycle ends where run_climb ends, with the same metrics:
    the trial object is the loop, and its metrics come from its recorded samples."""
    settings = ClimbSettings(controller="vmc", incline_deg=70.0)
    trial = ClimbTrial(settings, 2, log=True, time_limit=1.5)
    cycles = 0
    while trial.step():
        cycles += 1
    stepped = trial.result().to_dict()
    ran = run_climb(settings, 2, time_limit=1.5)[0].to_dict()
    for d in (stepped, ran):
        d.pop("wall_time_s"), d.pop("setup_time_s")
    assert stepped == ran and stepped["reason"] == "time limit"
    assert trial.log.samples.rows == cycles + 1 == trial.k + 1
    assert trial.samples.rows == round((1.5 - 1.0) / trial.dt) + 1
