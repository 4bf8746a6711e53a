"""Monte-Carlo robustness of a jump: the simulated counterpart of the paper's 30 trials.

Each trial samples one perturbed robot (:class:`~clamber.jumper.sim.robustness.Tolerances`)
from its own seed, spawned from one master seed, and plays the jump(s) in MuJoCo. It
succeeds when the robot lands ready after every jump. Long climbs are summarized per jump
(the ready rate over every jump played, a trial's jumps counted as independent), by the
height climbed before the first failure, and by the rear misses the closed loop's
re-catch turned into ready landings.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from clamber import _validate as check
from clamber.experiments.record import StudyTrial, TrialOutcome
from clamber.experiments.statistics import Interval, wilson_interval
from clamber.experiments.study import ProgressCallback, Study, TrialTask, run_study
from clamber.failures import FailureReason
from clamber.jumper.sim.result import JumpRecord
from clamber.jumper.sim.robustness import Tolerances, sample_realization
from clamber.jumper.sim.settings import SimulationSettings
from clamber.jumper.sim.simulate import simulate
from clamber.jumper.solution import TrajectorySolution
from clamber.parallel.base import Evaluator
from clamber.sim_stability import UnstableSimulation

KIND = "robustness"
#: Front-foot wall impulse [N s] before the catch above which a jump counts as touched:
#: of 462 ready jumps of the robust jump 15 touched the wall, one above this, while the
#: impacts behind its front misses gave 0.03-0.09 N s (docs/results/jumper_landing.md).
FRONT_TOUCH_IMPULSE = 0.02


@dataclass(frozen=True)
class RobustnessCondition:
    """What every trial of a robustness study plays: the jump, simulator and tolerances."""

    solution: TrajectorySolution
    config: SimulationSettings
    tolerances: Tolerances
    jumps: int


def jump_failure(j: JumpRecord) -> FailureReason | None:
    """Why a simulated jump did not end ready (None when it did)."""
    if j.ready:
        return None
    if not j.front_catch:
        return FailureReason.FRONT_MISSED
    if not j.rear_catch:
        return FailureReason.REAR_MISSED
    if j.fell:
        return FailureReason.FELL
    return FailureReason.NOT_READY


def robustness_trial(task: TrialTask) -> TrialOutcome:
    """One seeded trial: a perturbed robot plays ``jumps`` jumps (pure in the task)."""
    c: RobustnessCondition = task.condition
    real = sample_realization(c.solution, c.config, c.tolerances, task.seed)
    try:
        done = simulate(c.solution, jumps=c.jumps, config=c.config, realization=real,
                        record=False).jumps
    except UnstableSimulation as e:  # a failed trial, not a jump that merely missed
        return TrialOutcome(False, FailureReason.UNSTABLE, str(e),
                            _metrics([], False, FailureReason.UNSTABLE))
    complete = len(done) == c.jumps
    failure = next((f for f in map(jump_failure, done) if f is not None), None)
    if failure is None and not complete:
        failure = FailureReason.FELL
    detail = "" if failure is None else f"jump {len(done) - 1 if done else 0}"
    return TrialOutcome(failure is None, failure, detail, _metrics(done, complete, failure))


def _metrics(done: list[JumpRecord], complete: bool,
             failure: FailureReason | None) -> dict[str, Any]:
    """A trial's metrics from its finished jumps (``complete``: all the trial asked for)."""
    good = []
    for j in done:
        if not j.ready:
            break
        good.append(j)
    first = done[0] if done else None
    failed = next((j for j in done if not j.ready), None)
    return {
        "caught": complete and all(j.front_catch for j in done),
        "ready": failure is None,
        "jumps_completed": len(done),
        "height_gain_m": float(sum(j.height_gain for j in done)) if done else math.nan,
        "tracking_rms_rad": max((j.tracking_rms for j in done), default=math.nan),
        # The paper's per-jump counts, on the first jump.
        "first_caught": bool(first and first.front_catch),
        "first_both_caught": bool(first and first.front_catch and first.rear_catch),
        "first_ready": bool(first and first.ready),
        # The climb until its first failure: jumps, height [m] and time [s] (waits included).
        "ready_jumps": len(good),
        "climbed_m": float(sum(j.height_gain for j in good)),
        "climb_time_s": float(sum(j.duration for j in good)),
        # The free front foot's wall impulse [N s] in the failed jump (0: none failed).
        "failed_front_touch_n_s": failed.front_touch_impulse if failed else 0.0,
        # Jumps with a missed (or torn-off) rear catch, those of them that ended ready, and
        # the time from the miss to the re-catch [s] summed over the latter.
        "rear_missed_jumps": sum(j.rear_misses > 0 for j in done),
        "recovered_jumps": sum(j.recovered for j in done),
        "recovery_time_s": float(sum(j.recovery_time for j in done if j.recovered)),
    }


