"""Sole stiffness, soft to rigid, and the physics step each stiffness needs.

Usage: ``python benchmarks/bench_sole_stiffness.py [--quick] [--stiffness K ...] [--steps MS
...] [--workers N]``. Climbs one gait cycle on the vertical wall (seed 0; ``--scenario``
picks another of the comparison's scenarios) with each
controller's tuned gains (``docs/quadruped_gains.json``) and the physical pad (hinge
armature 0), for every sole stiffness K [N m/rad] (0: the rigid weld; default 10, 100, 400,
1500, 0) at every physics step [ms] (default 1, 0.5, 0.25, 0.1; ``--armature`` and
``--seeds`` pick another pad and other seeds), and reports each climb's
outcome and peak gripper gauge. The light pad's compliance is stiff at a short time scale
(its hinge relaxes in ``damping / K``, 0.2 ms at 1500 N m/rad), so a step that resolves the
soft default does not resolve a stiff sole: the table shows from which step each
stiffness's results stop moving. ``--quick``: 1500 N m/rad at 0.5 and 0.25 ms.
``--placement`` instead reports the state at the end of Q-WBC's placement under each
integrator: the sole's hinge angles, how far the grasp welds (MuJoCo's soft equality
constraints) are violated, and the sole's moments. The grasp welds are the scenes' own (time
constant two physics steps, impedance 0.99-0.999) unless ``--weld-timeconst`` or
``--soft-welds`` (MuJoCo's default softness) says otherwise.
The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from bench_physics_step import tuned_gains  # noqa: E402  (the benchmarks' folder is on the path)

from clamber.experiments.quadruped_scenarios import SCENARIOS  # noqa: E402

CONTROLLERS = ("qwbc", "vmc", "clik")
#: MuJoCo's integrators by name: the scenes' own, and the one that also treats stiffness
#: implicitly (its constraint solve and velocity update in one metric).
#: (``discrete`` needs MuJoCo 3.13 or later.)
INTEGRATORS = ("implicitfast", "discrete")


#: MuJoCo's default softness of an equality constraint (time constant 0.02 s, impedance
#: 0.9-0.95), which gives way about as much as the sole; for comparison only.
SOFT_WELDS = "soft"


def set_welds(model, weld: float | str | None) -> None:
    """Give the grasp welds the time constant ``weld`` [s] and an impedance of 0.99-0.999,
    or MuJoCo's default softness (``"soft"``); None keeps the scene's welds (two physics
    steps, 0.99-0.999)."""
    import mujoco

    from clamber.quadruped.sim.grippers import WELD_SOLIMP

    if weld is None:
        return
    solref, solimp = (((0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0)) if weld == SOFT_WELDS
                      else ((float(weld), 1.0), WELD_SOLIMP))
    for e in range(model.neq):
        if model.eq_type[e] == mujoco.mjtEq.mjEQ_WELD:
            model.eq_solref[e] = solref
            model.eq_solimp[e] = solimp


def trial_of(k: float, dt: float, controller: str, armature: float, seed: int,
             integrator: str, weld: float | str | None, scenario: str = "wall90"):
    """The climb of ``scenario`` with tuned gains, the sole of stiffness ``k`` (0: the rigid
    weld) and ``armature``, MuJoCo's ``integrator`` and grasp welds ``weld`` (see
    :func:`set_welds`)."""
    from dataclasses import replace

    import mujoco

    from clamber.experiments.quadruped_scenarios import scenario_settings
    from clamber.quadruped.sim.grippers import SoleCompliance
    from clamber.quadruped.trials.climb import ClimbTrial

    sole = None if k == 0 else replace(SoleCompliance(stiffness=k), armature=armature)
    settings = scenario_settings(scenario, controller=controller,
                                 gains=tuned_gains(controller), sole=sole, physics_dt=dt)
    trial = ClimbTrial(settings, seed)
    trial.sim.model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    set_welds(trial.sim.model, weld)
    return trial


def climb(task: tuple[float, float, str, float, int, str, float | str | None, str]) -> dict:
    """One climb of ``(stiffness, physics_dt, controller, armature, seed, integrator, weld,
    scenario)``."""
    k, dt, controller, armature, seed, integrator, _, scenario = task
    c0 = time.process_time()
    r, _ = trial_of(*task).run()
    return {"scenario": scenario, "stiffness": k, "dt_ms": 1000 * dt, "controller": controller,
            "armature": armature, "seed": seed, "integrator": integrator,
            "success": r.success, "reason": r.reason,
            "peak_gripper_load": r.peak_gripper_load, "cpu_s": time.process_time() - c0}


def placement_state(task: tuple[float, float, float, str, float | str | None]) -> dict:
    """Q-WBC's state at the end of the placement (seed 0, all four grippers welded) for
    ``(stiffness, physics_dt, armature, integrator, weld)``: the front-left sole's
    hinge angles, the largest rotation and translation the grasp welds are violated by
    (MuJoCo's soft equality constraints), and the moments about the front-left sole's x and
    y axes."""
    import mujoco
    import numpy as np

    from clamber.quadruped.trials.climb import PLACEMENT_TIME

    k, dt, armature, integrator, weld = task
    trial = trial_of(k, dt, "qwbc", armature, 0, integrator, weld)
    m, d = trial.sim.model, trial.sim.data
    while d.time < PLACEMENT_TIME - 0.5 * dt:
        trial.step()
    w = trial.sim.grippers.wrenches(("LF",))[0]
    mujoco.mj_forward(m, d)
    rows = d.efc_type[:d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    violation = d.efc_pos[:d.nefc][rows].reshape(-1, 6)
    hinge = [m.jnt_qposadr[m.joint(f"LF_sole_{a}").id] for a in "xy"]
    return {"stiffness": k, "dt_ms": 1000 * dt, "armature": armature, "integrator": integrator,
            "LF_sole_angles_mrad": [1000 * float(d.qpos[i]) for i in hinge],
            "weld_rotation_mrad_max": 1000 * float(np.abs(violation[:, 3:]).max()),
            "weld_translation_mm_max": 1000 * float(np.abs(violation[:, :3]).max()),
            "LF_sole_moment_x_y_nm": [float(w[3]), float(w[4])]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1500 N m/rad at 0.5 and 0.25 ms")
    parser.add_argument("--stiffness", type=float, nargs="+", default=[10, 100, 400, 1500, 0])
    parser.add_argument("--steps", type=float, nargs="+", default=[1.0, 0.5, 0.25, 0.1],
                        help="physics steps [ms]")
    parser.add_argument("--armature", type=float, default=0.0,
                        help="sole hinge armature [kg m^2] (0: the physical pad; the "
                             "comparison's model uses 1e-3)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds (0)")
    parser.add_argument("--integrator", choices=INTEGRATORS, default="implicitfast",
                        help="MuJoCo integrator (implicitfast, the scenes' own)")
    welds = parser.add_mutually_exclusive_group()
    welds.add_argument("--weld-timeconst", type=float, default=None,
                       help="grasp welds with this time constant [s] and impedance "
                            "0.99-0.999 (default: the scenes' welds, two physics steps)")
    welds.add_argument("--soft-welds", action="store_true",
                       help="grasp welds of MuJoCo's default softness (0.02 s, 0.9-0.95), "
                            "for comparison")
    parser.add_argument("--scenario", default="wall90", choices=sorted(SCENARIOS),
                        help="the comparison's scenario to climb (wall90)")
    parser.add_argument("--placement", action="store_true",
                        help="the state at the end of the placement (sole angles, weld "
                             "violation, moments) per integrator, instead of climbs")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    args = parser.parse_args()
    weld = SOFT_WELDS if args.soft_welds else args.weld_timeconst
    if args.placement:
        tasks = [(k, ms / 1000, args.armature, i, weld) for k in args.stiffness
                 for ms in args.steps for i in INTEGRATORS]
        with ProcessPoolExecutor(args.workers) as pool:
            states = list(pool.map(placement_state, tasks))
        for r in states:
            print(json.dumps(r))
        print(json.dumps({"placement": states}))
        return
    stiffness, steps = ([1500.0], [0.5, 0.25]) if args.quick else (args.stiffness, args.steps)
    tasks = [(k, ms / 1000, c, args.armature, seed, args.integrator, weld, args.scenario)
             for seed in args.seeds
             for k in stiffness for ms in steps for c in CONTROLLERS]
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(climb, tasks))
    table: dict = {}
    for r in rows:
        print(json.dumps(r))
        cell = table.setdefault(f"{r['stiffness']:g}", {}).setdefault(f"{r['dt_ms']:g}", {})
        cell.setdefault(r["controller"], []).append([r["seed"], r["success"],
                                                     round(r["peak_gripper_load"], 3)])
    print(json.dumps({"stiffness_step_controller": table}))


if __name__ == "__main__":
    main()
