"""One set of checks for user-facing fields and options, with one style of message.

Every check names the owner and field, says what was given and what is allowed, and
raises :class:`~clamber.exceptions.ConfigError`. Booleans and strings are never numbers.

:data:`RANGES` states, once, the physical range of every quantity a user sets: the same
quantity has the same range in every command, settings file and hardware description.
"""

from __future__ import annotations

import dataclasses
import math
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clamber.exceptions import ConfigError, FileFormatError


@dataclass(frozen=True)
class Range:
    """The allowed values of one physical quantity: ``[low, high]`` (open ends excluded),
    in ``unit``; ``why`` says what sets the bounds."""

    low: float | None
    high: float | None
    unit: str = ""
    why: str = ""
    low_open: bool = False
    high_open: bool = False


#: The range of every quantity a user sets, in one place. Bounds are physical where the
#: robot sets them and otherwise wide enough for any robot of this class (a sub-kilogram
#: jumper of 40-120 mm links; a 3-5 kg quadruped), so a value outside is a typo or a unit
#: mistake, and every computation stays bounded.
RANGES: dict[str, Range] = {
    # jumper joints and motors
    "joint_torque": Range(0.0, 5.0, "N m", "a geared DC joint module of a sub-kilogram "
                          "climber (the paper's peaked at 0.25 N m)", low_open=True),
    "joint_speed": Range(0.0, 200.0, "rad/s", "geared joint output speed", low_open=True),
    "no_load_speed": Range(0.0, 200.0, "rad/s", "geared joint output speed (0: no motor line)"),
    "joint_angle": Range(0.0, math.pi, "rad", "a relative joint angle beyond pi folds a "
                         "link through its neighbour", low_open=True),
    "supply_voltage": Range(0.0, 48.0, "V", "small brushed DC motors on 1-12 cell packs",
                            low_open=True),
    "motor_constant": Range(0.0, 10.0, "N m/A", "k_t or k_e referred to the joint",
                            low_open=True),
    "resistance": Range(0.0, 1000.0, "ohm", "a small DC motor winding", low_open=True),
    "viscous_friction": Range(0.0, 1.0, "N m s/rad", "gearbox friction at the joint"),
    # jumper body
    "link_length": Range(0.0, 1.0, "m", "a link of a climber that spines hold (the "
                         "paper's are 40-120 mm)", low_open=True),
    "body_mass": Range(0.0, 5.0, "kg", "a mass of a climber that spines hold (the paper's "
                       "robot weighs 270 g)"),
    "link_inertia": Range(0.0, 1.0, "kg m^2", "a link's rotational inertia"),
    # jumper geometry and contact
    "foot_radius": Range(0.0, 0.05, "m", "a gripper disc (the robot's is 1 cm)",
                         low_open=True),
    "motor_radius": Range(0.0, 0.05, "m", "a joint motor's clearance from the wall"),
    "clearance_margin": Range(0.0, 0.05, "m", "a margin below the motor's size"),
    "release_clearance": Range(0.0, 0.05, "m", "a free gripper's distance from the wall "
                               "(the optimum's front gripper flies up to 7 cm off it)"),
    "gripper_load": Range(0.0, 1000.0, "N", "a spined gripper's load cap (the paper's "
                          "15 N); 1000 N is a hundred times the robot's weight", low_open=True),
    "force_margin": Range(0.0, 100.0, "N", "a margin below the gripper's load cap"),
    "sector_angle": Range(1.0, 90.0, "deg", "a safe sector narrower than 1 deg holds no "
                          "force the optimizer can find", high_open=True),
    # jumper optimization
    "phase_duration": Range(0.001, 2.0, "s", "one phase of a jump: 1 ms to 2 s"),
    "torque_rate_weight": Range(0.0, 10.0, "m/s", "beyond 10 the smoothing term outweighs "
                                "the speed objective (~0.5 m/s) twentyfold"),
    "approach_speed": Range(0.0, 5.0, "m/s", "a gripper's speed into the wall"),
    "height_gain": Range(0.0, 1.0, "m", "height gained by one jump"),
    "release_force": Range(0.0, 1000.0, "N", "as gripper_load"),
    "climb_speed": Range(-10.0, 10.0, "m/s", "a sub-kilogram jumper's speed up a wall "
                         "(the paper's 0.3 m/s)"),
    "ipopt_iterations": Range(1, 100_000, "", "IPOPT's budget; 1e5 iterations of the fine "
                              "grid take hours"),
    "ipopt_tolerance": Range(1e-12, 1.0, "", "below 1e-12 IPOPT cannot converge in double "
                             "precision"),
    "bound_push": Range(0.0, 0.5, "", "IPOPT's relative bound push", low_open=True),
    "fraction": Range(0.0, 1.0, "", "a share of a limit", high_open=True),
    "motor_headroom": Range(0.0, 0.5, "", "a share of the motor line the plan leaves free; "
                            "at 0.5 it keeps as much free as it uses", high_open=True),
    # motor fits from telemetry
    "motor_gain": Range(0.0, 100.0, "N m/V", "k_t / R of a joint module: the paper's "
                        "0.05", low_open=True),
    "motor_damping": Range(0.0, 100.0, "N m s/rad", "k_t k_e / R + b of a joint module"),
    # quadruped
    "sole_stiffness": Range(0.0, 1e4, "N m/rad", "a gripper sole's hinge (the robot's "
                            "25); stiffer needs a smaller physics step than the 1 ms floor"),
    "sole_armature": Range(0.0, 1.0, "kg m^2", "rotor inertia added to a sole hinge"),
    "physics_dt": Range(1e-4, 0.02, "s", "MuJoCo's step: the 0.1 ms floor bounds a "
                        "climb's steps; above 20 ms the grasp welds are unstable"),
    "control_rate": Range(1.0, 1000.0, "Hz", "the controller's loop rate (the robot's 100 "
                          "Hz); below 1 Hz a cycle has no control step"),
    "climb_distance": Range(0.0, 10.0, "m", "a climb within one trial (the rock walls are "
                            "2.8-3.1 m)", low_open=True),
    "seat_tolerance": Range(0.0, 100.0, "mm", "how far a gripper may seat from its hold",
                            low_open=True),
    "seat_margin": Range(0.0, 50.0, "mm", "the band around the 70 mm footpad the seat check "
                         "also reads"),
    "gain_multiplier": Range(1e-3, 1e3, "", "a multiple of a controller's class-default "
                             "gain (the tuning searches within spread**[-1, 1])"),
    "gait_cycles": Range(1, 1000, "", "gait cycles of one trial"),
    "reseat_every": Range(0, 100, "", "body moves a gripper holds through before the gait "
                          "re-seats it (0: never)"),
    "swing_retries": Range(0, 5, "", "times a swing whose grasp missed flies again to its "
                           "hold"),
    "wound_limit": Range(0.0, 10.0, "N m", "the sensed sole-hinge moment at which a body "
                         "move pauses to re-seat that gripper (0: never)"),
    "wound_share": Range(0.0, 2.0, "", "the share of a hold's capacity that a gripper's "
                         "sensed sole wind-up may take before a body move pauses to re-seat "
                         "it (0: never)"),
    "body_tilt": Range(0.0, 0.15, "rad", "how far [rad] body moves may turn the body from "
                       "the wall's attitude to wind the welded soles least (0: never)"),
    "sighting": Range(0.0, 100.0, "mm", "the body camera's position fix per axis (0: leg "
                      "odometry alone)"),
    "move_moment": Range(0.0, 10.0, "N m", "the sole-hinge moment one body move may wind "
                         "into a gripper before it is split (0: never split)"),
    "held_tilt": Range(0.0, 0.25, "rad", "an attached sole's tilt change a plan asks of its "
                       "hinges, which give 0.3 rad (the planner's held limit 0.25)",
                       low_open=True),
    "capacity_margin": Range(0.0, 1.0, "", "the share of each hold's planned capacity a "
                             "planned stance may load", low_open=True),
    "capacity_weight": Range(0.0, 2.0, "m", "the hold ranking's bonus per unit of capacity "
                             "factor (2 m outweighs any distance within the search radius)"),
    "attitude_integral": Range(0.0, 50.0, "1/s", "integral action on the body's attitude "
                               "(0: none; at 50 Hz above 50/s one cycle overshoots)"),
    "tune_budget": Range(1, 1000, "", "candidates per controller of the gain search"),
    # studies
    "trials": Range(1, 100_000, "", "seeded trials per condition"),
    "tolerance_scale": Range(0.0, 10.0, "", "a factor on the calibrated tolerances; ten "
                             "times them already perturbs masses by half"),
    "design_tolerance_scale": Range(0.0, 4.0, "", "the calibrated tolerances' multiple a "
                                    "robust design must hold: 0 is one exact robot, and at "
                                    "4 x the clearance scenario's shoulder motor weighs "
                                    "half the nominal", low_open=True),
}


