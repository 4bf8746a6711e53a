"""TrajectorySolution: an optimized jump read back as named arrays, with save and load."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clamber import _validate as v
from clamber._validate import read_text
from clamber.exceptions import ConfigError, FileFormatError
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.settings_file import settings_from_mapping

FORMAT_VERSION = 1
#: Largest replay drift [m] of any joint or gripper for a solution to count as physical.
POSITION_DRIFT_TOLERANCE_M = 0.005


class SolveStatus(enum.Enum):
    """Why the solver stopped. Only CONVERGED and ACCEPTABLE are usable results."""

    CONVERGED = "converged"
    ACCEPTABLE = "acceptable"
    MAX_ITERATIONS = "max_iterations"
    INFEASIBLE = "infeasible"
    FAILED = "failed"

    @property
    def success(self) -> bool:
        return self in (SolveStatus.CONVERGED, SolveStatus.ACCEPTABLE)

    @classmethod
    def from_ipopt(cls, return_status: str) -> SolveStatus:
        return {
            "Solve_Succeeded": cls.CONVERGED,
            "Solved_To_Acceptable_Level": cls.ACCEPTABLE,
            "Maximum_Iterations_Exceeded": cls.MAX_ITERATIONS,
            "Infeasible_Problem_Detected": cls.INFEASIBLE,
            "Restoration_Failed": cls.INFEASIBLE,
        }.get(return_status, cls.FAILED)


@dataclass
class TrajectorySolution:
    """One periodic jump. Arrays run over all nodes of all phases in time order.

    Phase boundary nodes appear twice (end of one phase, start of the next, at equal
    times), so impacts show as velocity jumps. ``q`` is in the centre-of-mass base,
    ``q_rear`` in the paper's rear-foot base. Forces of detached grippers are NaN.
    """

    morphology: Morphology
    settings: OptimizationSettings
    nodes: tuple[int, int, int, int, int]
    status: SolveStatus
    t: np.ndarray  # (K,) [s]
    phase: np.ndarray  # (K,) phase number 1..5 of each node
    q: np.ndarray  # (K, 6) CoM base
    q_rear: np.ndarray  # (K, 6) rear-foot base
    qd: np.ndarray  # (K, 6)
    qdd: np.ndarray  # (K, 6)
    tau: np.ndarray  # (K, 3) [N m] hip, spine, shoulder
    f_front: np.ndarray  # (K, 2) [N]
    f_rear: np.ndarray  # (K, 2) [N]
    points: np.ndarray  # (K, 2, 5) gripper and joint positions [m]
    impulses: dict[str, np.ndarray]  # [N s]
    phase_durations: np.ndarray  # (5,) [s]
    height: float  # [m] per jump
    front_anchor: float  # [m]
    iterations: int
    solve_time_s: float
    build_time_s: float
    return_status: str
    x: np.ndarray  # raw decision vector (for warm starts on the same grid)
    objective: float = float("nan")
    tau_mid: np.ndarray | None = None  # (K, 3) Hermite-Simpson midpoint torques after each node

    active_bounds: dict[str, object] = field(default_factory=dict)
    accuracy: dict[str, object] = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)

    @property
    def period(self) -> float:
        """[s]"""
        return float(self.phase_durations.sum())

    @property
    def speed(self) -> float:
        """Climbing speed H / T [m/s]."""
        return self.height / self.period if self.period > 0 else float("nan")

    @property
    def speed_bl(self) -> float:
        """Climbing speed in body lengths per second."""
        return self.speed / self.morphology.body_length

    @property
    def physically_consistent(self) -> bool | None:
        """Whether replaying the torques keeps every point within 5 mm (None: not checked)."""
        drift = self.accuracy.get("max_position_drift_m")
        return None if drift is None else bool(drift < POSITION_DRIFT_TOLERANCE_M)

    @property
    def phase_times(self) -> np.ndarray:
        """(6,) start of each phase and end of the jump [s]."""
        return np.r_[0.0, np.cumsum(self.phase_durations)]

    def summary(self) -> dict:
        """The figures a person or a pipeline wants first."""
        return {
            "status": self.status.value,
            "speed_mps": self.speed,
            "speed_bl_per_s": self.speed_bl,
            "period_s": self.period,
            "height_m": self.height,
            "solve_time_s": self.solve_time_s,
            "build_time_s": self.build_time_s,
            "iterations": self.iterations,
            "nodes": list(self.nodes),
            "collocation": self.settings.collocation,
            "phase_durations_s": self.phase_durations.tolist(),
            "max_abs_torque_nm": float(np.nanmax(np.abs(self.tau))),
            "physically_consistent": self.physically_consistent,
            "active_bounds": self.active_bounds,
            "accuracy": self.accuracy,
        }

    # ---- persistence -----------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write ``path`` (.npz arrays) and ``path`` with .json (metadata)."""
        path = _npz_path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {k: getattr(self, k) for k in ("t", "phase", "q", "q_rear", "qd", "qdd", "tau",
                                                  "f_front", "f_rear", "points",
                                                  "phase_durations", "x")}
        arrays.update({f"impulse.{k}": v for k, v in self.impulses.items()})
        if self.tau_mid is not None:
            arrays["tau_mid"] = self.tau_mid
        np.savez_compressed(path, **arrays)
        meta = {
            "format_version": FORMAT_VERSION,
            "morphology": self.morphology.to_dict(),
            "settings": self.settings.to_dict(),
            "nodes": list(self.nodes),
            "status": self.status.value,
            "height": self.height,
            "front_anchor": self.front_anchor,
            "iterations": self.iterations,
            "solve_time_s": self.solve_time_s,
            "build_time_s": self.build_time_s,
            "return_status": self.return_status,
            "objective": self.objective,
            "active_bounds": self.active_bounds,
            "accuracy": self.accuracy,
            "history": self.history,
            "summary": {k: v for k, v in self.summary().items()
                        if k not in ("active_bounds", "accuracy")},
        }
        path.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=_jsonable))
        return path

    @classmethod
    def load(cls, path: str | Path) -> TrajectorySolution:
        """Read a solution written by :meth:`save`, checked at the boundary: every key,
        shape, finiteness (forces of detached grippers may be NaN), monotone time and
        positive phase durations; errors name the file, the field and the value."""
        npz = _npz_path(path)
        meta_path = npz.with_suffix(".json")
        for p in (npz, meta_path):
            if p.is_dir():
                raise FileFormatError(f"{p}: is a folder, expected a solution file")
            if not p.exists():
                raise FileFormatError(f"solution file {p} is missing (need both .npz and .json)")
        try:
            meta = json.loads(read_text(meta_path, "solution file"))
        except json.JSONDecodeError as e:
            raise FileFormatError(f"{meta_path}: not valid JSON ({e})") from None
        if not isinstance(meta, dict):
            raise FileFormatError(f"{meta_path}: must hold a JSON object")
        if meta.get("format_version") != FORMAT_VERSION:
            raise FileFormatError(
                f"{meta_path}: format_version {meta.get('format_version')!r}, "
                f"this clamber reads {FORMAT_VERSION}"
            )
        try:
            with np.load(npz, allow_pickle=False) as data:
                arr = {k: data[k] for k in data.files}
        except Exception as e:  # noqa: BLE001 - any unreadable archive is a format error
            raise FileFormatError(f"{npz}: unreadable archive ({e})") from None
        try:
            fields_ = _checked_meta(meta)
        except ConfigError as e:
            raise FileFormatError(f"{meta_path}: {e}") from None
        try:
            _check_arrays(arr, fields_["nodes"])
        except ConfigError as e:
            raise FileFormatError(f"{npz}: {e}") from None
        impulses = {k.split(".", 1)[1]: v for k, v in arr.items() if k.startswith("impulse.")}
        return cls(
            impulses=impulses, tau_mid=arr.get("tau_mid"), **fields_,
            **{k: arr[k] for k in (*_ARRAYS, *_OTHER_ARRAYS)},
        )


