"""Q-WBC timing on one core: the wrench QP (DAQP, OSQP, proxsuite) and whole control steps.

Usage: ``python benchmarks/bench_qwbc.py [--quick]``. The robot hangs on a vertical wall and
sways along a slow body trajectory; every cycle's QP is a fresh, warm-started problem. The
last printed line is one JSON object with medians in microseconds (QP) and milliseconds
(controller steps).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

from clamber.attachment.wrench_limits import WrenchLimits  # noqa: E402
from clamber.quadruped.control.controllers import (  # noqa: E402
    CLIKController,
    MotionReference,
    QWBCController,
    VMCController,
)
from clamber.quadruped.control.qwbc import WrenchQP  # noqa: E402
from clamber.quadruped.model.robot_model import RobotModel, RobotState  # noqa: E402
from clamber.quadruped.model.statics import StaticsEvaluator  # noqa: E402


def trajectory(rm: RobotModel, n: int) -> list[RobotState]:
    """States of a robot on a vertical wall whose joints sway slowly (one cycle per 500)."""
    s0 = rm.default_state()
    R = pin.utils.rotate("y", -np.pi / 2)
    phase = np.linspace(0, 2 * np.pi * n / 500, n)
    pattern = np.random.default_rng(0).uniform(-1, 1, 20) * 0.1
    return [RobotState(s0.body_position, R, rm.clip_joints(s0.joint_positions + np.sin(p)
                                                           * pattern)) for p in phase]


def bench_daqp(rm: RobotModel, states: list[RobotState]) -> tuple[dict, list]:
    """DAQP's warm-started update+solve time, the whole wrench-QP call (build, solve, checks)
    and the solutions."""
    ev = StaticsEvaluator(rm)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    wall, inner, problems = [], [], []
    for s in states:
        statics = ev.evaluate(s.q())
        t = time.perf_counter()
        sol = qp.solve(statics, [1, 1, 1, 1])
        wall.append(time.perf_counter() - t)
        inner.append(sol.solve_time_us)
        problems.append((sol.problem.H.copy(), sol.problem.f.copy(), sol.problem.C.copy(),
                         sol.problem.lb.copy(), sol.problem.ub.copy(), sol.problem.lo.copy(),
                         sol.problem.up.copy(), sol.F.copy()))
    return {"qp_solve_us_median": float(np.median(inner[10:])),
            "qp_build_solve_us_median": float(np.median(wall[10:]) * 1e6)}, problems


def bench_osqp(problems: list) -> dict:
    """OSQP through its own API, set up once, updated and warm-started each cycle."""
    try:
        import osqp
        from scipy import sparse
    except ImportError:
        return {"qp_osqp_us_median": None}
    H, f, C, lb, ub, lo, up, _ = problems[0]
    n = H.shape[0]
    # One sparsity pattern for every cycle: the union of the structural nonzeros.
    pattern = np.any([np.abs(p[2]) > 0 for p in problems], axis=0)
    mask = np.vstack([np.eye(n, dtype=bool), pattern])
    rows, cols = np.nonzero(mask)
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]

    def values(C):
        return np.vstack([np.eye(n), C])[rows, cols]

    A = sparse.csc_matrix((values(C), (rows, cols)), shape=mask.shape)
    P = sparse.csc_matrix(np.triu(H))
    solver = osqp.OSQP()
    solver.setup(P, f, A, np.r_[lb, lo].clip(-1e20), np.r_[ub, up].clip(None, 1e20),
                 verbose=False, eps_abs=1e-5, eps_rel=1e-5, warm_starting=True, polishing=False)
    times, errors = [], []
    for _H, f, C, lb, ub, lo, up, F in problems:
        t = time.perf_counter()
        solver.update(q=f, Ax=values(C), l=np.r_[lb, lo].clip(-1e20),
                      u=np.r_[ub, up].clip(None, 1e20))
        res = solver.solve()
        times.append(time.perf_counter() - t)
        errors.append(np.abs(res.x - F).max())
    return {"qp_osqp_us_median": float(np.median(times[10:]) * 1e6),
            "qp_osqp_max_error_n": float(np.max(errors[10:]))}


def bench_proxsuite(problems: list) -> dict:
    try:
        import proxsuite
    except ImportError:
        return {"qp_proxsuite_us_median": None}
    H, f, C, lb, ub, lo, up, _ = problems[0]
    n, m = H.shape[0], C.shape[0]
    qp = proxsuite.proxqp.dense.QP(n, 0, m, True)
    qp.settings.initial_guess = proxsuite.proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT
    qp.init(H, f, None, None, C, lo.clip(-1e20), up.clip(None, 1e20), lb, ub)
    times = []
    for _H, f, C, lb, ub, lo, up, _ in problems:
        t = time.perf_counter()
        qp.update(g=f, C=C, l=lo.clip(-1e20), u=up.clip(None, 1e20), l_box=lb, u_box=ub)
        qp.solve()
        times.append(time.perf_counter() - t)
    return {"qp_proxsuite_us_median": float(np.median(times[10:]) * 1e6)}


def bench_controller(ctrl, states: list[RobotState]) -> float:
    """Median wall time [ms] of one control step (kinematics, QP, torque and current map)."""
    times = []
    for s in states:
        ref = MotionReference(pin.SE3(s.body_rotation, s.body_position + [0.0, 0.0, 0.002]))
        t = time.perf_counter()
        ctrl.step(s, ref)
        times.append(time.perf_counter() - t)
    return float(np.median(times[10:]) * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer cycles (CI smoke run)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    n = 200 if args.quick else 3000
    rm = RobotModel()
    states = trajectory(rm, n)
    out, problems = bench_daqp(rm, states)
    out.update(bench_osqp(problems))
    out.update(bench_proxsuite(problems))
    out["step_ms_median"] = bench_controller(QWBCController(rm), states)
    out["clik_step_ms_median"] = bench_controller(CLIKController(rm), states)
    out["vmc_step_ms_median"] = bench_controller(VMCController(rm), states)
    out["cycles"] = n
    out["targets"] = {"qp_solve_us": 20.0, "step_ms": 0.5}
    for k, v in out.items():
        if k != "targets":
            print(f"{k:32s} {v}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
