"""The multi-scenario clearance term against an independent integration of the full model."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from clamber.exceptions import ConfigError
from clamber.jumper.formulation.problem import DEFAULT_TERMS, build_problem
from clamber.jumper.formulation.scenarios import MassScenarios, joint_motion
from clamber.jumper.model import GRAVITY, jumper_model
from clamber.jumper.seed import seed_solution

SCALE = (1.0, 0.85, 1.0, 1.0, 1.0)  # 15 % lighter shoulder motor
FLIGHT_NODES = 4


def _phase_nodes(sol, phase: int):
    start = int(sum(sol.nodes[: phase - 1])) + (phase - 1)
    return slice(start, start + sol.nodes[phase - 1] + 1)


def _prescribed(t_nodes, q, qd, qdd):
    """Joint motion of the term (acceleration linear between nodes) as a function of t."""
    def joints(t):
        k = int(np.clip(np.searchsorted(t_nodes, t, side="right") - 1, 0, len(t_nodes) - 2))
        a = np.r_[q[k, 3:6], qd[k, 3:6], qdd[k, 3:6]]
        b = np.r_[q[k + 1, 3:6], qd[k + 1, 3:6], qdd[k + 1, 3:6]]
        th, w, acc = joint_motion(ca.DM(a), ca.DM(b), t_nodes[k + 1] - t_nodes[k],
                                  t - t_nodes[k])
        return (np.array(th).ravel(), np.array(w).ravel(), np.array(acc).ravel())
    return joints


def _reference_front_x(sol, params: np.ndarray) -> np.ndarray:
    """Front gripper x at flight nodes 1..FLIGHT_NODES, from the full mass matrix and bias
    (the Lagrangian route, not the term's Newton-Euler rows) and an adaptive integrator."""
    com, rear = jumper_model("com"), jumper_model("rear_foot")
    s2, s3 = _phase_nodes(sol, 2), _phase_nodes(sol, 3)
    t2, t3 = sol.t[s2], sol.t[s3]
    joints2 = _prescribed(t2, sol.q[s2], sol.qd[s2], sol.qdd[s2])

    def pinned(t, y):  # rear foot fixed: rows 2.. of the rear-foot base, phi5 unknown
        th, w, acc = joints2(t)
        q = np.r_[0.0, 0.0, y[0], th]
        qd = np.r_[0.0, 0.0, y[1], w]
        M = np.array(rear.mass_matrix(q, params))
        h = np.array(rear.bias(q, qd, params)).ravel()
        return [y[1], -(M[2, 3:] @ acc + h[2]) / M[2, 2]]

    y0 = [sol.q[s2][0, 2], sol.qd[s2][0, 2]]
    r2 = solve_ivp(pinned, (t2[0], t2[-1]), y0, rtol=1e-10, atol=1e-12)
    phi, rate = r2.y[:, -1]
    qr, _ = (np.array(v).ravel() for v in com.to_rear_foot(sol.q[s2][-1], sol.qd[s2][-1],
                                                             sol.morphology.parameters()))
    th, w, _ = joints2(t2[-1])
    qc, qdc = (np.array(v).ravel() for v in com.from_rear_foot(
        np.r_[qr[0:2], phi, th], np.r_[0.0, 0.0, rate, w], params))
    joints3 = _prescribed(t3, sol.q[s3], sol.qd[s3], sol.qdd[s3])

    def flight(t, y):  # rows 0-2 of the centre-of-mass base, joints prescribed
        th, w, acc = joints3(t)
        q, qd = np.r_[y[0:3], th], np.r_[y[3:6], w]
        M = np.array(com.mass_matrix(q, params))
        h = np.array(com.bias(q, qd, params)).ravel()
        return np.r_[y[3:6], np.linalg.solve(M[0:3, 0:3], -(M[0:3, 3:] @ acc + h[0:3]))]

    r3 = solve_ivp(flight, (t3[0], t3[FLIGHT_NODES]), np.r_[qc[0:3], qdc[0:3]],
                   t_eval=t3[1:FLIGHT_NODES + 1], rtol=1e-10, atol=1e-12)
    assert np.allclose(r3.y[4], qdc[1] - GRAVITY * (r3.t - t3[0]))  # ballistic
    return np.array([np.array(com.points(np.r_[r3.y[0:3, k], sol.q[s3][k + 1, 3:6]],
                                         params))[0, 0] for k in range(FLIGHT_NODES)])


def _rows(sol, scales):
    term = MassScenarios(scales=scales, flight_share=FLIGHT_NODES / sol.nodes[2])
    pb = build_problem(sol.nodes, sol.settings.collocation,
                       sol.settings.safe_region_front.A.shape[0],
                       sol.settings.safe_region_rear.A.shape[0], DEFAULT_TERMS + (term,))
    par = pb.parameter_vector(sol.morphology.parameters(), sol.settings)
    return pb.evaluate(sol.x, par)


def test_scenario_deviation_matches_full_dynamics():
    """The term's shift of the front foot on a robot with a lighter shoulder motor equals
    the shift found by integrating the full equations of motion (Lagrangian mass matrix,
    adaptive integrator) with the same joint motion, to 0.05 mm; and it is not small."""
    sol = seed_solution()
    p0 = sol.morphology.parameters()
    p1 = p0.copy()
    p1[4:9] *= SCALE
    expected = _reference_front_x(sol, p1) - _reference_front_x(sol, p0)
    rows = _rows(sol, (SCALE,))
    plan = rows["p3.foot_clearance"][0::2][1:FLIGHT_NODES + 1]  # front, rear interleaved
    got = rows["scenario0.front_clearance"] - plan
    assert np.max(np.abs(expected)) > 1e-3  # the lighter motor moves the foot by mm
    np.testing.assert_allclose(got, expected, atol=5e-5)


def test_unperturbed_scenario_is_the_plan():
    """With every mass factor 1 the constrained rows are the plan's own front clearance."""
    sol = seed_solution()
    rows = _rows(sol, ((1.0,) * 5,))
    plan = rows["p3.foot_clearance"][0::2][1:FLIGHT_NODES + 1]
    np.testing.assert_allclose(rows["scenario0.front_clearance"], plan, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{"scales": ()}, {"scales": ((1.0, 0.9),)},
                                    {"scales": ((1.0, 0.0, 1.0, 1.0, 1.0),)},
                                    {"flight_share": 0.0}])
