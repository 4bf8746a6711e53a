"""Robot telemetry: read joint logs, fit the motor model, torques, work, safe-region use.

Log format (CSV, one header line naming the columns, any column order, 167 Hz on the
paper's robot): ``t_s``, the base pose ``x5_m, y5_m, phi5_rad`` (rear gripper and link
4 angle from the tracking camera), joint angles ``hip_rad, spine_rad, shoulder_rad``,
the ESC voltages ``v_hip_V, v_spine_V, v_shoulder_V`` (mean over the logging interval)
and the gripper states ``front_hooked, rear_hooked`` (0/1). An optional force-plate
CSV ``t_s, fx_N, fy_N`` gives the wall force on the front gripper.

Method. Voltages and forces in a row are means over the interval ending at its time, so
the analysis works on intervals: mean speeds are angle steps over time steps, angles
and accelerations are taken at interval midpoints (differences of mean speeds). Inverse
dynamics (rear-foot base) gives joint torques wherever the contact forces are known:
with at most one gripper hooked they follow from the base rows of the equations of
motion; with both hooked the force plate supplies the front force. Samples within two
log periods of a hook or release are dropped (impacts). The motor model
``tau = a V - c omega`` (a = k_t / R, c = k_t k_e / R + b) is fitted per joint by least
squares to those torques, rejecting outliers (unmodelled wall contacts, impacts);
torques everywhere use the fitted model, and the work of an interval is its mean torque
times its angle step (positive work sums the positive ones).
"""

from __future__ import annotations

import csv
import io
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clamber import _validate as check
from clamber._validate import read_text
from clamber.attachment.safe_region import SafeRegion
from clamber.exceptions import ConfigError, FileFormatError
from clamber.jumper.model import JOINT_NAMES, jumper_model
from clamber.jumper.morphology import Morphology

logger = logging.getLogger("clamber")
LOG_RATE_HZ = 167.0
LOG_COLUMNS = ("t_s", "x5_m", "y5_m", "phi5_rad", "hip_rad", "spine_rad", "shoulder_rad",
               "v_hip_V", "v_spine_V", "v_shoulder_V", "front_hooked", "rear_hooked")
FORCE_COLUMNS = ("t_s", "fx_N", "fy_N")
#: Samples this many log periods around a hook change are excluded from the fit.
IMPACT_GUARD = 2
MIN_SAMPLES = 10


#: What a logged value may be: voltages within the supply range, positions within a
#: 100 m wall, angles within 100 turns, forces within ten gripper load caps. A value
#: outside is a unit or logging error, which a fit would turn into absurd motor figures.
COLUMN_LIMITS = {"v_hip_V": 48.0, "v_spine_V": 48.0, "v_shoulder_V": 48.0, "x5_m": 100.0,
                 "y5_m": 100.0, "phi5_rad": 200 * math.pi, "hip_rad": 200 * math.pi,
                 "spine_rad": 200 * math.pi, "shoulder_rad": 200 * math.pi,
                 "front_hooked": 1.0, "rear_hooked": 1.0, "fx_N": 1e4, "fy_N": 1e4}
#: Time steps of a log [s]: from a 10 kHz logger to one sample a second.
TIME_STEP_RANGE = (1e-4, 1.0)


