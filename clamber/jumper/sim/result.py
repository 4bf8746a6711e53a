"""What a jump simulation returns: per-jump records and the 1 kHz log by column name."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clamber.exceptions import ConfigError
from clamber.jumper.sim.reference import Reference

#: Columns of :attr:`SimulationResult.log` (one row per ESC tick).
LOG_COLUMNS = (
    "t", "x5", "y5", "phi5", "hip", "spine", "shoulder",
    "vx5", "vy5", "vphi5", "w_hip", "w_spine", "w_shoulder",
    "v_hip", "v_spine", "v_shoulder", "tau_hip", "tau_spine", "tau_shoulder",
    "fx_front", "fy_front", "fx_rear", "fy_rear", "front_hooked", "rear_hooked",
    "ref_hip", "ref_spine", "ref_shoulder", "ref_time", "sole_front", "sole_rear",
)


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
    duration: float = float("nan")  # [s] from the jump's start to the next jump's start
    front_touch_impulse: float = 0.0
    """Normal impulse [N s] of the free front gripper's wall contacts before it is armed
    for its catch: a swing that grazes the wall becomes, on a perturbed robot, an impact
    that pushes the flight off the wall (docs/results/jumper_landing.md)."""
    rear_misses: int = 0
    """Rear catches missed in this jump (each followed by a re-catch when recovery is on)."""
    recovery_time: float = float("nan")
    """From the first missed rear catch to the rear gripper hooking [s] (NaN: no miss, or
    never caught)."""

    @property
    def recovered(self) -> bool:
        """A missed rear catch turned into a ready landing."""
        return self.rear_misses > 0 and self.ready

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
        if name not in LOG_COLUMNS:
            raise ConfigError(f"log column {name!r} unknown; allowed: {LOG_COLUMNS}")
        return self.log[:, LOG_COLUMNS.index(name)]

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
