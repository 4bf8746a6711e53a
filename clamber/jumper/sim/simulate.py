"""Open-loop playback of an optimized jump in MuJoCo, as the robot would run it.

Timing as on the robot: the main board streams the joint reference and voltage
feed-forward at 500 Hz (each packet may arrive late by up to ``jitter``); each joint's
ESC runs its PD law at 1 kHz on the newest packet; the motors (DC model with back-EMF
and supply limit) turn the voltage into torque, held constant over the ESC period
(one 1 ms physics step by default; ``physics_substeps`` refines it). Gripper releases
travel with the reference packets; catches are armed ``arm_lead`` before the optimized
catch and missed if the gripper has not hooked ``catch_timeout`` after it. Jumps follow
each other with the same reference, shifted by one period; nothing is fed back.

Outcomes per jump (:class:`JumpRecord`): the front catch, the rear catch, whether the
robot is *ready* at the end of the jump (both grippers hooked, nothing torn, the
gripper separation and joint angles close to the optimized start so the next jump's
reference is reachable), the height gained and the tracking error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import mujoco
import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.mjcf import Geometry, load_scene
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.gripper import CaptureWindow, Gripper
from clamber.jumper.sim.motor import ESC_RATE_HZ, EscGains, MotorParameters
from clamber.jumper.sim.reference import Reference, build_reference, optimized_angles
from clamber.jumper.solution import TrajectorySolution

#: Columns of :attr:`SimulationResult.log` (one row per ESC tick).
LOG_COLUMNS = (
    "t", "x5", "y5", "phi5", "hip", "spine", "shoulder",
    "vx5", "vy5", "vphi5", "w_hip", "w_spine", "w_shoulder",
    "v_hip", "v_spine", "v_shoulder", "tau_hip", "tau_spine", "tau_shoulder",
    "fx_front", "fy_front", "fx_rear", "fy_rear", "front_hooked", "rear_hooked",
    "ref_hip", "ref_spine", "ref_shoulder",
)
_C = {name: i for i, name in enumerate(LOG_COLUMNS)}


@dataclass(frozen=True)
class SimulationConfig:
    """Everything about the simulated robot that is not the optimized trajectory."""

    motor: MotorParameters = field(default_factory=MotorParameters)
    """Nominal motor module (the feed-forward is computed with it)."""
    gains: EscGains = field(default_factory=EscGains)
    capture: CaptureWindow = field(default_factory=CaptureWindow)
    arm_lead: float = 0.03
    """A gripper is armed this long before its optimized catch [s]."""
    catch_timeout: float = 0.05
    """A catch not made this long after the optimized catch is a miss [s]."""
    ready_distance_tol: float = 0.01
    """Ready: gripper separation within this of the optimized stance [m]."""
    ready_angle_tol: float = 0.35
    """Ready: every joint within this of the optimized start angle [rad]."""
    settle_time: float = 0.1
    """Extra time simulated after the last jump, holding the last reference [s]."""
    physics_substeps: int = 1
    foot_radius: float | None = None
    """The robot's gripper radius [m]; None takes the optimization's. Optimizing with a
    smaller radius than the robot's aims the catches into the wall (a catch margin)."""
    """Physics steps per 1 kHz ESC period (step = 1 ms / substeps); 2 halves the step at
    half the speed and moves catch times by a few ms."""

    def __post_init__(self) -> None:
        for name in ("arm_lead", "catch_timeout", "ready_distance_tol", "ready_angle_tol",
                     "settle_time"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ConfigError(f"simulation.{name} = {v!r}: must be finite and >= 0")
        if self.physics_substeps < 1:
            raise ConfigError(f"simulation.physics_substeps = {self.physics_substeps}: >= 1")


@dataclass(frozen=True)
class Realization:
    """One sampled robot: what differs from the nominal in a robustness trial.

    ``parameters`` is the morphology vector (``PARAMETER_NAMES`` order; may leave the
    design bounds), ``motors`` and ``gains`` are per joint (hip, spine, shoulder),
    ``q0_offset``/``qd0_offset`` are added to the optimized initial state (rear-foot
    coordinates, [m], [rad], [m/s], [rad/s]), after which the chain is closed again with
    the front gripper on the wall, ``front_offset`` [m] above its optimized height (the
    robot starts hooked, whatever its tolerances); reference packets arrive
    ``start_delay`` [s] late plus a uniform ``[0, jitter]`` [s] each (seeded by ``seed``).
    """

    parameters: np.ndarray
    motors: tuple[MotorParameters, MotorParameters, MotorParameters]
    gains: tuple[EscGains, EscGains, EscGains]
    q0_offset: np.ndarray = field(default_factory=lambda: np.zeros(6))
    qd0_offset: np.ndarray = field(default_factory=lambda: np.zeros(6))
    front_offset: float = 0.0
    start_delay: float = 0.0
    jitter: float = 0.0
    seed: int = 0

    @classmethod
    def nominal(cls, sol: TrajectorySolution, config: SimulationConfig) -> Realization:
        """The robot exactly as designed."""
        return cls(parameters=sol.morphology.parameters(), motors=(config.motor,) * 3,
                   gains=(config.gains,) * 3)


@dataclass(frozen=True)
class JumpRecord:
    """Outcome of one simulated jump (frozen once the jump is over)."""

    index: int
    front_catch: bool
    rear_catch: bool
    ready: bool
    height_gain: float  # [m], NaN unless the rear caught
    tracking_rms: float  # [rad] over the jump's simulated time, all joints
    tracking_max: float  # [rad]
    tear_offs: int
    fell: bool

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SimulationResult:
    """Per-jump records, gripper events and (if recorded) the 1 kHz log."""

    jumps: list[JumpRecord]
    events: list[tuple[float, str, str]]  # (t [s], gripper, 'release'|'hook'|'tear'|'miss')
    duration: float  # simulated time [s]
    wall_time: float  # [s]
    log: np.ndarray | None  # (ticks, len(LOG_COLUMNS))
    parameters: np.ndarray
    reference: Reference

    def column(self, name: str) -> np.ndarray:
        """One column of the log by name (see :data:`LOG_COLUMNS`)."""
        if self.log is None:
            raise ConfigError("this simulation was run with record=False: no log")
        return self.log[:, _C[name]]

    @property
    def realtime_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.duration / self.wall_time if self.wall_time > 0 else float("inf")

    def summary(self) -> dict:
        return {
            "jumps": [j.to_dict() for j in self.jumps],
            "front_catches": sum(j.front_catch for j in self.jumps),
            "rear_catches": sum(j.rear_catch for j in self.jumps),
            "ready_landings": sum(j.ready for j in self.jumps),
            "simulated_s": self.duration,
            "realtime_factor": self.realtime_factor,
        }


def _reference_index(n_ticks: int, n_samples: int, rate_hz: float, delay: float, jitter: float,
                     seed: int) -> np.ndarray:
    """Newest reference packet the ESC holds at each 1 kHz tick (-1: none yet)."""
    arrival = np.arange(n_samples) / rate_hz + delay
    if jitter > 0:
        arrival = arrival + np.random.default_rng(seed).uniform(0.0, jitter, n_samples)
    arrival = np.maximum.accumulate(arrival)
    ticks = np.arange(n_ticks) / ESC_RATE_HZ
    return np.searchsorted(arrival, ticks + 1e-12, side="right") - 1


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


def simulate(sol: TrajectorySolution, jumps: int = 1, config: SimulationConfig | None = None,
             realization: Realization | None = None, record: bool = True) -> SimulationResult:
    """Play ``jumps`` consecutive jumps of ``sol`` open-loop; stop after a failed landing.

    ``record=False`` skips the 1 kHz log (robustness trials need only the records).
    """
    if jumps < 1:
        raise ConfigError(f"jumps = {jumps}: must be at least 1")
    cfg = config or SimulationConfig()
    real = realization or Realization.nominal(sol, cfg)
    q0, qd0, separation0 = initial_state(sol)  # builds the CasADi model once per process
    t0 = time.perf_counter()
    ref = build_reference(sol, cfg.motor)
    geometry = Geometry(foot_radius=cfg.foot_radius or sol.settings.foot_radius,
                        motor_radius=sol.settings.motor_radius,
                        timestep=1.0 / ESC_RATE_HZ / cfg.physics_substeps)
    m = load_scene(real.parameters, geometry)
    d = mujoco.MjData(m)

    # ---- initial state: the optimized start, both grippers hooked where they are ------
    front0 = np.array(jumper_model("rear_foot").points(q0, sol.morphology.parameters()))[:, 0]
    d.qpos[:] = close_stance(q0 + real.q0_offset, np.asarray(real.parameters, float),
                             front0 + (0.0, real.front_offset))
    d.qvel[:] = qd0 + real.qd0_offset
    mujoco.mj_forward(m, d)
    names = ("front", "rear")
    site = [m.site(f"{g}_gripper").id for g in names]
    joint_body = [m.body("link1").id, m.body("link3").id]  # joint next to each gripper
    foot_geom = [m.geom(f"{g}_foot").id for g in names]
    eq = [m.equality(f"{g}_hook").id for g in names]
    r_foot = geometry.foot_radius
    dt = 1.0 / ESC_RATE_HZ
    regions = (sol.settings.safe_region_front, sol.settings.safe_region_rear)
    grip = [Gripper(g, regions[i], cfg.capture, dt, hooked=True) for i, g in enumerate(names)]
    site_xpos, xpos, eq_active = d.site_xpos, d.xpos, d.eq_active

    def hook(i: int, at_wall: bool) -> None:
        pos = site_xpos[site[i]]
        m.eq_data[eq[i], 3:6] = (r_foot if at_wall else pos[0], pos[1], 0.0)
        eq_active[eq[i]] = 1
        m.geom_contype[foot_geom[i]] = 0  # a hooked gripper's wall force is the pin's alone

    def unhook(i: int) -> None:
        eq_active[eq[i]] = 0
        m.geom_contype[foot_geom[i]] = 1

    for i in range(2):
        hook(i, at_wall=False)
    y_rear_start = float(site_xpos[site[1], 1])

    # ---- the reference stream and the gripper schedule ---------------------------------
    T = ref.period
    pt = ref.phase_times
    ticks_per_jump = [round(k * T * ESC_RATE_HZ) for k in range(jumps + 1)]
    n_ticks = ticks_per_jump[-1] + (round(cfg.settle_time * ESC_RATE_HZ) if record else 0)
    # `jumps` copies of one jump, then the first sample held (the next stance).
    stream_theta = np.vstack([np.tile(ref.theta, (jumps, 1)), ref.theta[:1]])
    stream_volt = np.vstack([np.tile(ref.voltage, (jumps, 1)), ref.voltage[:1]])
    # The ESC differentiates consecutive packets for the speed reference of its D term.
    stream_omega = np.vstack([np.zeros((1, 3)), np.diff(stream_theta, axis=0) * ref.rate_hz])
    stream_t = np.r_[(np.arange(jumps)[:, None] * T + ref.t[None, :]).ravel(), jumps * T]
    packet = _reference_index(n_ticks, len(stream_t), ref.rate_hz, real.start_delay,
                              real.jitter, real.seed).tolist()
    packets = np.hstack([stream_theta, stream_omega, stream_volt]).tolist()
    packets.append([0.0] * 6 + [0.0] * 3)  # index -1: nothing received yet, zero voltage
    packet_t = stream_t.tolist() + [-1.0]
    # Gripper commands ride on the packets: (packet time, gripper, action).
    commands = sorted(
        (k * T + tc, gi, action) for k in range(jumps)
        for tc, gi, action in ((pt[1], 0, "release"), (pt[2], 1, "release"),
                               (pt[3] - cfg.arm_lead, 0, "arm"),
                               (pt[4] - cfg.arm_lead, 1, "arm")))
    commands.append((math.inf, -1, ""))
    # Checkpoints on simulated time: catch deadlines (index 0, 1) per jump.
    deadline = [[k * T + pt[3] + cfg.catch_timeout, k * T + pt[4] + cfg.catch_timeout]
                for k in range(jumps)]

    qlog = np.empty((n_ticks, 6))
    log = np.full((n_ticks, len(LOG_COLUMNS)), np.nan) if record else None
    events: list[tuple[float, str, str]] = []
    records: list[JumpRecord] = []
    caught = [False, False]
    tears = 0
    theta_opt = optimized_angles(sol, (np.arange(n_ticks) % ticks_per_jump[1]) / ESC_RATE_HZ)
    qpos, qvel, ctrl = d.qpos, d.qvel, d.ctrl
    kp0, kp1, kp2 = (g.kp for g in real.gains)
    kd0, kd1, kd2 = (g.kd for g in real.gains)
    vs0, vs1, vs2 = (mo.supply_voltage for mo in real.motors)
    a0, a1, a2 = (mo.gain for mo in real.motors)
    c0, c1, c2 = (mo.damping for mo in real.motors)
    prev = [None, None]  # previous gripper position while armed (velocity by difference)
    nsub = cfg.physics_substeps
    cmd_i = 0
    jump_k = 0
    fell = False
    last_k = -2
    pk = packets[-1]
    j_start = 0

    for j in range(n_ticks):
        t = j * dt
        k = packet[j]
        if k != last_k:  # a new packet: reference, feed-forward, gripper commands
            last_k = k
            pk = packets[k]
            while commands[cmd_i][0] <= packet_t[k] + 1e-9:
                _, gi, action = commands[cmd_i]
                cmd_i += 1
                if action == "release":
                    if grip[gi].hooked:
                        unhook(gi)
                        events.append((t, names[gi], "release"))
                    grip[gi].release()
                else:
                    grip[gi].arm()
                    prev[gi] = None
        # ---- ESC: PD + feed-forward at 1 kHz, DC motor torque held for nsub steps ------
        s = qpos.tolist()
        w = qvel.tolist()
        qlog[j] = s
        # motor.pd_voltage and MotorParameters.torque, unrolled over the three joints
        v0 = kp0 * (pk[0] - s[3]) + kd0 * (pk[3] - w[3]) + pk[6]
        v1 = kp1 * (pk[1] - s[4]) + kd1 * (pk[4] - w[4]) + pk[7]
        v2 = kp2 * (pk[2] - s[5]) + kd2 * (pk[5] - w[5]) + pk[8]
        v0 = vs0 if v0 > vs0 else (-vs0 if v0 < -vs0 else v0)
        v1 = vs1 if v1 > vs1 else (-vs1 if v1 < -vs1 else v1)
        v2 = vs2 if v2 > vs2 else (-vs2 if v2 < -vs2 else v2)
        tau = [a0 * v0 - c0 * w[3], a1 * v1 - c1 * w[4], a2 * v2 - c2 * w[5]]
        ctrl[:] = tau
        if record:
            row = log[j]
            row[0] = t
            row[1:7] = s
            row[7:13] = w
            row[13:16] = (v0, v1, v2)
            row[16:19] = tau
            row[25:28] = pk[0:3]
        mujoco.mj_step(m, d, nsub)

        # ---- grippers: tear-off of hooked ones, capture of armed ones -------------------
        if grip[0].hooked or grip[1].hooked:
            efc = d.efc_force.tolist()  # equality rows first, in equality order
            row_eq = 0
            for gi in (0, 1):
                if grip[gi].hooked:
                    fx, fy = efc[row_eq], efc[row_eq + 1]
                    row_eq += 3
                    if record:
                        log[j, 19 + 2 * gi] = fx
                        log[j, 20 + 2 * gi] = fy
                    if grip[gi].check_force(fx, fy):
                        unhook(gi)
                        tears += 1
                        events.append((t + dt, names[gi], "tear"))
        for gi in (0, 1):
            gr = grip[gi]
            if gr.armed and not gr.hooked:
                px, py = site_xpos[site[gi], 0:2].tolist()
                if prev[gi] is not None:
                    jx, jy = xpos[joint_body[gi], 0:2].tolist()
                    if gr.try_capture(px - r_foot, (px - prev[gi][0]) / dt,
                                      (py - prev[gi][1]) / dt, px - jx, py - jy):
                        hook(gi, at_wall=True)
                        caught[gi] = True
                        events.append((t + dt, names[gi], "hook"))
                prev[gi] = (px, py)
        if record:
            log[j, 23] = grip[0].hooked
            log[j, 24] = grip[1].hooked
        # ---- missed catches; a fall once nothing holds after the front catch window -----
        if jump_k < jumps:
            for gi in (0, 1):
                if t >= deadline[jump_k][gi] and grip[gi].armed:
                    grip[gi].armed = False
                    events.append((t, names[gi], "miss"))
            if t >= deadline[jump_k][0] and not (grip[0].hooked or grip[1].hooked):
                fell = True
        # ---- end of a jump: its record -------------------------------------------------
        if jump_k < jumps and (j + 1 == ticks_per_jump[jump_k + 1] or fell):
            p = site_xpos
            sep = math.hypot(p[site[0], 0] - p[site[1], 0], p[site[0], 1] - p[site[1], 1])
            ang_err = float(np.max(np.abs(qpos[3:6] - ref.theta[0])))
            y_rear = float(p[site[1], 1])
            err = np.abs(qlog[j_start: j + 1, 3:6] - theta_opt[j_start: j + 1])
            ready = (grip[0].hooked and grip[1].hooked and not fell and all(caught)
                     and tears == 0 and abs(sep - separation0) <= cfg.ready_distance_tol
                     and ang_err <= cfg.ready_angle_tol)
            records.append(JumpRecord(
                index=jump_k, front_catch=caught[0], rear_catch=caught[1], ready=bool(ready),
                height_gain=y_rear - y_rear_start if caught[1] else float("nan"),
                tracking_rms=float(np.sqrt(np.mean(err**2))), tracking_max=float(err.max()),
                tear_offs=tears, fell=fell))
            y_rear_start = y_rear
            caught = [False, False]
            tears = 0
            j_start = j + 1
            jump_k += 1
            if not ready:
                break
    n_done = j + 1
    if log is not None and not records[-1].ready:
        log = log[:n_done]
    return SimulationResult(jumps=records, events=events, duration=n_done * dt,
                            wall_time=time.perf_counter() - t0, log=log,
                            parameters=np.asarray(real.parameters, float), reference=ref)
