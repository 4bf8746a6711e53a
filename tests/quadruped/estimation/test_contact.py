"""Contact from servo currents and the contact-aided EKF, checked against the simulator."""

import math

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.estimation.contact import (
    CURRENT_UNIT_A,
    ContactDetector,
    ContactSettings,
    ServoCurrentSensor,
    contact_scores,
)
from clamber.quadruped.estimation.contact_ekf import AnchorEkf, AnchorEkfSettings, nees
from clamber.quadruped.estimation.estimator import ImuParameters, SimulatedImu
from clamber.quadruped.gaits import TrotGaitSettings
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.sim.scene import RUBBER_FOOT_MASS, robot_with_feet
from clamber.quadruped.trials.trot import TrotSettings, TrotTrial


def test_current_readings_are_quantised_and_unbiased():
    """Readings are whole multiples of the 2.69 mA unit (as torques through A per N m), and
    their error has zero mean and the set noise."""
    cpt = np.full(20, 0.5)
    sensor = ServoCurrentSensor(cpt, seed=3)
    tau = np.linspace(-3, 3, 20)
    reads = np.array([sensor.read(tau) for _ in range(2000)])
    units = reads * cpt / CURRENT_UNIT_A
    assert np.allclose(units, np.round(units), atol=1e-9)
    err = (reads - tau) * cpt
    assert abs(err.mean()) < 1e-3
    assert err.std() == pytest.approx(0.01, rel=0.1)


def test_hysteresis_and_settle():
    """A force must exceed ``on`` for more than ``settle`` cycles to count, and the contact
    holds until it drops below ``off``."""
    d = ContactDetector(ContactSettings(on=8.0, off=4.0, settle=1))
    seq = [0.0, 9.0, 9.0, 6.0, 5.0, 3.0, 6.0]
    out = [d.update(np.array([f, 0.0, 0.0, 0.0])) for f in seq]
    assert [("LF" in o) for o in out] == [False, False, True, True, True, False, False]
    with pytest.raises(ConfigError):
        ContactSettings(on=3.0, off=4.0)


def test_contact_scores():
    """Precision and recall count per-foot, per-cycle agreements."""
    s = contact_scores([("LF", "RR"), ("LF",)], [("LF",), ("LF", "RF")])
    assert s == {"precision": 2 / 3, "recall": 2 / 3}


def _foot_contact_forces(trial: TrotTrial) -> np.ndarray:
    """Vertical ground forces on each foot [N] from MuJoCo's contact solver."""
    m, d = trial.sim.model, trial.sim.data
    feet = {m.geom(f"{leg}_gripper_geom").id: i for i, leg in enumerate(LEG_NAMES)}
    out, f6 = np.zeros(4), np.zeros(6)
    for j in range(d.ncon):
        c = d.contact[j]
        leg = feet.get(int(c.geom1), feet.get(int(c.geom2)))
        if leg is None:
            continue
        mujoco.mj_contactForce(m, d, j, f6)
        world = c.frame.reshape(3, 3).T @ f6[:3]
        out[leg] += abs(world[2])
    return out


def test_force_estimate_matches_the_contact_solver_standing():
    """Standing, the foot forces estimated from the current readings match MuJoCo's contact
    forces within 3 N per foot, and their sum is the robot's weight within 10 %."""
    trial = TrotTrial(TrotSettings(gait=TrotGaitSettings(cycles=1, start_time=0.4)), seed=0)
    for _ in range(30):
        trial.step()
    est, ref = [], []
    for _ in range(8):
        trial.step()
        truth = trial.sim.true_state()
        f = trial.force_model.forces(truth.joint_positions, truth.joint_velocities,
                                     trial.currents.read(trial.sim.joint_torques()),
                                     truth.body_rotation)
        est.append(f[:, 2])
        ref.append(_foot_contact_forces(trial))
    est, ref = np.mean(est, axis=0), np.mean(ref, axis=0)
    assert np.abs(est - ref).max() < 3.0
    weight = float(trial.sim.model.body_mass.sum()) * 9.81
    assert est.sum() == pytest.approx(weight, rel=0.1)


