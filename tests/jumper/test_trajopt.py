"""Properties of an optimized jump, checked independently of the optimizer."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.model import jumper_model
from clamber.jumper.morphology import Morphology
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solution import SolveStatus, TrajectorySolution
from clamber.jumper.solve import problem_for, solve
from clamber.jumper.verify import constrained_acceleration


def test_solution_converges_to_a_real_climb(nominal_coarse):
    """The nominal robot climbs upward at a plausible speed within the phase bounds."""
    sol = nominal_coarse
    assert sol.status.success
    assert 0.1 < sol.speed < 1.5
    s = sol.settings
    assert np.all(sol.phase_durations >= np.array(s.phase_duration_min) - 1e-9)
    assert np.all(sol.phase_durations <= np.array(s.phase_duration_max) + 1e-9)
    assert sol.speed_bl == pytest.approx(sol.speed / 0.32)


def test_all_constraint_rows_hold_at_the_optimum(nominal_coarse):
    """Every NLP row is within its bounds to 1e-6 (residuals at the optimum)."""
    sol = nominal_coarse
    pr = problem_for(sol.nodes, sol.settings)
    params = pr.parameter_vector(sol.morphology.parameters(), sol.settings)
    lbg, ubg = pr.constraint_bounds(sol.settings)
    g = pr.evaluate(sol.x, params)
    for name, sl in pr.row_slices.items():
        viol = np.maximum(lbg[sl] - g[name], 0) + np.maximum(g[name] - ubg[sl], 0)
        assert viol.max(initial=0) < 1e-6, name


def test_forces_stay_in_the_safe_regions(nominal_coarse):
    """Attached grippers' forces satisfy A f <= b; detached grippers carry none."""
    sol = nominal_coarse
    for f, region, attached in ((sol.f_front, sol.settings.safe_region_front, (1, 4, 5)),
                                (sol.f_rear, sol.settings.safe_region_rear, (1, 2, 5))):
        on = np.isin(sol.phase, attached)
        assert np.all(region.contains(f[on], tol=1e-6))
        assert np.all(np.isnan(f[~on]))


def test_clearances(nominal_coarse):
    """Free grippers stay r_foot from the wall; inner joints one motor radius."""
    sol = nominal_coarse
    s = sol.settings
    assert sol.points[:, 0, 1:4].min() >= s.motor_radius - 1e-7
    assert sol.points[:, 0, [0, 4]].min() >= s.foot_radius - 1e-7


def test_pinned_grippers_stay_on_the_wall(nominal_coarse):
    """Attached grippers sit at x = r_foot and do not slide between nodes."""
    sol = nominal_coarse
    r = sol.settings.foot_radius
    for col, attached in ((0, (4, 5)), (4, (5,))):
        on = np.isin(sol.phase, attached)
        np.testing.assert_allclose(sol.points[on, 0, col], r, atol=1e-7)
        assert np.ptp(sol.points[on, 1, col]) < 1e-6


def test_periodic_up_to_height(nominal_coarse):
    """The last state equals the first, raised by H, with equal velocities."""
    sol = nominal_coarse
    dq = sol.q[-1] - sol.q[0]
    np.testing.assert_allclose(dq, [0, sol.height, 0, 0, 0, 0], atol=1e-8)
    np.testing.assert_allclose(sol.qd[-1], sol.qd[0], atol=1e-8)


def test_flight_is_exactly_ballistic(nominal_coarse):
    """The centre of mass follows the exact parabola through the flight phase."""
    assert nominal_coarse.accuracy["flight_ballistic_error_m"] < 1e-9


def test_impacts_stop_the_catching_gripper(nominal_coarse):
    """At each catch, M (qd+ - qd-) = J^T Lambda and the caught grippers stop."""
    sol = nominal_coarse
    m = jumper_model("com")
    p = sol.morphology.parameters()
    for before, after, grips, keys in (
        (3, 4, ("front",), ("impulse_catch_front",)),
        (4, 5, ("rear", "front"), ("impulse_settle_rear", "impulse_settle_front")),
    ):
        i_m = np.flatnonzero(sol.phase == before)[-1]
        i_p = np.flatnonzero(sol.phase == after)[0]
        q = sol.q[i_p]
        np.testing.assert_allclose(q, sol.q[i_m], atol=1e-10)
        M = np.array(m.mass_matrix(q, p))
        jump = M @ (sol.qd[i_p] - sol.qd[i_m])
        impulse = sum(np.array(m.contact_jacobian(c)(q, p)).T @ sol.impulses[k]
                      for c, k in zip(grips, keys, strict=True))
        np.testing.assert_allclose(jump, impulse, atol=1e-8)
        for c in grips:
            v = np.array(m.contact_jacobian(c)(q, p)) @ sol.qd[i_p]
            np.testing.assert_allclose(v, 0, atol=1e-8)
        # The generalized momentum changes only along the contact directions.
        J = np.vstack([np.array(m.contact_jacobian(c)(q, p)) for c in grips])
        null = np.linalg.svd(J)[2][J.shape[0]:]
        np.testing.assert_allclose(null @ jump, 0, atol=1e-8)


