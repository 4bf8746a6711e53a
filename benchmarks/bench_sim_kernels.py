"""Whether the quadruped simulator's compiled kernels pay: each per-step or per-cycle operation
timed compiled and as the same arithmetic in NumPy, on a climb's state (four grippers held).

Usage: ``python benchmarks/bench_sim_kernels.py [--quick]``. Times are CPU microseconds per
call, the median over repeats of the best of batches (a shared machine's load shows less
in CPU time). The operations: the gripper check after every physics step (sole wrenches,
hold scaling, inner-polytope gauges and the clock's certified update; NumPy: the same
formulas with ``np.cross``, matrix products and fancy indexing), the servos' command
written into MuJoCo once per control cycle, and the servos' power once per control cycle.
MuJoCo's ``mj_step`` is timed beside them for scale. ``--cycle`` times instead the
simulator's ``step`` per control cycle (median) and the loop's CPU per cycle over the
one-cycle Q-WBC climb of the vertical wall (after an untimed warm-up climb); run it with
``PYTHONPATH=DIR`` to time another checkout's simulator. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
import timeit

import mujoco
import numpy as np

from clamber.quadruped.sim.failure import scaled_wrench
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial


def _cpu_us(f, number: int, repeat: int) -> float:
    """Median over ``repeat`` of the best batch's CPU time per call [us]."""
    f()
    timer = timeit.Timer(f, timer=time.process_time)
    best = [min(timer.repeat(number=number, repeat=3)) / number for _ in range(repeat)]
    return 1e6 * float(np.median(best))


def cycle() -> dict:
    """The median time [us] of the simulator's ``step`` per control cycle (robust to a
    shared machine's pauses) and the loop's CPU per cycle, over the one-cycle Q-WBC climb
    (unbreakable, 90 deg)."""
    from clamber.quadruped.gaits import ClimbGaitSettings

    settings = ClimbSettings(controller="qwbc", incline_deg=90.0, breakable=False,
                             gait=ClimbGaitSettings(cycles=1))
    warm = ClimbTrial(settings, 0, time_limit=3.0)
    while warm.step():
        pass
    trial = ClimbTrial(settings, 0)
    step, spent = trial.sim.step, []

    def timed(cmd):
        t0 = time.perf_counter()
        record = step(cmd)
        spent.append(time.perf_counter() - t0)
        return record

    trial.sim.step = timed
    c0 = time.process_time()
    while trial.step():
        pass
    loop = time.process_time() - c0
    return {"benchmark": "sim_cycle", "control_cycles": len(spent),
            "sim_step_us_median": 1e6 * float(np.median(spent)),
            "loop_cpu_us_per_cycle": 1e6 * loop / len(spent)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--cycle", action="store_true",
                        help="the simulator's CPU per control cycle in a climb")
    args = parser.parse_args()
    if args.cycle:
        print(json.dumps(cycle()))
        return
    number, repeat = (200, 3) if args.quick else (1000, 7)
    trial = ClimbTrial(ClimbSettings(incline_deg=90.0, breakable=False), 0, time_limit=3.0)
    while trial.step():
        pass
    sim = trial.sim
    m, d, g = sim.model, sim.data, sim.grippers
    legs = g.attached
    index = g._index(legs)
    clock, s = g.clock, g.clock.set
    factors = g._factors
    ext, com, pos, mat = d.cfrc_ext, d.subtree_com, d.site_xpos, d.site_xmat.reshape(-1, 3, 3)
    rows = index[4]

    def numpy_check() -> bool:
        mujoco.mj_rnePostConstraint(m, d)
        e = ext[index[0]] + (ext[index[1]] if g.compliant else 0.0)
        r = com[index[3]] - pos[index[2]]
        tau = e[:, :3] + np.cross(r, e[:, 3:])
        R = mat[index[2]]
        w = np.concatenate([np.einsum("kji,kj->ki", R, e[:, 3:]),
                            np.einsum("kji,kj->ki", R, tau)], axis=1)
        ws = scaled_wrench(w, factors)
        gauge = np.maximum(0.0, (ws @ s._inner_t).max(axis=1))
        if np.any(gauge > 1.0):
            return False
        clock.slide[rows] = 0.0
        clock.speed[rows] = 0.0
        g.gauges[rows] = gauge
        return True

    cmd_vectors = (d.ctrl.copy(), np.zeros(m.nu), sim.servos.current_max.copy())
    from clamber.quadruped.control.controllers import JointCommand

    cmd = JointCommand(*cmd_vectors)
    sv = sim.servos

    def numpy_apply() -> None:
        vectors = [np.asarray(a, dtype=float) for a in cmd_vectors]
        if not all(np.isfinite(v).all() for v in vectors):
            raise ValueError("not finite")
        d.ctrl[:] = vectors[0] + vectors[1] / sv.kp
        lim = np.minimum(np.maximum(vectors[2], 0.0) / sv.current_per_torque, sv.tau_max)
        m.actuator_forcerange[:, 0] = -lim
        m.actuator_forcerange[:, 1] = lim

    tau = np.abs(d.actuator_force)
    p = sv.params

    def numpy_power() -> float:
        return float(p.voltage * np.sum(np.abs(tau) * sv.current_per_torque + p.idle_current))

    kind = mujoco.mjtState.mjSTATE_INTEGRATION
    saved = np.empty(mujoco.mj_stateSize(m, kind))
    mujoco.mj_getState(m, d, saved, kind)

    def physics_step() -> None:
        mujoco.mj_setState(m, d, saved, kind)
        mujoco.mj_step(m, d)

    rows_out = {
        "gripper_check_per_physics_step": (lambda: g.check(sim.model.opt.timestep),
                                           numpy_check),
        "servo_command_per_cycle": (lambda: sv.apply(m, d, cmd), numpy_apply),
        "servo_power_per_cycle": (lambda: sv.power(tau), numpy_power),
    }
    out: dict = {"benchmark": "sim_kernels", "grippers_held": len(legs),
                 "mj_step_us": _cpu_us(physics_step, number // 4, repeat)}
    for name, (compiled, plain) in rows_out.items():
        a, b = _cpu_us(compiled, number, repeat), _cpu_us(plain, number, repeat)
        out[name] = {"compiled_us": a, "numpy_us": b, "saved_us": b - a}
        print(json.dumps({name: out[name]}))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
