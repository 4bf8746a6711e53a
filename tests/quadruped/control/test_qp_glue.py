"""The wrench QP's packed cycle (two compiled calls around DAQP) against the plain one: the
same problem arrays, load checks, solutions, smoothing anchor and active-limit answers bit
for bit, over swinging grippers, unloading ramps, relaxed and failed solves and bad loads."""

import copy
import pickle
from types import SimpleNamespace

import daqp
import numpy as np
import pytest

from clamber.attachment.wrench_limits import PAPER_BOX_HALF_WIDTHS, WrenchLimits
from clamber.exceptions import ConfigError
from clamber.quadruped.control import qwbc
from clamber.quadruped.control.qp_cycle_kernels import BAD_LOAD, LOAD_CHANGED, finish_hard_box
from clamber.quadruped.control.qwbc import WrenchQP, WrenchStatus
from clamber.quadruped.control.variants import limits_active
from clamber.quadruped.control.wbc_problem import QWBCWeights, WrenchProblemBuilder
from clamber.quadruped.model.robot_model import RobotModel
from clamber.quadruped.model.statics import StaticsEvaluator

ARRAYS = ("H", "f", "lb", "ub", "C", "lo", "up", "lower", "upper")


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal bit for bit, signs of zeros included."""
    return (x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
            and np.array_equal(np.signbit(x), np.signbit(y)))


def _load(rng) -> np.ndarray:
    """Load factors with swinging (0), ramping and full grippers."""
    load = rng.uniform(0, 1, 4) * (rng.uniform(size=4) > 0.3)
    load[rng.uniform(size=4) < 0.4] = 1.0
    return load


def _plain_active(sol, rtol=1e-6) -> bool:
    """The active-limit test in NumPy: a stance gripper's wrench on a bound of its box."""
    p = sol.problem
    stance = np.repeat(~p.swing, 6)
    tol = rtol * (np.abs(p.ub[stance]) + 1.0)
    return bool(np.any(sol.F[stance] >= p.ub[stance] - tol)
                or np.any(sol.F[stance] <= p.lb[stance] + tol))


class _Ctrl:
    """What limits_active reads of a controller."""

    def __init__(self, sol):
        self.last_solution = sol


@pytest.fixture(scope="module")
def setup():
    rm = RobotModel()
    return rm, StaticsEvaluator(rm)


def _statics(rm, ev, rng, scale=1.0):
    q = rm.default_state().q()
    q[7:] += rng.normal(0, 0.2, 20)
    return ev.evaluate(q, rng.normal(0, scale, 6))


@pytest.mark.parametrize("torque_rows", [True, False])
def test_packed_fill_equals_the_numpy_build_bit_for_bit(setup, torque_rows):
    """On random configurations, accelerations, loads, previous solutions, weights and
    per-gripper weight multipliers, the packed fill writes the hard box problem the NumPy
    build writes, entry for entry (a reordered sum or product would change some bits), and
    its code gives the swing grippers and whether the load differs from the last one."""
    rm, ev = setup
    rng = np.random.default_rng(21)
    weights = QWBCWeights(w2=rng.uniform(0.5, 3.0, 6), w3=rng.uniform(0.01, 0.3, 6))
    builder = WrenchProblemBuilder([WrenchLimits.paper_box()] * 4, rm.tau_max, weights,
                                   torque_rows=torque_rows)
    plain = WrenchProblemBuilder([WrenchLimits.paper_box()] * 4, rm.tau_max, weights,
                                 torque_rows=torque_rows)
    assert builder.packed
    last = np.full(4, np.nan)
    for k in range(150):
        statics = _statics(rm, ev, rng)
        load = last.copy() if k % 5 == 4 else _load(rng)
        if k % 3 == 0:
            builder.leg_weights[:] = plain.leg_weights[:] = rng.uniform(0.5, 2.0, (4, 6))
        F_prev = rng.normal(0, 5, 24)
        code, a = builder.build_packed(statics, load, last, F_prev)
        b = plain._build_numpy(statics, load, F_prev, True, load <= 0.0)
        for name in ARRAYS:
            assert _same(getattr(a, name), getattr(b, name)), name
        assert _same(a.swing, b.swing) and a.n_eq == b.n_eq == 6 and a.hard
        assert a.statics is statics
        assert code & 15 == sum(1 << i for i in range(4) if load[i] <= 0.0)
        assert bool(code & LOAD_CHANGED) == (load.tolist() != last.tolist())
        last = load


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1e-12, 1.0 + 1e-12])
def test_packed_fill_refuses_bad_loads_and_writes_nothing(setup, bad):
    """A NaN, infinite or out-of-range factor gets BAD_LOAD with the problem's arrays as
    they were, and the solver raises as the plain check does."""
    rm, ev = setup
    rng = np.random.default_rng(3)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    statics = _statics(rm, ev, rng)
    qp.solve(statics, np.ones(4))
    buf = qp.builder._arrays[True]["buf"].copy()
    load = np.array([1.0, 0.5, 0.0, 1.0])
    load[1] = bad
    code, p = qp.builder.build_packed(statics, load, np.ones(4), qp.F_prev)
    assert code == BAD_LOAD and p is None
    assert _same(qp.builder._arrays[True]["buf"], buf)
    with pytest.raises(ConfigError, match="load factors"):
        qp.solve(statics, load)
    with pytest.raises(ConfigError, match="load factors"):
        qp.solve_plain(statics, load)


