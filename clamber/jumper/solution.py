"""TrajectorySolution: an optimized jump read back as named arrays, with save and load."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from clamber.exceptions import FileFormatError
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings

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
        npz = _npz_path(path)
        meta_path = npz.with_suffix(".json")
        for p in (npz, meta_path):
            if not p.exists():
                raise FileFormatError(f"solution file {p} is missing (need both .npz and .json)")
        try:
            meta = json.loads(meta_path.read_text())
        except json.JSONDecodeError as e:
            raise FileFormatError(f"{meta_path}: not valid JSON ({e})") from None
        if meta.get("format_version") != FORMAT_VERSION:
            raise FileFormatError(
                f"{meta_path}: format_version {meta.get('format_version')!r}, "
                f"this clamber reads {FORMAT_VERSION}"
            )
        try:
            with np.load(npz) as data:
                arr = {k: data[k] for k in data.files}
        except Exception as e:  # noqa: BLE001 - any unreadable archive is a format error
            raise FileFormatError(f"{npz}: unreadable archive ({e})") from None
        impulses = {k.split(".", 1)[1]: v for k, v in arr.items() if k.startswith("impulse.")}
        return cls(
            morphology=Morphology.from_dict(meta["morphology"]),
            settings=OptimizationSettings.from_dict(meta["settings"]),
            nodes=tuple(meta["nodes"]),
            status=SolveStatus(meta["status"]),
            impulses=impulses,
            height=float(meta["height"]),
            front_anchor=float(meta["front_anchor"]),
            iterations=int(meta["iterations"]),
            solve_time_s=float(meta["solve_time_s"]),
            build_time_s=float(meta["build_time_s"]),
            return_status=meta["return_status"],
            objective=float(meta.get("objective", float("nan"))),
            active_bounds=meta.get("active_bounds", {}),
            accuracy=meta.get("accuracy", {}),
            history=meta.get("history", []),
            tau_mid=arr.get("tau_mid"),
            **{k: arr[k] for k in ("t", "phase", "q", "q_rear", "qd", "qdd", "tau", "f_front",
                                   "f_rear", "points", "phase_durations", "x")},
        )


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