@dataclass
class RobustnessResult:
    """All trials and the two rates of the paper's experiment."""

    trials: list[StudyTrial]
    catch: Interval
    landing: Interval
    tolerances: Tolerances = field(default_factory=Tolerances)
    evaluator: dict[str, Any] = field(default_factory=dict)
    jumps: int = 1
    controller: str = "open-loop"

    def count(self, key: str) -> Interval:
        """Trials whose boolean metric ``key`` is true, with its Wilson interval."""
        return wilson_interval(sum(bool(t.metrics.get(key)) for t in self.trials),
                               len(self.trials))

    @property
    def ready(self) -> Interval:
        """Ready landings of the first jump (the paper's per-jump trial)."""
        return self.count("first_ready")

    @property
    def both_caught(self) -> Interval:
        """First jump with both grippers caught (the tuned jump's 25/30 on hardware)."""
        return self.count("first_both_caught")

    @property
    def per_jump_ready(self) -> Interval | None:
        """Ready landings over every jump played (a trial stops at its first failure);
        None when no jump was played."""
        ready = sum(int(t.metrics.get("ready_jumps", 0)) for t in self.trials)
        played = sum(int(t.metrics.get("jumps_completed", 0)) for t in self.trials)
        return wilson_interval(ready, played) if played else None

    def height_climbed(self) -> dict[str, float]:
        """Distribution of the height climbed before the first failure [m]."""
        h = np.array([float(t.metrics.get("climbed_m", 0.0)) for t in self.trials])
        q = np.quantile(h, [0.0, 0.25, 0.5, 0.75, 1.0]) if len(h) else [math.nan] * 5
        return {"min": float(q[0]), "q1": float(q[1]), "median": float(q[2]),
                "q3": float(q[3]), "max": float(q[4]),
                "mean": float(h.mean()) if len(h) else math.nan}

    def recovery(self) -> dict[str, Any]:
        """Rear misses, how many the re-catch turned into ready landings, and the time a
        recovered one took from the miss to the re-catch [s] (mean)."""
        missed = sum(int(t.metrics.get("rear_missed_jumps", 0)) for t in self.trials)
        saved = sum(int(t.metrics.get("recovered_jumps", 0)) for t in self.trials)
        time = sum(float(t.metrics.get("recovery_time_s", 0.0)) for t in self.trials)
        return {"rear_misses": missed, "recovered_rear_misses": saved,
                "rear_miss_recovery_rate": saved / missed if missed else None,
                "mean_recovery_time_s": time / saved if saved else None}

    @property
    def climb_speed(self) -> float:
        """Height over time of all ready jumps [m/s] (waits included); NaN if none."""
        h = sum(float(t.metrics.get("climbed_m", 0.0)) for t in self.trials)
        s = sum(float(t.metrics.get("climb_time_s", 0.0)) for t in self.trials)
        return h / s if s > 0 else math.nan

    def summary(self) -> dict[str, Any]:
        from clamber.experiments.study import failure_counts

        ready, per_jump = self.ready, self.per_jump_ready
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
            "first_catch_rate": self.count("first_caught").rate,
            "both_caught_rate": self.both_caught.rate,
            "climb_success_rate": self.landing.rate,
            "climb_speed_mps": self.climb_speed,
            "expected_speed_mps": ready.rate * self.climb_speed if ready.successes else 0.0,
            "confidence": self.catch.confidence,
            "failures": failure_counts(self.trials),
            "per_jump_ready_rate": per_jump.rate if per_jump else None,
            "per_jump_ready_interval": [per_jump.low, per_jump.high] if per_jump else None,
            "jumps_played": per_jump.trials if per_jump else 0,
            **self.recovery(),
            "height_climbed_m": self.height_climbed(),
            "front_misses_after_touch": sum(
                t.outcome.failure is FailureReason.FRONT_MISSED
                and float(t.metrics.get("failed_front_touch_n_s", 0.0)) > FRONT_TOUCH_IMPULSE
                for t in self.trials),
            "cpu_time_s": float(np.nansum([t.wall_time_s for t in self.trials])),
            "evaluator": self.evaluator,
        }


def trial_seeds(seed: int, trials: int) -> tuple[int, ...]:
    """Independent per-trial seeds spawned from one master seed."""
    return tuple(int(s.generate_state(1)[0])
                 for s in np.random.SeedSequence(seed).spawn(trials))


