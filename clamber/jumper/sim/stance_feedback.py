"""Time-varying LQR on the push-off: the board corrects the take-off it is heading for.

The front misses at wide tolerances come from the push-off (docs/results/long_climbs.md):
the flight is aimed away from the wall, with the hip and shoulder behind the plan at
take-off, and the ESCs' joint-wise PD neither sees the passive body angle nor trades one
joint against another. Here the main board adds, at each 500 Hz packet of the stance
phases (phase 1 on both grippers, phase 2 on the rear gripper, up to the rear release), a
voltage correction ``u_k = -K_k (x - x_k) - D_k u_{k-1}`` to the feed-forward, on the
state it can estimate:

* ``x = (phi5, th4, th3, th2, and their rates)``: the body angle and its rate from an
  IMU on the rear link (modelled as the true values plus white noise), the joint angles
  and speeds from the ESCs' encoders (quantized, low-pass differenced, one ESC tick old);
* ``x_k`` is the stance motion to hold: by default what the nominal robot's board reads
  at that packet without this feedback (the sensors' lag then cancels), or the optimized
  motion (``target="plan"``);
* ``K_k`` comes from a finite-horizon discrete Riccati recursion on the project's own
  dynamics (:func:`clamber.jumper.model.jumper_model`, rear-foot base, the rear gripper a
  rigid pin; in phase 1 the front gripper a second pin) linearised with CasADi around
  ``x_k``, with the nominal motors and the ESCs' PD (at the push-off gain scales) inside
  the loop, so the LQR adds to the PD only what the PD does not already do. A packet
  acts one board period after the state it was computed on (encoder age, packet latency),
  so the design carries the previous correction in its state (``D_k``). In phase 1 the
  gain sees only the part of the error the closed chain can move.

The correction travels as voltage with the packets, so the ESC's supply clip and the
motor's torque-speed line apply to it as to the rest of the command.

Measured (docs/results/long_climbs.md, "Feedback on the take-off"): on held-out seeds it
lowered the climbs at the calibrated tolerances and raised them a little at 1.5 times
them; the misses it leaves are motors at their supply clip. Off by default.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache

import casadi as ca
import numpy as np
import scipy.linalg

from clamber import _validate as check
from clamber.exceptions import ConfigError
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.motor import EscGains, MotorParameters
from clamber.jumper.sim.reference import unique_nodes
from clamber.jumper.solution import TrajectorySolution

#: Names of the stance feedbacks (`--stance-feedback`).
STANCE_FEEDBACKS = ("none", "tvlqr")
#: What the push-off LQR holds the robot to (:attr:`StanceLQRSettings.target`).
STANCE_TARGETS = ("plan", "nominal")
#: Estimated state: body angle and the three joints, then their rates.
NX = 8
NU = 3


@dataclass(frozen=True)
class StanceLQRSettings:
    """Weights and sensor model of the push-off LQR (units in brackets).

    The weights follow Bryson's rule: each is one over the square of the error that
    should cost as much as ``voltage_scale`` volts of correction. ``angle_scale`` and
    ``rate_scale`` (scaled together) and ``target`` were chosen on master seed 1; the
    rest are set, not tuned.
    """

    angle_scale: float = 0.05
    """Body and joint angle error worth one ``voltage_scale`` of correction [rad]
    (tried on seed 1: 0.025, 0.05, 0.1, 0.2 with ``rate_scale`` 1, 2, 4, 8)."""
    rate_scale: float = 2.0
    """Body and joint rate error worth the same [rad/s]."""
    voltage_scale: float = 2.0
    """Correction voltage per joint that costs as much [V]."""
    terminal_factor: float = 10.0
    """Weight of the take-off state against a stance instant's [-]: the flight depends on
    where the push-off ends."""
    max_voltage: float = 6.0
    """Largest correction per joint [V] (the ESC then clips the sum to the supply)."""
    imu_angle_noise: float = 0.005
    """Standard deviation of the IMU's body angle [rad] (a gyro-fused MEMS attitude)."""
    imu_rate_noise: float = 0.02
    """Standard deviation of the IMU's body rate [rad/s] (a MEMS gyro read at 500 Hz,
    with margin for vibration)."""
    target: str = "nominal"
    """The stance motion held to: 'nominal' (what the nominal robot's board reads without
    this feedback, as a logged jump of the real robot would give it) or 'plan' (the
    optimized motion, which the sensors' lag alone puts the robot off)."""

    def __post_init__(self) -> None:
        check.numeric_fields(self, "stance_lqr", strict=True,
                             names=("angle_scale", "rate_scale", "voltage_scale",
                                    "terminal_factor", "max_voltage"))
        check.numeric_fields(self, "stance_lqr",
                             names=("imu_angle_noise", "imu_rate_noise"))
        check.choice("stance_lqr", "target", self.target, STANCE_TARGETS)


