"""Open-loop playback of an optimized jump in MuJoCo, as the robot would run it.

Timing as on the robot: the main board streams the joint reference and voltage
feed-forward at 500 Hz (each packet may arrive late by up to ``jitter``); each joint's
ESC runs its PD law at 1 kHz on the newest packet; the motors (DC model with back-EMF
and supply limit) turn the voltage into torque, held constant for the two 0.5 ms
physics steps of each ESC period. Gripper releases travel with the reference packets;
catches are armed ``arm_lead`` before the optimized catch and missed if the gripper
has not hooked ``catch_timeout`` after it. Jumps follow each other with the same
reference, shifted by one period; nothing is fed back.

Outcomes per jump (:class:`JumpRecord`): the front catch, the rear catch, whether the
robot is *ready* at the end of the jump (both grippers hooked, nothing torn, the
gripper separation and joint angles close to the optimized start so the next jump's
reference is reachable), the height gained and the tracking error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mujoco
import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.mjcf import Geometry, load_scene
from clamber.jumper.model import jumper_model
from clamber.jumper.sim.gripper import CaptureWindow, Gripper
from clamber.jumper.sim.motor import ESC_RATE_HZ, EscGains, MotorParameters, pd_voltage
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
    physics_substeps: int = 2
    """Physics steps per 1 kHz ESC period (step = 1 ms / substeps)."""

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
    coordinates, [m], [rad], [m/s], [rad/s]); reference packets arrive
    ``start_delay`` [s] late plus a uniform ``[0, jitter]`` [s] each (seeded by ``seed``).
    """

    parameters: np.ndarray
    motors: tuple[MotorParameters, MotorParameters, MotorParameters]
    gains: tuple[EscGains, EscGains, EscGains]
    q0_offset: np.ndarray = field(default_factory=lambda: np.zeros(6))
    qd0_offset: np.ndarray = field(default_factory=lambda: np.zeros(6))
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