def test_torque_contacts_agree_with_the_simulator_while_trotting():
    """Over a 4-cycle trot on flat ground the current-based detector's per-foot decisions
    have precision >= 0.85 and recall >= 0.9 against MuJoCo's contacts."""
    trial = TrotTrial(TrotSettings(gait=TrotGaitSettings(cycles=4)), seed=1)
    result, _ = trial.run()
    assert result.success
    assert result.contact_precision >= 0.85
    assert result.contact_recall >= 0.9


def _synthetic_trot(seed: int, noise: float) -> tuple[list[float], float]:
    """The anchor EKF on a body moving at 0.2 m/s with sway, feet alternating in diagonal
    pairs every 0.35 s, fed a model-exact IMU and foot positions with ``noise`` [m]; the
    NEES per degree of freedom at each step and the final position error [m]."""
    rm = RobotModel()
    rng = np.random.default_rng(seed)
    dt, n = 0.01, 600
    t = np.arange(n + 2) * dt
    nominal = {"LF": (0.15, 0.3), "RF": (0.15, -0.3), "LR": (-0.15, 0.3), "RR": (-0.15, -0.3)}

    def pose(tk):
        p = np.array([0.2 * tk, 0.01 * np.sin(3 * tk), 0.22 + 0.005 * np.sin(9 * tk)])
        return pin.SE3(pin.exp3(np.radians(2) * np.array([np.sin(2 * tk), np.sin(3 * tk),
                                                          0.3 * np.sin(tk)])), p)

    poses = [pose(tk) for tk in t]
    P = np.array([T.translation for T in poses])
    imu = SimulatedImu(ImuParameters(), seed=seed)
    ekf = AnchorEkf(rm, poses[0].translation, poses[0].rotation, imu.spec,
                    AnchorEkfSettings(foot_noise=noise, slip=1e-4))
    ekf.set_gyro_bias(imu.b_g + rng.normal(0, 1e-4, 3), 1e-4)
    ekf.v = (P[1] - P[0]) / dt
    anchors: dict[str, np.ndarray] = {}
    values = []
    for k in range(1, n):
        prev = poses[k - 1]
        acc = (P[k + 1] - 2 * P[k] + P[k - 1]) / dt**2
        w = pin.log3(prev.rotation.T @ poses[k].rotation) / dt
        ekf.predict(*imu.measure(prev.rotation.T @ (acc + [0, 0, 9.81]), w, dt), dt)
        T = poses[k]
        pair = ("LF", "RR") if int(t[k] / 0.35) % 2 == 0 else ("RF", "LR")
        for leg in list(anchors):
            if leg not in pair:
                del anchors[leg]
        for leg in pair:
            if leg not in anchors:
                anchors[leg] = T.translation + np.array([*nominal[leg], -0.22])
        feet = np.zeros((4, 3))
        for i, leg in enumerate(LEG_NAMES):
            if leg in anchors:
                feet[i] = T.rotation.T @ (anchors[leg] - T.translation) + rng.normal(0, noise, 3)
        ekf.update_feet(feet, pair)
        v_true = (P[k + 1] - P[k - 1]) / (2 * dt)
        e = np.concatenate([T.translation - ekf.p, v_true - ekf.v,
                            pin.log3(ekf.R.T @ T.rotation)])
        values.append(nees(e, ekf.body_covariance()) / 9)
    return values, float(np.linalg.norm(ekf.p - poses[n - 1].translation))


def test_anchor_ekf_is_consistent_and_drifts_little_on_a_synthetic_trot():
    """Fed measurements whose noise is what it assumes, the anchor EKF's mean NEES per
    degree of freedom over three seeds lies in [0.3, 2] (consistent), and its position
    drifts less than 1 % of the 1.2 m walked."""
    means, drifts = [], []
    for seed in range(3):
        values, drift = _synthetic_trot(seed, 0.002)
        means.append(np.mean(values))
        drifts.append(drift)
    assert 0.3 <= float(np.mean(means)) <= 2.0
    assert max(drifts) < 0.012


