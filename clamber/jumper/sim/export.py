"""Hand-off to hardware: the 500 Hz joint reference with voltage feed-forward, checked first.

Two files carry the same samples: a CSV for people and a compact little-endian binary
for the robot's main board::

    magic     4 bytes   b"CLJR"
    version   uint16    FORMAT_VERSION
    rate      float32   reference rate [Hz]
    samples   uint32    number of samples n
    joints    uint8     number of joints j
    names     uint16 length + UTF-8, comma-separated joint order ("hip,spine,shoulder")
    units     uint16 length + UTF-8, "angle=rad;voltage=V;flags=bit0 front closed,bit1 rear closed"
    n records j float32 angles, j float32 feed-forward voltages, uint8 gripper flags

Nothing is written unless every sample respects the joint angle, torque, speed and
voltage limits of the robot the reference is for (:class:`Hardware`: a hardware
description the user gives, by default the paper's motors), never limits read from the
solution file being checked; the first violation raises :class:`ExportError` naming the
sample. A solve that failed, or whose physical replay was not checked or drifted, is
refused unless forced. ``export.json`` beside the reference records the limits checked.

A hardware description is a TOML file (units in brackets; ranges in
:data:`clamber._validate.RANGES`)::

    joint_angle_limit = 2.6     # [rad] |relative joint angle|
    torque_limit = 0.25         # [N m] per joint
    joint_speed_limit = 40.0    # [rad/s] per joint
    [motor]                     # clamber.jumper.sim.motor.MotorParameters; any field
    supply_voltage = 12.0       # [V]
    torque_constant = 0.05      # [N m/A] at the joint
"""

from __future__ import annotations

import json
import os
import struct
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from clamber import _validate as check
from clamber._validate import open_no_follow
from clamber.exceptions import ConfigError, ExportError, FileFormatError
from clamber.jumper.model import JOINT_NAMES
from clamber.jumper.sim.motor import REFERENCE_RATE_HZ, MotorParameters
from clamber.jumper.sim.reference import Reference, build_reference
from clamber.jumper.solution import TrajectorySolution

FORMAT_VERSION = 1
MAGIC = b"CLJR"
UNITS = "angle=rad;voltage=V;flags=bit0 front closed,bit1 rear closed"


@dataclass(frozen=True)
class Hardware:
    """The robot a reference is for: its joint limits and motors (units in brackets).

    The defaults are the paper's robot: 0.25 N m per joint (its measured push-off peak),
    40 rad/s, 2.6 rad, and the joint modules of :class:`MotorParameters` on 12 V.
    """

    joint_angle_limit: float = 2.6
    """|theta| of each relative joint angle [rad]."""
    torque_limit: float = 0.25
    """|tau| per joint [N m]."""
    joint_speed_limit: float = 40.0
    """|d theta/dt| per joint [rad/s]."""
    motor: MotorParameters = field(default_factory=MotorParameters)
    """The joint modules; the feed-forward voltage must stay within its supply."""
    source: str = "the paper's motors (default)"
    """Where these limits come from (named in the export's record)."""

    def __post_init__(self) -> None:
        check.in_range("hardware", "joint_angle_limit", self.joint_angle_limit, "joint_angle")
        check.in_range("hardware", "torque_limit", self.torque_limit, "joint_torque")
        check.in_range("hardware", "joint_speed_limit", self.joint_speed_limit, "joint_speed")

    @classmethod
    def load(cls, path: str | Path, supply_voltage: float | None = None) -> Hardware:
        """A hardware description from a TOML file (module docstring); errors name the
        file, the field and the value."""
        path = Path(path)
        text = check.read_text(path, "hardware description", ConfigError)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML ({e})") from None
        try:
            return cls.from_dict(data, source=str(path), supply_voltage=supply_voltage)
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None

    @classmethod
    def from_dict(cls, data: Any, source: str,
                  supply_voltage: float | None = None) -> Hardware:
        """From a mapping of the TOML file's fields (``motor`` a table of motor fields)."""
        if not isinstance(data, dict):
            raise ConfigError("hardware: must be a table")
        limits = {"joint_angle_limit", "torque_limit", "joint_speed_limit"}
        unknown = sorted(set(data) - limits - {"motor"})
        if unknown:
            raise ConfigError(f"hardware: unknown fields {unknown}; allowed: "
                              f"{sorted(limits | {'motor'})}")
        motor = data.get("motor", {})
        if not isinstance(motor, dict):
            raise ConfigError(f"hardware.motor = {motor!r}: must be a table")
        motor_fields = {f.name for f in fields(MotorParameters)}
        unknown = sorted(set(motor) - motor_fields)
        if unknown:
            raise ConfigError(f"hardware.motor: unknown fields {unknown}; allowed: "
                              f"{sorted(motor_fields)}")
        quantities = {"torque_constant": "motor_constant", "back_emf_constant":
                      "motor_constant", "resistance": "resistance",
                      "supply_voltage": "supply_voltage", "viscous_friction":
                      "viscous_friction"}
        motor = {k: check.in_range("hardware.motor", k, x, quantities[k])
                 for k, x in motor.items()}
        if supply_voltage is not None:
            motor["supply_voltage"] = supply_voltage
        return cls(motor=MotorParameters(**motor), source=source,
                   **{k: data[k] for k in limits if k in data})

    def with_supply(self, supply_voltage: float | None) -> Hardware:
        """The same robot on another battery (None: unchanged)."""
        if supply_voltage is None:
            return self
        return Hardware(self.joint_angle_limit, self.torque_limit, self.joint_speed_limit,
                        MotorParameters(**{**asdict(self.motor),
                                           "supply_voltage": supply_voltage}), self.source)


