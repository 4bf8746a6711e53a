"""Playback of an optimized jump in MuJoCo, as the robot would run it.

Timing as on the robot: the main board sends the joint reference and voltage
feed-forward at 500 Hz (each packet may arrive late by up to ``jitter``); which instant
of the reference it sends is the controller's choice (:mod:`clamber.jumper.sim.control`:
open-loop playback or event-triggered catching). Each joint's ESC runs its PD law at
1 kHz on the newest packet with quantized encoder angles; the motors (DC model with
back-EMF and supply limit) turn the voltage into torque, held constant over the ESC
period. Gripper releases travel with the packets; catches are armed ``arm_lead`` before
the optimized catch and missed if the gripper has not hooked ``catch_timeout`` after the
reference reached it. Free feet pivot passively (:class:`~clamber.jumper.sim.gripper.FootPivot`)
and hook only with the sole facing the wall.

A run is a :class:`JumpTrial`: set up once, stepped at 1 kHz, read out as a
:class:`SimulationResult`. Outcomes per jump (:class:`JumpRecord`): the front catch, the
rear catch, whether the robot is *ready* when the next jump starts (both grippers
hooked, nothing torn but a rear gripper that the board's re-catch hooked again after
its landing, the gripper separation and joint angles close to the optimized
start), the height gained, the time taken and the tracking error.
"""

from __future__ import annotations

import math
import time

import mujoco
import numpy as np

from clamber import _validate as check
from clamber.jumper.mjcf import Geometry, load_scene
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.control import (
    ReferenceClock,
    make_clock,
)
from clamber.jumper.sim.flight_aim import FlightAim, design_flight_aim
from clamber.jumper.sim.gripper import FootState, Gripper
from clamber.jumper.sim.motor import ESC_RATE_HZ
from clamber.jumper.sim.recorder import Recorder
from clamber.jumper.sim.reference import build_reference, optimized_angles
from clamber.jumper.sim.result import LOG_COLUMNS, JumpRecord, SimulationResult
from clamber.jumper.sim.settings import Realization, SimulationSettings
from clamber.jumper.sim.stance_feedback import (
    StanceLQR,
    design_stance_lqr,
    solution_key,
    stance_plan,
)
from clamber.jumper.solution import TrajectorySolution
from clamber.sim_stability import check_stable

GRIPPERS = ("front", "rear")




def initial_state(sol: TrajectorySolution) -> tuple[np.ndarray, np.ndarray, float]:
    """Optimized start in rear-foot coordinates (q, qd) and the gripper separation [m]."""
    p = sol.morphology.parameters()
    q0, qd0 = (np.array(v).ravel() for v in jumper_model("com").to_rear_foot(
        sol.q[0], sol.qd[0], p))
    points0 = np.array(jumper_model("rear_foot").points(q0, p))
    return q0, qd0, float(np.linalg.norm(points0[:, 0] - points0[:, 4]))


def close_stance(q: np.ndarray, parameters: np.ndarray, front: np.ndarray,
                 iterations: int = 8) -> np.ndarray:
    """Nearest ``q`` (rear-foot base, rear gripper fixed) with the front gripper at ``front``.

    Gauss-Newton with minimum-norm steps on the four angles [rad]; ``front`` in [m].
    """
    m = jumper_model("rear_foot")
    q = np.array(q, float)
    for _ in range(iterations):
        err = np.asarray(front) - np.array(m.points(q, parameters))[:, 0]
        if np.abs(err).max() < 1e-10:
            break
        J = np.array(m.jacobian_front(q, parameters))[:, 2:6]
        q[2:6] += np.linalg.lstsq(J, err, rcond=None)[0]
    return q


def catch_link_angles(sol: TrajectorySolution) -> tuple[float, float]:
    """Angle [rad] of each distal link (joint -> gripper) at its optimized catch."""
    out = []
    for phase, (g, j) in ((4, (0, 1)), (5, (4, 3))):
        k = int(np.flatnonzero(sol.phase == phase)[0])
        d = sol.points[k, :, g] - sol.points[k, :, j]
        out.append(math.atan2(d[1], d[0]))
    return out[0], out[1]


