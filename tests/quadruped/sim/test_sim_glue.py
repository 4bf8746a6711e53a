"""The simulator's compiled control cycle and the vectorised gauge bound compute exactly what
the calls they replace compute: a whole cycle in one kernel call against
:meth:`QuadrupedSim.step_plain` (one kernel per part) through a gripper break and through
periods the grippers' check does not certify, and the two-pass polytope gauge against the
plane-by-plane one, bit for bit."""

import mujoco
import numpy as np
import pytest

from clamber.exceptions import ConfigError
from clamber.quadruped.control.controllers import JointCommand
from clamber.quadruped.gaits.climb import ClimbPhase
from clamber.quadruped.model.robot import N_JOINTS
from clamber.quadruped.sim import failure_kernels, period_kernel, step_kernel
from clamber.quadruped.sim.failure import default_wrench_set
from clamber.quadruped.sim.grippers import GripperBank
from clamber.quadruped.sim.simulator import GRAVITY_VECTOR
from clamber.quadruped.trials.climb import ClimbSettings, ClimbTrial

compiled = pytest.mark.skipif(not period_kernel.AVAILABLE,
                              reason="MuJoCo's library is not linked into kernels here")


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=float).view(np.int64)


@pytest.mark.parametrize("planes", ["inner", "cuts"])
@pytest.mark.parametrize("count", [None, 1, 3, 5, 6, 7, 149])
def test_two_pass_gauge_equals_the_plane_by_plane_gauge(planes, count):
    """On wrenches of every scale, zeros of both signs, NaN, infinities and subnormals, and
    on plane counts that do and do not fill the running maxima, the vectorised gauge
    returns the plane-by-plane gauge's numbers bit for bit."""
    s = default_wrench_set()
    p = s._inner_t if planes == "inner" else s._cuts_t
    p = np.ascontiguousarray(p if count is None else p[:, :count])
    rng = np.random.default_rng(7)
    w = rng.normal(size=(600, 6)) * np.array([30.0, 30.0, 60.0, 0.5, 0.5, 1.5])
    w[:200] *= 10.0 ** rng.integers(-300, 300, size=(200, 1))
    w[200] = 0.0
    w[201] = -0.0
    w[202, 2] = np.nan
    w[203] = np.inf
    w[204] = -np.inf
    w[205, :3] = 1e-310
    w[206] = -w[207]
    assert np.array_equal(_bits(failure_kernels.polytope_gauges(w, p)),
                          _bits(failure_kernels.polytope_gauges_plain(w, p)))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 9])
def test_a_steps_gauges_together_equal_the_plane_by_plane_gauges(k):
    """The lower bounds of a step's wrenches formed four per pass over the supporting
    half-spaces (padded with zeros past the last) are the plane-by-plane gauges bit for
    bit, special values included."""
    s = default_wrench_set()
    rng = np.random.default_rng(k)
    ws = rng.normal(size=(40, k, 6)) * np.array([30.0, 30.0, 60.0, 0.5, 0.5, 1.5]) / 40.0
    ws[:10] *= 10.0 ** rng.integers(-300, 300, size=(10, k, 1))
    ws[10, 0] = -0.0
    ws[11, -1, 2] = np.nan
    ws[12, 0] = np.inf
    for p in (s._cuts_t, s._inner_t, np.ascontiguousarray(s._cuts_t[:, :7])):
        want = failure_kernels.polytope_gauges_plain(ws.reshape(-1, 6), p).reshape(40, k)
        assert np.array_equal(_bits(failure_kernels.step_gauges(ws, p)), _bits(want))


@pytest.mark.parametrize("compliant", [True, False])
def test_sole_wrenches_indexed_in_place_equal_those_through_views(compliant):
    """The sole wrenches formed by indexing the recorded arrays in place are those formed
    through a view per step and gripper, bit for bit, on random steps of a scene's sizes."""
    rng = np.random.default_rng(3)
    steps, nbody, nsite = 5, 26, 9
    ext = rng.normal(size=(steps, nbody, 6)) * 10.0 ** rng.integers(-3, 3, (steps, nbody, 1))
    com, pos = rng.normal(size=(steps, nbody, 3)), rng.normal(size=(steps, nsite, 3))
    mat = rng.normal(size=(steps, nsite, 9))
    bodies, grippers = np.array([4, 9, 14, 19]), np.array([3, 8, 13, 18])
    sites, roots = np.array([1, 3, 5, 7]), np.array([1, 1, 1, 1], dtype=np.int32)
    args = (ext, com, pos, mat, bodies, grippers, sites, roots, compliant)
    assert np.array_equal(_bits(failure_kernels.sole_wrenches(*args)),
                          _bits(failure_kernels.sole_wrenches_plain(*args)))


def _physics(sim) -> list[np.ndarray]:
    d = sim.data
    return [d.qpos, d.qvel, d.act, d.qacc_warmstart, np.array([d.time]), d.ctrl,
            d.actuator_force, sim._torque, sim._forces, sim._prev_velocity]


