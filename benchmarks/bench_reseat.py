"""What a gripper re-seat finds and leaves: its sole's hinge deflection as it opens and as it
closes, the force the gripper still carries as it opens, and how far the sole closes off its
hold's top along the normal, per controller.

Two-cycle climbs up the vertical wall (held-out seeds, default gains and sole), each re-seat
read from the simulator: medians and largest values per controller; the last line is one
JSON object.

    python benchmarks/bench_reseat.py [--quick] [--seeds 8003 8008 8016]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from clamber.experiments.quadruped_scenarios import scenario_settings
from clamber.quadruped.gaits import ClimbGaitSettings, ClimbPhase
from clamber.quadruped.trials.climb import ClimbTrial


class TracedClimb(ClimbTrial):
    """A climb that records, at each re-seat, the sole's hinge deflection [rad] and the rock's
    force on the gripper [N] as it opens, and the deflection and the sole's distance off the
    hold's top along its normal [m] as it closes again."""

    def __init__(self, *args, **kwargs) -> None:
        self.opened: list[tuple[float, float]] = []
        self.closed: list[float] = []
        self.off_hold: list[float] = []
        super().__init__(*args, **kwargs)

    def _hinge(self, leg: str) -> float:
        m, d = self.sim.model, self.sim.data
        return float(np.hypot(*(d.qpos[m.joint(f"{leg}_sole_{a}").qposadr[0]] for a in "xy")))

    def _reseating(self) -> bool:
        return getattr(self, "gait", None) is not None and self.gait.phase is ClimbPhase.RESEAT

    def _let_go(self, leg: str) -> None:
        if self._reseating():
            force = float(np.linalg.norm(self.sim.grippers.wrenches((leg,))[0][:3]))
            self.opened.append((self._hinge(leg), force))
        super()._let_go(leg)

    def _grip(self, leg: str, hold) -> bool:
        if self._reseating():
            self.closed.append(self._hinge(leg))
            g = self.sim.grippers
            self.off_hold.append(float((g.data.site_xpos[g.site[leg]] - hold.top) @ hold.normal))
        return super()._grip(leg, hold)


def measure(controller: str, seeds: list[int], cycles: int) -> dict:
    opened, closed, off, done = [], [], [], 0
    for seed in seeds:
        trial = TracedClimb(scenario_settings("wall90", controller=controller,
                                              gait=ClimbGaitSettings(cycles=cycles)), seed)
        result, _ = trial.run()
        opened += trial.opened
        closed += trial.closed
        off += trial.off_hold
        done += result.success
    hinge_open = [h for h, _ in opened]
    force = [f for _, f in opened]
    return {"climbs": len(seeds), "completed": done, "reseats_opened": len(opened),
            "hinge_at_opening_median_mrad": 1e3 * float(np.median(hinge_open)),
            "hinge_at_closing_median_mrad": 1e3 * float(np.median(closed)),
            "hinge_at_closing_max_mrad": 1e3 * float(np.max(closed)),
            "force_at_opening_median_n": float(np.median(force)),
            "force_at_opening_max_n": float(np.max(force)),
            "off_hold_at_closing_median_mm": 1e3 * float(np.median(off)),
            "off_hold_at_closing_max_mm": 1e3 * float(np.max(off))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one seed, Q-WBC and CLIK only")
    ap.add_argument("--seeds", type=int, nargs="+", default=[8003, 8008, 8016])
    ap.add_argument("--cycles", type=int, default=2)
    args = ap.parse_args()
    seeds = args.seeds[:1] if args.quick else args.seeds
    t0 = time.perf_counter()
    out = {}
    for controller in ("qwbc", "clik") if args.quick else ("qwbc", "vmc", "clik"):
        out[controller] = measure(controller, seeds, args.cycles)
        print(controller, out[controller], flush=True)
    out["seeds"], out["cycles"] = seeds, args.cycles
    out["wall_time_s"] = time.perf_counter() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