def robustness_study(sol: TrajectorySolution, trials: int, seed: int = 0, jumps: int = 1,
                     config: SimulationSettings | None = None,
                     tolerances: Tolerances | None = None) -> Study:
    """The study definition (what :func:`robustness` runs and a run folder records)."""
    for name, v, low in (("trials", trials, 1), ("jumps", jumps, 1), ("seed", seed, 0)):
        check.integer("", name, v, low=low)
    config = config or SimulationSettings()
    tol = tolerances or Tolerances()
    cond = RobustnessCondition(sol, config, tol, jumps)
    record = {"solution_sha256": solution_digest(sol), "trials": trials, "seed": seed,
              "jumps": jumps, "tolerances": asdict(tol), "simulation": repr(config)}
    return Study(KIND, record, (cond,), trial_seeds(seed, trials), robustness_trial)


def robustness(sol: TrajectorySolution, trials: int, seed: int = 0, jumps: int = 1,
               config: SimulationSettings | None = None, tolerances: Tolerances | None = None,
               evaluator: Evaluator | None = None, run_dir: str | Path | None = None,
               resume: bool = False, progress: ProgressCallback | None = None,
               stop_after: int | None = None) -> RobustnessResult:
    """Run ``trials`` seeded trials on ``evaluator`` (default: in this process; any
    evaluator gives the same records), recorded in ``run_dir`` when given."""
    study = robustness_study(sol, trials, seed, jumps, config, tolerances)
    records = run_study(study, evaluator, run_dir, resume, progress, stop_after)
    n = len(records)
    caught = sum(bool(t.metrics.get("caught")) for t in records)
    return RobustnessResult(
        trials=records, catch=wilson_interval(caught, n),
        landing=wilson_interval(sum(t.success for t in records), n),
        tolerances=study.conditions[0].tolerances,
        evaluator=evaluator.describe() if evaluator is not None else {"backend": "serial"},
        jumps=jumps, controller=study.conditions[0].config.controller)


def solution_digest(sol: TrajectorySolution) -> str:
    """A fingerprint of a solution's trajectory (a resumed study must play the same one)."""
    h = hashlib.sha256()
    for name in ("t", "q", "qd", "tau"):
        a = getattr(sol, name, None)
        if a is not None:
            h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
    h.update(repr((sol.morphology.to_dict(), sol.settings)).encode())
    return h.hexdigest()[:16]


#: What :func:`miss_origins` measures per trial: the robot's tolerances (relative mass,
#: link length shifts [m], motor constant and gain factors per joint, start delay [s]) and
#: its take-off as the encoders see it at the rear release (joint errors from the optimized
#: angles [rad], joint speeds [rad/s]), and its flight (:data:`FLIGHT_FEATURES`).
ORIGIN_FEATURES = (
    "mass_rel", "length_sum_m", "start_delay_s",
    *(f"{q}_{j}" for q in ("kt_rel", "kp_rel") for j in ("hip", "spine", "shoulder")),
    *(f"takeoff_{q}_{j}" for q in ("error", "speed") for j in ("hip", "spine", "shoulder")),
)
#: The flight as the 1 kHz log gives it, against the plan: the rear release's time [s]
#: after the planned take-off; the front foot's closest approach to the wall in the second
#: half of the planned flight, up to its hook (or its catch window's close): its time
#: after the release less the planned flight
#: [s], how far it stayed off the wall [m] and how far above the planned catch [m], and
#: its speed into the wall and up it there [m/s] (the tick before a hook).
FLIGHT_FEATURES = ("takeoff_time_error_s", "flight_time_error_s", "front_gap_m",
                   "front_height_error_m", "front_normal_speed_mps",
                   "front_tangential_speed_mps")


