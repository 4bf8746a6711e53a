"""The wrench QP's data and solutions: the compiled fill against the problem's formulas
written in NumPy, solutions that own their data, the active-limit test, and the relaxed and
failed paths."""

import copy
from types import SimpleNamespace

import daqp
import numpy as np
import pytest

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control import qwbc
from clamber.quadruped.control.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.control.wbc_kernels import INF, MIN_LOAD
from clamber.quadruped.control.wbc_problem import QWBCWeights, WrenchProblemBuilder
from clamber.quadruped.model.statics import StaticsEvaluator


def _polytope() -> WrenchLimits:
    """Paper box cut by the four rows |fx| + |fy| <= 45 N: a non-box polytope."""
    box = WrenchLimits.paper_box()
    cut = np.array([[s1, s2, 0, 0, 0, 0] for s1 in (1, -1) for s2 in (1, -1)], dtype=float)
    return WrenchLimits(np.vstack([box.H, cut]), np.r_[box.h, np.full(4, 45.0)])


def _load(rng) -> np.ndarray:
    """Load factors with swinging (0), ramping and full grippers."""
    load = rng.uniform(0, 1, 4) * (rng.uniform(size=4) > 0.3)
    load[rng.uniform(size=4) < 0.4] = 1.0
    return load


def _statics(rm, ev, rng, scale=1.0):
    q = rm.default_state().q()
    q[7:] += rng.normal(0, 0.2, 20)
    return ev.evaluate(q, rng.normal(0, scale, 6))


@pytest.fixture(scope="module")
def ev(rm):
    return StaticsEvaluator(rm)


def _expected(b: WrenchProblemBuilder, multipliers, statics, load, F_prev, hard):
    """The problem of :mod:`~clamber.quadruped.control.wbc_problem`'s docstring, term by
    term, in NumPy (``multipliers`` (24,): the grippers' ``w2`` multipliers)."""
    w, swing = b.weights, load <= 0.0
    lam = np.maximum(load, MIN_LOAD).repeat(6)
    w2, w3 = np.tile(w.w2, 4) * multipliers / lam**2, np.tile(w.w3, 4)
    H = np.diag(2.0 * (w2 + w3))
    f = -2.0 * w3 * F_prev
    A, B = statics.A, statics.B
    if not hard:
        H += 2.0 * A.T @ np.diag(w.w1) @ A
        f -= 2.0 * A.T @ (w.w1 * B)
    lb, ub = np.full(24, -INF), np.full(24, INF)
    rows, lo, up = [], [], []
    if hard:
        rows.append(A), lo.append(B), up.append(B)
    for i, (lim, box) in enumerate(zip(b.limits, b.boxes, strict=True)):
        s = slice(6 * i, 6 * i + 6)
        if box is not None:
            lb[s], ub[s] = box[0] * load[i], box[1] * load[i]
        else:
            block = np.zeros((len(lim.h), 24))
            block[:, s] = lim.H
            rows.append(block), lo.append(np.full(len(lim.h), -INF))
            up.append(lim.h * (1.0 if swing[i] else load[i]))
        if swing[i]:
            lb[s] = ub[s] = 0.0
    T = np.zeros((20, 24))
    for i in range(4):
        T[5 * i:5 * i + 5, 6 * i:6 * i + 6] = statics.leg_jacobians[i].T
    free = (swing | (not b.torque_rows)).repeat(5)
    rows.append(T)
    lo.append(np.where(free, -INF, statics.tau_bias - b.tau_max))
    up.append(np.where(free, INF, statics.tau_bias + b.tau_max))
    return H, f, np.vstack(rows), np.r_[lb, np.concatenate(lo)], np.r_[ub, np.concatenate(up)]


@pytest.mark.parametrize("limits", [WrenchLimits.paper_box(), _polytope()], ids=["box", "poly"])
@pytest.mark.parametrize("torque_rows", [True, False])
def test_fill_writes_the_problems_terms(rm, ev, limits, torque_rows):
    """On random configurations, accelerations, loads (swinging, ramping, full), previous
    wrenches, weights and per-gripper multipliers, the compiled fill's H, f, C and stacked
    bounds of the hard and the relaxed problem equal the terms written in NumPy to 1e-12
    relative."""
    rng = np.random.default_rng(21)
    weights = QWBCWeights(w2=rng.uniform(0.5, 3.0, 6), w3=rng.uniform(0.01, 0.3, 6))
    mixed = [limits, WrenchLimits.paper_box(), limits, WrenchLimits.box(PAPER_BOX_HALF_WIDTHS)]
    b = WrenchProblemBuilder(mixed, rm.tau_max, weights, torque_rows=torque_rows)
    multipliers = np.ones(24)
    for k in range(40):
        if k % 7 == 3:
            multipliers[6:12] = rng.uniform(0.5, 2.0, 6)
            b.set_limits(1, WrenchLimits.box(PAPER_BOX_HALF_WIDTHS * rng.uniform(0.3, 1.5)),
                         multipliers[6:12])
        statics, load, F_prev = _statics(rm, ev, rng), _load(rng), rng.normal(0, 5, 24)
        for hard in (True, False):
            p = b.build(statics, load, F_prev, hard)
            want = _expected(b, multipliers, statics, load, F_prev, hard)
            for got, x in zip((p.H, p.f, p.C, p.lower, p.upper), want, strict=True):
                np.testing.assert_allclose(got, x, rtol=1e-12, atol=1e-12 * np.abs(x).max())
            assert p.n_eq == (6 if hard else 0) and np.array_equal(p.swing, load <= 0.0)


