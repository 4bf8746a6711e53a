"""The term-group API: user costs and constraint rows enter the NLP as written."""

import casadi as ca
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.jumper.formulation import DEFAULT_TERMS, Constraint, Cost, build_problem
from clamber.jumper.solve import solve

REF = {"backend": "reference"}  # a new term set is a new structure: skip compiling it


def _spine(ctx):
    return ca.horzcat(*(ctx.nodes(i, "q")[4, :] for i in ctx.phases))


def straight_spine(ctx):
    """A quadratic penalty on the spine angle [rad^2], weighted into m/s."""
    spine = _spine(ctx)
    return [Cost("straight_spine", 0.5 * ca.sumsqr(spine) / spine.size2())]


def test_user_cost_pulls_the_optimum_its_way(nominal_coarse):
    """A penalty on the spine angle lowers the mean squared spine angle at the optimum."""
    s = nominal_coarse.settings.with_(**REF)
    sol = solve(nominal_coarse.morphology, s, "coarse", guess=nominal_coarse,
                terms=DEFAULT_TERMS + (straight_spine,))
    assert sol.status.success
    before = np.mean(nominal_coarse.q[:, 4] ** 2)
    after = np.mean(sol.q[:, 4] ** 2)
    assert after < 0.8 * before
    assert sol.speed < nominal_coarse.speed  # the penalty costs speed


def test_user_constraint_row_holds_at_the_optimum(nominal_coarse):
    """A hip-angle band tighter than the nominal motion holds, and binds, at the optimum."""
    hip = np.abs(nominal_coarse.q[:, 3]).max()
    limit = 0.8 * hip

    def hip_band(ctx):
        q = ca.horzcat(*(ctx.nodes(i, "q")[3, :] for i in ctx.phases))
        return [Constraint("hip_band", ca.vec(q), -limit, lambda s: limit)]

    s = nominal_coarse.settings.with_(**REF)
    sol = solve(nominal_coarse.morphology, s, "coarse", guess=nominal_coarse,
                terms=DEFAULT_TERMS + (hip_band,))
    assert sol.status.success
    assert np.abs(sol.q[:, 3]).max() <= limit + 1e-6
    assert np.abs(sol.q[:, 3]).max() >= limit - 1e-4  # binding, not vacuous


def test_malformed_terms_are_rejected():
    """Duplicate row names, non-scalar costs and wrong bound sizes raise ConfigError."""
    def twice(ctx):
        h = ctx.variable("height")
        return [Constraint("dup", h, 0, 1), Constraint("dup", h, 0, 1)]

    def vector_cost(ctx):
        return [Cost("v", ctx.nodes(1, "q")[:, 0])]

    for group in (twice, vector_cost):
        with pytest.raises(ConfigError):
            build_problem((3, 2, 3, 2, 2), terms=DEFAULT_TERMS + (group,))
    row = Constraint("r", ca.MX.zeros(3), np.zeros(2), 1.0)
    with pytest.raises(ConfigError):
        row.resolve(None, 3)