def in_range(owner: str, name: str, value: Any, quantity: str) -> float:
    """``value`` as a float, checked against ``RANGES[quantity]``; the message gives the
    range with its unit."""
    r = RANGES[quantity]
    try:
        return number(owner, name, value, low=r.low, high=r.high, low_open=r.low_open,
                      high_open=r.high_open)
    except ConfigError as e:
        unit = f" {r.unit}" if r.unit and "must be finite" in str(e) else ""
        raise ConfigError(f"{e}{unit}") from None


def range_text(quantity: str) -> str:
    """The range of ``quantity`` as words, e.g. ``(0, 5] N m``."""
    r = RANGES[quantity]
    return _range_text(r.low, r.high, r.low_open, r.high_open).strip().removeprefix(
        "in ") + (f" {r.unit}" if r.unit else "")


def _label(owner: str, name: str) -> str:
    return f"{owner}.{name}" if owner else name


def is_real(value: Any) -> bool:
    """A Python or NumPy real number that is not a boolean."""
    return (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool | np.bool_))


def number(owner: str, name: str, value: Any, *, low: float | None = None,
           high: float | None = None, low_open: bool = False,
           high_open: bool = False) -> float:
    """A finite real number within ``[low, high]`` (``low_open``/``high_open`` exclude the
    end points); returned as a float."""
    what = _label(owner, name)
    if not is_real(value):
        raise ConfigError(f"{what} = {value!r}: must be a number")
    v = float(value)
    allowed = _range_text(low, high, low_open, high_open)
    if not math.isfinite(v):
        raise ConfigError(f"{what} = {value!r}: must be finite{allowed}")
    if low is not None and (v <= low if low_open else v < low):
        raise ConfigError(f"{what} = {value!r}: must be finite{allowed}")
    if high is not None and (v >= high if high_open else v > high):
        raise ConfigError(f"{what} = {value!r}: must be finite{allowed}")
    return v


