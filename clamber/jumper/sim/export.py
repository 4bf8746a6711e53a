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
voltage limits; the first violation raises :class:`ExportError` naming the sample.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from clamber.exceptions import ExportError, FileFormatError
from clamber.jumper.model import JOINT_NAMES
from clamber.jumper.sim.motor import REFERENCE_RATE_HZ, MotorParameters
from clamber.jumper.sim.reference import Reference, build_reference
from clamber.jumper.solution import TrajectorySolution

FORMAT_VERSION = 1
MAGIC = b"CLJR"
UNITS = "angle=rad;voltage=V;flags=bit0 front closed,bit1 rear closed"


@dataclass(frozen=True)
class ExportLimits:
    """What the robot can do (units in brackets); checked with a relative ``tolerance``."""

    joint_angle: float  # [rad]
    torque: float  # [N m]
    speed: float  # [rad/s]
    voltage: float  # [V]
    tolerance: float = 1e-6

    @classmethod
    def from_solution(cls, sol: TrajectorySolution, motor: MotorParameters) -> ExportLimits:
        """The optimization's own bounds and the motor's supply voltage."""
        s = sol.settings
        return cls(joint_angle=s.joint_angle_limit, torque=s.torque_limit,
                   speed=s.joint_speed_limit, voltage=motor.supply_voltage)


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
    t = np.asarray(sol.t, dtype=float)
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise ExportError("the solution's time is not finite and non-decreasing; "
                          "nothing was written")


def _flags(ref: Reference) -> np.ndarray:
    return ref.front_closed.astype(np.uint8) | (ref.rear_closed.astype(np.uint8) << 1)


def write_csv(ref: Reference, path: Path) -> Path:
    """One row per sample: time [s], angles [rad], voltages [V], gripper commands (0/1)."""
    head = (["t_s"] + [f"{n}_rad" for n in JOINT_NAMES] + [f"{n}_ff_V" for n in JOINT_NAMES]
            + ["front_closed", "rear_closed"])
    data = np.column_stack([ref.t, ref.theta, ref.voltage, ref.front_closed, ref.rear_closed])
    fmt = ["%.4f"] + ["%.6f"] * 3 + ["%.4f"] * 3 + ["%d", "%d"]
    np.savetxt(path, data, delimiter=",", header=",".join(head), comments="", fmt=fmt)
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
    path.write_bytes(head + body.tobytes())
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
                     limits: ExportLimits | None = None) -> dict[str, Path]:
    """Resample, check every limit, then write ``reference.csv`` and ``reference.bin``."""
    motor = motor or MotorParameters()
    check_timing(sol)
    ref = build_reference(sol, motor, rate_hz)
    check_limits(ref, limits or ExportLimits.from_solution(sol, motor))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return {"csv": write_csv(ref, out / "reference.csv"),
            "binary": write_binary(ref, out / "reference.bin")}