def read_csv(path: str | Path, required: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Columns of a numeric CSV with a header (read by the standard ``csv`` module:
    quoted fields and a UTF-8 byte-order mark are fine); errors name the file and line."""
    path = Path(path)
    text = read_text(path, "telemetry file")
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader, [])]
    except csv.Error as e:
        raise FileFormatError(f"{path}, line 1: not CSV ({e})") from None
    if not header:
        raise FileFormatError(f"{path}: empty file, expected a header line")
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise FileFormatError(f"{path}, line 1: columns {twice} appear more than once")
    missing = [c for c in required if c not in header]
    if missing:
        raise FileFormatError(f"{path}, line 1: header lacks columns {missing}; found {header}")
    limits = [COLUMN_LIMITS.get(h) for h in header]
    it = header.index("t_s")
    rows = []
    lines = text.count("\n") + (not text.endswith("\n"))
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            raise FileFormatError(f"{path}, line {reader.line_num}: not CSV ({e})") from None
        no = reader.line_num
        if not any(f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise FileFormatError(
                f"{path}, line {no}: expected {len(header)} fields, found {len(fields)}"
                + (" (truncated file?)" if no >= lines else ""))
        try:
            values = [float(f) for f in fields]
        except ValueError:
            raise FileFormatError(f"{path}, line {no}: non-numeric field in "
                                  f"{','.join(fields)[:200]!r}") from None
        if not all(math.isfinite(v) for v in values):
            raise FileFormatError(f"{path}, line {no}: non-finite value in "
                                  f"{','.join(fields)[:200]!r}")
        for name, v, lim in zip(header, values, limits, strict=True):
            if lim is not None and abs(v) > lim:
                raise FileFormatError(f"{path}, line {no}: {name} = {v:g} is outside "
                                      f"+-{lim:g}")
        if rows:
            step = values[it] - rows[-1][1][it]
            if step <= 0:
                raise FileFormatError(f"{path}, line {no}: time does not increase")
            if not TIME_STEP_RANGE[0] <= step <= TIME_STEP_RANGE[1]:
                raise FileFormatError(
                    f"{path}, line {no}: time step {step:g} s is outside "
                    f"[{TIME_STEP_RANGE[0]:g}, {TIME_STEP_RANGE[1]:g}] s (a 10 kHz to 1 Hz log)")
        rows.append((no, values))
    if len(rows) < MIN_SAMPLES:
        raise FileFormatError(f"{path}: {len(rows)} samples, need at least {MIN_SAMPLES}")
    data = np.array([v for _, v in rows])
    return {name: data[:, header.index(name)] for name in header}


@dataclass(frozen=True)
class MotorFit:
    """Fitted ``tau = gain V - damping omega`` of one joint."""

    joint: str
    gain: float  # a [N m/V]
    damping: float  # c [N m s/rad]
    rms_residual: float  # [N m]
    samples: int
    plausible: bool = True  # gain and damping within RANGES (a DC motor's signs)


@dataclass
class TelemetryAnalysis:
    """Everything derived from one log (arrays over log samples)."""

    t: np.ndarray  # [s]
    q: np.ndarray  # (N, 6) rear-foot base
    qd: np.ndarray  # (N, 6)
    voltage: np.ndarray  # (N, 3) [V]
    torque_id: np.ndarray  # (N, 3) inverse dynamics [N m], NaN where not determinable
    torque: np.ndarray  # (N, 3) fitted motor model [N m]
    f_front: np.ndarray  # (N, 2) [N], NaN where unknown or detached
    f_rear: np.ndarray  # (N, 2)
    hooked: np.ndarray  # (N, 2) bool front, rear
    fits: list[MotorFit]
    jump_bounds: list[tuple[float, float]]  # [s]
    work_positive: np.ndarray  # (jumps, 3) [J]
    work_net: np.ndarray  # (jumps, 3) [J]
    outside_safe: dict[str, float]  # fraction of known stance samples outside, per gripper

    def summary(self) -> dict:
        return {
            "samples": len(self.t),
            "jumps": len(self.jump_bounds),
            "motor_fit": {f.joint: {"gain_nm_per_v": f.gain, "damping_nms_per_rad": f.damping,
                                    "rms_residual_nm": f.rms_residual, "samples": f.samples,
                                    "plausible": f.plausible}
                          for f in self.fits},
            "work_per_jump_j": {n: self.work_positive[:, j].tolist()
                                for j, n in enumerate(JOINT_NAMES)},
            "net_work_per_jump_j": {n: self.work_net[:, j].tolist()
                                    for j, n in enumerate(JOINT_NAMES)},
            "stance_outside_safe_region": self.outside_safe,
        }


def _plausible(joint: str, gain: float, damping: float) -> bool:
    """Whether a fit is a DC motor's: gain and damping within ``RANGES``. A magnitude
    beyond the range (a unit or time-stamp error) is a ConfigError; a sign or zero within
    it (a log with too few or too uniform samples for this joint) is a warning, and the
    fit is marked implausible."""
    plausible = True
    for field, value, quantity in (("gain", gain, "motor_gain"),
                                   ("damping", damping, "motor_damping")):
        r = check.RANGES[quantity]
        if not math.isfinite(value) or abs(value) > r.high:
            raise ConfigError(f"motor fit of {joint}: {field} = {value:.4g} {r.unit} is "
                              f"outside {check.range_text(quantity)}: the log's torques and "
                              "voltages do not fit a DC motor (check its time column, units "
                              "and joint order)")
        try:
            check.in_range("motor fit", f"{joint}.{field}", value, quantity)
        except ConfigError as e:
            logger.warning("warning: %s: no DC motor has that; this joint's fitted torques "
                        "are not trustworthy (too few or too uniform samples?)", e)
            plausible = False
    return plausible


def _guard(hooked: np.ndarray) -> np.ndarray:
    """True at samples far enough from any hook or release."""
    change = np.any(np.diff(hooked.astype(int), axis=0) != 0, axis=1)
    bad = np.zeros(len(hooked), bool)
    for k in np.flatnonzero(change):
        bad[max(0, k - IMPACT_GUARD + 1): k + IMPACT_GUARD + 1] = True
    return ~bad


def _robust_fit(A: np.ndarray, y: np.ndarray, rounds: int = 4) -> tuple[float, float, np.ndarray]:
    """Least squares with outliers (unmodelled wall contacts, impacts) rejected.

    Each round drops samples whose residual exceeds 3 robust standard deviations
    (1.4826 x median absolute residual). Returns (a, c, residuals of the kept samples).
    """
    keep = np.ones(len(y), bool)
    for _ in range(rounds):
        x, *_ = np.linalg.lstsq(A[keep], y[keep], rcond=None)
        r = A @ x - y
        sigma = 1.4826 * np.median(np.abs(r[keep]))
        new = np.abs(r) <= 3 * max(sigma, 1e-9)
        if new.sum() < MIN_SAMPLES or (new == keep).all():
            break
        keep = new
    return float(x[0]), float(x[1]), r[keep]


def jump_bounds(t: np.ndarray, rear_hooked: np.ndarray) -> list[tuple[float, float]]:
    """Jumps as observed in a log: from the start (or a rear re-hook) to the next re-hook [s]."""
    h = np.asarray(rear_hooked) > 0.5
    rehooks = t[1:][(~h[:-1]) & h[1:]]
    starts = np.r_[t[0], rehooks[:-1]] if len(rehooks) else np.array([])
    return list(zip(starts.tolist(), rehooks.tolist(), strict=True))


def analyze(log: dict[str, np.ndarray], morphology: Morphology,
            forces: dict[str, np.ndarray] | None = None,
            safe_front: SafeRegion | None = None,
            safe_rear: SafeRegion | None = None) -> TelemetryAnalysis:
    """Fit, torques, work and safe-region statistics of a parsed log (see module doc)."""
    # Interval view: row i's voltage (and force) is the mean over (t[i-1], t[i]], so every
    # quantity is taken at interval midpoints; speeds are exact interval means.
    t_s = log["t_s"]
    q_s = np.column_stack([log[c] for c in LOG_COLUMNS[1:7]])
    dt = np.diff(t_s)
    t = 0.5 * (t_s[1:] + t_s[:-1])
    q = 0.5 * (q_s[1:] + q_s[:-1])
    qd = np.diff(q_s, axis=0) / dt[:, None]
    qdd = np.gradient(qd, t, axis=0)
    volt = np.column_stack([log[c][1:] for c in LOG_COLUMNS[7:10]])
    hs = np.column_stack([log["front_hooked"] > 0.5, log["rear_hooked"] > 0.5])
    hooked = hs[1:] & hs[:-1]
    steady = (hs[1:] == hs[:-1]).all(axis=1)
    m = jumper_model("rear_foot")
    p = morphology.parameters()
    n = len(t)
    plate = None
    if forces is not None:
        plate = np.column_stack([np.interp(t_s, forces["t_s"], forces[c])[1:]
                                 for c in ("fx_N", "fy_N")])

    tau_id = np.full((n, 3), np.nan)
    f_front = np.full((n, 2), np.nan)
    f_rear = np.full((n, 2), np.nan)
    for k in range(n):
        tot = (np.array(m.mass_matrix(q[k], p)) @ qdd[k]
               + np.array(m.bias(q[k], qd[k], p)).ravel())  # = B tau + J1^T f1 + J5^T f5
        front, rear = hooked[k]
        if front and rear and plate is None:
            continue
        J1 = np.array(m.jacobian_front(q[k], p))
        f1 = np.zeros(2)
        if front:
            f1 = plate[k] if plate is not None else tot[0:2]  # J1, J5 base rows are I
            f_front[k] = f1
        if rear:
            f_rear[k] = tot[0:2] - (f1 if front else 0.0)
        tau_id[k] = tot[3:6] - (J1.T @ f1)[3:6]

    usable = _guard(hooked) & steady & np.all(np.isfinite(tau_id), axis=1)
    fits = []
    torque = np.empty((n, 3))
    for j, name in enumerate(JOINT_NAMES):
        w = qd[:, 3 + j]
        A = np.column_stack([volt[usable, j], -w[usable]])
        if usable.sum() < MIN_SAMPLES:
            raise ConfigError(f"only {usable.sum()} samples with known torque: cannot fit the "
                              "motor model (give force-plate data for double stance)")
        if not np.any(np.abs(A[:, 0]) > 1e-9) or np.linalg.matrix_rank(A) < 2:
            raise ConfigError(f"log column v_{name}_V: voltages (or speeds) are all zero on "
                              f"the {int(usable.sum())} usable samples; the motor model "
                              "tau = a V - c omega cannot be fitted")
        a, c, res = _robust_fit(A, tau_id[usable, j])
        torque[:, j] = a * volt[:, j] - c * w
        fits.append(MotorFit(name, float(a), float(c), float(np.sqrt(np.mean(res**2))),
                             int(usable.sum()), _plausible(name, a, c)))

    bounds = jump_bounds(t_s, hs[:, 1])
    work = torque * np.diff(q_s[:, 3:6], axis=0)  # interval mean torque x angle step [J]
    wp = np.zeros((len(bounds), 3))
    wn = np.zeros((len(bounds), 3))
    for i, (a0, b0) in enumerate(bounds):
        sel = (t >= a0) & (t <= b0)
        wp[i] = np.maximum(work[sel], 0.0).sum(axis=0)
        wn[i] = work[sel].sum(axis=0)

    outside = {}
    for name, f, region, col in (("front", f_front, safe_front, 0), ("rear", f_rear, safe_rear, 1)):
        region = region or SafeRegion.sector()
        known = hooked[:, col] & np.all(np.isfinite(f), axis=1) & _guard(hooked) & steady
        outside[name] = (float(np.mean(region.violation(f[known]) > 0)) if known.any()
                         else float("nan"))
    return TelemetryAnalysis(t=t, q=q, qd=qd, voltage=volt, torque_id=tau_id, torque=torque,
                             f_front=f_front, f_rear=f_rear, hooked=hooked, fits=fits,
                             jump_bounds=bounds, work_positive=wp, work_net=wn,
                             outside_safe=outside)


def load_and_analyze(log_path: str | Path, morphology: Morphology,
                     forces_path: str | Path | None = None, **kwargs) -> TelemetryAnalysis:
    """Read a log (and force-plate file) and analyze it."""
    log = read_csv(log_path, LOG_COLUMNS)
    forces = read_csv(forces_path, FORCE_COLUMNS) if forces_path else None
    return analyze(log, morphology, forces, **kwargs)


def write_log(result, path: str | Path, forces_path: str | Path | None = None,
              rate_hz: float = LOG_RATE_HZ) -> Path:
    """Write a simulation's 1 kHz log as the robot's telemetry at ``rate_hz``.

    Voltages and forces are means over each logging interval, as the ESC's duty-cycle
    accumulator and a force plate's anti-aliasing filter report them. ``result`` is a
    :class:`clamber.jumper.sim.result.SimulationResult` recorded with ``record=True``.
    """
    tt = result.column("t")
    ticks = np.unique(np.round(np.arange(0, tt[-1], 1.0 / rate_hz) * 1000).astype(int))
    ticks = ticks[ticks < len(tt)]

    def interval_mean(name: str) -> np.ndarray:
        # Tick k's voltage acts from state k to k + 1: the interval ending at tick i
        # averages ticks [previous, i).
        x = np.nan_to_num(result.column(name))
        c = np.r_[0.0, np.cumsum(x)]
        lo = np.r_[0, ticks[:-1]]
        hi = np.maximum(ticks, lo + 1)
        return (c[hi] - c[lo]) / (hi - lo)

    cols = {"t_s": tt[ticks]}
    for src, dst in zip(("x5", "y5", "phi5", "hip", "spine", "shoulder"), LOG_COLUMNS[1:7],
                        strict=True):
        cols[dst] = result.column(src)[ticks]
    for j in JOINT_NAMES:
        cols[f"v_{j}_V"] = interval_mean(f"v_{j}")
    cols["front_hooked"] = result.column("front_hooked")[ticks]
    cols["rear_hooked"] = result.column("rear_hooked")[ticks]
    path = Path(path)
    np.savetxt(path, np.column_stack([cols[c] for c in LOG_COLUMNS]), delimiter=",",
               header=",".join(LOG_COLUMNS), comments="", fmt="%.6g")
    if forces_path is not None:
        f = np.column_stack([tt[ticks], interval_mean("fx_front"), interval_mean("fy_front")])
        np.savetxt(forces_path, f, delimiter=",", header=",".join(FORCE_COLUMNS), comments="",
                   fmt="%.6g")
    return path


def true_work(result) -> np.ndarray:
    """Positive mechanical work per joint per jump [J] from a 1 kHz simulation log.

    Jumps are segmented as :func:`jump_bounds` does on a telemetry log.
    """
    t = result.column("t")
    power = np.column_stack([result.column(f"tau_{j}") * result.column(f"w_{j}")
                             for j in JOINT_NAMES])
    out = []
    for a0, b0 in jump_bounds(t, result.column("rear_hooked")):
        sel = (t >= a0) & (t <= b0)
        out.append(np.trapezoid(np.maximum(power[sel], 0.0), t[sel], axis=0))
    return np.array(out)