def positive(owner: str, name: str, value: Any) -> float:
    """A finite number > 0."""
    return number(owner, name, value, low=0.0, low_open=True)


def non_negative(owner: str, name: str, value: Any) -> float:
    """A finite number >= 0."""
    return number(owner, name, value, low=0.0)


def integer(owner: str, name: str, value: Any, *, low: int | None = None,
            high: int | None = None) -> int:
    """An integer (not a boolean, not a float) within ``[low, high]``."""
    what = _label(owner, name)
    if not isinstance(value, int | np.integer) or isinstance(value, bool | np.bool_):
        raise ConfigError(f"{what} = {value!r}: must be an integer"
                          f"{_range_text(low, high, False, False)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{what} = {value!r}: must be an integer"
                          f"{_range_text(low, high, False, False)}")
    return int(value)


def choice(owner: str, name: str, value: Any, choices: Iterable[Any]) -> Any:
    """One of ``choices``."""
    options = tuple(choices)
    if value not in options:
        raise ConfigError(f"{_label(owner, name)} = {value!r}: must be one of "
                          f"{', '.join(repr(c) for c in options)}")
    return value


def finite_array(owner: str, name: str, value: Any,
                 shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """A finite float array, of ``shape`` when given (None: any length on that axis)."""
    what = _label(owner, name)
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: must be an array of numbers") from None
    if shape is not None and (a.ndim != len(shape) or any(
            s is not None and n != s for n, s in zip(a.shape, shape, strict=True))):
        want = "x".join("n" if s is None else str(s) for s in shape)
        raise ConfigError(f"{what}: must have shape {want}, got {'x'.join(map(str, a.shape))}")
    if not np.all(np.isfinite(a)):
        raise ConfigError(f"{what}: must be finite (holds NaN or inf)")
    return a


def numeric_fields(obj: Any, owner: str, *, low: float = 0.0, strict: bool = False,
                   names: Iterable[str] | None = None) -> None:
    """Every (or every named) field of a dataclass is a finite number >= ``low``
    (> ``low`` with ``strict``)."""
    fields = names if names is not None else [f.name for f in dataclasses.fields(obj)]
    for name in fields:
        number(owner, name, getattr(obj, name), low=low, low_open=strict)


def _range_text(low: float | None, high: float | None, low_open: bool,
                high_open: bool) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" and {'>' if low_open else '>='} {low:g}"
    if low is None:
        return f" and {'<' if high_open else '<='} {high:g}"
    return (f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}")


def read_text(path: Any, what: str = "file",
              error: type[Exception] = FileFormatError) -> str:
    """The UTF-8 text of ``path``; a missing file, a folder, an unreadable or non-UTF-8 file
    is an ``error`` (:class:`~clamber.exceptions.FileFormatError` by default) naming it, as
    is a name no file can have (a NUL character)."""
    p = Path(path)
    if "\x00" in str(p):
        raise error(f"{str(p)!r}: not a valid {what} name (it holds a NUL character)")
    try:
        return p.read_text(encoding="utf-8-sig")  # a byte-order mark is valid UTF-8
    except FileNotFoundError:
        raise error(f"{p}: {what} does not exist") from None
    except IsADirectoryError:
        raise error(f"{p}: is a folder, expected a {what}") from None
    except UnicodeDecodeError as e:
        raise error(f"{p}: not a UTF-8 text {what} (byte {e.start})") from None
    except OSError as e:
        raise error(f"{p}: cannot read the {what} ({e.strerror})") from None


def morphology_in_range(m: Any, owner: str = "morphology") -> Any:
    """``m`` (a jumper :class:`~clamber.jumper.morphology.Morphology`) if its lengths,
    masses, inertias and design bounds lie within :data:`RANGES`; a file may widen the
    design bounds, never beyond what a climber of this class can be."""
    for name, quantity in (("lengths", "link_length"), ("masses", "body_mass"),
                           ("link_mass", "body_mass"), ("link_com", "link_length"),
                           ("link_inertia", "link_inertia")):
        for i, x in enumerate(getattr(m, name)):
            if name == "link_com" and x == 0:
                continue
            in_range(owner, f"{name}[{i}]", x, quantity)
    in_range(owner, "total mass", sum(m.masses) + sum(m.link_mass), "body_mass")
    b = m.bounds
    for name, quantity in (("length_min", "link_length"), ("length_max", "link_length"),
                           ("distal_mass", "body_mass"), ("inner_mass_min", "body_mass"),
                           ("inner_mass_total", "body_mass")):
        in_range(f"{owner}.bounds", name, getattr(b, name), quantity)
    return m


def solution_in_range(sol: Any, owner: str = "solution") -> Any:
    """``sol`` (a jumper :class:`~clamber.jumper.solution.TrajectorySolution` read from a
    file) if what it states is physical: its morphology (:func:`morphology_in_range`),
    phase durations, height per jump, joint angles and joint speeds within
    :data:`RANGES`; a file stating more would drive a simulation or a robot with it."""
    morphology_in_range(sol.morphology, f"{owner}: morphology")
    for i, d in enumerate(np.asarray(sol.phase_durations, dtype=float).ravel()):
        in_range("", f"{owner}: phase_durations[{i}]", float(d), "phase_duration")
    in_range("", f"{owner}: height", sol.height, "height_gain")
    for name, array, quantity in (("joint angle", np.asarray(sol.q)[:, 3:], "joint_angle"),
                                  ("joint speed", np.asarray(sol.qd)[:, 3:], "joint_speed")):
        peak = float(np.max(np.abs(array))) if array.size else 0.0
        if not math.isfinite(peak) or peak > RANGES[quantity].high:
            raise ConfigError(f"{owner}: a {name} of {peak:.4g} {RANGES[quantity].unit} is "
                              f"outside {range_text(quantity)}")
    return sol


def open_no_follow(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that never follows a link at ``path`` (``O_NOFOLLOW``; where the system
    lacks it, a link found first is refused) and only opens a regular file; a ConfigError
    names the path otherwise. A link planted in a run or output folder would make clamber
    write, as the user, over whatever file it points to."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    if not nofollow and os.path.islink(path):
        raise ConfigError(f"{path} is a link; clamber never writes through links")
    try:
        fd = os.open(path, flags | nofollow, mode)
    except OSError as e:
        if os.path.islink(path):
            raise ConfigError(f"{path} is a link; clamber never writes through links") from None
        raise ConfigError(f"{path}: cannot open ({e.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"{path} is not a regular file")
    return fd