def test_finish_refuses_non_finite_wrenches_and_zeroes_swing_ones():
    """A NaN or infinite entry gets -1 with the wrenches and the anchor untouched; finite
    wrenches get the swing grippers' entries set to +0.0 and are copied to the anchor."""
    rng = np.random.default_rng(5)
    buf = np.zeros(2000)
    for bad in (np.nan, np.inf, -np.inf):
        x = rng.normal(size=24)
        x[rng.integers(24)] = bad
        kept, anchor = x.copy(), np.full(24, 3.0)
        assert finish_hard_box(x, anchor, buf, 0b0101) == -1
        assert _same(x, kept) and np.all(anchor == 3.0)
    x = rng.normal(size=24)
    x[6:12] = -0.0
    anchor = np.zeros(24)
    finish_hard_box(x, anchor, buf, 0b0110)
    assert np.all(x[6:18] == 0.0) and not np.any(np.signbit(x[6:18]))
    assert _same(anchor, x)


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
        elif what == "inf":
            x[20] = -np.inf
        elif what == "fail":
            flag = -1
        return x, fval, flag, info


def _solve_pair(setup, seed, scale, n):
    """Packed and plain solvers run on one random sequence; every solution compared."""
    rm, ev = setup
    rng = np.random.default_rng(seed)
    limits = [WrenchLimits.paper_box()] * 4
    fast, plain = WrenchQP(limits, rm.tau_max), WrenchQP(limits, rm.tau_max)
    statuses = []
    load = np.ones(4)
    for k in range(n):
        statics = _statics(rm, ev, rng, scale)
        if k % 4:  # runs of equal factors: the solver keeps its factorization
            load = load.copy() if k % 3 else _load(rng)
        a, b = fast.solve(statics, load), plain.solve_plain(statics, load)
        statuses.append(a.status)
        assert a.status is b.status and a.iterations == b.iterations
        assert _same(a.F, b.F) and _same(a.duals, b.duals) and _same(fast.F_prev, plain.F_prev)
        for name in ARRAYS:
            assert _same(getattr(a.problem, name), getattr(b.problem, name)), name
        assert _same(a.problem.swing, b.problem.swing) and a.problem.hard is b.problem.hard
        assert limits_active(_Ctrl(a)) == limits_active(_Ctrl(b)) == _plain_active(b)
    return set(statuses)


def test_packed_solve_equals_the_plain_solve_bit_for_bit(setup):
    """Over body accelerations small enough for balance and large enough to need the
    relaxed problem, with swinging, ramping and full grippers and runs of equal loads, the
    packed cycle's status, wrenches, multipliers, iterations, problem, anchor and active
    limits equal the plain cycle's bit for bit."""
    assert WrenchStatus.OPTIMAL in _solve_pair(setup, 7, 0.5, 300)
    assert WrenchStatus.RELAXED in _solve_pair(setup, 8, 40.0, 150)


