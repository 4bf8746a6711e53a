"""Monte-Carlo robustness of an open-loop jump: the simulated counterpart of 30 robot trials.

Each trial samples one robot (:class:`Tolerances`: masses, link lengths, ESC gains,
motor constants, initial state, reference timing) from its own seed, spawned from one
master seed, and plays the jump(s) open-loop. Trials are independent, so running them
on several processes returns exactly what the serial loop returns (``workers=0`` runs
serially, without multiprocessing).
"""

from __future__ import annotations

import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.sim.motor import EscGains
from clamber.jumper.sim.simulate import Realization, SimulationConfig, simulate
from clamber.jumper.solution import TrajectorySolution


@dataclass(frozen=True)
class Tolerances:
    """Half-widths of the uniform perturbations of one trial (units in brackets)."""

    mass_rel: float = 0.05
    """Every point and link mass scaled by 1 + U(-a, a) [-]."""
    length_abs: float = 0.001
    """Every link length and link centre offset shifted by U(-a, a) [m]."""
    gain_rel: float = 0.2
    """Each joint's ESC gains kp, kd scaled by 1 + U(-a, a) [-]."""
    motor_rel: float = 0.1
    """Each motor's k_t (= k_e) and R scaled independently by 1 + U(-a, a) [-]."""
    initial_angle: float = 0.02
    """Joint angles and base angle offset by U(-a, a) at the start, then the stance is
    closed again with the front gripper on the wall [rad]."""
    stance_offset: float = 0.002
    """Front gripper hooked U(-a, a) above its optimized height at the start [m]."""
    initial_speed: float = 0.2
    """Joint speeds offset by U(-a, a) at the start [rad/s]."""
    start_delay: float = 0.002
    """Reference stream starts U(0, a) late [s]."""
    jitter: float = 0.001
    """Each 500 Hz reference packet arrives U(0, a) late [s]."""

    def scaled(self, factor: float) -> Tolerances:
        """Every half-width times ``factor`` (rates capped below 1)."""
        if not (math.isfinite(factor) and factor >= 0):
            raise ConfigError(f"tolerance scale {factor!r}: must be finite and >= 0")
        values = {k: v * factor for k, v in self.__dict__.items()}
        for k in ("mass_rel", "gain_rel", "motor_rel"):
            values[k] = min(values[k], 0.9)
        return Tolerances(**values)

    def __post_init__(self) -> None:
        for name, v in self.__dict__.items():
            if not (math.isfinite(v) and v >= 0):
                raise ConfigError(f"tolerances.{name} = {v!r}: must be finite and >= 0")
        for name in ("mass_rel", "gain_rel", "motor_rel"):
            if getattr(self, name) >= 1:
                raise ConfigError(f"tolerances.{name} = {getattr(self, name)}: must be < 1")


def sample_realization(sol: TrajectorySolution, config: SimulationConfig, tol: Tolerances,
                       seed: int) -> Realization:
    """One perturbed robot, a pure function of ``seed``."""
    rng = np.random.default_rng(seed)
    p = sol.morphology.parameters().copy()

    def u(a: float, n: int) -> np.ndarray:
        return rng.uniform(-a, a, n)

    lengths = p[0:4] + u(tol.length_abs, 4)
    p[0:4] = np.maximum(lengths, 1e-3)
    p[4:9] *= 1 + u(tol.mass_rel, 5)
    p[9:13] *= 1 + u(tol.mass_rel, 4)
    p[13:17] = np.clip(p[13:17] + np.where(p[9:13] > 0, u(tol.length_abs, 4), 0.0), 0.0, p[0:4])
    motors = tuple(config.motor.scaled(*(1 + u(tol.motor_rel, 2))) for _ in range(3))
    gains = tuple(EscGains(kp=config.gains.kp * (1 + g[0]), kd=config.gains.kd * (1 + g[1]))
                  for g in (u(tol.gain_rel, 2) for _ in range(3)))
    q0 = np.zeros(6)
    q0[2:6] = u(tol.initial_angle, 4)
    qd0 = np.zeros(6)
    qd0[3:6] = u(tol.initial_speed, 3)
    return Realization(parameters=p, motors=motors, gains=gains, q0_offset=q0, qd0_offset=qd0,
                       front_offset=float(rng.uniform(-tol.stance_offset, tol.stance_offset)),
                       start_delay=float(rng.uniform(0, tol.start_delay)), jitter=tol.jitter,
                       seed=int(rng.integers(2**31)))


@dataclass(frozen=True)
class TrialRecord:
    """Outcome of one trial (all jumps): frozen, never rewritten."""

    seed: int
    caught: bool  # the front gripper caught on every jump
    ready: bool  # the robot landed ready after every jump (the climb succeeded)
    height_gain: float  # [m] summed over jumps (NaN after a missed rear catch)
    tracking_rms: float  # [rad] worst jump
    first_caught: bool = False  # the front gripper caught on the first jump
    first_both: bool = False  # both grippers caught on the first jump
    first_ready: bool = False  # the first jump landed ready
    ready_jumps: int = 0  # jumps landed ready before the first failure
    climbed_m: float = 0.0  # [m] height gained by the ready jumps
    time_s: float = 0.0  # [s] duration of the ready jumps (settling included)