def test_bad_scenarios_are_config_errors(kwargs):
    """Missing, short or non-positive mass factors and no constrained node are refused."""
    with pytest.raises(ConfigError):
        MassScenarios(**kwargs)


class _Fake:
    """Stands in for a solution in the control-flow test of optimize_robust."""

    def __init__(self, ok: bool, tag: str):
        self.status = type("S", (), {"success": ok})()
        self.history = [{"tag": tag}]
        self.settings = None


@pytest.mark.parametrize("second_ok", [True, False])
def test_optimize_robust_solves_again_with_the_scenarios(monkeypatch, second_ok):
    """optimize_robust warm-starts a solve with the scenario term from the robust optimum
    (robust settings, reference backend) and falls back to that optimum if it fails."""
    import clamber.jumper.robust as robust
    from clamber.jumper.morphology import Morphology

    calls = {}
    first = _Fake(True, "first")

    def fake_optimize(morph, settings, resolution, guess, seed):
        calls["optimize"] = settings
        return first

    def fake_solve(morph, settings, resolution, guess, terms):
        calls["solve"] = (settings, guess, terms)
        return _Fake(second_ok, "scenarios")

    monkeypatch.setattr(robust, "optimize", fake_optimize)
    monkeypatch.setattr(robust, "solve", fake_solve)
    out = robust.optimize_robust(Morphology.nominal())
    settings, guess, terms = calls["solve"]
    assert calls["optimize"].release_force_max == 0.5  # the robust settings
    assert guess is first and settings.backend == "reference"
    assert terms[-1] == robust.ROBUST_SCENARIOS and terms[:-1] == DEFAULT_TERMS
    if second_ok:
        assert out is not first and out.settings.backend == "compiled"
        assert [h["tag"] for h in out.history] == ["first", "scenarios"]
    else:
        assert out is first and out.history[-1]["scenarios"] == "failed"


@pytest.mark.slow
def test_robust_optimum_clears_the_wall_on_the_scenario():
    """The coarse robust optimum with the scenario term converges and keeps the lighter-
    shouldered robot's front foot off the wall at every constrained flight node."""
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.robust import ROBUST_SCENARIOS, optimize_robust

    sol = optimize_robust(Morphology.nominal(), resolution="coarse")
    assert sol.status.success and "scenarios" in sol.history[-1]
    rows = _rows(sol, ROBUST_SCENARIOS.scales)
    assert rows["scenario0.front_clearance"].min() >= sol.settings.foot_radius - 1e-6