@dataclass(frozen=True)
class ExportLimits:
    """What the robot can do (units in brackets); checked with a relative ``tolerance``."""

    joint_angle: float  # [rad]
    torque: float  # [N m]
    speed: float  # [rad/s]
    voltage: float  # [V]
    tolerance: float = 1e-6

    @classmethod
    def from_hardware(cls, hw: Hardware) -> ExportLimits:
        """The robot's joint limits and its motors' supply voltage."""
        return cls(joint_angle=hw.joint_angle_limit, torque=hw.torque_limit,
                   speed=hw.joint_speed_limit, voltage=hw.motor.supply_voltage)

    def to_dict(self) -> dict[str, float]:
        """The limits with their units in the keys, as the export's record gives them."""
        return {"joint_angle_rad": self.joint_angle, "torque_nm": self.torque,
                "speed_rad_s": self.speed, "feed_forward_voltage_v": self.voltage,
                "relative_tolerance": self.tolerance}


def check_solution(sol: TrajectorySolution, force: bool = False) -> str:
    """Refuse (ExportError) a solve that did not succeed, or whose physical replay was not
    checked or drifted, unless ``force``; returns what was found, for the record."""
    consistent = sol.physically_consistent
    if not sol.status.success:
        verdict = f"solver status {sol.status.value!r}"
    elif consistent is None:
        verdict = "not checked by a physical replay"
    elif not consistent:
        drift = sol.accuracy.get("max_position_drift_m")
        verdict = f"replay drift {drift} m over the tolerance"
    else:
        return "converged and checked by a physical replay"
    if force:
        return f"forced: {verdict}"
    raise ExportError(f"the solution is not a verified solve ({verdict}); check it with "
                      "`clamber jumper optimize` (which replays it) or pass --force; "
                      "nothing was written")


def check_limits(ref: Reference, limits: ExportLimits) -> None:
    """Raise :class:`ExportError` at the first sample and joint over a limit or not finite
    (``NaN > limit`` is False, so the test is written as "not within the limit")."""
    if len(ref.t) == 0:
        raise ExportError("the reference has no samples (a jump shorter than one "
                          f"{1e3 / ref.rate_hz:.3g} ms period); nothing was written")
    checks = (("joint angle", ref.theta, limits.joint_angle, "rad"),
              ("torque", ref.torque, limits.torque, "N m"),
              ("speed", ref.omega, limits.speed, "rad/s"),
              ("feed-forward voltage", ref.voltage, limits.voltage, "V"))
    first = None
    for name, arr, lim, unit in checks:
        over = ~(np.abs(arr) <= lim * (1 + limits.tolerance))
        if over.any():
            k, j = np.argwhere(over)[0]
            if first is None or k < first[0]:
                first = (int(k), int(j), name, float(arr[k, j]), lim, unit)
    if first is not None:
        k, j, name, value, lim, unit = first
        raise ExportError(
            f"sample {k} (t = {ref.t[k]:.4f} s), joint '{JOINT_NAMES[j]}': {name} "
            f"{value:.4g} {unit} is not within the limit +-{lim:.4g} {unit}; "
            "nothing was written")


def check_timing(sol: TrajectorySolution) -> None:
    """Refuse a solution whose phases are not positive and finite or whose time runs
    backwards: its reference would be empty or constant."""
    d = np.asarray(sol.phase_durations, dtype=float)
    if d.shape != (5,) or not np.all(np.isfinite(d)) or np.any(d <= 0):
        raise ExportError(f"phase durations {d.tolist()} s must be 5 finite values > 0; "
                          "nothing was written")
    r = check.RANGES["phase_duration"]
    if np.any(d < r.low) or np.any(d > r.high):
        raise ExportError(f"phase durations {d.tolist()} s must each lie in "
                          f"{check.range_text('phase_duration')}; nothing was written")
    t = np.asarray(sol.t, dtype=float)
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise ExportError("the solution's time is not finite and non-decreasing; "
                          "nothing was written")