def simulate(sol: TrajectorySolution, jumps: int = 1, config: SimulationConfig | None = None,
             realization: Realization | None = None, record: bool = True) -> SimulationResult:
    """Play ``jumps`` consecutive jumps of ``sol`` open-loop; stop early after a fall."""
    import time

    if jumps < 1:
        raise ConfigError(f"jumps = {jumps}: must be at least 1")
    cfg = config or SimulationConfig()
    real = realization or Realization.nominal(sol, cfg)
    ref = build_reference(sol, cfg.motor)
    geometry = Geometry(foot_radius=sol.settings.foot_radius,
                        motor_radius=sol.settings.motor_radius,
                        timestep=1.0 / ESC_RATE_HZ / cfg.physics_substeps)
    m = load_scene(real.parameters, geometry)
    d = mujoco.MjData(m)
    t0 = time.perf_counter()

    # ---- initial state: the optimized start, both grippers hooked where they are ------
    mr = jumper_model("rear_foot")
    q0, qd0 = (np.array(v).ravel() for v in jumper_model("com").to_rear_foot(
        sol.q[0], sol.qd[0], sol.morphology.parameters()))
    d.qpos[:] = q0 + real.q0_offset
    d.qvel[:] = qd0 + real.qd0_offset
    mujoco.mj_forward(m, d)
    site = {"front": m.site("front_gripper").id, "rear": m.site("rear_gripper").id}
    joint_body = {"front": m.body("link1").id, "rear": m.body("link3").id}
    foot_geom = {"front": m.geom("front_foot").id, "rear": m.geom("rear_foot").id}
    eq = {"front": m.equality("front_hook").id, "rear": m.equality("rear_hook").id}
    r_foot = geometry.foot_radius
    dt = 1.0 / ESC_RATE_HZ
    grip = {g: Gripper(g, sol.settings.safe_region_front if g == "front"
                       else sol.settings.safe_region_rear, cfg.capture, dt, hooked=True)
            for g in ("front", "rear")}

    def hook(g: str, at_wall: bool) -> None:
        pos = d.site_xpos[site[g]]
        m.eq_data[eq[g], 3:6] = (r_foot if at_wall else pos[0], pos[1], 0.0)
        d.eq_active[eq[g]] = 1
        m.geom_contype[foot_geom[g]] = 0  # a hooked gripper's wall force is the pin's alone

    def unhook(g: str) -> None:
        d.eq_active[eq[g]] = 0
        m.geom_contype[foot_geom[g]] = 1

    for g in grip:
        hook(g, at_wall=False)
    y_rear_start = float(d.site_xpos[site["rear"], 1])
    points0 = np.array(mr.points(q0, sol.morphology.parameters()))
    separation0 = float(np.linalg.norm(points0[:, 0] - points0[:, 4]))  # optimized stance [m]

    # ---- schedules ---------------------------------------------------------------------
    T = ref.period
    pt = ref.phase_times
    n_jump_ticks = [round(k * T * ESC_RATE_HZ) for k in range(jumps + 1)]
    n_ticks = n_jump_ticks[-1] + (round(cfg.settle_time * ESC_RATE_HZ) if record else 0)
    # The reference stream: `jumps` copies of one jump, then the first sample held.
    stream_theta = np.vstack([np.tile(ref.theta, (jumps, 1)), ref.theta[:1]])
    stream_volt = np.vstack([np.tile(ref.voltage, (jumps, 1)), ref.voltage[:1]])
    # The ESC differentiates consecutive packets for the speed reference of its D term.
    stream_omega = np.vstack([np.zeros((1, 3)), np.diff(stream_theta, axis=0) * ref.rate_hz])
    stream_t = np.r_[(np.arange(jumps)[:, None] * T + ref.t[None, :]).ravel(), jumps * T]
    idx = _reference_index(n_ticks, len(stream_t), ref.rate_hz, real.start_delay,
                           real.jitter, real.seed)
    # Gripper commands ride on the reference packets: (time of packet, gripper, action).
    commands = []
    for k in range(jumps):
        base = k * T
        commands += [(base + pt[1], "front", "release"), (base + pt[2], "rear", "release"),
                     (base + pt[3] - cfg.arm_lead, "front", "arm"),
                     (base + pt[4] - cfg.arm_lead, "rear", "arm")]
    commands.sort()
    deadlines = {(k, g): k * T + pt[3 if g == "front" else 4] + cfg.catch_timeout
                 for k in range(jumps) for g in ("front", "rear")}

    log = np.full((n_ticks, len(LOG_COLUMNS)), np.nan) if record else None
    events: list[tuple[float, str, str]] = []
    records: list[JumpRecord] = []
    caught = {"front": False, "rear": False}
    tears = 0
    err_sq, err_max, err_n = 0.0, 0.0, 0
    theta_opt = optimized_angles(sol, (np.arange(n_ticks) % max(1, round(T * ESC_RATE_HZ)))
                                 / ESC_RATE_HZ)
    qpos, qvel, ctrl = d.qpos, d.qvel, d.ctrl
    gains = real.gains
    motors = real.motors
    supply = [mo.supply_voltage for mo in motors]
    gain_a = [mo.gain for mo in motors]
    damp_c = [mo.damping for mo in motors]
    prev_pos = {g: d.site_xpos[site[g], :2].copy() for g in grip}
    nsub = cfg.physics_substeps
    cmd_i = 0
    jump_k = 0
    fell = False
    volts = [0.0, 0.0, 0.0]

    for j in range(n_ticks):
        t = j * dt
        k = idx[j]
        t_pkt = stream_t[k] if k >= 0 else -1.0
        while cmd_i < len(commands) and commands[cmd_i][0] <= t_pkt + 1e-9:
            _, g, action = commands[cmd_i]
            cmd_i += 1
            if action == "release":
                if grip[g].hooked:
                    unhook(g)
                    events.append((t, g, "release"))
                grip[g].release()
            else:
                grip[g].arm()
        # ---- ESC: PD + feed-forward at 1 kHz, DC motor torque held for nsub steps ------
        s = qpos.tolist()
        w = qvel.tolist()
        kk = max(k, 0)
        th_ref = stream_theta[kk]
        w_ref = stream_omega[kk]
        v_ff = stream_volt[kk] if k >= 0 else (0.0, 0.0, 0.0)
        for i in range(3):
            v = pd_voltage(gains[i], th_ref[i], s[3 + i], w_ref[i], w[3 + i], v_ff[i],
                           supply[i])
            volts[i] = v
            ctrl[i] = gain_a[i] * v - damp_c[i] * w[3 + i]
        if record:
            row = log[j]
            row[0] = t
            row[1:7] = s
            row[7:13] = w
            row[13:16] = volts
            row[16:19] = ctrl
            row[25:28] = th_ref
        mujoco.mj_step(m, d, nsub)

        # ---- grippers ------------------------------------------------------------------
        row_eq = 0
        efc = d.efc_force  # resized by every step: fetch anew
        for g in ("front", "rear"):
            gr = grip[g]
            pos = d.site_xpos[site[g]]
            px, py = float(pos[0]), float(pos[1])
            if gr.hooked and d.eq_active[eq[g]]:
                fx, fy = float(efc[row_eq]), float(efc[row_eq + 1])
                row_eq += 3
                if record:
                    log[j, 19 if g == "front" else 21] = fx
                    log[j, 20 if g == "front" else 22] = fy
                if gr.check_force(fx, fy):
                    unhook(g)
                    tears += 1
                    events.append((t + dt, g, "tear"))
            elif gr.armed:
                jp = d.xpos[joint_body[g]]
                if gr.try_capture(px - r_foot, (px - prev_pos[g][0]) / dt,
                                  (py - prev_pos[g][1]) / dt, px - float(jp[0]),
                                  py - float(jp[1])):
                    hook(g, at_wall=True)
                    caught[g] = True
                    events.append((t + dt, g, "hook"))
            prev_pos[g][0], prev_pos[g][1] = px, py
        if record:
            log[j, 23] = float(grip["front"].hooked)
            log[j, 24] = float(grip["rear"].hooked)
        # ---- tracking error against the optimized motion ------------------------------
        if jump_k < jumps:
            for i in range(3):
                e = abs(s[3 + i] - theta_opt[j, i])
                err_sq += e * e
                err_max = max(err_max, e)
            err_n += 3
        # ---- missed catches and falls --------------------------------------------------
        for g in ("front", "rear"):
            key = (jump_k, g)
            if key in deadlines and t >= deadlines[key] and grip[g].armed:
                grip[g].armed = False
                events.append((t, g, "miss"))
                del deadlines[key]
        if not (grip["front"].hooked or grip["rear"].hooked or grip["front"].armed
                or grip["rear"].armed) and t > jump_k * T + pt[2] + cfg.arm_lead:
            fell = True
        # ---- end of a jump: its record -------------------------------------------------
        if jump_k < jumps and (j + 1 == n_jump_ticks[jump_k + 1] or fell):
            both = grip["front"].hooked and grip["rear"].hooked
            p = d.site_xpos
            sep = float(math.hypot(p[site["front"], 0] - p[site["rear"], 0],
                                   p[site["front"], 1] - p[site["rear"], 1]))
            ang_err = float(np.max(np.abs(np.array(qpos[3:6]) - ref.theta[0])))
            y_rear = float(p[site["rear"], 1])
            ready = (both and not fell and caught["front"] and caught["rear"] and
                     tears == 0 and abs(sep - separation0) <= cfg.ready_distance_tol
                     and ang_err <= cfg.ready_angle_tol)
            records.append(JumpRecord(
                index=jump_k, front_catch=caught["front"], rear_catch=caught["rear"],
                ready=bool(ready),
                height_gain=y_rear - y_rear_start if caught["rear"] else float("nan"),
                tracking_rms=math.sqrt(err_sq / max(err_n, 1)), tracking_max=err_max,
                tear_offs=tears, fell=fell))
            y_rear_start = y_rear
            caught = {"front": False, "rear": False}
            tears, err_sq, err_max, err_n = 0, 0.0, 0.0, 0
            jump_k += 1
            if not ready:
                if log is not None:
                    log = log[: j + 1]
                break
    duration = (len(log) if log is not None else j + 1) * dt
    return SimulationResult(jumps=records, events=events, duration=duration,
                            wall_time=time.perf_counter() - t0, log=log,
                            parameters=np.asarray(real.parameters, float), reference=ref)