class _Packet:
    """One reference packet: joint targets [rad], speed targets [rad/s], voltages [V]."""

    __slots__ = ("arrival", "theta", "omega", "volt", "commands", "kp_scale", "kd_scale")

    def __init__(self, arrival, theta, omega, volt, commands, kp_scale=1.0,
                 kd_scale=1.0) -> None:
        self.arrival, self.theta, self.omega, self.volt = arrival, theta, omega, volt
        self.commands, self.kp_scale, self.kd_scale = commands, kp_scale, kd_scale


class JumpTrial:
    """One playback: :meth:`setup` (in the constructor), :meth:`step`, :meth:`result`."""

    def __init__(self, sol: TrajectorySolution, jumps: int = 1,
                 config: SimulationSettings | None = None,
                 realization: Realization | None = None, record: bool = True,
                 clock: ReferenceClock | None = None) -> None:
        check.integer("", "jumps", jumps, low=1)
        self.sol, self.jumps, self.record = sol, jumps, record
        self.cfg = config or SimulationSettings()
        self.real = realization or Realization.nominal(sol, self.cfg)
        self.t_start = time.perf_counter()
        self.ref = build_reference(sol, self.cfg.motor)
        self.clock = clock or make_clock(self.cfg.controller, self.ref.period,
                                         self.ref.phase_times, jumps, self.cfg.event_triggered)
        self.stance = self._stance_feedback()
        self.aim = self._flight_aim()
        self.aim_offset = np.zeros(3)  # this flight's joint offset [rad]
        self.aim_share = 0.0  # the share of it sent with the current packet
        self.aim_jump = -1  # the jump it was computed for
        self.aim_r0 = 0.0  # reference time of its release [s]
        self.aim_offsets: list[np.ndarray] = []  # every jump's offset, for the log
        self.aim_gaps: list[float] = []  # and its predicted catch distance beyond nominal
        self.estimates: dict[int, np.ndarray] | None = None  # first jump's, by packet
        self.stance_u: np.ndarray | None = None  # the last push-off correction [V]
        self.stance_k = -2  # its reference sample
        self._setup_model()
        self._setup_state()
        self._setup_schedule()

    # ---- set-up --------------------------------------------------------------------------
    def _stance_feedback(self) -> StanceLQR | None:
        """The push-off TVLQR the closed-loop board runs, designed on the nominal robot."""
        et, ref = self.cfg.event_triggered, self.ref
        if self.cfg.controller != "closed-loop" or et.stance_feedback == "none":
            return None
        self.imu_rng = np.random.default_rng([self.real.seed, 1])  # the jitter's stays as is
        target = nominal_stance(self.sol, self.cfg) if et.stance_lqr.target == "nominal" \
            else None
        return design_stance_lqr(self.sol, ref.theta, ref.omega, ref.voltage, ref.rate_hz,
                                 self.cfg.motor, self.cfg.gains, et.push_kp_scale,
                                 et.push_kd_scale, et.stance_lqr, target)

    def _flight_aim(self) -> FlightAim | None:
        """The flight re-aim the closed-loop board runs, designed on the nominal robot."""
        et, ref = self.cfg.event_triggered, self.ref
        if self.cfg.controller != "closed-loop" or et.flight_feedback == "none":
            return None
        if not hasattr(self, "imu_rng"):
            self.imu_rng = np.random.default_rng([self.real.seed, 1])
        radius = self.cfg.foot_radius or self.sol.settings.foot_radius
        release = int(np.ceil(self.sol.phase_times[2] * ref.rate_hz - 1e-9))
        nominal = nominal_stance(self.sol, self.cfg, release + 1)[release]
        return design_flight_aim(self.sol, ref.theta, ref.voltage, ref.rate_hz,
                                 self.cfg.motor, self.cfg.gains, et.push_kp_scale,
                                 et.push_kd_scale, radius, et.flight_aim, nominal,
                                 solution_key(self.sol))

    def _aimed(self, theta: np.ndarray, k: int, r: float, commands: list) -> np.ndarray:
        """``theta`` with this flight's offset: computed as the rear release is sent,
        ramped in over the flight and out once the front switch has closed."""
        s = self.cfg.event_triggered.flight_aim
        if k < self.jumps and (1, "release") in commands and self.aim_jump != k \
                and not self.grip[0].hooked:
            gap, self.aim_offset = self.aim.assess(self._estimate())
            self.aim_jump, self.aim_r0, self.aim_share = k, r, 0.0
            self.aim_offsets.append(self.aim_offset)
            self.aim_gaps.append(gap)
        if self.aim_jump != k or not self.aim_offset.any():
            return theta
        if self._switches(self.j * self.dt)[0]:
            self.aim_share = max(0.0, self.aim_share - self.board_period / s.ramp_out)
        else:
            self.aim_share = min(1.0, max(0.0, (r - self.aim_r0 - s.ramp_start) / s.ramp_in))
        x = self.aim_share
        return theta + self.aim_offset * (x * x * (3.0 - 2.0 * x))

    def _lifted(self, theta: np.ndarray, tau: float) -> np.ndarray:
        """``theta`` with the release lift at reference time ``tau`` within the jump [s]."""
        et, pt = self.cfg.event_triggered, self.ref.phase_times
        ramp = et.release_lift_ramp
        x = (tau - pt[1]) / ramp if tau < pt[2] else 1.0 - (tau - pt[2]) / (2 * ramp)
        x = min(1.0, max(0.0, x))
        return theta + np.array([0.0, 0.0, et.release_lift * x * x * (3.0 - 2.0 * x)])

    def _setup_model(self) -> None:
        sol, cfg = self.sol, self.cfg
        self.geometry = Geometry(foot_radius=cfg.foot_radius or sol.settings.foot_radius,
                                 motor_radius=sol.settings.motor_radius,
                                 timestep=1.0 / ESC_RATE_HZ / cfg.physics_substeps)
        self.m = load_scene(self.real.parameters, self.geometry)
        self.d = mujoco.MjData(self.m)
        m = self.m
        self.site = [m.site(f"{g}_gripper").id for g in GRIPPERS]
        self.joint_body = [m.body("link1").id, m.body("link3").id]  # joint next to each gripper
        self.foot_geom = [m.geom(f"{g}_foot").id for g in GRIPPERS]
        self.eq = [m.equality(f"{g}_hook").id for g in GRIPPERS]
        for e in self.eq:
            m.eq_solref[e] = (max(self.cfg.hook_timeconst, 2 * self.geometry.timestep),
                              self.cfg.hook_dampratio)
        self.dt = 1.0 / ESC_RATE_HZ

    def _setup_state(self) -> None:
        sol, real, cfg, d = self.sol, self.real, self.cfg, self.d
        q0, qd0, self.separation0 = initial_state(sol)
        front0 = np.array(jumper_model("rear_foot").points(q0, sol.morphology.parameters()))[:, 0]
        d.qpos[:] = close_stance(q0 + real.q0_offset, np.asarray(real.parameters, float),
                                 front0 + (0.0, real.front_offset))
        d.qvel[:] = qd0 + real.qd0_offset
        mujoco.mj_forward(self.m, d)
        regions = (sol.settings.safe_region_front, sol.settings.safe_region_rear)
        self.grip = [Gripper(g, regions[i], cfg.capture, self.dt, hooked=True)
                     for i, g in enumerate(GRIPPERS)]
        p = np.asarray(real.parameters, float)
        link = catch_link_angles(sol)
        stops = (cfg.pivot.spar_angle, cfg.pivot.rear_stop_angle)
        self.feet = [FootState(cfg.pivot, float(p[8] if i == 0 else p[4]), math.pi - link[i],
                               stops[i]) for i in range(2)]
        for i in range(2):
            self._hook(i, at_wall=False)
        self.y_rear_start = float(d.site_xpos[self.site[1], 1])
        self.history = [[None, None, None], [None, None, None]]  # last gripper positions
        self.link_prev = [None, None]

    def _setup_schedule(self) -> None:
        cfg, ref = self.cfg, self.ref
        self.rng = np.random.default_rng(self.real.seed)
        self.board_period = 1.0 / ref.rate_hz
        self.board_every = round(ESC_RATE_HZ / ref.rate_hz)
        self.last_arrival = -math.inf
        self.pending: list[_Packet] = []
        self.packet: _Packet | None = None
        self.prev_theta = ref.theta[0]
        self.r_prev = -1e-12  # reference time of the previous packet [s]
        self.r = 0.0  # reference time of the newest packet [s]
        pt = ref.phase_times
        # Reference instants within a jump that trigger something: (instant, gripper, action).
        self.triggers = sorted([(pt[1], 0, "release"), (pt[2], 1, "release"),
                                (pt[3] - cfg.arm_lead, 0, "arm"),
                                (pt[4] - cfg.arm_lead, 1, "arm"),
                                (pt[3], 0, "deadline"), (pt[4], 1, "deadline")])
        self.deadline = [math.inf, math.inf]
        self.hook_time = [math.inf, math.inf]
        self.caught, self.tears, self.fell = [False, False], 0, False
        self.rear_misses, self.rear_miss_t = 0, math.nan  # this jump's, first miss time [s]
        self.refuse_rear = False  # fault injection: this landing's rear catch is refused
        self.landing_rear_tears = 0  # rear tear-offs after this jump's rear catch
        self.front_touch = 0.0  # [N s] in the current jump
        self._force6 = np.zeros(6)
        self.events: list[tuple[float, str, str]] = []
        self.records: list[JumpRecord] = []
        self.jump_t0, self.j = 0.0, 0
        self.done = False
        self.track: list[tuple[float, float, float, float]] = []  # (r, hip, spine, shoulder)
        n = round((self.jumps * ref.period + 2.0) * ESC_RATE_HZ)
        self.rec = Recorder(LOG_COLUMNS, n) if self.record else None
        self.stop_tick = None
        self.enc_prev: list[float] | None = None
        self.speed_est: list[float] = [0.0, 0.0, 0.0]
        tf = cfg.sensors.speed_filter
        self.speed_alpha = math.exp(-self.dt / tf) if tf > 0 else 0.0

    # ---- actuation of the grippers -------------------------------------------------------
    def _hook(self, i: int, at_wall: bool) -> None:
        pos = self.d.site_xpos[self.site[i]]
        r = self.geometry.foot_radius
        self.m.eq_data[self.eq[i], 3:6] = (r if at_wall else pos[0], pos[1], 0.0)
        self.d.eq_active[self.eq[i]] = 1
        self.m.geom_contype[self.foot_geom[i]] = 0  # a hooked gripper's wall force is the pin's
        self.feet[i].flush()

    def _unhook(self, i: int) -> None:
        self.d.eq_active[self.eq[i]] = 0
        self.m.geom_contype[self.foot_geom[i]] = 1

    # ---- the main board (500 Hz) -----------------------------------------------------------
    def _switches(self, t: float) -> tuple[bool, bool]:
        lat = self.cfg.sensors.switch_latency
        return tuple(self.grip[i].hooked and t - self.hook_time[i] >= lat - 1e-9
                     for i in range(2))

    def _board_tick(self, t: float) -> None:
        r = self.clock.advance(self.board_period, self._switches(t))
        T, ref = self.ref.period, self.ref
        k = min(math.floor(r / T + 1e-9), self.jumps)
        commands = []
        for kk in range(max(0, math.floor(self.r_prev / T + 1e-9)), min(k, self.jumps - 1) + 1):
            for instant, gi, action in self.triggers:
                if self.r_prev < kk * T + instant <= r + 1e-12:
                    commands.append((gi, action))
        commands.extend(self.clock.take_commands())
        idx = 0 if k >= self.jumps else min(int((r - k * T) * ref.rate_hz + 1e-9),
                                             len(ref.theta) - 1)
        theta, volt = ref.theta[idx], ref.voltage[idx]
        if self.aim is not None:
            theta = self._aimed(theta, k, r, commands)
        if self.cfg.event_triggered.release_lift and k < self.jumps:
            theta = self._lifted(theta, r - k * T)
        if self.estimates is not None and k == 0:
            self.estimates.setdefault(idx, self._estimate(noise=False))
        if self.stance is not None and k < self.jumps and self.grip[1].hooked:
            prev = self.stance_u if idx == self.stance_k + 1 else None
            du = self.stance.correction(idx, self._estimate(), prev)
            if du is not None:
                volt = volt + du
            self.stance_u, self.stance_k = du, idx
        omega = (theta - self.prev_theta) * ref.rate_hz
        self.prev_theta = theta
        self.r_prev, self.r = r, r
        delay = self.real.start_delay + (self.rng.uniform(0.0, self.real.jitter)
                                         if self.real.jitter > 0 else 0.0)
        arrival = max(t + delay, self.last_arrival)
        self.last_arrival = arrival
        self.pending.append(_Packet(arrival, theta.tolist(), omega.tolist(), volt.tolist(),
                                    commands, self.clock.kp_scale, self.clock.kd_scale))
        self._jump_boundaries(t, r)

    def _jump_boundaries(self, t: float, r: float) -> None:
        """Close the record of every jump whose end the reference has passed."""
        T = self.ref.period
        while len(self.records) < self.jumps and r > (len(self.records) + 1) * T + 1e-9:
            self._end_jump(t)
            if self.done:
                return

    def _receive(self, t: float) -> None:
        while self.pending and self.pending[0].arrival <= t + 1e-12:
            pk = self.pending.pop(0)
            self.packet = pk
            for gi, action in pk.commands:
                self._command(t, gi, action)

    def _command(self, t: float, gi: int, action: str) -> None:
        g = self.grip[gi]
        if action == "release":
            if g.hooked:
                self._unhook(gi)
                self.events.append((t, GRIPPERS[gi], "release"))
            g.release()
        elif action in ("arm", "rearm"):
            if g.hooked:  # a re-catch replayed past a catch already made
                return
            if action == "rearm":  # the board starts a re-catch: a pending catch missed
                self._miss(t, gi)
            g.arm()
            self.history[gi] = [None, None, None]
            if gi == 1 and len(self.records) in self.cfg.rear_miss_jumps \
                    and self.rear_misses == 0:
                self.refuse_rear = True
        elif action == "disarm":
            self._miss(t, gi)
        else:
            self.deadline[gi] = t + self.cfg.catch_timeout

    def _miss(self, t: float, gi: int) -> None:
        """An armed gripper's catch window closed without a hook."""
        self.deadline[gi] = math.inf
        if not self.grip[gi].armed:
            return
        self.grip[gi].armed = False
        self.events.append((t, GRIPPERS[gi], "miss"))
        if gi == 1:
            self.refuse_rear = False
            self._count_rear_miss(t)

    def _count_rear_miss(self, t: float) -> None:
        self.rear_misses += 1
        if self.rear_misses == 1:
            self.rear_miss_t = t

    # ---- the ESCs (1 kHz) ------------------------------------------------------------------
    def _encoders(self, q: list[float]) -> tuple[list[float], list[float]]:
        """Quantized joint angles [rad] and the ESCs' filtered speed estimates [rad/s]."""
        res = self.cfg.sensors.encoder_resolution
        angles = [round(x / res) * res if res > 0 else x for x in q[3:6]]
        if self.enc_prev is None:
            self.enc_prev, self.speed_est = angles, list(self.d.qvel[3:6])
        a = self.speed_alpha
        self.speed_est = [a * s + (1 - a) * (x - p) / self.dt
                          for s, x, p in zip(self.speed_est, angles, self.enc_prev, strict=True)]
        self.enc_prev = angles
        return angles, self.speed_est

    def _estimate(self, noise: bool = True) -> np.ndarray:
        """The board's stance state: the IMU's body angle and rate (true value plus white
        noise), the ESCs' last encoder angles and speed estimates."""
        lqr = self.cfg.event_triggered.stance_lqr
        if self.enc_prev is None:
            res = self.cfg.sensors.encoder_resolution
            angles = [round(x / res) * res if res > 0 else x for x in self.d.qpos[3:6]]
            speeds = list(self.d.qvel[3:6])
        else:
            angles, speeds = self.enc_prev, self.speed_est
        e = (self.imu_rng.normal(0.0, 1.0, 2) * (lqr.imu_angle_noise, lqr.imu_rate_noise)
             if noise else (0.0, 0.0))
        return np.array([self.d.qpos[2] + e[0], *angles, self.d.qvel[2] + e[1], *speeds])

    def _esc(self) -> tuple[list[float], list[float]]:
        pk, d = self.packet, self.d
        q = d.qpos.tolist()
        w = d.qvel.tolist()
        angles, speeds = self._encoders(q)
        volts, taus = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
        for i in range(3):
            if pk is not None:
                g = self.real.gains[i]
                v = (g.kp * pk.kp_scale * (pk.theta[i] - angles[i])
                     + g.kd * pk.kd_scale * (pk.omega[i] - speeds[i]) + pk.volt[i])
                vs = self.real.motors[i].supply_voltage
                volts[i] = vs if v > vs else (-vs if v < -vs else v)
            mo = self.real.motors[i]
            taus[i] = mo.gain * volts[i] - mo.damping * w[3 + i]
        d.ctrl[:] = taus
        return volts, taus

    # ---- grippers and feet after a physics step -------------------------------------------
    def _tear_check(self, t: float) -> list[float]:
        forces = [math.nan] * 4
        if not (self.grip[0].hooked or self.grip[1].hooked):
            return forces
        efc = self.d.efc_force.tolist()  # equality rows first, in equality order
        row = 0
        for gi in (0, 1):
            if self.grip[gi].hooked:
                fx, fy = efc[row], efc[row + 1]
                row += 3
                forces[2 * gi: 2 * gi + 2] = (fx, fy)
                if self.grip[gi].check_force(fx, fy):
                    self._unhook(gi)
                    self.tears += 1
                    self.events.append((t, GRIPPERS[gi], "tear"))
                    if gi == 1 and self.caught[1]:  # the landing's rear catch is lost
                        self.landing_rear_tears += 1
                        self._count_rear_miss(t)
        return forces

    def _front_touch(self) -> None:
        """Add the free, unarmed front foot's wall contact impulse of this tick [N s]."""
        d, g = self.d, self.foot_geom[0]
        for i in range(d.ncon):
            c = d.contact[i]
            if c.geom1 == g or c.geom2 == g:
                mujoco.mj_contactForce(self.m, d, i, self._force6)
                self.front_touch += abs(float(self._force6[0])) * self.dt

    def _feet(self, t: float) -> None:
        d, dt = self.d, self.dt
        for gi in (0, 1):
            g = self.grip[gi]
            px, py = d.site_xpos[self.site[gi], 0:2].tolist()
            jx, jy = d.xpos[self.joint_body[gi], 0:2].tolist()
            phi = math.atan2(py - jy, px - jx)
            h = self.history[gi]
            h[0], h[1], h[2] = h[1], h[2], (px, py)
            prev_phi, self.link_prev[gi] = self.link_prev[gi], phi
            if g.hooked:
                continue
            phi_rate = 0.0 if prev_phi is None else \
                ((phi - prev_phi + math.pi) % (2 * math.pi) - math.pi) / dt
            if h[0] is not None:
                ax = (h[2][0] - 2 * h[1][0] + h[0][0]) / dt**2
                ay = (h[2][1] - 2 * h[1][1] + h[0][1]) / dt**2
                self.feet[gi].step(dt, phi, phi_rate, ax, ay)
            if g.armed and h[1] is not None and self.feet[gi].faces_wall \
                    and not (gi == 1 and self.refuse_rear):
                r = self.geometry.foot_radius
                if g.try_capture(px - r, (px - h[1][0]) / dt, (py - h[1][1]) / dt,
                                 px - jx, py - jy):
                    self._hook(gi, at_wall=True)
                    self.caught[gi] = True
                    self.hook_time[gi] = t
                    self.events.append((t, GRIPPERS[gi], "hook"))

    def _misses(self, t: float) -> None:
        for gi in (0, 1):
            if t >= self.deadline[gi]:
                self._miss(t, gi)
                if gi == 0 and not (self.grip[0].hooked or self.grip[1].hooked):
                    self.fell = True
        if self.fell and len(self.records) < self.jumps:
            self._end_jump(t)

    # ---- one tick --------------------------------------------------------------------------
    def step(self) -> None:
        """One 1 kHz ESC tick: board (every other tick), ESC, physics, grippers, outcomes."""
        j, t = self.j, self.j * self.dt
        if j % self.board_every == 0:
            self._board_tick(t)
            if self.done:
                return
        self._receive(t)
        q = self.d.qpos.tolist()
        w = self.d.qvel.tolist()
        volts, taus = self._esc()
        mujoco.mj_step(self.m, self.d, self.cfg.physics_substeps)
        t1 = t + self.dt
        forces = self._tear_check(t1)
        if self.d.ncon and not (self.grip[0].hooked or self.grip[0].armed):
            self._front_touch()
        self._feet(t1)
        self._misses(t1)
        self.track.append((self.r, q[3], q[4], q[5]))
        if self.rec is not None:
            self._write(j, t, q, w, volts, taus, forces)
        self.j += 1
        if self.stop_tick is not None and self.j >= self.stop_tick:
            self.done = True

    def _write(self, j, t, q, w, volts, taus, forces) -> None:
        rec = self.rec
        rec.write(j, "t", t)
        rec.write_many(j, LOG_COLUMNS[1:7], q)
        rec.write_many(j, LOG_COLUMNS[7:13], w)
        rec.write_many(j, ("v_hip", "v_spine", "v_shoulder"), volts)
        rec.write_many(j, ("tau_hip", "tau_spine", "tau_shoulder"), taus)
        rec.write_many(j, ("fx_front", "fy_front", "fx_rear", "fy_rear"), forces)
        rec.write(j, "front_hooked", self.grip[0].hooked)
        rec.write(j, "rear_hooked", self.grip[1].hooked)
        if self.packet is not None:
            rec.write_many(j, ("ref_hip", "ref_spine", "ref_shoulder"), self.packet.theta)
        rec.write(j, "ref_time", self.r)
        rec.write(j, "sole_front", self.feet[0].sole_angle)
        rec.write(j, "sole_rear", self.feet[1].sole_angle)

    # ---- metrics ---------------------------------------------------------------------------
    def _end_jump(self, t: float) -> None:
        """Freeze the record of the current jump; stop after a failed one."""
        d, s, cfg = self.d, self.site, self.cfg
        p = d.site_xpos
        sep = math.hypot(p[s[0], 0] - p[s[1], 0], p[s[0], 1] - p[s[1], 1])
        ang_err = float(np.max(np.abs(d.qpos[3:6] - self.ref.theta[0])))
        y_rear = float(p[s[1], 1])
        ready = (self.grip[0].hooked and self.grip[1].hooked and not self.fell
                 and all(self.caught) and self.tears == self.landing_rear_tears
                 and abs(sep - self.separation0) <= cfg.ready_distance_tol
                 and ang_err <= cfg.ready_angle_tol)
        k = len(self.records)
        track = np.array(self.track) if self.track else np.zeros((0, 4))
        err = np.zeros(1)
        if len(track):
            ri = np.clip(track[:, 0] - k * self.ref.period, 0.0, self.ref.period)
            err = np.abs(track[:, 1:] - optimized_angles(self.sol, ri))
        self.records.append(JumpRecord(
            index=k, front_catch=self.caught[0], rear_catch=self.caught[1], ready=bool(ready),
            height_gain=y_rear - self.y_rear_start if self.caught[1] else float("nan"),
            tracking_rms=float(np.sqrt(np.mean(err**2))), tracking_max=float(err.max()),
            tear_offs=self.tears, fell=self.fell, duration=t - self.jump_t0,
            front_touch_impulse=self.front_touch, rear_misses=self.rear_misses,
            recovery_time=(self.hook_time[1] - self.rear_miss_t
                           if self.rear_misses and self.caught[1] else math.nan)))
        self.y_rear_start, self.jump_t0 = y_rear, t
        self.caught, self.tears, self.track = [False, False], 0, []
        self.rear_misses, self.rear_miss_t, self.refuse_rear = 0, math.nan, False
        self.landing_rear_tears = 0
        self.front_touch = 0.0
        if not ready or k + 1 == self.jumps:
            if self.record and ready:
                self.stop_tick = self.j + round(cfg.settle_time * ESC_RATE_HZ)
            else:
                self.done = True

    def run(self) -> SimulationResult:
        """Step until the last jump's record (and the settling time when recording)."""
        limit = round((self.jumps * 4 * self.ref.period + 2.0) * ESC_RATE_HZ)
        while not self.done and self.j < limit:
            self.step()
        check_stable(self.d, "jump simulation", self.j * self.dt)
        if len(self.records) < self.jumps and (not self.records or self.records[-1].ready):
            self._end_jump(self.j * self.dt)  # ran out of time (a stuck clock)
        return self.result()

    def result(self) -> SimulationResult:
        n = self.j
        log = self.rec.array(n) if self.rec is not None else None
        return SimulationResult(jumps=self.records, events=self.events,
                                duration=n * self.dt,
                                wall_time=time.perf_counter() - self.t_start, log=log,
                                parameters=np.asarray(self.real.parameters, float),
                                reference=self.ref)


