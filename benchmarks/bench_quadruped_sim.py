"""Quadruped simulation speed: real-time factor of a climb with the controller in the loop, and
the wall time of the comparison (tuning plus every scenario).

Usage: ``python benchmarks/bench_quadruped_sim.py [--quick]``. Targets (issues 6 and 13):
climbing at least 20x faster than real time on one core at the chosen control rate (50 Hz,
physics every 10 ms) with the wrench-set gripper failure model checked every physics step,
and the comparison (``clamber quadruped compare --trials 20``: tuning, then 3 controllers x
6 scenarios x 20 trials) in under 20 minutes on 2 cores. The real-time factor is measured
on complete gait cycles (grippers made unbreakable so that every trial runs the whole 94 s),
the loop only (scene building is reported apart), as wall-clock and CPU-time factors (the
latter less sensitive to a shared machine); the same Q-WBC climb is also timed with the
failure model switched off, side by side, for the model's cost. The comparison is timed
as run (``--quick``: 1 trial per cell, no tuning) and bounded above by the worst case in
which every trial runs a whole cycle. ``--rock`` times only the climb on a generated rock
wall (height field, holds planned from noisy maps, the winch state machine and tendon plant
in the loop; issue 15's target: at least 20x) side by side with the plane climb, each seed
one after the other so that both see the same load; planning is timed apart.
``--climbs`` times only the loop (simulated seconds per CPU second) of unbreakable climbs
at 90 deg, per controller on the plane wall (one gait cycle) and Q-WBC on rock with the
winch (0.5 m), each climb in a fresh process; ``--baseline DIR`` runs every climb also
with the clamber of another checkout, alternating (each checkout first runs a short
warm-up climb per kind and controller, untimed, so no timed loop compiles kernels), and
reports the speed-up per climb and the smallest median speed-up over the kinds and
controllers as ``speed_ratio_min`` (``--quick``:
seed 0 only, else seeds 0 and 1; ``--repeat N`` runs each climb N times, medians;
``--kinds plane`` or ``rock`` picks the walls; ``--cycles N`` climbs N gait cycles on the
plane wall, e.g. the comparison's five; every climb's fingerprint tells whether the two
checkouts computed the same climb bit for bit; ``--physics-dt`` sets both checkouts' step,
by default this checkout's). ``--breakdown`` samples where one breakable
Q-WBC climb on the vertical wall spends its CPU time (``--cycles N`` gait cycles), by
sampling the stack on a CPU-time timer signal (asked for every 0.5 ms, delivered at the
kernel's tick, so about every 4 ms; unlike cProfile, which inflates every Python call,
it leaves the loop's speed as it is). ``--islands`` times ``mj_step`` with MuJoCo's island
search on and off from states saved along a climb. The last printed line is one JSON
object.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import collections  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from clamber.quadruped.gaits import ClimbGaitSettings  # noqa: E402
from clamber.quadruped.sim.grippers import GripperBank  # noqa: E402
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial, run_climb  # noqa: E402
from clamber.quadruped.trials.rock_climb import (  # noqa: E402
    RockClimbSettings,
    RockClimbTrial,
    plan_rock_climb,
)


def realtime(controller: str, seeds: list[int], state: str = "estimate") -> dict:
    """Median real-time factor and setup time of whole unbreakable climbs (one core)."""
    factors, cpu, setups, loops = [], [], [], []
    for seed in seeds:
        trial = ClimbTrial(ClimbSettings(controller=controller, incline_deg=90.0, state=state,
                                         breakable=False), seed)
        c0 = time.process_time()  # the loop's CPU time only (set-up wall time is not CPU time)
        r, _ = trial.run()
        cpu.append(r.sim_time_s / max(1e-9, time.process_time() - c0))
        factors.append(r.sim_time_s / r.wall_time_s)
        setups.append(r.setup_time_s)
        loops.append(r.wall_time_s)
    return {f"climb_{controller}_realtime_factor_median": float(np.median(factors)),
            f"climb_{controller}_cpu_time_factor_median": float(np.median(cpu)),
            f"climb_{controller}_loop_wall_s_median": float(np.median(loops)),
            f"climb_{controller}_setup_s_median": float(np.median(setups))}


def rock_side_by_side(seeds: list[int], distance: float = 0.5) -> dict:
    """Real-time factors of unbreakable Q-WBC climbs on the rock wall (winch grasp) and on
    the plane wall, seed by seed, the loop only (the CPU time of building the trial is
    left out), the rock loop with and without planning its next swings; the rock climb's
    first planning and set-up wall time apart."""
    plane = ClimbSettings(controller="qwbc", incline_deg=90.0, breakable=False)
    rock = RockClimbSettings(climb=plane, distance=distance, grasp="winch")
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        plan = plan_rock_climb(rock, seed)
        planning = time.perf_counter() - t0
        trial = RockClimbTrial(rock, seed, plan=plan)
        before_loop = trial.planning_cpu  # the first swing, planned while building the trial
        c0 = time.process_time()
        r = trial.run()[0]
        rock_loop_cpu = time.process_time() - c0
        rock_cpu = r.sim_time_s / max(1e-9, rock_loop_cpu)
        physics_cpu = rock_loop_cpu - (r.planning_cpu_s - before_loop)
        # A climb that ended at once (planning takes the whole loop) says nothing of it.
        rock_sim_cpu = r.sim_time_s / physics_cpu if physics_cpu > 0.2 * rock_loop_cpu \
            else float("nan")
        trial = ClimbTrial(plane, seed)
        c0 = time.process_time()
        p = trial.run()[0]
        plane_cpu = p.sim_time_s / max(1e-9, time.process_time() - c0)
        rows.append({"seed": seed, "rock_sim_s": r.sim_time_s, "rock_swings": r.steps_done,
                     "rock_realtime_factor": r.sim_time_s / r.wall_time_s,
                     "rock_cpu_time_factor": rock_cpu,
                     "rock_cpu_time_factor_without_planning": rock_sim_cpu,
                     "rock_planning_in_loop_cpu_s": r.planning_cpu_s,
                     "rock_planning_s": planning,
                     "rock_setup_s": r.setup_time_s, "plane_sim_s": p.sim_time_s,
                     "plane_realtime_factor": p.sim_time_s / p.wall_time_s,
                     "plane_cpu_time_factor": plane_cpu})
        print(json.dumps(rows[-1]))

    def med(key: str) -> float:
        return float(np.nanmedian([row[key] for row in rows]))

    return {"rock_trials": rows,
            **{f"{k}_median": med(k) for k in ("rock_realtime_factor", "rock_cpu_time_factor",
                                               "rock_cpu_time_factor_without_planning",
                                               "plane_realtime_factor",
                                               "plane_cpu_time_factor", "rock_planning_s")},
            "rock_over_plane_cpu_factor": med("rock_cpu_time_factor")
            / med("plane_cpu_time_factor"),
            "rock_without_planning_over_plane_cpu_factor":
                med("rock_cpu_time_factor_without_planning") / med("plane_cpu_time_factor"),
            "targets": {"realtime_factor_min": 20.0}}


#: Result fields that record how a climb was run (its step, whether it is a fine-step rerun),
#: not what it computed: left out of fingerprints, so releases with and without them compare.
_BOOKKEEPING = ("physics_dt_s", "verdict_rerun", "coarse_peak_gripper_load")


def fingerprint(trial: ClimbTrial, result) -> str:
    """A hash of everything a climb computed, to tell bit-identical climbs apart from
    different ones: the result (timings left out), the final MuJoCo state, the EKF's state
    and covariance, every metric sample, the gripper events, gauges and peak loads."""
    h = hashlib.sha256()
    fields = {k: v for k, v in result.to_dict().items() if "wall" not in k and
              "setup" not in k and "cpu" not in k and k not in _BOOKKEEPING}
    h.update(json.dumps(fields, sort_keys=True, default=str).encode())
    m, d = trial.sim.model, trial.sim.data
    state = np.empty(mujoco.mj_stateSize(m, mujoco.mjtState.mjSTATE_FULLPHYSICS))
    mujoco.mj_getState(m, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    ekf, g = trial.ekf, trial.sim.grippers
    kept = [getattr(ekf, name) for name in ("p", "v", "R", "b_a", "b_g", "P") if hasattr(ekf, name)]
    for a in (state, *kept, trial.samples.array(),
              g.gauges, np.array(sorted(g.peak_loads().items()), dtype=object).astype(str)):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr(g.events).encode())
    return h.hexdigest()[:16]


#: The digits the comparison's tables print (``clamber/report/quadruped_comparison.py``).
_PRINTED = {"max_tracking_error_mm": ".2f", "estimation_rms_mm": ".2f", "mean_power_w": ".1f",
            "peak_power_w": ".1f", "cost_of_transport": ".0f", "peak_gripper_load": ".2f",
            "distance_m": ".2f", "failure_distance_m": ".3f", "failure_time_s": ".3f"}


def figures(trial: ClimbTrial, result) -> dict:
    """What a climb reports (the result's fields but timings), each gripper's peak load, and
    the gripper events (time [s], leg, kind)."""
    out = {k: v for k, v in result.to_dict().items()
           if "wall" not in k and "setup" not in k and "cpu" not in k}
    out["peaks"] = trial.sim.grippers.peak_loads()
    out["events"] = [(round(e.t, 6), e.leg, e.kind) for e in trial.sim.grippers.events]
    return json.loads(json.dumps(out, default=str))


def compare_figures(mine: dict, other: dict) -> dict:
    """Whether two climbs report the same: ``same_printed`` if their outcomes, reasons,
    events and every figure the comparison prints agree at the printed digits;
    ``max_relative_difference`` of the numeric figures; the fields that differ in print."""
    printed = {}
    for k in (mine.keys() | other.keys()) - set(_BOOKKEEPING):
        a, b = mine.get(k), other.get(k)
        if k in _PRINTED and isinstance(a, float) and isinstance(b, float):
            a, b = format(a, _PRINTED[k]), format(b, _PRINTED[k])
        elif k == "peaks":
            a = {g: format(x, ".2f") for g, x in (a or {}).items()}
            b = {g: format(x, ".2f") for g, x in (b or {}).items()}
        elif isinstance(a, float) and isinstance(b, float):
            continue  # not printed: only the relative difference below
        if a != b:
            printed[k] = (a, b)
    rel = 0.0
    for k, a in mine.items():
        b = other.get(k)
        pairs = list(zip(a.values(), b.values(), strict=False)) if isinstance(a, dict) \
            and isinstance(b, dict) else [(a, b)]
        for x, y in pairs:
            if isinstance(x, float) and isinstance(y, float) and np.isfinite(x) and x != y:
                rel = max(rel, abs(x - y) / max(abs(x), abs(y)))
    return {"same_printed": not printed, "max_relative_difference": rel,
            "differing_in_print": printed}


#: Simulated seconds of the warm-up climb run per checkout, kind and controller before any
#: timed climb: past the first leg's whole swing and grasp, so that the loop's kernels are compiled.
WARM_UP_S = 30.0


def one_climb(kind: str, controller: str, seed: int, cycles: int = 1,
              time_limit: float | None = None, physics_dt: float | None = None) -> dict:
    """CPU seconds of the loop of one unbreakable climb at 90 deg and its simulated seconds:
    ``plane`` (``cycles`` gait cycles) or ``rock`` (0.5 m planned on the generated wall,
    winch grasps; planning inside the loop reported apart). Building the trial is left
    out. ``fingerprint`` tells bit-identical climbs (:func:`fingerprint`). ``time_limit``
    [s] ends the climb early (a warm-up); ``physics_dt`` [s] None: the checkout's default."""
    plane = ClimbSettings(controller=controller, incline_deg=90.0, breakable=False,
                          gait=ClimbGaitSettings(cycles=cycles), physics_dt=physics_dt)
    if kind == "plane":
        trial = ClimbTrial(plane, seed, time_limit=time_limit)
        c0 = time.process_time()
        r = trial.run()[0]
        return {"sim_s": r.sim_time_s, "cpu_s": time.process_time() - c0, "planning_cpu_s": 0.0,
                "fingerprint": fingerprint(trial, r), "figures": figures(trial, r)}
    rock = RockClimbSettings(climb=plane, distance=0.5, grasp="winch")
    trial = RockClimbTrial(rock, seed, time_limit=time_limit, plan=plan_rock_climb(rock, seed))
    before_loop = trial.planning_cpu  # the first swing is planned while the trial is built
    c0 = time.process_time()
    r = trial.run()[0]
    return {"sim_s": r.sim_time_s, "cpu_s": time.process_time() - c0,
            "planning_cpu_s": r.planning_cpu_s - before_loop,
            "fingerprint": fingerprint(trial, r), "figures": figures(trial, r)}


def _run_one(source: str, kind: str, controller: str, seed: int, cycles: int = 1,
             time_limit: float | None = None, physics_dt: float | None = None) -> dict:
    """:func:`one_climb` in a fresh process importing clamber from ``source`` (a checkout),
    at ``physics_dt`` (passed on as ``BENCH_PHYSICS_DT``) so that two checkouts whose
    default steps differ still climb alike."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(source)}
    if physics_dt is not None:
        env["BENCH_PHYSICS_DT"] = repr(physics_dt)
    limit = [] if time_limit is None else [str(time_limit)]
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", kind, controller,
                          str(seed), str(cycles), *limit], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def side_by_side(baseline: str | None, quick: bool, repeat: int = 1,
                 kinds: tuple[str, ...] = ("plane", "rock"), cycles: int = 1,
                 physics_dt: float | None = None) -> dict:
    """Simulated seconds per CPU second of the loop, per controller on the plane wall and
    for Q-WBC on rock with the winch: this checkout and, if given, ``baseline`` (another
    checkout), each climb run in a fresh process, the two alternating climb by climb so
    that both see the same load; every climb ``repeat`` times (medians reported). Both
    checkouts step the physics every ``physics_dt`` (None: this checkout's default)."""
    physics_dt = ClimbSettings().physics_dt if physics_dt is None else physics_dt
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = {"this": here} | ({"baseline": baseline} if baseline else {})
    seeds = [0] if quick else [0, 1]
    items = [("plane", c, s) for c in ("qwbc", "clik", "vmc") for s in seeds
             if "plane" in kinds] + [("rock", "qwbc", s) for s in seeds if "rock" in kinds]
    # Each checkout's kernels compiled and cached before anything is timed: a short climb of
    # every kind and controller (otherwise the first timed climb compiles inside its loop).
    for source in sources.values():
        for kind, controller in dict.fromkeys((k, c) for k, c, _ in items):
            _run_one(source, kind, controller, seeds[0], 1, WARM_UP_S, physics_dt)
    items = [item for item in items for _ in range(repeat)]
    rows = []
    for kind, controller, seed in items:
        row = {"kind": kind, "controller": controller, "seed": seed, "cycles": cycles,
               "physics_dt": physics_dt}
        for name, source in sources.items():
            r = _run_one(source, kind, controller, seed, cycles, physics_dt=physics_dt)
            row[f"{name}_sim_s"] = r["sim_s"]
            row[f"{name}_cpu_factor"] = r["sim_s"] / r["cpu_s"]
            row[f"{name}_cpu_s"] = r["cpu_s"]
            row[f"{name}_fingerprint"] = r["fingerprint"]
            row[f"{name}_figures"] = r["figures"]
            if kind == "rock":
                row[f"{name}_cpu_factor_without_planning"] = \
                    r["sim_s"] / max(1e-9, r["cpu_s"] - r["planning_cpu_s"])
        if baseline:
            row["speedup"] = row["this_cpu_factor"] / row["baseline_cpu_factor"]
            row["identical"] = row["this_fingerprint"] == row["baseline_fingerprint"]
            row |= compare_figures(row["this_figures"], row["baseline_figures"])
            del row["this_figures"], row["baseline_figures"]
            if kind == "rock":
                row["speedup_without_planning"] = row["this_cpu_factor_without_planning"] \
                    / row["baseline_cpu_factor_without_planning"]
        rows.append(row)
        print(json.dumps(row))
    out: dict = {"climbs": rows}
    if baseline:
        out["speed_ratio_min"] = min(
            float(np.median([r["speedup"] for r in rows
                             if (r["kind"], r["controller"]) == key]))
            for key in {(r["kind"], r["controller"]) for r in rows})
        out["all_identical"] = all(r["identical"] for r in rows)
        out["all_same_printed"] = all(r["same_printed"] for r in rows)
        out["max_relative_difference"] = max(r["max_relative_difference"] for r in rows)
    for kind, controller in {(k, c) for k, c, _ in items}:
        mine = [r for r in rows if r["kind"] == kind and r["controller"] == controller]
        key = f"{kind}_{controller}"
        for field in ("this_cpu_factor", "speedup", "this_cpu_factor_without_planning",
                      "speedup_without_planning", "baseline_cpu_factor", "this_cpu_s",
                      "baseline_cpu_s"):
            if field in mine[0]:
                out[f"{key}_{field}_median"] = float(np.median([r[field] for r in mine]))
    return out


#: Parts of a control cycle, innermost first: (part, file, function) matched on the stack;
#: the physics steps are the line of the simulator's ``step`` that calls ``mj_step``.
_PARTS = (
    ("gripper failure check", "sim/grippers.py", ("check",)),
    ("wrench QP (build, DAQP)", "quadruped/qwbc.py", ("solve",)),
    ("statics (Pinocchio)", "quadruped/statics.py", ("evaluate", "torques")),
    ("CLIK goal positions", "quadruped/controllers.py", ("_positions",)),
    ("rest of the controller", "quadruped/controllers.py", ("step", "acceleration", "_command")),
    ("EKF update", "quadruped/estimator.py", ("update",)),
    ("EKF predict, IMU, encoders", "trials/climb.py", ("_estimate",)),
    ("gait reference", "trials/climb.py", ("_reference",)),
    ("metric samples", "trials/climb.py", ("_sample",)),
    ("rest of the simulator step", "sim/simulator.py", ("step",)),
)


def _part(frame) -> str:
    """The part of the control cycle a sampled stack is in."""
    f = frame
    while f is not None:
        code = f.f_code
        if code.co_name == "step" and code.co_filename.endswith("sim/simulator.py"):
            import linecache

            line = linecache.getline(code.co_filename, f.f_lineno or 0)  # None mid-call
            if "mj_step(" in line:
                return "MuJoCo mj_step"
        for name, path, functions in _PARTS:
            if code.co_name in functions and code.co_filename.endswith(path):
                return name
        f = f.f_back
    return "other (trial loop, checks)"


def breakdown(cycles: int, seed: int = 0, period: float = 0.0005) -> dict:
    """Shares of the loop's CPU time by part of the control cycle, sampled on a CPU-time
    timer (``period`` [s] asked for; the kernel delivers it at its tick) over one breakable
    Q-WBC climb of ``cycles`` gait cycles (90 deg)."""
    from dataclasses import replace

    from clamber.experiments.quadruped_scenarios import scenario_settings

    settings = replace(scenario_settings("wall90", controller="qwbc"),
                       gait=ClimbGaitSettings(cycles=cycles))
    trial = ClimbTrial(settings, seed)
    counts: collections.Counter = collections.Counter()

    def sample(signum, frame) -> None:
        counts[_part(frame)] += 1

    old = signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, period, period)
    c0 = time.process_time()
    try:
        r = trial.run()[0]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0.0, 0.0)
        signal.signal(signal.SIGPROF, old)
    cpu = time.process_time() - c0
    n = max(1, sum(counts.values()))
    return {"breakdown_cycles": cycles, "breakdown_seed": seed, "sim_s": r.sim_time_s,
            "success": r.success, "control_cycles": trial.k, "loop_cpu_s": cpu,
            "cpu_us_per_control_cycle": 1e6 * cpu / max(1, trial.k), "samples": n,
            "shares": {k: v / n for k, v in counts.most_common()}}


