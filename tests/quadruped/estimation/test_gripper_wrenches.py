"""Gripper wrenches from servo torques match the simulator's constraint wrenches on their
observable part, and the internal wrench is exactly the part that puts no net wrench on the
body, whatever frame the grasp map is written in."""

import numpy as np
import pinocchio as pin
import pytest

from clamber.quadruped.estimation.wrenches import GripperWrenchEstimator, internal_part
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.statics import StaticsEvaluator
from clamber.quadruped.trials.climb import PLACEMENT_TIME, ClimbSettings, ClimbTrial


def _grasp_map(placements, point):
    """The world-axes map (6, 6k) from gripper-frame wrenches ``[f, tau]`` (each about its
    frame's origin) to their sum as one wrench ``[f, tau]`` about ``point``."""
    G = np.zeros((6, 6 * len(placements)))
    for i, M in enumerate(placements):
        R, r = M.rotation, M.translation - point
        G[:3, 6 * i:6 * i + 3] = R
        G[3:, 6 * i:6 * i + 3] = pin.skew(r) @ R
        G[3:, 6 * i + 3:6 * i + 6] = R
    return G


def test_the_internal_part_sums_to_no_net_wrench_and_keeps_the_rest():
    """For random placements and wrenches: the internal part maps to a zero net wrench, the
    remainder alone reproduces the net wrench, and a least-norm distribution of a net
    wrench has no internal part."""
    rng = np.random.default_rng(3)
    for k in (2, 3, 4):
        placements = tuple(pin.SE3.Random() for _ in range(k))
        point = rng.normal(size=3)
        w = rng.normal(size=(k, 6)) * [20, 20, 20, 0.5, 0.5, 1.0]
        G = _grasp_map(placements, point)
        w_int = internal_part(w, G)
        assert np.allclose(G @ w_int.reshape(-1), 0.0, atol=1e-9)
        assert np.allclose(G @ (w - w_int).reshape(-1), G @ w.reshape(-1), atol=1e-9)
        assert np.allclose(internal_part(w_int, G), w_int, atol=1e-9)
        scale = np.tile([35.0, 35.0, 62.0, 0.25, 0.25, 1.4], k)
        least = (np.linalg.pinv(G * scale) @ (G @ w.reshape(-1))) * scale
        assert np.allclose(internal_part(least.reshape(k, 6), G), 0.0, atol=1e-8)


def test_the_statics_grasp_map_gives_the_world_maps_internal_part(rm):
    """The body-frame ``A`` of the statics and the world-axes grasp map about the body have
    the same null space: over random configurations and leg subsets the internal parts agree
    to 1e-9 N (and N m)."""
    ev = StaticsEvaluator(rm)
    rng = np.random.default_rng(4)
    s0 = rm.default_state()
    for k in range(20):
        q = s0.q().copy()
        q[3:7] = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
        q[7:] = rm.clip_joints(s0.joint_positions + rng.normal(0, 0.2, 20))
        st = ev.evaluate(q)
        legs = sorted(rng.choice(4, size=2 + k % 3, replace=False))
        w = rng.normal(size=(len(legs), 6)) * [20, 20, 20, 0.5, 0.5, 1.0]
        A = np.hstack([st.A[:, 6 * i:6 * i + 6] for i in legs])
        G = _grasp_map([st.foot_poses[i] for i in legs], q[:3])
        np.testing.assert_allclose(internal_part(w, A), internal_part(w, G), atol=1e-9)


def _observable_truth(trial, legs, estimate):
    """The simulator's wrench on each gripper in the estimate's gripper frames, its
    unobservable direction removed."""
    truth = trial.sim.grippers.wrenches(legs)
    out = []
    for k, leg in enumerate(legs):
        site = trial.sim.grippers.wrench_site[leg]
        Rp = trial.sim.data.site_xmat[site].reshape(3, 3)
        M = estimate.placements[k]
        f = Rp @ truth[k][:3]
        m = Rp @ truth[k][3:] + np.cross(trial.sim.data.site_xpos[site] - M.translation, f)
        w = np.concatenate([M.rotation.T @ f, M.rotation.T @ m])
        n = estimate.unobservable[k]
        out.append(w - (n @ w) * n)
    return np.array(out)


@pytest.fixture(scope="module")
def recorded_climb():
    """30 s of an unbreakable climb up the vertical wall (a release, a swing and a grasp):
    per sampled cycle the estimate's errors with the simulated robot's own model on the
    true state, and with the controller's nominal model on its state estimate."""
    trial = ClimbTrial(ClimbSettings(incline_deg=90.0, breakable=False), seed=0)
    exact = GripperWrenchEstimator(RobotModel(trial.sim_robot), trial.sim.servos.kv)
    robot = GripperWrenchEstimator(RobotModel(trial.robot), trial.sim.servos.kv)
    errors = {"exact": [], "robot": []}
    while trial.step() and trial.k * trial.dt < PLACEMENT_TIME + 30.0:
        if trial.k % 10 or trial.k * trial.dt < PLACEMENT_TIME:
            continue
        legs = trial.held
        tau = trial.sim.joint_torques()
        for name, est, state in (("exact", exact, trial.sim.true_state()),
                                 ("robot", robot, trial.ekf.state(*trial.sim.joints()))):
            g = est.estimate(state, tau, legs)
            e = _observable_truth(trial, legs, g) - g.wrenches
            errors[name] += [(np.linalg.norm(r[:3]), np.linalg.norm(r[3:])) for r in e]
    return {k: np.array(v) for k, v in errors.items()}


def test_exact_model_recovers_the_observable_wrench(recorded_climb):
    """With the simulated robot's model and state the five observable components match the
    constraint wrenches to 0.2 N and 0.03 N m (95th percentile, about 500 samples; the rest
    is the servos' dynamics, which the quasi-static balance leaves out)."""
    e = recorded_climb["exact"]
    assert len(e) > 300
    assert np.percentile(e[:, 0], 95) < 0.2 and np.percentile(e[:, 1], 95) < 0.03


def test_robot_model_and_estimate_recover_the_observable_wrench(recorded_climb):
    """With the controller's nominal model and its own state estimate (what the robot has)
    the observable components match within 0.5 N and 0.1 N m (95th percentile)."""
    e = recorded_climb["robot"]
    assert np.percentile(e[:, 0], 95) < 0.5 and np.percentile(e[:, 1], 95) < 0.1