def nominal_stance(sol: TrajectorySolution, config: SimulationSettings,
                   samples: int | None = None) -> np.ndarray:
    """The stance state (phi5, joints, their rates; (n, 8)) that the board of the nominal
    robot, without push-off or flight feedback, estimates at each reference sample up to
    its take-off (noise-free; the encoders' age and the speed filter's lag included, so
    that they cancel against the same sensors' readings in a trial). ``samples`` asks for
    that many samples instead (one more than the stance's reaches the release packet).
    Cached per solution content and settings: every trial of a study shares it.
    """
    from dataclasses import replace

    key = (solution_key(sol), config, samples)
    if key not in _NOMINAL:
        et = replace(config.event_triggered, stance_feedback="none", flight_feedback="none")
        trial = JumpTrial(sol, 1, replace(config, event_triggered=et), record=False)
        trial.estimates = {}
        n = samples or len(stance_plan(sol, trial.ref.rate_hz))
        while not trial.done and n - 1 not in trial.estimates:
            trial.step()
        est = trial.estimates
        _NOMINAL[key] = np.array([est.get(k, est[min(est)])  # the first packet is sample 1
                                  for k in range(n)])
    return _NOMINAL[key]


_NOMINAL: dict[tuple, np.ndarray] = {}


def simulate(sol: TrajectorySolution, jumps: int = 1, config: SimulationSettings | None = None,
             realization: Realization | None = None, record: bool = True) -> SimulationResult:
    """Play ``jumps`` consecutive jumps of ``sol``; stop after a failed landing.

    ``record=False`` skips the 1 kHz log (robustness trials need only the records).
    """
    return JumpTrial(sol, jumps, config, realization, record).run()