def islands_side_by_side(repeat: int = 7, states: int = 10, steps: int = 200) -> dict:
    """MuJoCo's island search on and off (the scenes' setting), two ways on a shared
    machine: CPU microseconds per ``mj_step`` from ``states`` states saved along the first
    60 s of a breakable Q-WBC climb (90 deg, seed 0), ``steps`` steps from each, alternating,
    medians over ``repeat``; and the loop's CPU time of two copies of the same one-cycle
    climb per controller in this process, one with the search on, stepped by turns, 100
    control cycles each, the order swapped every turn (both copies see the same load, and
    end in the same state)."""
    import copy

    trial = ClimbTrial(ClimbSettings(), 0)
    m0, kind = trial.sim.model, mujoco.mjtState.mjSTATE_INTEGRATION
    saved = []
    for k in range(300 * states):
        trial.step()
        if k % 300 == 150:
            st = np.empty(mujoco.mj_stateSize(m0, kind))
            mujoco.mj_getState(m0, trial.sim.data, st, kind)
            saved.append((st, trial.sim.data.eq_active.copy()))
    flag = int(mujoco.mjtDisableBit.mjDSBL_ISLAND)
    models = {"islands_on": copy.copy(m0), "islands_off": copy.copy(m0)}
    models["islands_on"].opt.disableflags &= ~flag
    models["islands_off"].opt.disableflags |= flag
    us: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(repeat):
        for name, m in models.items():
            d, cpu = mujoco.MjData(m), 0.0
            for st, eq in saved:
                mujoco.mj_setState(m, d, st, kind)
                d.eq_active[:] = eq
                c0 = time.process_time()
                for _ in range(steps):
                    mujoco.mj_step(m, d)
                cpu += time.process_time() - c0
            us[name].append(1e6 * cpu / (steps * len(saved)))
    med = {name: float(np.median(v)) for name, v in us.items()}
    out: dict = {"mj_step_cpu_us": us, "mj_step_cpu_us_median": med,
                 "mj_step_islands_off_over_on": med["islands_off"] / med["islands_on"]}
    for controller in ("qwbc", "clik", "vmc"):
        settings = ClimbSettings(controller=controller)
        pair = {"islands_on": ClimbTrial(settings, 0), "islands_off": ClimbTrial(settings, 0)}
        pair["islands_on"].sim.model.opt.disableflags &= ~flag
        cpu = dict.fromkeys(pair, 0.0)
        running, turn = True, 0
        while running:
            running = False
            for name in (list(pair) if turn % 2 == 0 else list(pair)[::-1]):
                c0 = time.thread_time()
                for _ in range(100):
                    if not pair[name].step():
                        break
                else:
                    running = True
                cpu[name] += time.thread_time() - c0
            turn += 1
        on, off = pair["islands_on"].sim.data, pair["islands_off"].sim.data
        out[f"loop_{controller}_cpu_s"] = cpu
        out[f"loop_{controller}_islands_off_over_on"] = cpu["islands_off"] / cpu["islands_on"]
        out[f"loop_{controller}_same_final_state"] = bool(
            np.array_equal(on.qpos, off.qpos) and np.array_equal(on.qvel, off.qvel))
    return out