def flight_features(res: Any, sol: TrajectorySolution, k_off: int) -> dict[str, float]:
    """:data:`FLIGHT_FEATURES` of the first jump of ``res`` (a recorded
    :class:`~clamber.jumper.sim.result.SimulationResult`) whose rear gripper let go at log
    tick ``k_off``; the front foot comes from the model's kinematics on the logged state."""
    from clamber.jumper.model import jumper_model

    points = jumper_model("rear_foot").points
    t = res.column("t")
    ends = [te for te, g, e in res.events if g == "front" and e in ("hook", "miss")
            and te > t[k_off]]
    k_end = int(np.searchsorted(t, ends[0])) if ends else len(t) - 1
    q = np.column_stack([res.column(c) for c in ("x5", "y5", "phi5", "hip", "spine",
                                                 "shoulder")])[k_off:k_end + 1]
    front = np.array([np.asarray(points(row, res.parameters))[:, 0] for row in q])
    catch = int(np.flatnonzero(sol.phase == 4)[0])  # the planned front catch node
    planned = sol.points[catch][:, 0]
    times = sol.phase_times
    # the approach: the flight's second half by the plan (in its first the swinging foot
    # passes close to the wall it just left)
    k0 = min(int(np.searchsorted(t[k_off:k_end + 1] - t[k_off], (times[3] - times[2]) / 2)),
             len(front) - 1)
    k = k0 + int(np.argmin(front[k0:, 0]))
    if k == len(front) - 1 and k > 0:
        k -= 1  # a hook freezes the foot: its approach is the tick before
    dt = float(t[1] - t[0])
    v = (front[k + 1] - front[k]) / dt if k + 1 < len(front) else np.zeros(2)
    return {"takeoff_time_error_s": float(t[k_off] - times[2]),
            "flight_time_error_s": float(t[k_off + k] - t[k_off] - (times[3] - times[2])),
            "front_gap_m": float(front[k, 0] - planned[0]),
            "front_height_error_m": float(front[k, 1] - planned[1]),
            "front_normal_speed_mps": float(-v[0]),
            "front_tangential_speed_mps": float(v[1])}


def miss_origins(sol: TrajectorySolution, trials: int, seed: int = 0,
                 config: SimulationSettings | None = None,
                 tolerances: Tolerances | None = None) -> dict[str, Any]:
    """Where first-jump misses come from: for each of :data:`ORIGIN_FEATURES` and
    :data:`FLIGHT_FEATURES`, how well it
    separates front (rear) misses from ready landings, as the area under the ROC curve
    (Mann-Whitney U over the product of the group sizes; 0.5: no relation, 0 or 1: a
    perfect split), over ``trials`` seeded one-jump trials played with the 1 kHz log."""
    from scipy.stats import mannwhitneyu

    from clamber.jumper.sim.reference import optimized_angles
    from clamber.jumper.sim.simulate import JumpTrial

    config = config or SimulationSettings()
    tol = tolerances or Tolerances()
    p0 = sol.morphology.parameters()
    rows, outcome = [], []
    for s in trial_seeds(seed, trials):
        real = sample_realization(sol, config, tol, s)
        res = JumpTrial(sol, 1, config, real, record=True).run()
        jump = res.jumps[0]
        # take-off: the rear gripper's release, or its tear-off if that comes first
        release = [t for t, g, e in res.events if g == "rear" and e in ("release", "tear")]
        k = int(np.searchsorted(res.column("t"), release[0])) if release else 0
        planned = optimized_angles(sol, np.array([res.reference.phase_times[2]]))[0]
        row = {"mass_rel": real.parameters[4:13].sum() / p0[4:13].sum() - 1,
               "length_sum_m": float(np.sum(real.parameters[0:4] - p0[0:4])),
               "start_delay_s": real.start_delay}
        for i, j in enumerate(("hip", "spine", "shoulder")):
            row[f"kt_rel_{j}"] = real.motors[i].torque_constant / config.motor.torque_constant - 1
            row[f"kp_rel_{j}"] = real.gains[i].kp / config.gains.kp - 1
            row[f"takeoff_error_{j}"] = float(res.column(j)[k] - planned[i])
            row[f"takeoff_speed_{j}"] = float(res.column(f"w_{j}")[k])
        row.update(flight_features(res, sol, k))
        rows.append([row[f] for f in (*ORIGIN_FEATURES, *FLIGHT_FEATURES)])
        outcome.append(jump_failure(jump))
    x, features = np.array(rows), (*ORIGIN_FEATURES, *FLIGHT_FEATURES)
    ready = np.array([o is None for o in outcome])
    out: dict[str, Any] = {"trials": trials, "ready": int(ready.sum())}
    for name, reason in (("front", FailureReason.FRONT_MISSED),
                         ("rear", FailureReason.REAR_MISSED)):
        miss = np.array([o is reason for o in outcome])
        out[f"{name}_misses"] = int(miss.sum())
        if miss.sum() and ready.sum():
            auc = {f: float(mannwhitneyu(x[miss, i], x[ready, i]).statistic
                            / (miss.sum() * ready.sum()))
                   for i, f in enumerate(features)}
            out[f"{name}_auc"] = dict(sorted(auc.items(), key=lambda kv: -abs(kv[1] - 0.5)))
            out[f"{name}_mean"] = {f: float(x[miss, i].mean()) for i, f in
                                   enumerate(features)}
            out["ready_mean"] = {f: float(x[ready, i].mean()) for i, f in
                                 enumerate(features)}
    return out
