"""How far the rock planner alone gets: each wall planned swing by swing from noisy maps (no
dynamics), with and without the body moves before a swing (``pre_move``), side by side; with
``--ablation ranking``, the rock climb's defaults (body moves on) with the held tilts
counted from each landing or from each re-seat (``plan_reseats``) and holds ranked with the
default capacity weight (0.05 m) or ten times it (0.5 m), the four side by side; with
``--ablation start``, the rock climb's defaults from the nominal start and from the first
nearby start whose first 8 or 16 swings plan (``start_probe``); with ``--ablation seat``,
the rock climb's defaults with the seat check reading the rock under the footpad only or
also 10 mm around it (``seat_margin``); with ``--ablation lookahead``, greedy choices
against choices checked by planning 1, 3 or 6 swings on (``lookahead``); with ``--ablation
gap``, holds planned anywhere beside another foot's (``foot_gap`` 0) against holds kept the
gripper's width plus a margin from them (the default); with ``--ablation knee``, stances
planned up to the knee's own limit (through the straight knee) against stances that keep
each knee bent by at least 0.3 rad (``knee_bend``), without and with the fallback to the
knee's limit for a swing that finds no hold otherwise (``knee_fallback``, the default);
with ``--ablation reposition``, plans that stop where no leg finds a hold ahead against
plans in which a leg may then step beside or below its foot (``reposition``).

A plan that stops short of the distance bounds the dynamic climb on that wall; the
fraction of walls planned to the top is the ceiling the simulated climbs are measured
against. Prints one JSON object on its last line: per incline and setting the walls planned
to the distance, the mean planned distance [m] and the median planning time per wall [s].

    python benchmarks/bench_rock_planning.py [--quick] [--seed 0] [--walls 40]
        [--inclines 70 90 110] [--capacity-margin 0.8]
        [--ablation ranking|start|seat|lookahead|gap|knee|reposition]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from clamber.quadruped.planning.selection import CAPACITY_MARGIN
from clamber.quadruped.trials.climb import ClimbSettings
from clamber.quadruped.trials.rock_climb import RockClimbSettings, plan_rock_climb

#: ``--ablation ranking``: name and settings (``plan_reseats``, ``capacity_weight`` [m]).
RANKING = (("landing_w0.05", {"plan_reseats": False, "capacity_weight": 0.05}),
           ("reseat_w0.05", {"plan_reseats": True, "capacity_weight": 0.05}),
           ("landing_w0.5", {"plan_reseats": False, "capacity_weight": 0.5}),
           ("reseat_w0.5", {"plan_reseats": True, "capacity_weight": 0.5}))
#: ``--ablation start``: name and ``start_probe`` (swings a moved start must plan).
START = (("nominal_start", {"start_probe": 0}), ("probe_8", {"start_probe": 8}),
         ("probe_16", {"start_probe": 16}))
#: ``--ablation seat``: name and ``seat_margin`` [m] (the band around the footpad).
SEAT = (("pad_only", {"seat_margin": 0.0}), ("margin_10mm", {"seat_margin": 0.01}))
#: ``--ablation lookahead``: name and ``lookahead`` (swings planned on from each choice; a
#: hold after which that plan stops is passed over).
LOOKAHEAD = (("greedy", {"lookahead": 0}), ("lookahead_1", {"lookahead": 1}),
             ("lookahead_3", {"lookahead": 3}), ("lookahead_6", {"lookahead": 6}))
#: ``--ablation gap``: name and ``foot_gap`` [m] (None: the gripper's width plus a margin).
GAP = (("no_gap", {"foot_gap": 0.0}), ("gripper_gap", {"foot_gap": None}))
#: ``--ablation knee``: name, ``knee_bend`` [rad] (None: the knee's own limit) and
#: ``knee_fallback``.
KNEE = (("knee_limit", {"knee_bend": None}),
        ("knee_bent_0.3", {"knee_bend": 0.3, "knee_fallback": False}),
        ("knee_bent_0.3_fallback", {"knee_bend": 0.3, "knee_fallback": True}))
#: ``--ablation reposition``: name and ``reposition`` (a leg may step beside or below its
#: foot when no leg finds a hold ahead).
REPOSITION = (("stop", {"reposition": False}), ("reposition", {"reposition": True}))
#: The variants each ``--ablation`` compares.
ABLATIONS = {"ranking": RANKING, "start": START, "seat": SEAT, "lookahead": LOOKAHEAD,
             "gap": GAP, "knee": KNEE, "reposition": REPOSITION}


def plan_wall(settings: RockClimbSettings, seed: int, move: bool) -> tuple[float, str, int,
                                                                            float, int]:
    """Plan wall ``seed`` to its end: distance planned [m], why it stopped, body moves before
    a swing, seconds, re-positioning swings."""
    t0 = time.perf_counter()
    planner = plan_rock_climb(settings, seed)[2]
    while planner.next(move=move) is not None:
        pass
    moves = sum(step.pre_body is not None for step in planner.steps)
    stop = planner.stop.name.lower() if planner.stop else ""
    return planner.climbed, stop, moves, time.perf_counter() - t0, planner.repositions


def tally(settings: RockClimbSettings, seeds: range, move: bool, name: str) -> dict:
    """Plan every wall of ``seeds``: walls planned to the distance, mean distance [m], body
    moves before a swing, re-positioning swings, median seconds per wall; printed as it
    ends."""
    rows = [plan_wall(settings, seed, move) for seed in seeds]
    top = sum(d >= settings.distance for d, *_ in rows)
    print(f"{name}: {top}/{len(rows)} planned to {settings.distance:g} m", flush=True)
    return {"walls": len(rows), "planned_to_distance": top,
            "mean_distance_m": round(statistics.fmean(d for d, *_ in rows), 3),
            "pre_moves": sum(row[2] for row in rows),
            "repositions": sum(row[4] for row in rows),
            "median_plan_s": round(statistics.median(row[3] for row in rows), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10 walls at 90 deg (with --ablation: 5 walls at 110 deg)")
    parser.add_argument("--seed", type=int, default=0, help="first wall (0)")
    parser.add_argument("--walls", type=int, default=40, help="walls per incline (40)")
    parser.add_argument("--inclines", type=float, nargs="+", default=[70.0, 90.0, 110.0])
    parser.add_argument("--capacity-margin", type=float, default=None,
                        help="share of each hold's planned capacity a stance may load (0.8; "
                        "with --ablation the rock climb's default, 0.9)")
    parser.add_argument("--ablation", choices=("pre_move", *ABLATIONS),
                        default="pre_move", help="what to compare (pre_move)")
    args = parser.parse_args()
    if args.ablation != "pre_move":
        compare(args, ABLATIONS[args.ablation])
        return
    if args.capacity_margin is None:
        args.capacity_margin = CAPACITY_MARGIN
    walls, inclines = (10, [90.0]) if args.quick else (args.walls, args.inclines)
    out: dict[str, dict] = {}
    for incline in inclines:
        settings = RockClimbSettings(climb=ClimbSettings(incline_deg=incline),
                                     capacity_margin=args.capacity_margin)
        for move in (False, True):
            name = f"{incline:g}deg_{'pre_move' if move else 'no_move'}"
            out[name] = tally(settings, range(args.seed, args.seed + walls), move, name)
    print(json.dumps({"seed": args.seed, "capacity_margin": args.capacity_margin, **out}))


def compare(args: argparse.Namespace, variants: tuple[tuple[str, dict], ...]) -> None:
    """``--ablation NAME``: each of ``variants`` (:data:`ABLATIONS`) on the same walls, body
    moves on."""
    walls, inclines = (5, [110.0]) if args.quick else (args.walls, args.inclines)
    margin = {} if args.capacity_margin is None else {"capacity_margin": args.capacity_margin}
    out: dict[str, dict] = {}
    for incline in inclines:
        for name, options in variants:
            settings = RockClimbSettings(climb=ClimbSettings(incline_deg=incline),
                                         **options, **margin)
            key = f"{incline:g}deg_{name}"
            out[key] = tally(settings, range(args.seed, args.seed + walls), True, key)
    print(json.dumps({"seed": args.seed, "ablation": args.ablation, **out}))


if __name__ == "__main__":
    main()