def check_stance_feedback(name: str) -> str:
    """``name`` if it is one of :data:`STANCE_FEEDBACKS`, else a ConfigError."""
    if name not in STANCE_FEEDBACKS:
        raise ConfigError(f"stance feedback {name!r} unknown; allowed: {STANCE_FEEDBACKS}")
    return name


def tvlqr_gains(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray,
                Qf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Finite-horizon discrete LQR: gains ``K_k`` (u = -K_k x) and cost-to-go ``P_k``.

    ``A`` (N, n, n), ``B`` (N, n, m); minimises sum_k x'Qx + u'Ru + x_N' Qf x_N by the
    backward Riccati recursion (SciPy has only the stationary equation, which the
    recursion reaches on a long time-invariant horizon; the tests check that).
    """
    N, n, m = A.shape[0], A.shape[1], B.shape[2]
    K = np.zeros((N, m, n))
    P = np.zeros((N + 1, n, n))
    P[N] = Qf
    for k in range(N - 1, -1, -1):
        Ak, Bk, Pn = A[k], B[k], P[k + 1]
        K[k] = scipy.linalg.solve(R + Bk.T @ Pn @ Bk, Bk.T @ Pn @ Ak, assume_a="pos")
        Pk = Q + Ak.T @ Pn @ (Ak - Bk @ K[k])
        P[k] = 0.5 * (Pk + Pk.T)
    return K, P


@cache
def stance_step(pinned_front: bool, substeps: int = 2) -> ca.Function:
    """One board period of the stance dynamics with the ESC PD closed, as a CasADi function
    ``(x, u, ref, p, esc, h) -> x_next`` (RK4, ``substeps`` steps).

    ``ref`` = (theta_ref, omega_ref, v_ff) (9,), ``esc`` = (kp, kd, a, c) per joint (12,):
    the ESC's effective gains [V/rad], [V s/rad], the motor's torque per volt [N m/V] and
    its speed loss [N m s/rad]. The rear gripper is a fixed pin at the origin.
    """
    m = jumper_model("rear_foot")
    x = ca.MX.sym("x", NX)
    u = ca.MX.sym("u", NU)
    ref = ca.MX.sym("ref", 9)
    p = ca.MX.sym("p", m.points.size1_in(1))
    esc = ca.MX.sym("esc", 12)
    h = ca.MX.sym("h")

    def rhs(xx: ca.MX) -> ca.MX:
        z, zd = xx[:4], xx[4:]
        q = ca.vertcat(0, 0, z)
        qd = ca.vertcat(0, 0, zd)
        th, w = z[1:4], zd[1:4]
        kp, kd, a, c = esc[0:3], esc[3:6], esc[6:9], esc[9:12]
        volt = kp * (ref[0:3] - th) + kd * (ref[3:6] - w) + ref[6:9] + u
        tau = a * volt - c * w
        M = m.mass_matrix(q, p)[2:, 2:]
        f = ca.vertcat(0, tau) - m.bias(q, qd, p)[2:]
        if pinned_front:
            J = m.jacobian_front(q, p)[:, 2:]
            jd = m.jdot_qd_front(q, qd, p)
            kkt = ca.vertcat(ca.horzcat(M, J.T), ca.horzcat(J, ca.MX.zeros(2, 2)))
            zdd = ca.solve(kkt, ca.vertcat(f, -jd))[:4]
        else:
            zdd = ca.solve(M, f)
        return ca.vertcat(zd, zdd)

    hs = h / substeps
    xn = x
    for _ in range(substeps):
        k1 = rhs(xn)
        k2 = rhs(xn + 0.5 * hs * k1)
        k3 = rhs(xn + 0.5 * hs * k2)
        k4 = rhs(xn + hs * k3)
        xn = xn + hs / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return ca.Function("stance_step", [x, u, ref, p, esc, h], [xn])


@cache
def _stance_jacobians(pinned_front: bool) -> ca.Function:
    """``(x, u, ref, p, esc, h) -> (dx_next/dx, dx_next/du)`` of :func:`stance_step`."""
    step = stance_step(pinned_front)
    x, u = ca.MX.sym("x", NX), ca.MX.sym("u", NU)
    ref, p = ca.MX.sym("ref", 9), ca.MX.sym("p", step.size1_in(3))
    esc, h = ca.MX.sym("esc", 12), ca.MX.sym("h")
    xn = step(x, u, ref, p, esc, h)
    return ca.Function("stance_jacobians", [x, u, ref, p, esc, h],
                       [ca.jacobian(xn, x), ca.jacobian(xn, u)])


def stance_plan(sol: TrajectorySolution, rate_hz: float) -> np.ndarray:
    """The optimized stance state (rear-foot base: phi5, joints, their rates) at every
    reference sample up to the take-off, shape (n, 8)."""
    m = jumper_model("com")
    p = sol.morphology.parameters()
    keep = unique_nodes(sol)
    qr = np.zeros((len(keep), 6))
    qdr = np.zeros((len(keep), 6))
    for i, k in enumerate(keep):
        a, b = m.to_rear_foot(sol.q[k], sol.qd[k], p)
        qr[i], qdr[i] = np.array(a).ravel(), np.array(b).ravel()
    n = int(np.ceil(sol.phase_times[2] * rate_hz - 1e-9))
    t = np.arange(n) / rate_hz
    cols = [np.interp(t, sol.t[keep], qr[:, j]) for j in range(2, 6)]
    cols += [np.interp(t, sol.t[keep], qdr[:, j]) for j in range(2, 6)]
    return np.column_stack(cols)


@dataclass(frozen=True)
class StanceLQR:
    """The gain schedule of one jump's push-off: at reference sample ``k`` (rate
    ``rate_hz``) the correction is ``-gains[k] (x - plan[k]) - delay_gains[k] u_prev``,
    ``u_prev`` the correction sent one packet before (it acts only now)."""

    rate_hz: float
    plan: np.ndarray
    gains: np.ndarray
    delay_gains: np.ndarray
    max_voltage: float

    def correction(self, k: int, estimate: np.ndarray,
                   previous: np.ndarray | None = None) -> np.ndarray | None:
        """Voltage correction [V] per joint at sample ``k`` given the one sent at ``k - 1``
        (None: none); None outside the push-off."""
        if not 0 <= k < len(self.gains):
            return None
        u = -self.gains[k] @ (np.asarray(estimate, float) - self.plan[k])
        if previous is not None:
            u = u - self.delay_gains[k] @ previous
        return np.clip(u, -self.max_voltage, self.max_voltage)


def linearize(sol: TrajectorySolution, around: np.ndarray, theta: np.ndarray,
              omega: np.ndarray, voltage: np.ndarray, rate_hz: float, motor: MotorParameters,
              gains: EscGains, kp_scale: float,
              kd_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Discrete ``A_k`` (n, 8, 8), ``B_k`` (n, 8, 3) of the push-off around the stance
    states ``around`` (n, 8); the reference arrays are the board's 500 Hz samples."""
    p = sol.morphology.parameters()
    esc = np.r_[[gains.kp * kp_scale] * 3, [gains.kd * kd_scale] * 3, [motor.gain] * 3,
                [motor.damping] * 3]
    n = len(around)
    A, B = np.zeros((n, NX, NX)), np.zeros((n, NX, NU))
    t1 = sol.phase_times[1]
    for k in range(n):
        jac = _stance_jacobians(k / rate_hz < t1 - 1e-9)
        ref = np.r_[theta[k], omega[k], voltage[k]]
        a, b = jac(around[k], np.zeros(NU), ref, p, esc, 1.0 / rate_hz)
        A[k], B[k] = np.array(a), np.array(b)
    return A, B