def _climb_both_ways(settings: ClimbSettings, seed: int, time_limit: float,
                     each=lambda trial: None):
    """The climb stepped with :meth:`step` and with :meth:`step_plain`, cycle by cycle:
    the physics, records, gauges, clocks and events compared after every cycle (and
    ``each`` called on the fast trial)."""
    fast, plain = (ClimbTrial(settings, seed, time_limit=time_limit) for _ in range(2))
    assert fast.sim.compiled and plain.sim.compiled
    plain.sim.step = plain.sim.step_plain
    records = ([], [])
    for trial, out in zip((fast, plain), records, strict=True):
        step = trial.sim.step

        def recorded(cmd, step=step, out=out):
            out.append(step(cmd))
            return out[-1]

        trial.sim.step = recorded
    running = True
    while running:
        running = fast.step()
        assert plain.step() == running
        each(fast)
        assert all(np.array_equal(a, b) for a, b in
                   zip(_physics(fast.sim), _physics(plain.sim), strict=True))
        a, b = fast.sim.grippers, plain.sim.grippers
        assert np.array_equal(_bits(a.gauges), _bits(b.gauges))
        assert all(np.array_equal(x, y)
                   for x, y in zip(a.clock.save(), b.clock.save(), strict=True))
    ra, rb = records
    assert len(ra) == len(rb) and all(
        x.t == y.t and x.power == y.power and type(x.power) is type(y.power)
        and x.broken == y.broken and np.array_equal(x.torque, y.torque)
        for x, y in zip(ra, rb, strict=True))
    assert fast.sim.grippers.events == plain.sim.grippers.events
    assert fast.sim.grippers.peak_loads() == plain.sim.grippers.peak_loads()
    return fast, plain


@compiled
def test_compiled_cycle_climbs_as_the_plain_step_through_a_break():
    """Plain CLIK on the vertical wall (seed 1) overloads a gripper at its first release:
    the one-call cycle and the plain step give the same climb bit for bit, up to and
    through the break (whose period is rerun step by step either way)."""
    fast, _ = _climb_both_ways(ClimbSettings(controller="clik-plain", incline_deg=90.0), 1,
                               12.0)
    assert any(e.kind == "break" for e in fast.sim.grippers.events)


@compiled
def test_compiled_cycle_advances_uncertified_periods_as_the_plain_step(monkeypatch):
    """With unbreakable grippers the same climb has a gripper outside its set from the
    first release on: the periods the compiled check does not certify are finished in
    Python (the clocks advanced over the recorded wrenches), as the plain step does."""
    calls = []
    advance = GripperBank.advance_recorded

    def counted(self, dt, w):
        calls.append(dt)
        return advance(self, dt, w)

    monkeypatch.setattr(GripperBank, "advance_recorded", counted)
    _climb_both_ways(ClimbSettings(controller="clik-plain", incline_deg=90.0,
                                   breakable=False), 1, 7.0)
    assert len(calls) > 100


@compiled
def test_compiled_cycle_climbs_as_the_plain_step_with_qwbc():
    """The Q-WBC climb of the benchmark, through its first swing (release, lift, transfer,
    descent, grasp): the same climb both ways; the IMU, body pose and the swing's rotation,
    read through views made once, are their plain forms' numbers."""
    swings = []

    def plain_readings(trial):
        # The simulator's readings and the gait's swing rotation against their plain forms.
        sim = trial.sim
        d = sim.data
        f, w = sim.imu_truth()
        R = d.xmat[sim.body_id].reshape(3, 3)
        acc = (d.qvel[:3] - sim._prev_velocity) / sim.dt
        assert np.array_equal(f, R.T @ (acc - GRAVITY_VECTOR))
        rate = np.empty(3)
        mujoco.mju_subQuat(rate, d.qpos[3:7], sim._prev_quat)
        assert np.array_equal(w, rate / sim.dt)
        p, R_true = sim.body_pose()
        assert np.array_equal(p, d.qpos[:3]) and np.array_equal(R_true, R)
        sw = trial.gait.swing
        if sw is not None:
            swings.append(trial.gait.phase)
            assert np.array_equal(sw.rotation, sw.start.rotation)

    fast, _ = _climb_both_ways(ClimbSettings(), 0, 20.0, plain_readings)
    kinds = {e.kind for e in fast.sim.grippers.events}
    assert {"release", "attach"} <= kinds
    assert {ClimbPhase.RELEASE, ClimbPhase.LIFT, ClimbPhase.TRANSFER, ClimbPhase.DESCEND,
            ClimbPhase.GRASP} <= set(swings)


@compiled
@pytest.mark.parametrize("bad", [0, 1, 2])
def test_compiled_cycle_rejects_a_command_as_the_plain_step(bad):
    """A command vector with a NaN is refused with the plain step's error, and nothing is
    written or stepped."""
    trial = ClimbTrial(ClimbSettings(), 0, time_limit=1.0)
    sim = trial.sim
    vectors = [np.zeros(N_JOINTS), np.zeros(N_JOINTS), np.ones(N_JOINTS)]
    vectors[bad][3] = np.nan
    cmd = JointCommand.trusted(*vectors, None, np.zeros(24))
    before = [a.copy() for a in _physics(sim)]
    with pytest.raises(ConfigError) as fast_error:
        sim.step(cmd)
    assert all(np.array_equal(a, b, equal_nan=True)
               for a, b in zip(_physics(sim), before, strict=True))
    with pytest.raises(ConfigError) as plain_error:
        sim.step_plain(cmd)
    assert str(fast_error.value) == str(plain_error.value)


def test_the_compiled_cycle_is_cached_with_the_files_of_the_kernels_it_calls():
    """numba would keep the cached cycle while its own file is unchanged; its key also
    holds the stamps of the files whose kernels it calls."""
    cache_file = getattr(getattr(step_kernel.step, "_cache", None), "_cache_file", None)
    if cache_file is None:
        pytest.skip("kernels compiled in memory here")
    stamp = cache_file._source_stamp
    assert isinstance(stamp, tuple) and len(stamp) == 6
    assert stamp[1] == step_kernel._stamp(failure_kernels.__file__)
