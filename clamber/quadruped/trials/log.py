"""A trial's time series for figures and animations, written by column name at the control rate."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from clamber.quadruped.model.robot import LEG_NAMES
from clamber.quadruped.sim.simulator import QuadrupedSim
from clamber.recorder import Recorder, vector_columns

#: Columns of a trial log: time [s]; true, reference and estimated body position [m];
#: each gripper's position in the body frame [m]; attitude error [deg]; power [W].
LOG_COLUMNS = ("t", *vector_columns("body_true"), *vector_columns("body_ref"),
               *vector_columns("body_est"),
               *(c for leg in LEG_NAMES for c in vector_columns(f"feet_body_{leg}")),
               "attitude_deg", "power_w")
#: Vector series of :meth:`TrialLog.arrays`: first column and shape of one sample.
_VECTORS = {"body_true": ("body_true_x", (3,)), "body_ref": ("body_ref_x", (3,)),
            "body_est": ("body_est_x", (3,)),
            "feet_body": (f"feet_body_{LEG_NAMES[0]}_x", (len(LEG_NAMES), 3))}


@dataclass
class TrialLog:
    """Time series of a trial, one row per control cycle, with the gait's phase bands
    (start [s], end [s], phase, leg) and configuration snapshots."""

    samples: Recorder = field(default_factory=lambda: Recorder(LOG_COLUMNS, rows=4096))
    bands: list[tuple[float, float, str, str]] = field(default_factory=list)
    #: Snapshots for animations every ``snapshot_period`` [s]: time [s], qpos, body xpos.
    snapshot_period: float = 1.0
    snapshots: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)
    #: The compiled scene the trial ran in (for offscreen rendering of the snapshots).
    model: object = None

    def record(self, t: float, body_true: np.ndarray, body_ref: np.ndarray,
               body_est: np.ndarray, feet_body: np.ndarray, attitude_deg: float,
               power_w: float) -> None:
        """Append one control cycle (units as in :data:`LOG_COLUMNS`)."""
        s, row = self.samples, self.samples.rows
        s.write(row, "t", t)
        s.write_block(row, "body_true_x", body_true)
        s.write_block(row, "body_ref_x", body_ref)
        s.write_block(row, "body_est_x", body_est)
        s.write_block(row, _VECTORS["feet_body"][0], feet_body)
        s.write(row, "attitude_deg", attitude_deg)
        s.write(row, "power_w", power_w)

    def snapshot(self, t: float, sim: QuadrupedSim) -> None:
        """Keep the simulator's configuration at ``t`` [s] if a snapshot is due."""
        if not self.snapshots or t >= self.snapshots[-1][0] + self.snapshot_period - 1e-9:
            self.snapshots.append((t, sim.data.qpos.copy(), sim.data.xpos.copy()))

    def arrays(self) -> dict[str, np.ndarray]:
        """Every series as an array: ``t`` (n,), ``body_*`` (n, 3), ``feet_body`` (n, 4, 3)."""
        s = self.samples
        out = {"t": s.column("t")}
        for name, (first, shape) in _VECTORS.items():
            out[name] = s.block(first, int(np.prod(shape))).reshape(-1, *shape)
        out["attitude_deg"] = s.column("attitude_deg")
        out["power_w"] = s.column("power_w")
        return out


def feet_in_body(sim: QuadrupedSim) -> np.ndarray:
    """Each gripper's sole (or foot) position in the body frame [m], shape (4, 3)."""
    d, b = sim.data, sim.body_id
    R, p = d.xmat[b].reshape(3, 3), d.xpos[b]
    return np.array([R.T @ (d.site_xpos[sim.grippers.site[leg] if sim.grippers else
                                        sim.model.site(f"{leg}_foot").id] - p)
                     for leg in LEG_NAMES])