@dataclass(frozen=True)
class Interval:
    """A rate with its Wilson score confidence interval."""

    rate: float
    low: float
    high: float
    successes: int
    trials: int
    confidence: float = 0.95


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval of a binomial rate (good at small n and rates near 0 or 1)."""
    if trials < 1 or not 0 <= successes <= trials:
        raise ConfigError(f"need 0 <= successes <= trials, trials >= 1; got {successes}/{trials}")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    n, p = trials, successes / trials
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)),
                    successes, trials, confidence)


@dataclass
class RobustnessResult:
    """All trials and the two rates of the paper's experiment."""

    trials: list[TrialRecord]
    catch: Interval
    landing: Interval
    wall_time: float  # [s]
    workers: int
    tolerances: Tolerances = field(default_factory=Tolerances)
    jumps: int = 1
    controller: str = "open-loop"

    @property
    def ready(self) -> Interval:
        """First-jump ready landings (the paper's per-jump trial)."""
        return wilson_interval(sum(r.first_ready for r in self.trials), len(self.trials))

    @property
    def both_caught(self) -> Interval:
        """First jump: both grippers caught (the tuned jump's 25/30 on hardware)."""
        return wilson_interval(sum(r.first_both for r in self.trials), len(self.trials))

    @property
    def climb_speed(self) -> float:
        """Mean climbing speed of ready jumps [m/s] (height over time, settling included)."""
        h = sum(r.climbed_m for r in self.trials)
        t = sum(r.time_s for r in self.trials)
        return h / t if t > 0 else float("nan")

    def summary(self) -> dict:
        ready = self.ready
        return {
            "trials": len(self.trials),
            "jumps": self.jumps,
            "controller": self.controller,
            "catch_rate": self.catch.rate,
            "catch_interval": [self.catch.low, self.catch.high],
            "landing_rate": self.landing.rate,
            "landing_interval": [self.landing.low, self.landing.high],
            "ready_rate": ready.rate,
            "ready_interval": [ready.low, ready.high],
            "first_catch_rate": sum(r.first_caught for r in self.trials) / len(self.trials),
            "both_caught_rate": self.both_caught.rate,
            "climb_success_rate": self.landing.rate,
            "climb_speed_mps": self.climb_speed,
            "expected_speed_mps": ready.rate * self.climb_speed if ready.successes else 0.0,
            "confidence": self.catch.confidence,
            "wall_time_s": self.wall_time,
            "workers": self.workers,
        }


_WORKER: dict = {}


def _init_worker(sol: TrajectorySolution, config: SimulationConfig, tol: Tolerances,
                 jumps: int) -> None:
    _WORKER.update(sol=sol, config=config, tol=tol, jumps=jumps)


def run_trial(sol: TrajectorySolution, config: SimulationConfig, tol: Tolerances, jumps: int,
              seed: int) -> TrialRecord:
    """One seeded trial: a pure function of its arguments (any process, same record)."""
    real = sample_realization(sol, config, tol, seed)
    res = simulate(sol, jumps=jumps, config=config, realization=real, record=False)
    done = res.jumps
    complete = len(done) == jumps
    good = []
    for j in done:
        if not j.ready:
            break
        good.append(j)
    first = done[0] if done else None
    return TrialRecord(
        seed=seed,
        caught=complete and all(j.front_catch for j in done),
        ready=complete and all(j.ready for j in done),
        height_gain=float(sum(j.height_gain for j in done)) if done else float("nan"),
        tracking_rms=max((j.tracking_rms for j in done), default=float("nan")),
        first_caught=bool(first and first.front_catch),
        first_both=bool(first and first.front_catch and first.rear_catch),
        first_ready=bool(first and first.ready),
        ready_jumps=len(good),
        climbed_m=float(sum(j.height_gain for j in good)),
        time_s=float(sum(j.duration for j in good)),
    )


def _run_trial(seed: int) -> TrialRecord:
    return run_trial(*(_WORKER[k] for k in ("sol", "config", "tol", "jumps")), seed)


def robustness(sol: TrajectorySolution, trials: int, seed: int = 0, jumps: int = 1,
               config: SimulationConfig | None = None, tolerances: Tolerances | None = None,
               workers: int = 2) -> RobustnessResult:
    """Run ``trials`` seeded trials; ``workers`` processes (0: serial, same results)."""
    if trials < 1:
        raise ConfigError(f"trials = {trials}: must be at least 1")
    if workers < 0:
        raise ConfigError(f"workers = {workers}: must be >= 0")
    config = config or SimulationConfig()
    tol = tolerances or Tolerances()
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(trials)]
    t0 = time.perf_counter()
    args = (sol, config, tol, jumps)
    if workers == 0:
        _init_worker(*args)
        records = [_run_trial(s) for s in seeds]
    else:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        chunk = max(1, trials // (4 * workers))
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                 initargs=args) as pool:
            records = list(pool.map(_run_trial, seeds, chunksize=chunk))
    return RobustnessResult(
        trials=records,
        catch=wilson_interval(sum(r.caught for r in records), trials),
        landing=wilson_interval(sum(r.ready for r in records), trials),
        wall_time=time.perf_counter() - t0, workers=workers, tolerances=tol, jumps=jumps,
        controller=config.controller)