def closed_chain_projection(sol: TrajectorySolution, plan: np.ndarray,
                            rate_hz: float) -> np.ndarray:
    """Per sample, the projector (8, 8) that keeps of a state error only what the closed
    chain of phase 1 can move (the identity in phase 2).

    With both grippers holding, an error off the chain's manifold (the front gripper held
    a few millimetres off its planned hold) is one no torque removes; fed back, it only
    pulls the grippers against each other.
    """
    m = jumper_model("rear_foot")
    p = sol.morphology.parameters()
    out = np.tile(np.eye(NX), (len(plan), 1, 1))
    for k in range(min(len(plan), int(np.ceil(sol.phase_times[1] * rate_hz - 1e-9)))):
        J = np.array(m.jacobian_front(np.r_[0.0, 0.0, plan[k, :4]], p))[:, 2:]
        N = np.eye(4) - np.linalg.pinv(J) @ J
        out[k] = scipy.linalg.block_diag(N, N)
    return out


def solution_key(sol: TrajectorySolution) -> str:
    """A digest of what the push-off design reads from ``sol`` (its caches' key: a study's
    trials each get their own copy of the solution)."""
    h = hashlib.sha1()
    for arr in (sol.t, sol.q, sol.qd, sol.tau, sol.phase_times, sol.morphology.parameters()):
        h.update(np.ascontiguousarray(arr, float).tobytes())
    return h.hexdigest()