def test_node_dynamics_match_the_exact_constrained_model(nominal_coarse):
    """At every node, qdd equals the KKT solution of the pinned dynamics for its torque."""
    sol = nominal_coarse
    p = sol.morphology.parameters()
    contacts = {1: ("front", "rear"), 2: ("rear",), 3: (), 4: ("front",), 5: ("front", "rear")}
    for k in range(len(sol.t)):
        qdd, forces = constrained_acceleration(sol.q[k], sol.qd[k], sol.tau[k], p,
                                               contacts[int(sol.phase[k])])
        np.testing.assert_allclose(qdd, sol.qdd[k], atol=1e-6 * max(1, np.abs(qdd).max()))
        for c, f in forces.items():
            np.testing.assert_allclose(f, (sol.f_front if c == "front" else sol.f_rear)[k],
                                       atol=1e-6)


def test_integrated_torques_reproduce_the_motion(nominal_coarse):
    """Replaying the torques with an adaptive integrator drifts by millimetres at most."""
    acc = nominal_coarse.accuracy
    assert acc["max_position_drift_m"] < 0.03
    for i in range(1, 6):
        assert "integration_failed" not in acc[f"phase{i}"]


def test_save_load_round_trip_and_warm_start(nominal_coarse, tmp_path):
    """A saved solution loads equal and seeds a warm solve that converges fast."""
    path = nominal_coarse.save(tmp_path / "sol")
    loaded = TrajectorySolution.load(path)
    np.testing.assert_array_equal(loaded.x, nominal_coarse.x)
    assert loaded.speed == pytest.approx(nominal_coarse.speed)
    assert loaded.morphology == nominal_coarse.morphology
    warm = solve(loaded.morphology, loaded.settings, "coarse", guess=loaded)
    assert warm.status.success
    assert warm.iterations < nominal_coarse.iterations
    assert warm.speed == pytest.approx(nominal_coarse.speed, rel=1e-3)


def test_failure_is_a_status_not_an_exception(nominal_coarse):
    """An iteration budget too small to converge returns MAX_ITERATIONS, no raise."""
    tight = nominal_coarse.settings.with_(max_iterations=3)
    sol = solve(nominal_coarse.morphology, tight, "coarse")
    assert sol.status is SolveStatus.MAX_ITERATIONS
    assert not sol.status.success
    assert sol.iterations == 3


def test_bad_settings_are_rejected():
    """Invalid settings and guesses raise ConfigError naming what is wrong."""
    with pytest.raises(ConfigError, match="collocation"):
        OptimizationSettings(collocation="euler")
    with pytest.raises(ConfigError, match="torque_limit"):
        OptimizationSettings(torque_limit=-1)
    with pytest.raises(ConfigError, match="phase 2"):
        OptimizationSettings(phase_duration_min=(0.1, 0.5, 0.1, 0.1, 0.1))
    with pytest.raises(ConfigError, match="resolution"):
        solve(__import__("clamber.jumper.morphology").jumper.morphology.Morphology.nominal(),
              resolution="medium")


def test_packaged_seed_fits_the_current_formulation():
    """The seed's decision vector has this formulation's layout and is a converged optimum
    of a robot other than the nominal one."""
    from clamber.jumper.morphology import Morphology
    from clamber.jumper.seed import seed_solution

    seed = seed_solution()
    assert seed.status.success
    assert seed.morphology != Morphology.nominal()
    assert seed.x.size == problem_for(seed.nodes, seed.settings).variables.size


def test_seeded_solve_falls_back_to_the_designed_guess(nominal_coarse):
    """When the seeded attempt fails, the designed guess is tried and both are recorded."""
    tight = nominal_coarse.settings.with_(max_iterations=2)
    sol = solve(nominal_coarse.morphology, tight, "coarse", guess="seed")
    assert [h.get("guess") for h in sol.history][0] == "seed"
    assert len(sol.history) == 2
    assert sol.status is SolveStatus.MAX_ITERATIONS


def test_release_force_bound_holds_where_each_gripper_lets_go():
    """With ``release_force_max`` a gripper's wall force at its release node (front: end
    of phase 1, rear: end of phase 2) is within the bound; without it the nominal rear
    gripper lets go under several newtons (the kick the bound removes)."""
    s = OptimizationSettings(max_iterations=600)
    free = solve(Morphology.nominal(), s, "coarse")
    bound = solve(Morphology.nominal(), s.with_(release_force_max=0.5), "coarse")
    assert free.status.success and bound.status.success
    rear_free = free.f_rear[np.flatnonzero(free.phase == 2)[-1]]
    assert np.abs(rear_free).max() > 1.0
    front = bound.f_front[np.flatnonzero(bound.phase == 1)[-1]]
    rear = bound.f_rear[np.flatnonzero(bound.phase == 2)[-1]]
    assert np.abs(front).max() <= 0.5 + 1e-6 and np.abs(rear).max() <= 0.5 + 1e-6


@pytest.mark.parametrize("value", [-1.0, float("nan"), "1", True])
def test_optional_bounds_reject_bad_values(value):
    """An optional bound is a finite number >= 0, or unset."""
    with pytest.raises(ConfigError, match="release_force_max"):
        OptimizationSettings(release_force_max=value)
    with pytest.raises(ConfigError, match="start_joint_speed_max"):
        OptimizationSettings(start_joint_speed_max=value)