def test_trot_reports_drift_and_consistency():
    """A trot with torque contacts reports its drift as a percentage of the distance walked
    (the final error over the distance) and finite NIS and NEES."""
    trial = TrotTrial(TrotSettings(gait=TrotGaitSettings(cycles=3)), seed=0)
    r, _ = trial.run()
    walked = np.linalg.norm((trial.sim.true_state().body_position - trial.drift_start)[:2])
    assert r.estimation_drift_percent == pytest.approx(100 * r.estimation_drift_m / walked)
    assert math.isfinite(r.estimation_nis) and math.isfinite(r.estimation_nees)
    legacy = TrotTrial(TrotSettings(gait=TrotGaitSettings(cycles=1), estimator="odometry",
                                    contacts="schedule"), seed=0).run()[0]
    assert math.isnan(legacy.estimation_nees)


def test_settings_are_checked():
    """Unknown estimators, contact sources, feet and negative gains are refused."""
    for bad in ({"estimator": "ukf"}, {"contacts": "guess"}, {"feet": "hoof"},
                {"level_gain": -1.0}):
        with pytest.raises(ConfigError):
            TrotSettings(**bad)


def test_rubber_flat_feet_have_the_gripper_sole_and_rubber_mass():
    """The rubber flat foot keeps the gripper's box sole but weighs what a rubber foot does."""
    from clamber.quadruped.model.robot import Marcbot
    from clamber.quadruped.sim.scene import ground_scene
    from clamber.quadruped.sim.servos import ServoBank
    from clamber.quadruped.sim.world import ground_terrain

    robot = Marcbot()
    assert robot_with_feet(robot, "rubber_flat").link_masses[4] == RUBBER_FOOT_MASS
    models = {f: ground_scene(robot, ground_terrain("flat"), ServoBank(robot), f)
              for f in ("gripper", "rubber", "rubber_flat")}
    geom = {f: m.geom("LF_gripper_geom") for f, m in models.items()}
    assert geom["rubber_flat"].type[0] == geom["gripper"].type[0] == mujoco.mjtGeom.mjGEOM_BOX
    assert geom["rubber"].type[0] == mujoco.mjtGeom.mjGEOM_SPHERE
    mass = {f: float(m.body_mass.sum()) for f, m in models.items()}
    assert mass["rubber_flat"] == pytest.approx(mass["rubber"])
    assert mass["gripper"] > mass["rubber_flat"] + 1.0


def test_levelling_on_the_estimate_reduces_the_tilt():
    """Closing the loop on the estimated attitude (level gain 3/s) lowers the true RMS
    attitude error of a 6-cycle trot on gravel against the open-loop plan, same seed."""
    def attitude(gain: float) -> float:
        settings = TrotSettings(terrain="gravel", level_gain=gain,
                                gait=TrotGaitSettings(cycles=6))
        r, _ = TrotTrial(settings, seed=0).run()
        assert r.success
        return r.attitude_error_rms_deg

    assert attitude(3.0) < 0.85 * attitude(0.0)


def test_trot_cli_estimation_options(tmp_path, capsys):
    """`trot --feet rubber_flat --contacts truth --level-gain 2 --json` runs and reports the
    drift, contact scores and consistency keys alongside the old ones; a negative gain is
    refused with exit status 2."""
    import json

    from clamber.cli import build_parser
    from clamber.cli.main import main

    rc = main(["quadruped", "trot", "--terrain", "flat", "--feet", "rubber_flat", "--contacts",
               "truth", "--level-gain", "2", "--cycles", "1", "--workers", "0", "--no-figures",
               "--json", "--out", str(tmp_path)])
    assert rc == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert (r["feet"], r["contacts"], r["level_gain"]) == ("rubber_flat", "truth", 2.0)
    for key in ("mean_power_w", "estimation_rms_mm", "estimation_drift_percent",
                "contact_precision", "contact_recall", "estimation_nis", "estimation_nees"):
        assert r[key] is not None, key
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["quadruped", "trot", "--level-gain", "-1"])
    assert e.value.code == 2


def test_current_contacts_match_the_grippers_while_climbing():
    """Over the first 12 s of a vertical climb (placement and the first grasps), the
    current-based detector agrees with the grippers' attachment state (precision and recall
    >= 0.9), and the anchor EKF run alongside stays within 2 cm of the body."""
    from clamber.quadruped.trials.climb import ClimbSettings
    from clamber.quadruped.trials.shadow import shadow_climb

    r = shadow_climb(ClimbSettings(incline_deg=90.0), 0, time_limit=12.0)
    assert r.contact_precision >= 0.9 and r.contact_recall >= 0.9
    assert r.anchor_drift_m < 0.02