_CACHE: dict[tuple, StanceLQR] = {}


def design_stance_lqr(sol: TrajectorySolution, theta: np.ndarray, omega: np.ndarray,
                      voltage: np.ndarray, rate_hz: float, motor: MotorParameters,
                      gains: EscGains, kp_scale: float, kd_scale: float,
                      settings: StanceLQRSettings,
                      target: np.ndarray | None = None) -> StanceLQR:
    """The push-off's TVLQR for the nominal robot (the board knows no other), cached per
    solution and settings: every trial of a study shares it.

    ``target`` (n, 8) is the stance motion to hold the robot to and to linearise around;
    None takes the optimized one (:func:`stance_plan`).
    """
    plan = stance_plan(sol, rate_hz) if target is None else np.asarray(target, float)
    key = (solution_key(sol), hashlib.sha1(plan.tobytes()).hexdigest(), rate_hz, motor, gains,
           kp_scale, kd_scale, settings)
    if key not in _CACHE:
        A, B = linearize(sol, plan, theta, omega, voltage, rate_hz, motor, gains,
                         kp_scale, kd_scale)
        s = settings
        Q = np.diag([1 / s.angle_scale**2] * 4 + [1 / s.rate_scale**2] * 4)
        R = np.eye(NU) / s.voltage_scale**2
        # A packet's correction acts one board period after the state it was computed on
        # (encoder age, packet latency): the state carries the correction in flight.
        n = len(A)
        Aa = np.zeros((n, NX + NU, NX + NU))
        Aa[:, :NX, :NX], Aa[:, :NX, NX:] = A, B
        Ba = np.zeros((n, NX + NU, NU))
        Ba[:, NX:, :] = np.eye(NU)
        Qa = scipy.linalg.block_diag(Q, np.zeros((NU, NU)))
        K, _ = tvlqr_gains(Aa, Ba, Qa, R, s.terminal_factor * Qa)
        Kx = K[:, :, :NX] @ closed_chain_projection(sol, plan, rate_hz)
        _CACHE[key] = StanceLQR(rate_hz=rate_hz, plan=plan, gains=Kx,
                                delay_gains=K[:, :, NX:], max_voltage=s.max_voltage)
    return _CACHE[key]