def main() -> None:
    if len(sys.argv) in (6, 7) and sys.argv[1] == "--one":
        limit = float(sys.argv[6]) if len(sys.argv) == 7 else None
        dt = os.environ.get("BENCH_PHYSICS_DT")
        print(json.dumps(one_climb(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                                   int(sys.argv[5]), limit, None if dt is None else float(dt))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one seed, 2-trial comparison")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes for the comparison (0: in this process)")
    parser.add_argument("--rock", action="store_true",
                        help="only the rock + winch climb beside the plane climb")
    parser.add_argument("--climbs", action="store_true",
                        help="only the loop's speed per controller (plane) and on rock with "
                             "the winch, each climb in a fresh process")
    parser.add_argument("--baseline", metavar="DIR",
                        help="with --climbs: another checkout timed beside this one")
    parser.add_argument("--repeat", type=int, default=1,
                        help="with --climbs: run every climb this many times (medians)")
    parser.add_argument("--kinds", nargs="+", default=["plane", "rock"],
                        choices=["plane", "rock"], help="with --climbs: which walls")
    parser.add_argument("--cycles", type=int, default=1,
                        help="with --climbs or --breakdown: gait cycles (1)")
    parser.add_argument("--physics-dt", type=float, default=None,
                        help="with --climbs: physics step [s] of both checkouts (default: "
                        "this checkout's, 0.01)")
    parser.add_argument("--breakdown", action="store_true",
                        help="only where one Q-WBC climb's CPU time goes, by sampling")
    parser.add_argument("--islands", action="store_true",
                        help="only mj_step's time with MuJoCo's island search on and off")
    args = parser.parse_args()
    if args.islands:
        print(json.dumps(islands_side_by_side()))
        return
    if args.breakdown:
        run_climb(ClimbSettings(), 0, time_limit=0.1)  # warm caches (gripper wrench space)
        print(json.dumps(breakdown(max(1, args.cycles))))
        return
    if args.climbs or args.baseline:
        print(json.dumps(side_by_side(args.baseline, args.quick, max(1, args.repeat),
                                      tuple(args.kinds), max(1, args.cycles),
                                      args.physics_dt)))
        return
    seeds = [0] if args.quick else [0, 1, 2]
    if args.rock:
        run_climb(ClimbSettings(), 0, time_limit=0.1)  # warm caches (gripper wrench space)
        print(json.dumps(rock_side_by_side(seeds)))
        return
    out: dict = {"control_rate_hz": ClimbSettings().control_rate,
                 "physics_dt_s": ClimbSettings().physics_dt}
    run_climb(ClimbSettings(), 0, time_limit=0.1)  # warm caches (gripper wrench space)
    for controller in ("qwbc", "clik", "vmc"):
        out.update(realtime(controller, seeds))
        print(json.dumps({k: v for k, v in out.items() if controller in k}))
    out["climb_qwbc_true_state_realtime_factor"] = realtime("qwbc", seeds[:1], "true")[
        "climb_qwbc_realtime_factor_median"]
    check = GripperBank.check
    side = {"failure_model": realtime("qwbc", seeds[:1])}
    GripperBank.check = lambda self, dt: []
    try:
        side["no_failure_check"] = realtime("qwbc", seeds[:1])
    finally:
        GripperBank.check = check
    for kind in ("realtime", "cpu_time"):
        out[f"climb_qwbc_{kind}_factor_side_by_side"] = {
            k: v[f"climb_qwbc_{kind}_factor_median"] for k, v in side.items()}
    from clamber.experiments.quadruped_comparison import run_comparison
    from clamber.experiments.quadruped_scenarios import SCENARIOS
    from clamber.experiments.quadruped_tuning import TuningSettings
    from clamber.parallel.factory import make_evaluator

    trials = 1 if args.quick else 20
    tuning = None if args.quick else TuningSettings()
    t0 = time.perf_counter()
    with make_evaluator(args.workers) as evaluator:
        res = run_comparison(trials, list(SCENARIOS), evaluator=evaluator, tuning=tuning)
    wall = time.perf_counter() - t0
    sim = sum(s["sim_time_s"] for s in res["cells"].values())
    out["compare_trials"] = trials
    out["compare_workers"] = args.workers
    out["compare_wall_s"] = wall
    out["compare_sim_s"] = sim
    loop = np.mean([out[f"climb_{c}_loop_wall_s_median"] + out[f"climb_{c}_setup_s_median"]
                    for c in ("qwbc", "clik", "vmc")])
    n_trials = 3 * len(SCENARIOS) * 20 + 3 * TuningSettings().budget * len(TuningSettings().seeds)
    out["compare_worst_case_wall_s_estimate"] = float(n_trials * loop / max(1, args.workers))
    out["targets"] = {"realtime_factor_min": 20.0, "compare_wall_s_max": 1200.0}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