#: Arrays of a solution file: trailing shape after the node axis, and whether NaN is
#: allowed (forces of a detached gripper are NaN by design; so is the last midpoint torque
#: of each Hermite-Simpson phase).
_ARRAYS = {"t": ((), False), "phase": ((), False), "q": ((6,), False),
           "q_rear": ((6,), False), "qd": ((6,), False), "qdd": ((6,), False),
           "tau": ((3,), False), "f_front": ((2,), True), "f_rear": ((2,), True),
           "points": ((2, 5), False)}
_OTHER_ARRAYS = ("phase_durations", "x")
_META = ("morphology", "settings", "nodes", "status", "height", "front_anchor", "iterations",
         "solve_time_s", "build_time_s", "return_status")


def _checked_meta(meta: dict) -> dict:
    """The metadata fields of a solution file, type- and range-checked."""
    missing = [k for k in _META if k not in meta]
    if missing:
        raise ConfigError(f"missing keys {missing}")
    nodes = meta["nodes"]
    if not isinstance(nodes, list) or len(nodes) != 5:
        raise ConfigError(f"nodes = {nodes!r}: must be a list of 5 integers >= 1")
    for i, n in enumerate(nodes):
        v.integer("", f"nodes[{i}]", n, low=1)
    statuses = [s.value for s in SolveStatus]
    for name in ("morphology", "settings"):
        if not isinstance(meta[name], dict):
            raise ConfigError(f"{name} = {meta[name]!r}: must be a JSON object")
    objective = meta.get("objective")
    return {
        "morphology": Morphology.from_dict(meta["morphology"]),
        "settings": settings_from_mapping(meta["settings"]),
        "nodes": tuple(nodes),
        "status": SolveStatus(v.choice("", "status", meta["status"], statuses)),
        "height": v.number("", "height", meta["height"]),
        "front_anchor": v.number("", "front_anchor", meta["front_anchor"]),
        "iterations": v.integer("", "iterations", meta["iterations"], low=0),
        "solve_time_s": v.non_negative("", "solve_time_s", meta["solve_time_s"]),
        "build_time_s": v.non_negative("", "build_time_s", meta["build_time_s"]),
        "return_status": str(meta["return_status"]),
        # A failed solve has no objective value (NaN or null).
        "objective": float("nan") if objective is None or (
            isinstance(objective, float) and math.isnan(objective))
        else v.number("", "objective", objective),
        "active_bounds": _json_object(meta, "active_bounds"),
        "accuracy": _json_object(meta, "accuracy"),
        "history": _json_list(meta, "history"),
    }