def _flags(ref: Reference) -> np.ndarray:
    return ref.front_closed.astype(np.uint8) | (ref.rear_closed.astype(np.uint8) << 1)


def _open_new(path: Path) -> BinaryIO:
    """``path`` opened for writing (truncated) without following a link there: a link
    planted in the output folder would make the export overwrite what it points to."""
    return os.fdopen(open_no_follow(Path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb")


def write_csv(ref: Reference, path: Path) -> Path:
    """One row per sample: time [s], angles [rad], voltages [V], gripper commands (0/1)."""
    head = (["t_s"] + [f"{n}_rad" for n in JOINT_NAMES] + [f"{n}_ff_V" for n in JOINT_NAMES]
            + ["front_closed", "rear_closed"])
    data = np.column_stack([ref.t, ref.theta, ref.voltage, ref.front_closed, ref.rear_closed])
    fmt = ["%.4f"] + ["%.6f"] * 3 + ["%.4f"] * 3 + ["%d", "%d"]
    with _open_new(path) as f:
        np.savetxt(f, data, delimiter=",", header=",".join(head), comments="", fmt=fmt)
    return path


def write_binary(ref: Reference, path: Path) -> Path:
    """The compact format of the module docstring."""
    names = ",".join(JOINT_NAMES).encode()
    units = UNITS.encode()
    n, j = ref.theta.shape
    head = (MAGIC + struct.pack("<HfIB", FORMAT_VERSION, ref.rate_hz, n, j)
            + struct.pack("<H", len(names)) + names + struct.pack("<H", len(units)) + units)
    rec = np.dtype([("angle", "<f4", (j,)), ("voltage", "<f4", (j,)), ("flags", "u1")])
    body = np.zeros(n, dtype=rec)
    body["angle"] = ref.theta
    body["voltage"] = ref.voltage
    body["flags"] = _flags(ref)
    with _open_new(path) as f:
        f.write(head + body.tobytes())
    return path


def read_binary(path: str | Path) -> tuple[dict, np.ndarray]:
    """Header dict and the structured sample array of a binary reference file."""
    raw = Path(path).read_bytes()
    if raw[:4] != MAGIC:
        raise FileFormatError(f"{path}: not a clamber reference (magic {raw[:4]!r})")
    try:
        version, rate, n, j = struct.unpack_from("<HfIB", raw, 4)
        off = 4 + struct.calcsize("<HfIB")
        (ln,) = struct.unpack_from("<H", raw, off)
        names = raw[off + 2: off + 2 + ln].decode().split(",")
        off += 2 + ln
        (lu,) = struct.unpack_from("<H", raw, off)
        units = raw[off + 2: off + 2 + lu].decode()
        off += 2 + lu
    except (struct.error, UnicodeDecodeError) as e:
        raise FileFormatError(f"{path}: truncated or corrupt header ({e})") from None
    if version != FORMAT_VERSION:
        raise FileFormatError(f"{path}: version {version}, this clamber reads {FORMAT_VERSION}")
    rec = np.dtype([("angle", "<f4", (j,)), ("voltage", "<f4", (j,)), ("flags", "u1")])
    if len(raw) - off != n * rec.itemsize:
        raise FileFormatError(f"{path}: expected {n} samples of {rec.itemsize} bytes, "
                              f"found {len(raw) - off} bytes")
    data = np.frombuffer(raw, dtype=rec, offset=off, count=n)
    return {"version": version, "rate_hz": rate, "samples": n, "joints": names,
            "units": units}, data


def export_reference(sol: TrajectorySolution, out_dir: str | Path,
                     motor: MotorParameters | None = None, rate_hz: float = REFERENCE_RATE_HZ,
                     hardware: Hardware | None = None,
                     force: bool = False) -> dict[str, Path]:
    """Resample, check every sample against the robot's limits (``hardware``, default
    the paper's; ``motor`` replaces its motors) and the solve's status, then write
    ``reference.csv``, ``reference.bin`` and ``export.json`` (the limits checked)."""
    hw = hardware or Hardware()
    if motor is not None:
        hw = Hardware(hw.joint_angle_limit, hw.torque_limit, hw.joint_speed_limit, motor,
                      hw.source)
    check_timing(sol)
    ref = build_reference(sol, hw.motor, rate_hz)
    limits = ExportLimits.from_hardware(hw)
    check_limits(ref, limits)
    verdict = check_solution(sol, force)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    record = {"limits_checked": limits.to_dict(), "limits_source": hw.source,
              "motor": asdict(hw.motor), "solution": verdict, "samples": len(ref.t),
              "rate_hz": ref.rate_hz}
    with _open_new(out / "export.json") as f:
        f.write((json.dumps(record, indent=1, allow_nan=False) + "\n").encode())
    return {"csv": write_csv(ref, out / "reference.csv"),
            "binary": write_binary(ref, out / "reference.bin"),
            "record": out / "export.json"}
