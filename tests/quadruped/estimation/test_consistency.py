"""The anchor EKF is consistent on data simulated from its own model: its normalised
estimation errors squared (NEES) and innovations squared (NIS) follow their chi-square laws
over Monte Carlo runs of a simulated trot (Bar-Shalom, Li and Kirubarajan, ch. 5.4)."""

import numpy as np
import pinocchio as pin
from scipy.stats import chi2

from clamber.quadruped.estimation.contact_ekf import AnchorEkf, AnchorEkfSettings, nees
from clamber.quadruped.estimation.estimator import ImuParameters, SimulatedImu
from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.model.robot_model import RobotModel

G = np.array([0.0, 0.0, -9.81])
#: Feet in {B} at touchdown [m].
NOMINAL_FEET = np.array([[0.15, 0.12, -0.2], [0.15, -0.12, -0.2], [-0.15, 0.12, -0.2],
                         [-0.15, -0.12, -0.2]])
#: Diagonal pairs, swapped every half period.
PAIRS = (("LF", "RR"), ("RF", "LR"))


def _run(rm, seed, steps, assumed_noise=0.003, dt=0.02, half_period=0.3):
    """One simulated trot: the truth follows the filter's discrete strapdown step with
    smooth accelerations and rates, the IMU adds turn-on biases, bias walks and white
    noise, each stance foot's kinematic position has 3 mm of white noise (the filter
    assumes ``assumed_noise`` [m]), and the filter starts from an error drawn from its
    initial covariance. Returns the NEES of the body's position, velocity and attitude
    (9 dof) at every step and the filter."""
    rng = np.random.default_rng(seed)
    spec = ImuParameters()
    settings = AnchorEkfSettings(foot_noise=assumed_noise, slip=0.0, gate=0.0)
    foot_noise = 0.003
    imu = SimulatedImu(spec, seed=seed + 1000)
    p, v, R = np.array([0.0, 0.0, 0.25]), np.array([0.2, 0.0, 0.0]), np.eye(3)
    ekf = AnchorEkf(rm, p + rng.normal(0, settings.initial_position, 3),
                    R @ pin.exp3(rng.normal(0, settings.initial_attitude, 3)), spec, settings)
    ekf.v = v + rng.normal(0, settings.initial_velocity, 3)
    anchors = np.zeros((4, 3))
    phase = rng.uniform(0, 6)
    values = []
    contacts: tuple[str, ...] = ()
    for k in range(steps):
        t = k * dt + phase
        a = 0.3 * np.array([np.sin(1.3 * t), np.cos(0.8 * t), 0.5 * np.sin(2.0 * t)])
        w = 0.3 * np.array([np.sin(1.1 * t), np.cos(0.7 * t), 0.5 * np.sin(0.9 * t)])
        f = R.T @ (a - G)
        reading = imu.measure(f, w, dt)
        p, v, R = p + v * dt + 0.5 * a * dt * dt, v + a * dt, R @ pin.exp3(w * dt)
        ekf.predict(*reading, dt)
        pair = PAIRS[int(k * dt / half_period) % 2]
        for leg in pair:
            if leg not in contacts:
                i = LEG_NAMES.index(leg)
                anchors[i] = p + R @ NOMINAL_FEET[i]
        contacts = pair
        feet = R.T @ (anchors - p).T
        feet = feet.T + rng.normal(0, foot_noise, (4, 3))
        ekf.update_feet(feet, contacts)
        e = np.concatenate([p - ekf.p, v - ekf.v, pin.log3(ekf.R.T @ R)])
        values.append(nees(e, ekf.body_covariance()))
    return np.array(values), ekf


def _scores(rm, runs, steps, assumed_noise=0.003):
    """The share of steps whose run-averaged NEES (9 dof) lies in its two-sided 95 %
    chi-square band, and the mean NIS over all foot updates with its two-sided 99.9 %
    chi-square bounds (3 dof each; innovations of a consistent filter are white)."""
    results = [_run(rm, seed, steps, assumed_noise) for seed in range(runs)]
    mean_nees = np.mean([r[0] for r in results], axis=0)
    low, high = chi2.ppf([0.025, 0.975], 9 * runs) / runs
    inside = float(np.mean((mean_nees >= low) & (mean_nees <= high)))
    nis = np.array([value for _, ekf in results for value, _ in ekf.nis])
    return inside, nis.mean(), chi2.ppf([0.0005, 0.9995], 3 * nis.size) / nis.size


def test_anchor_ekf_nees_and_nis_follow_their_chi_square_laws():
    """Over 16 runs of 4 s the run-averaged NEES lies in its 95 % band at >= 85 % of the
    steps (95 % expected of a consistent filter) and the mean NIS within its 99.9 % bounds;
    a filter that assumes half the foot noise there is fails both."""
    rm = RobotModel()
    inside, nis, (low, high) = _scores(rm, 16, 200)
    assert inside >= 0.85 and low <= nis <= high, (inside, nis, low, high)
    inside, nis, (low, high) = _scores(rm, 16, 200, assumed_noise=0.0015)
    assert inside < 0.5 and nis > high, (inside, nis, low, high)
