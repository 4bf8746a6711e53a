"""The anchor EKF run alongside a climb from the sensors alone (a shadow estimate): its own
IMU noise, encoder quantisation and contacts detected from the servo-current force magnitude
(on a wall hold forces are not vertical); anchors slip little, as closed spines hold."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clamber.quadruped.estimation.contact import (
    ContactDetector,
    FootForceEstimator,
    ServoCurrentSensor,
    contact_scores,
)
from clamber.quadruped.estimation.contact_ekf import AnchorEkf, AnchorEkfSettings, calibrate_gyro
from clamber.quadruped.estimation.estimator import SimulatedImu
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial
from clamber.quadruped.trials.trot import ENCODER_TICK, GYRO_CALIBRATION_S

#: Anchor slip random walk while climbing [m/sqrt(s)].
CLIMB_SLIP = 0.001


@dataclass(frozen=True)
class ShadowResult:
    """Final position errors [m] of the trial's estimate and the shadow EKF, the distance
    climbed [m], and the contact detector's precision and recall."""

    success: bool
    distance_m: float
    trial_drift_m: float
    anchor_drift_m: float
    contact_precision: float
    contact_recall: float

    @property
    def trial_drift_percent(self) -> float:
        return 100 * self.trial_drift_m / self.distance_m if self.distance_m > 1e-3 else math.nan

    @property
    def anchor_drift_percent(self) -> float:
        return 100 * self.anchor_drift_m / self.distance_m if self.distance_m > 1e-3 else math.nan


class AnchorShadow:
    """The anchor EKF stepped alongside a climbing trial (:meth:`update` before each cycle),
    contacts detected from the servo currents."""

    def __init__(self, trial: ClimbTrial, seed: int) -> None:
        self.trial = trial
        sim = trial.sim
        self.imu = SimulatedImu(seed=seed + 303)
        bias = calibrate_gyro(self.imu, trial.body0.rotation, GYRO_CALIBRATION_S, trial.dt)
        self.ekf = AnchorEkf(trial.rm, trial.body0.translation, trial.body0.rotation,
                             self.imu.spec, AnchorEkfSettings(slip=CLIMB_SLIP))
        self.ekf.set_gyro_bias(*bias)
        self.forces = FootForceEstimator(RobotModel(trial.robot), sim.servos.kv)
        self.currents = ServoCurrentSensor(sim.servos.current_per_torque, seed=seed + 404)
        self.detector = ContactDetector()
        self.detected: list = []
        self.truth: list = []
        self.first = True
        self.squared = 0.0
        self.cycles = 0

    def update(self) -> None:
        """Predict with the IMU, detect contacts, update with the encoders (one cycle)."""
        sim, ekf, dt = self.trial.sim, self.ekf, self.trial.dt
        q, dq = sim.joints()
        q = np.round(q / ENCODER_TICK) * ENCODER_TICK
        if not self.first:
            ekf.predict(*self.imu.measure(*sim.imu_truth(), dt), dt)
        self.first = False
        f = self.forces.forces(q, dq, self.currents.read(sim.joint_torques()), ekf.R)
        found = self.detector.update(np.linalg.norm(f, axis=1))
        self.detected.append(found)
        self.truth.append(tuple(sim.grippers.attached))
        ekf.update(q, found)
        e = ekf.p - sim.true_state().body_position
        self.squared += float(e @ e)
        self.cycles += 1

    def error(self) -> float:
        """The estimate's position error now [m]."""
        return float(np.linalg.norm(self.ekf.p - self.trial.sim.true_state().body_position))

    def rms(self) -> float:
        """RMS of the position error over the cycles updated [m]."""
        return math.sqrt(self.squared / self.cycles) if self.cycles else math.nan


def shadow_climb(settings: ClimbSettings, seed: int,
                 time_limit: float | None = None) -> ShadowResult:
    """One climb with the anchor EKF alongside; ``time_limit`` [s] cuts it short."""
    trial = ClimbTrial(settings, seed, time_limit=time_limit)
    shadow = AnchorShadow(trial, seed)
    while True:
        shadow.update()
        if not trial.step():
            break
    result = trial.result()
    p = trial.sim.true_state().body_position
    scores = contact_scores(shadow.detected, shadow.truth)
    return ShadowResult(result.success, max(0.0, result.distance_m),
                        float(np.linalg.norm(trial.ekf.p - p)),
                        shadow.error(), scores["precision"], scores["recall"])