@pytest.mark.parametrize("what", ["nan", "inf", "fail"])
def test_packed_solve_equals_the_plain_one_through_failed_solves(setup, monkeypatch, what):
    """Non-finite wrenches or failure flags from the solver on some solves take both
    cycles down the same relaxed and failed paths to the same solutions."""
    def plan(i):
        return what if i % 3 else None

    monkeypatch.setattr(qwbc, "daqp", SimpleNamespace(Model=lambda: _Flaky(plan)))
    statuses = _solve_pair(setup, 30, 0.5, 90)
    assert {WrenchStatus.OPTIMAL, WrenchStatus.RELAXED, WrenchStatus.FAILED} <= statuses


def test_limit_answer_taken_at_solve_time_is_dropped_once_rebuilt(setup):
    """A packed solution answers limits_active from its own check; after a later build has
    overwritten its problem's arrays, or for another tolerance, the test is computed as the
    plain code computes it."""
    rm, ev = setup
    rng = np.random.default_rng(9)
    qp = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    for _ in range(40):
        sol = qp.solve(_statics(rm, ev, rng, 3.0), _load(rng))
        ctrl = _Ctrl(sol)
        if sol.limit_check is not None:
            assert sol.limit_check[3] == _plain_active(sol) == limits_active(ctrl)
        assert limits_active(ctrl, 0.05) == _plain_active(sol, 0.05)
        qp.builder.build(_statics(rm, ev, rng), _load(rng), np.zeros(24))
        assert limits_active(ctrl) == _plain_active(sol)


def test_rebinding_a_packed_parameter_falls_back_to_the_plain_cycle(setup):
    """Rebinding the torque limits (rather than writing into them) takes the builder off
    the packed cycle, so the new limits are used as the plain cycle uses them."""
    rm, ev = setup
    rng = np.random.default_rng(12)
    fast, plain = (WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max) for _ in range(2))
    for qp in (fast, plain):
        qp.builder.tau_max = qp.builder.tau_max * 0.5
    assert not fast.builder.packed
    for _ in range(20):
        statics, load = _statics(rm, ev, rng), _load(rng)
        a, b = fast.solve(statics, load), plain.solve_plain(statics, load)
        assert _same(a.F, b.F) and a.status is b.status


def test_set_limits_reaches_the_packed_cycle(setup):
    """New box limits and weight multipliers of one gripper (a hold's capacity) change the
    packed cycle's solutions as they change the plain cycle's."""
    rm, ev = setup
    rng = np.random.default_rng(13)
    fast, plain = (WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max) for _ in range(2))
    for k in range(60):
        if k % 10 == 5:
            leg, scale = int(rng.integers(4)), rng.uniform(0.3, 1.5)
            w = rng.uniform(0.5, 2.0, 6)
            for qp in (fast, plain):
                qp.set_limits(leg, WrenchLimits.box(PAPER_BOX_HALF_WIDTHS * scale), w)
        statics, load = _statics(rm, ev, rng), _load(rng)
        a, b = fast.solve(statics, load), plain.solve_plain(statics, load)
        assert fast.builder.packed
        assert _same(a.F, b.F) and _same(a.duals, b.duals) and a.status is b.status


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_solver_keeps_its_views_and_solves_as_the_plain_one(setup, how):
    """A solver copied or pickled keeps its problem arrays and packed parameters as views
    of its own buffers: new limits given to the copy reach its packed cycle, which solves
    as a plain copy does, and leave the original as it was."""
    rm, ev = setup
    rng = np.random.default_rng(17)
    original = WrenchQP([WrenchLimits.paper_box()] * 4, rm.tau_max)
    copies = [copy.deepcopy(original) if how == "deepcopy"
              else pickle.loads(pickle.dumps(original)) for _ in range(2)]
    fast, plain = copies
    assert fast.builder.packed
    p = fast.builder._arrays[True]
    assert np.shares_memory(p["H"], p["buf"]) and np.shares_memory(p["upper"], p["buf"])
    assert np.shares_memory(fast.builder.leg_weights, fast.builder.params)
    for qp in (fast, plain):
        qp.set_limits(1, WrenchLimits.box(PAPER_BOX_HALF_WIDTHS * 0.4), np.full(6, 2.0))
    assert np.all(original.builder.leg_weights == 1.0)
    for _ in range(30):
        statics, load = _statics(rm, ev, rng), _load(rng)
        a, b = fast.solve(statics, load), plain.solve_plain(statics, load)
        assert _same(a.F, b.F) and _same(a.duals, b.duals) and a.status is b.status
        assert _same(a.problem.ub, b.problem.ub)