def test_a_solution_owns_its_data(rm, ev):
    """A solution's wrenches, multipliers and problem stay what they were when it was solved
    while the same solver solves further cycles."""
    rng = np.random.default_rng(5)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    first = qp.solve(_statics(rm, ev, rng), _load(rng))
    p = first.problem
    kept = [x.copy() for x in (first.F, first.duals, p.H, p.f, p.C, p.lower, p.upper, p.A,
                               p.B, p.swing)]
    for _ in range(10):
        qp.solve(_statics(rm, ev, rng), _load(rng))
    now = (first.F, first.duals, p.H, p.f, p.C, p.lower, p.upper, p.A, p.B, p.swing)
    assert all(np.array_equal(a, b) for a, b in zip(kept, now, strict=True))


def test_limit_active_is_a_stance_wrench_on_a_bound(rm, ev):
    """The active-limit test says whether a stance gripper's wrench lies within
    ``rtol (|ub| + 1)`` of a bound of its box, as the NumPy comparison says, for solutions
    with and without active limits and for two tolerances."""
    rng = np.random.default_rng(9)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    answers = set()
    for _ in range(60):
        sol = qp.solve(_statics(rm, ev, rng, 3.0), _load(rng))
        p = sol.problem
        for rtol in (1e-6, 0.05):
            stance = np.repeat(~p.swing, 6)
            tol = rtol * (np.abs(p.ub[stance]) + 1.0)
            want = bool(np.any(sol.F[stance] >= p.ub[stance] - tol)
                        or np.any(sol.F[stance] <= p.lb[stance] + tol))
            assert sol.limit_active(rtol) == want
            answers.add(want)
    assert answers == {True, False}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1e-12, 1.0 + 1e-12])
def test_bad_load_factors_are_refused(rm, ev, bad):
    """A NaN, infinite or out-of-range load factor is a ConfigError."""
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    load = np.array([1.0, 0.5, 0.0, 1.0])
    load[1] = bad
    with pytest.raises(ConfigError, match="load factors"):
        qp.solve(_statics(rm, ev, np.random.default_rng(3)), load)


class _Flaky:
    """A DAQP model whose solve returns a NaN wrench or a failure flag where ``plan`` (of
    the model's count of solves) says so."""

    def __init__(self, plan):
        self.model, self.plan, self.calls = daqp.Model(), plan, 0

    def setup(self, *args):
        return self.model.setup(*args)

    def update(self, **kwargs):
        return self.model.update(**kwargs)

    def solve(self):
        x, fval, flag, info = self.model.solve()
        what = self.plan(self.calls)
        self.calls += 1
        if what == "nan":
            x[3] = np.nan
        elif what == "fail":
            flag = -1
        return x, fval, flag, info


@pytest.mark.parametrize("what", ["nan", "fail"])
def test_failed_solves_fall_back_to_relaxed_then_zero(rm, ev, monkeypatch, what):
    """When the solver fails on the hard problem the relaxed one answers (its solution
    satisfies its KKT conditions); when both fail the zero wrench is returned. No answer is
    ever non-finite, and the smoothing anchor is the answer."""
    monkeypatch.setattr(qwbc, "daqp", SimpleNamespace(Model=lambda: _Flaky(
        lambda i: what if i % 3 else None)))
    rng = np.random.default_rng(30)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    seen = set()
    for _ in range(30):
        sol = qp.solve(_statics(rm, ev, rng, 0.5), _load(rng))
        seen.add(sol.status)
        assert np.all(np.isfinite(sol.F)) and np.array_equal(qp.F_prev, sol.F)
        if sol.status is WrenchStatus.FAILED:
            assert not sol.F.any()
        else:
            kkt = sol.kkt_residuals()
            assert max(kkt.values()) < 1e-6, kkt
    assert {WrenchStatus.OPTIMAL, WrenchStatus.RELAXED, WrenchStatus.FAILED} <= seen


def test_a_copied_solver_solves_as_the_original(rm, ev):
    """A deep copy of a solver gives the original's solutions, and new limits given to the
    copy leave the original as it was."""
    rng = np.random.default_rng(17)
    original = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    clone = copy.deepcopy(original)
    for _ in range(10):
        statics, load = _statics(rm, ev, rng), _load(rng)
        a, b = original.solve(statics, load), clone.solve(statics, load)
        np.testing.assert_allclose(a.F, b.F, rtol=1e-12, atol=1e-12)
    clone.set_limits(1, WrenchLimits.box(PAPER_BOX_HALF_WIDTHS * 0.4), np.full(6, 2.0))
    statics, load = _statics(rm, ev, rng), np.ones(4)
    assert np.allclose(original.solve(statics, load).problem.ub[6:12], PAPER_BOX_HALF_WIDTHS)
    assert np.allclose(clone.solve(statics, load).problem.ub[6:12], 0.4 * PAPER_BOX_HALF_WIDTHS)


def test_accept_refuses_non_finite_wrenches_and_zeroes_swing_ones():
    """A NaN or infinite entry leaves the wrenches and the anchor as they were; finite
    wrenches get the swing grippers' entries set to +0.0 and are copied to the anchor."""
    from clamber.quadruped.control.wbc_kernels import accept

    rng = np.random.default_rng(5)
    swing = np.array([False, True, True, False])
    for bad in (np.nan, np.inf, -np.inf):
        x = rng.normal(size=24)
        x[rng.integers(24)] = bad
        kept, anchor = x.copy(), np.full(24, 3.0)
        assert not accept(x, swing, anchor)
        assert np.array_equal(x, kept, equal_nan=True) and np.all(anchor == 3.0)
    x = rng.normal(size=24)
    x[6:12] = -0.0
    want = np.where(swing.repeat(6), 0.0, x)
    anchor = np.zeros(24)
    assert accept(x, swing, anchor)
    assert np.array_equal(x, want) and not np.signbit(x[6:18]).any()
    assert np.array_equal(anchor, want)
