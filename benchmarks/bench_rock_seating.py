"""Where rock grippers close: the sole's distance from its hold's top, across the hold's
normal, at every grasp of a rock climb, swings and re-seats apart, with and without the
re-seat that moves the open foot back over its hold (``reseat_centre``), side by side.

A gripper closes on a hold only within its capture radius (35 mm); a sole that creeps a few
millimetres each re-seat walks off its hold over many of them, and the re-seat then misses.

    python benchmarks/bench_rock_seating.py [--quick] [--incline 110] [--seeds 0 1 3 5]
        [--distance 2.0] [--workers 2]

Prints per setting the grasps counted, the median, 90th and 99th percentile and largest
offset [mm] and the grasps beyond the capture radius, for swings and re-seats, and each
climb's outcome; the last line is one JSON object. (``--quick``: wall 0, 0.5 m.)
"""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

CAPTURE_MM = 35.0


def climb(task: tuple[float, int, float, bool]) -> dict:
    """One rock climb of ``(incline, seed, distance, reseat_centre)``: its outcome and the
    sole's offset [mm] from the hold's top at each grasp, re-seat or not."""
    from clamber.quadruped.trials.climb import ClimbSettings
    from clamber.quadruped.trials.rock_climb import (
        RockClimbSettings,
        RockClimbTrial,
        plan_rock_climb,
    )

    incline, seed, distance, centre = task

    class Seating(RockClimbTrial):
        """The rock climb, noting where each gripper is as its grasp starts."""

        offsets: list[tuple[bool, float]] = []

        def _start_winch(self, ev, t):
            if ev.action == "grasp":
                hold = self.layout.holds[ev.leg][ev.hold]
                d = self.sim.data.site_xpos[self.sim.grippers.site[ev.leg]] - hold.top
                across = d - float(d @ hold.normal) * hold.normal
                self.offsets.append((bool(ev.reseat), 1000.0 * float(np.linalg.norm(across))))
            super()._start_winch(ev, t)

    settings = RockClimbSettings(climb=ClimbSettings(incline_deg=incline), distance=distance,
                                 reseat_centre=centre)
    trial = Seating(settings, seed, plan=plan_rock_climb(settings, seed))
    trial.offsets = []
    r, _ = trial.run()
    return {"seed": seed, "centre": centre, "success": r.success,
            "distance_m": round(r.distance_m, 2), "reason": r.reason or "",
            "offsets": trial.offsets}


def summary(offsets: list[float]) -> dict:
    """Count, percentiles and largest [mm], and how many lie beyond the capture radius."""
    a = np.asarray(offsets, dtype=float)
    if a.size == 0:
        return {"grasps": 0}
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {"grasps": int(a.size), "median_mm": round(float(p50), 1),
            "p90_mm": round(float(p90), 1), "p99_mm": round(float(p99), 1),
            "max_mm": round(float(a.max()), 1),
            "beyond_capture": int((a > CAPTURE_MM).sum())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="wall 0, 0.5 m")
    parser.add_argument("--incline", type=float, default=110.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 3, 5])
    parser.add_argument("--distance", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds, distance = ([0], 0.5) if args.quick else (args.seeds, args.distance)
    tasks = [(args.incline, s, distance, centre) for centre in (False, True) for s in seeds]
    with ProcessPoolExecutor(max_workers=max(args.workers, 1)) as pool:
        rows = list(pool.map(climb, tasks))
    out: dict = {"incline_deg": args.incline, "distance_m": distance, "seeds": seeds}
    for centre in (False, True):
        name = "reseat_centre" if centre else "pressed_where_opened"
        mine = [r for r in rows if r["centre"] is centre]
        out[name] = {
            "swings": summary([o for r in mine for rs, o in r["offsets"] if not rs]),
            "reseats": summary([o for r in mine for rs, o in r["offsets"] if rs]),
            "climbs": [{k: r[k] for k in ("seed", "success", "distance_m", "reason")}
                       for r in mine]}
        print(name, json.dumps(out[name]["reseats"]), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
