"""Aiming the flight: the board re-aims the front foot at the wall from the measured take-off.

The front misses come from the push-off (docs/results/long_climbs.md): a perturbed robot
takes off with a state that keeps its front foot off the wall at the catch, and feedback
through the same clipped motors during the push-off cannot restore the take-off. In
flight the body's centre of mass is ballistic, but the joints still move the front foot
relative to it (the distal link and gripper weigh 10 g of the robot's 270 g).
So at the rear release the board predicts the flight and bends the joints' reference to
put the front foot on the wall at the planned catch:

* the take-off state comes from what the robot senses at the release packet: the IMU's
  body angle and rate, the encoders' angles and speeds, the rear gripper at rest on the
  wall (it is still hooked when the release is sent);
* the prediction is the project's own dynamics (:func:`clamber.jumper.model.jumper_model`,
  centre-of-mass base, no contact) with the nominal ESCs' PD, the motors and their supply
  clip closed over the board's reference, one RK4 step per 500 Hz packet;
* the correction is a joint offset ``d`` that ramps in over ``ramp_in`` from
  ``ramp_start`` after the release (a smoothstep) and out over ``ramp_out`` after the front
  switch closes. ``d`` solves, by Gauss-Newton steps with CasADi's derivative of the
  rollout, for the front gripper's path to the wall over the last ``window`` periods
  before the planned catch: the nominal robot's, ``aim_depth`` closer, with the joints
  weighted by ``weights`` (hip, spine, shoulder) and each within ``max_offset``. A foot
  predicted no more than ``deadband`` farther from the wall than the nominal robot's at
  the catch leaves the jump as planned (a foot that arrives early is caught).

The offset travels as joint targets with the packets, so the ESC's PD, its supply clip and
the motor line apply to it as to the rest of the reference. Measured (docs/results/
long_climbs.md, "A front gripper that drags on the wall"): the prediction flags the front
misses, the re-aim does not save them; off by default.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import casadi as ca
import numpy as np

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.motor import EscGains, MotorParameters
from clamber.jumper.solution import TrajectorySolution

#: Names of the flight feedbacks (`--flight-feedback`).
FLIGHT_FEEDBACKS = ("none", "aim")


@dataclass(frozen=True)
class FlightAimSettings:
    """How the board re-aims the flight (units in brackets)."""

    aim_depth: float = 0.002
    """How much closer to the wall than on the planned take-off the front gripper is aimed
    at the planned catch [m]: a foot aimed exactly at the wall touches it only if the
    prediction is exact."""
    deadband: float = 0.035
    """How much farther from the wall than the nominal robot's the front gripper must be
    predicted at the planned catch for the board to re-aim [m] (on 60 robots of master
    seed 1 at 1.5 x tolerances, ready landings were predicted up to 28 mm farther, front
    misses 47-107 mm)."""
    max_offset: float = 0.5
    """Largest offset per joint [rad]."""
    weights: tuple[float, float, float] = (0.25, 0.5, 1.0)
    """Relative freedom of the hip, spine and shoulder offsets [-]: the shoulder moves the
    light front gripper with the least reaction on the body."""
    window: int = 8
    """Board periods before the planned catch over which the front gripper's path to the
    wall is matched to the nominal robot's [-] (0: the catch instant alone)."""
    ramp_start: float = 0.04
    """Time after the release at which the offset starts to ramp in [s]: the front foot
    leaves the wall a few millimetres away, and an offset sent at once puts it back on the
    wall before the flight."""
    ramp_in: float = 0.03
    """Time over which the offset ramps in [s]."""
    ramp_out: float = 0.03
    """Time over which it ramps out after the front catch [s]."""

    def __post_init__(self) -> None:
        check.integer("flight_aim", "window", self.window, low=0)
        check.numeric_fields(self, "flight_aim", strict=True,
                             names=("max_offset", "ramp_in", "ramp_out"))
        check.numeric_fields(self, "flight_aim",
                             names=("aim_depth", "deadband", "ramp_start"))
        w = np.asarray(self.weights, float)
        if w.shape != (3,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.any():
            raise ConfigError(f"flight_aim.weights = {self.weights!r}: must be three "
                              "finite, non-negative numbers, not all zero")


def check_flight_feedback(name: str) -> str:
    """``name`` if it is one of :data:`FLIGHT_FEEDBACKS`, else a ConfigError."""
    if name not in FLIGHT_FEEDBACKS:
        raise ConfigError(f"flight feedback {name!r} unknown; allowed: {FLIGHT_FEEDBACKS}")
    return name


def smoothstep(x: np.ndarray | float) -> np.ndarray:
    """0 below 0, 1 above 1, ``3x^2 - 2x^3`` between (zero slope at both ends)."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


@cache
def flight_rollout(n: int) -> ca.Function:
    """``(x0, d, theta, profile, volt, p, esc, h) -> front``: ``n`` board periods of free
    flight from ``x0`` (centre-of-mass base, (12,)) with the ESC PD closed.

    ``theta`` (3, n) are the packets' joint targets, ``profile`` (n,) the share of the
    offset ``d`` (3,) each carries, ``volt`` (3, n) the feed-forward, ``esc`` = (kp, kd, a,
    c, supply) per joint (15,). The speed target is the packets' difference, as on the
    board. Output (2, n): the front gripper's position at each period's end.
    """
    m = jumper_model("com")
    x = ca.MX.sym("x", 12)
    th_ref, w_ref, v_ff = ca.MX.sym("th", 3), ca.MX.sym("w", 3), ca.MX.sym("v", 3)
    p = ca.MX.sym("p", m.points.size1_in(1))
    esc, h = ca.MX.sym("esc", 15), ca.MX.sym("h")

    def rhs(xx: ca.MX) -> ca.MX:
        q, qd = xx[:6], xx[6:]
        th, w = q[3:6], qd[3:6]
        kp, kd, a, c, vs = esc[0:3], esc[3:6], esc[6:9], esc[9:12], esc[12:15]
        volt = ca.fmin(ca.fmax(kp * (th_ref - th) + kd * (w_ref - w) + v_ff, -vs), vs)
        tau = a * volt - c * w
        qdd = ca.solve(m.mass_matrix(q, p), m.B @ tau - m.bias(q, qd, p))
        return ca.vertcat(qd, qdd)

    k1 = rhs(x)
    k2 = rhs(x + 0.5 * h * k1)
    k3 = rhs(x + 0.5 * h * k2)
    k4 = rhs(x + h * k3)
    xn = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    step = ca.Function("flight_step", [x, th_ref, w_ref, v_ff, p, esc, h], [xn])

    x0, d = ca.MX.sym("x0", 12), ca.MX.sym("d", 3)
    theta, prof = ca.MX.sym("theta", 3, n), ca.MX.sym("profile", 1, n)
    volt = ca.MX.sym("volt", 3, n)
    targets = theta + d @ prof
    prev = ca.horzcat(targets[:, 0], targets[:, :-1])
    speeds = (targets - prev) / h
    xs = step.mapaccum(n)(x0, targets, speeds, volt, p, esc, h)
    pts = m.points.map(n)(xs[:6, :], p)  # (2, 5n): columns p1..p5 of each period
    return ca.Function("flight_rollout", [x0, d, theta, prof, volt, p, esc, h],
                       [pts[:, 0::5]])


@dataclass(frozen=True)
class FlightAim:
    """One solution's flight re-aim: its reference from the release to past the catch."""

    settings: FlightAimSettings
    rate_hz: float
    release: int
    """Reference sample of the rear release."""
    catch: int
    """Periods from the release sample to the planned front catch."""
    theta: np.ndarray
    volt: np.ndarray
    profile: np.ndarray
    parameters: np.ndarray
    esc: np.ndarray
    wall_x: float
    """The front gripper centre's x when it touches the wall (its radius) [m]."""
    planned: float
    """The front gripper's predicted x at the catch on the nominal robot's take-off [m]."""
    path: np.ndarray
    """Its predicted x at each period's end [m]."""

    def offset(self, estimate: np.ndarray) -> np.ndarray:
        """Joint offset [rad] (hip, spine, shoulder) for the take-off ``estimate`` = (body
        angle, three joint angles, their rates), the rear gripper still on the wall."""
        return self.assess(estimate)[1]

    def assess(self, estimate: np.ndarray) -> tuple[float, np.ndarray]:
        """How much farther from the wall than the nominal robot's the front gripper is
        predicted at the planned catch [m], and the offset [rad] (:meth:`offset`)."""
        s = self.settings
        x0 = take_off_state(estimate, self.parameters, self.wall_x)
        d = np.zeros(3)
        w = np.asarray(s.weights, float)
        gap = self._distance(x0, d) - self.planned
        if gap <= s.deadband:
            return gap, d  # on its way to the wall: the catch window takes an early foot
        window = slice(max(0, self.catch - 1 - s.window), self.catch)
        goal = self.path[window] - s.aim_depth
        for _ in range(4):  # Gauss-Newton, weighted least change; a joint at its limit
            e = self._path(x0, d)[window] - goal  # drops out while the step pushes it further
            J = self._jacobian(x0, d)[window]
            g = J.T @ e
            free = w * ~((np.abs(d) >= s.max_offset - 1e-12) & (np.sign(-g) == np.sign(d)))
            H = J.T @ J * np.sqrt(np.outer(free, free)) + np.diag(1e-9 + (free == 0))
            step = -np.sqrt(free) * np.linalg.solve(H, np.sqrt(free) * g)
            d = np.clip(d + step, -s.max_offset, s.max_offset)
            if np.abs(step).max() < 1e-4:
                break
        return gap, d

    def _rollout(self, x0: np.ndarray, d: np.ndarray):
        f = flight_rollout(self.theta.shape[1])
        return f(x0, d, self.theta, self.profile, self.volt, self.parameters, self.esc,
                 1.0 / self.rate_hz)

    def _path(self, x0: np.ndarray, d: np.ndarray) -> np.ndarray:
        return np.array(self._rollout(x0, d))[0]

    def _distance(self, x0: np.ndarray, d: np.ndarray) -> float:
        return float(self._path(x0, d)[self.catch - 1])

    def _jacobian(self, x0: np.ndarray, d: np.ndarray) -> np.ndarray:
        return np.array(_distance_jacobian(self.theta.shape[1])(
            x0, d, self.theta, self.profile, self.volt, self.parameters, self.esc,
            1.0 / self.rate_hz))


@cache
def _distance_jacobian(n: int) -> ca.Function:
    """d(front gripper x at each period)/d(offset), (n, 3), of :func:`flight_rollout`."""
    f = flight_rollout(n)
    ins = [ca.MX.sym(f.name_in(i), f.sparsity_in(i)) for i in range(f.n_in())]
    return ca.Function("distance_jacobian", ins, [ca.jacobian(f(*ins)[0, :].T, ins[1])])


def take_off_state(estimate: np.ndarray, parameters: np.ndarray,
                   wall_x: float) -> np.ndarray:
    """Centre-of-mass state (q, qd) from the board's estimate with the rear gripper at rest
    at ``(wall_x, 0)``."""
    e = np.asarray(estimate, float)
    q = np.r_[wall_x, 0.0, e[0:4]]
    qd = np.r_[0.0, 0.0, e[4:8]]
    a, b = jumper_model("com").from_rear_foot(q, qd, parameters)
    return np.r_[np.array(a).ravel(), np.array(b).ravel()]


_CACHE: dict[tuple, FlightAim] = {}


def design_flight_aim(sol: TrajectorySolution, theta: np.ndarray, voltage: np.ndarray,
                      rate_hz: float, motor: MotorParameters, gains: EscGains,
                      kp_scale: float, kd_scale: float, wall_x: float,
                      settings: FlightAimSettings, nominal: np.ndarray,
                      key: str) -> FlightAim:
    """The flight re-aim of the nominal robot for ``sol``'s reference (arrays (n, 3) at
    ``rate_hz``), cached per ``key`` (a digest of the solution) and settings.

    ``nominal`` is what the nominal robot's board estimates at the release packet: the
    flight predicted from it is the one that catches, and the sensors' lag cancels
    against the same sensors' readings in a trial."""
    ck = (key, rate_hz, motor, gains, kp_scale, kd_scale, wall_x, settings,
          np.asarray(nominal, float).tobytes())
    if ck in _CACHE:
        return _CACHE[ck]
    pt = sol.phase_times
    release = int(np.ceil(pt[2] * rate_hz - 1e-9))
    catch = max(1, int(round((pt[3] - pt[2]) * rate_hz)))
    n = min(catch + 2, len(theta) - release)
    t = np.arange(1, n + 1) / rate_hz
    profile = smoothstep((t - settings.ramp_start) / settings.ramp_in)[None, :]
    esc = np.r_[[gains.kp * kp_scale] * 3, [gains.kd * kd_scale] * 3, [motor.gain] * 3,
                [motor.damping] * 3, [motor.supply_voltage] * 3]
    aim = FlightAim(settings=settings, rate_hz=rate_hz, release=release, catch=catch,
                    theta=np.ascontiguousarray(theta[release:release + n].T),
                    volt=np.ascontiguousarray(voltage[release:release + n].T),
                    profile=profile, parameters=sol.morphology.parameters(), esc=esc,
                    wall_x=wall_x, planned=0.0, path=np.zeros(n))
    path = aim._path(take_off_state(nominal, aim.parameters, wall_x), np.zeros(3))
    aim = replace(aim, planned=float(path[catch - 1]), path=path)
    _CACHE[ck] = aim
    return aim

