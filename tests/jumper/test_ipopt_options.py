"""Every IPOPT solve is bounded in time, and `-v` shows IPOPT's own iterations."""

import casadi as ca

from clamber.jumper.formulation.problem import MAX_WALL_TIME_S, JumperProblem
from clamber.jumper.solution import SolveStatus


def test_every_solve_has_a_wall_time_bound_that_ipopt_honours():
    """The options carry the wall-time cap; IPOPT given such a cap too small to finish stops
    with its wall-time status, which clamber records as a failed solve, not a hang."""
    opts = JumperProblem.ipopt_options(warm=False)
    assert opts["ipopt.max_wall_time"] == MAX_WALL_TIME_S
    x = ca.MX.sym("x", 2)
    solver = ca.nlpsol("s", "ipopt", {"x": x, "f": ca.sumsqr(x - 1)},
                       {**opts, "ipopt.max_wall_time": 1e-9})
    solver(x0=[5.0, 5.0])
    status = solver.stats()["return_status"]
    assert status == "Maximum_WallTime_Exceeded"
    assert SolveStatus.from_ipopt(status) is SolveStatus.FAILED


def test_verbose_solves_print_ipopt_iterations():
    """Quiet solves print nothing of IPOPT's; verbose ones its per-iteration table."""
    assert JumperProblem.ipopt_options(warm=False)["ipopt.print_level"] == 0
    assert JumperProblem.ipopt_options(warm=False, verbose=True)["ipopt.print_level"] > 0
