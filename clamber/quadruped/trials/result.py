"""What a trial reduces to: its identity, outcome and metrics (:class:`TrialResult`), from
per-cycle samples (:data:`METRIC_COLUMNS`, SI) over the compared part of the trial."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from clamber.failures import FailureReason
from clamber.quadruped.model.robot import GRAVITY
from clamber.recorder import Recorder

#: Per-cycle samples a trial reduces to its metrics: body tracking error [m], electrical
#: power [W], attitude error [rad], estimation position [m] and attitude [rad] errors.
METRIC_COLUMNS = ("error_m", "power_w", "attitude_rad", "est_position_m", "est_attitude_rad")


def metric_recorder() -> Recorder:
    """An empty recorder of :data:`METRIC_COLUMNS`."""
    return Recorder(METRIC_COLUMNS, rows=4096)


@dataclass(frozen=True)
class TrialResult:
    """Outcome and metrics of one trial (SI units, errors in mm).

    ``attitude_error_*``: against the wall frame (climbing) or level (trotting, yaw free).
    ``peak_gripper_load``: largest gauge of a gripper wrench in its set after placement.
    ``failure_*`` locate a failure (cycle 0: placement; distance along the fall line).
    ``limit_active_fraction``: cycles with an active gripper limit (Q-WBC);
    ``planned_load``: largest planned wrench over the paper's box. Estimation: drift, contact
    precision and recall, mean NIS and NEES per degree of freedom (about 1 if consistent).
    ``verdict_rerun``: a fine-step rerun (:mod:`clamber.quadruped.sim.rates`) of a climb
    whose coarse peak was ``coarse_peak_gripper_load``. ``reseat_retries``: re-seats
    whose grasp missed tried again (pressed again or flown back); ``swing_retries``: flights
    back over a hold after a missed grasp (a swing's, or a re-seat's after its presses);
    ``moves_paused``: body moves paused to re-seat a sole wound past the limit.
    """

    kind: str
    controller: str
    setting: str
    seed: int
    success: bool
    reason: str
    failure: FailureReason | None
    sim_time_s: float
    wall_time_s: float
    distance_m: float
    max_tracking_error_mm: float
    mean_power_w: float
    peak_power_w: float
    energy_j: float
    cost_of_transport: float
    estimation_rms_mm: float
    estimation_max_mm: float
    estimation_attitude_rms_deg: float
    attitude_error_rms_deg: float
    attitude_error_max_deg: float
    peak_gripper_load: float
    setup_time_s: float
    failure_phase: str = ""
    failure_distance_m: float = float("nan")
    failure_cycle: int = 0
    failure_time_s: float = float("nan")
    failure_detail: str = ""
    limit_active_fraction: float = float("nan")
    planned_load: float = float("nan")
    estimation_drift_m: float = float("nan")
    estimation_drift_percent: float = float("nan")
    contact_precision: float = float("nan")
    contact_recall: float = float("nan")
    estimation_nis: float = float("nan")
    estimation_nees: float = float("nan")
    physics_dt_s: float = float("nan")
    verdict_rerun: bool = False
    coarse_peak_gripper_load: float = float("nan")
    reseat_retries: int = 0
    swing_retries: int = 0
    moves_paused: int = 0

    def to_dict(self) -> dict:
        """JSON-ready: the failure by name, non-finite numbers as None."""
        d = asdict(self)
        d["failure"] = self.failure.name.lower() if self.failure else None
        return {k: None if isinstance(v, float) and not math.isfinite(v) else v
                for k, v in d.items()}

    @classmethod
    def unmeasured(cls, who: TrialIdentity, failure: FailureReason, reason: str
                   ) -> TrialResult:
        """A failed trial that left no metrics (e.g. every worker running it died)."""
        nan = dict.fromkeys((f.name for f in fields(cls) if f.type == "float"), math.nan)
        return cls(**{**nan, "kind": who.kind, "controller": who.controller,
                      "setting": who.setting, "seed": who.seed, "success": False,
                      "reason": reason, "failure": failure})

    @classmethod
    def from_dict(cls, d: dict) -> TrialResult:
        """The result :meth:`to_dict` wrote (None back to NaN)."""
        names = {f.name: f.type for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in names}
        values["failure"] = FailureReason[d["failure"].upper()] if d.get("failure") else None
        for k, v in values.items():
            if v is None and k != "failure":
                values[k] = math.nan
        return cls(**values)


@dataclass(frozen=True)
class TrialIdentity:
    """Which trial: its kind (climb/trot), controller or feet, setting (wall/terrain), seed."""

    kind: str
    controller: str
    setting: str
    seed: int


def _written(samples: Recorder, name: str, scale: float = 1.0) -> np.ndarray:
    """A metric column scaled; empty if the trial never sampled it (all cells unwritten)."""
    a = samples.column(name)
    return a[:0] if np.isnan(a).all() else a * scale


def reduce_trial(who: TrialIdentity, failure: FailureReason | None, reason: str,
                 samples: Recorder, *, sim_time: float, wall: float, setup_time: float,
                 distance: float, mass: float, dt: float, peak_load: float,
                 **extra: float) -> TrialResult:
    """A :class:`TrialResult` from the per-cycle samples: energy over the control period
    ``dt`` [s], maxima and RMS (zero without samples), cost of transport over ``distance``
    [m] at ``mass`` [kg] (undefined below 1 mm); ``extra`` sets further fields."""
    p = _written(samples, "power_w")
    p = p if p.size else np.zeros(1)
    energy = float(p.sum() * dt)
    cot = energy / (mass * GRAVITY * distance) if distance > 1e-3 else float("nan")

    def rms_max(name: str, scale: float) -> tuple[float, float]:
        a = _written(samples, name, scale)
        a = a if a.size else np.zeros(1)
        return float(np.sqrt(np.mean(a**2))), float(a.max())

    errors = _written(samples, "error_m")
    att_rms, att_max = rms_max("attitude_rad", 180 / math.pi)
    est_rms, est_max = rms_max("est_position_m", 1000.0)
    est_att_rms, _ = rms_max("est_attitude_rad", 180 / math.pi)
    return TrialResult(
        kind=who.kind, controller=who.controller, setting=who.setting, seed=who.seed,
        success=failure is None, reason=reason, failure=failure, sim_time_s=sim_time,
        wall_time_s=wall, distance_m=distance,
        max_tracking_error_mm=1000 * float(errors.max()) if errors.size else math.nan,
        mean_power_w=float(p.mean()), peak_power_w=float(p.max()), energy_j=energy,
        cost_of_transport=cot, estimation_rms_mm=est_rms, estimation_max_mm=est_max,
        estimation_attitude_rms_deg=est_att_rms, attitude_error_rms_deg=att_rms,
        attitude_error_max_deg=att_max, peak_gripper_load=float(peak_load),
        setup_time_s=setup_time, **extra)
