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
