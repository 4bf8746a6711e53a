"""The lean KKT option (drop_duplicate_rows): the same problem with fewer rows."""

import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.formulation import backends
from clamber.jumper.schedule import RESOLUTIONS
from clamber.jumper.settings import OptimizationSettings
from clamber.jumper.solve import problem_for, solve


def _rows(pr, suffix: str) -> int:
    return sum(sl.stop - sl.start for name, sl in pr.row_slices.items() if name.endswith(suffix))


def test_lean_kkt_leaves_out_only_the_motor_line_rows():
    """With a zero motor slope the lean structure drops exactly the motor-line rows (3 per
    node) and keeps every variable and every other row; with a motor slope (no_load_speed
    > 0) the rows constrain more than the torque bound and stay."""
    nodes = RESOLUTIONS["coarse"]
    full = problem_for(nodes, OptimizationSettings(backend="reference"))
    lean = problem_for(nodes, OptimizationSettings(backend="reference", drop_duplicate_rows=True))
    motor = _rows(full, ".motor_line")
    assert motor == 3 * sum(n + 1 for n in nodes)
    assert _rows(lean, ".motor_line") == 0
    assert lean.g.numel() == full.g.numel() - motor
    assert lean.variables.size == full.variables.size
    assert set(full.row_slices) - set(lean.row_slices) == {
        f"p{i}.motor_line" for i in range(1, 6)}
    sloped = OptimizationSettings(backend="reference", drop_duplicate_rows=True,
                                  no_load_speed=60.0)
    assert problem_for(nodes, sloped) is full


def test_lean_kkt_reaches_the_reference_optimum(nominal_coarse):
    """From the packaged seed, the lean structure (reference backend, so no compile here)
    ends on the default structure's optimum: the same speed (1e-6 relative) and the same
    active bounds, the motor line's active nodes included (read from the torques when the
    rows are left out). Solved to 1e-9."""
    m = nominal_coarse.morphology
    base = OptimizationSettings(backend="reference", tolerance=1e-9)
    a = solve(m, base, "coarse", guess="seed")
    b = solve(m, base.with_(drop_duplicate_rows=True), "coarse", guess="seed")
    assert a.status.success and b.status.success
    assert b.speed == pytest.approx(a.speed, rel=1e-6)
    assert b.active_bounds == a.active_bounds
    assert "motor_line" in b.active_bounds["active_inequalities"]
    np.testing.assert_allclose(b.tau, a.tau, atol=1e-5)


@pytest.mark.slow
def test_lean_kkt_compiled_reaches_the_reference_optimum(nominal_coarse):
    """The compiled backend on the lean structure (compiled once, about a minute) reaches
    the reference backend's optimum on the default structure: speed within 1e-6 relative,
    the same active bounds. Solved to 1e-9 from the packaged seed."""
    if backends.resolve("compiled") != "compiled":
        pytest.skip("no C compiler here")
    m = nominal_coarse.morphology
    ref = solve(m, OptimizationSettings(backend="reference", tolerance=1e-9), "coarse")
    lean = solve(m, OptimizationSettings(tolerance=1e-9, drop_duplicate_rows=True), "coarse")
    assert ref.status.success and lean.status.success
    assert lean.history[-1]["backend"] == "compiled"
    assert lean.speed == pytest.approx(ref.speed, rel=1e-6)
    assert lean.active_bounds == ref.active_bounds


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_drop_duplicate_rows_must_be_a_bool(value):
    """drop_duplicate_rows takes True or False only; anything else is a ConfigError."""
    with pytest.raises(ConfigError, match="drop_duplicate_rows"):
        OptimizationSettings(drop_duplicate_rows=value)


def test_symbolic_factor_counts_match_the_arrow_matrix():
    """An arrow pattern (dense first row and column, diagonal) fills L completely in its
    natural order, n (n + 1) / 2 entries and sum_j (c_j^2 + c_j) operations with column
    counts c_j = n - 1 - j, and not at all under AMD (2n - 1 entries), by hand."""
    import scipy.sparse as sp

    from clamber.jumper.formulation.kkt import factor_counts

    n = 40
    K = sp.lil_matrix((n, n))
    K[0, :] = 1
    K[:, 0] = 1
    K.setdiag(1)
    natural = factor_counts(K.tocsc(), amd=False)
    c = np.arange(n - 1, -1, -1, dtype=float)
    assert natural["factor_entries"] == n * (n + 1) // 2
    assert natural["operations"] == pytest.approx(np.sum(c**2 + c))
    assert factor_counts(K.tocsc(), amd=True)["factor_entries"] == 2 * n - 1


def test_augmented_system_is_the_one_ipopt_hands_to_mumps():
    """The augmented pattern built from the NLP's derivative patterns (variables, a slack
    per inequality row, multipliers) has the dimension of the KKT system IPOPT gives
    MUMPS for the same patterns, and its entries up to duplicates MUMPS counts twice."""
    import scipy.sparse as sp

    from clamber.jumper.formulation.kkt import augmented, kkt_pattern, mumps_analysis
    from clamber.jumper.formulation.problem import build_problem

    s = OptimizationSettings()
    pr = build_problem((3, 2, 3, 2, 2), s.collocation, s.safe_region_front.A.shape[0],
                       s.safe_region_rear.A.shape[0])
    kkt = kkt_pattern(pr, s)
    n, m = kkt.hessian.shape[0], kkt.jacobian.shape[0]
    assert (n, kkt.jacobian.shape[1]) == (pr.variables.size, n) and m == pr.g.numel()
    K = augmented(kkt.hessian, kkt.jacobian, kkt.inequality)
    assert K.shape[0] == n + m + int(kkt.inequality.sum())
    upper = sp.triu(K).nnz
    got = mumps_analysis(kkt.hessian, kkt.jacobian, kkt.inequality)
    assert got["dimension"] == K.shape[0]
    assert upper <= got["nonzeros"] <= 1.05 * upper
    assert got["factor_entries_estimated"] >= K.shape[0]