def _json_object(meta: dict, name: str) -> dict:
    value = meta.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{name} = {value!r}: must be a JSON object")
    return value


def _json_list(meta: dict, name: str) -> list:
    value = meta.get(name, [])
    if not isinstance(value, list):
        raise ConfigError(f"{name} = {value!r}: must be a JSON list")
    return value


def _array_spec(name: str, K: int) -> tuple[tuple[int | None, ...], bool]:
    """Expected shape (None: any length) and whether NaN is allowed."""
    if name in _ARRAYS:
        tail, nan_ok = _ARRAYS[name]
        return (K, *tail), nan_ok
    if name == "tau_mid":
        return (K, 3), True
    if name.startswith("impulse."):
        return (2,), False
    return ((5,) if name == "phase_durations" else (None,)), False


def _check_arrays(arr: dict[str, np.ndarray], nodes: tuple[int, ...]) -> None:
    """Shapes, finiteness, monotone time and positive phase durations of the arrays."""
    missing = [k for k in (*_ARRAYS, *_OTHER_ARRAYS) if k not in arr]
    if missing:
        raise ConfigError(f"missing arrays {missing}")
    K = sum(n + 1 for n in nodes)
    for name, a in arr.items():
        if a.dtype.kind not in "biuf":
            raise ConfigError(f"{name}: must hold numbers, found dtype {a.dtype}")
        shape, nan_ok = _array_spec(name, K)
        if a.ndim != len(shape) or any(s is not None and n != s
                                       for n, s in zip(a.shape, shape, strict=True)):
            want = "x".join("n" if s is None else str(s) for s in shape)
            raise ConfigError(f"{name}: shape {'x'.join(map(str, a.shape)) or '()'}, "
                              f"expected {want}")
        bad = np.isinf(a) if nan_ok else ~np.isfinite(a)
        if bad.any():
            k = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ConfigError(f"{name}{list(k)} = {float(a[k])!r}: must be finite")
    t, phase, durations = arr["t"], arr["phase"], arr["phase_durations"]
    back = np.flatnonzero(np.diff(t) < 0)
    if back.size:
        k = int(back[0]) + 1
        raise ConfigError(f"t[{k}] = {t[k]:.6g} s < t[{k - 1}] = {t[k - 1]:.6g} s: "
                          "time must not run backwards")
    if np.any(durations <= 0):
        i = int(np.argmax(durations <= 0))
        raise ConfigError(f"phase_durations[{i}] = {float(durations[i])!r} s: must be > 0")
    if not np.isclose(t[-1] - t[0], durations.sum(), rtol=1e-6, atol=1e-9):
        raise ConfigError(f"t spans {t[-1] - t[0]:.6g} s but phase_durations sum "
                          f"to {durations.sum():.6g} s")
    expected = np.repeat(np.arange(1, 6), [n + 1 for n in nodes])
    if not np.array_equal(phase, expected):
        raise ConfigError("phase: must number the nodes of phases 1..5 in order")


def _npz_path(path: str | Path) -> Path:
    """``x`` or ``x.npz`` or ``x.json`` -> ``x.npz`` (a dot inside a name is kept)."""
    path = Path(path)
    if path.suffix in (".npz", ".json"):
        return path.with_suffix(".npz")
    return path.with_name(path.name + ".npz")


def _jsonable(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, enum.Enum):
        return o.value
    raise TypeError(f"not JSON serializable: {type(o)}")
